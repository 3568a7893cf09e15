#!/usr/bin/env bash
# CPU, system calls, context switches and page faults per request of the whole proxy process
# (every thread, kernel included) under wrk, for shared/bench's request shapes: nginx as a plain
# reverse proxy (its `closed` shape: what a blocked request, which ends its connection, is
# compared with) and `portcullis proxy --workers 1`, in front of the same nginx+echo backend as
# benches/request_cost.sh. utime/stime and page faults come from /proc/PID/stat, voluntary and
# involuntary switches from /proc/PID/task/*/status, the counts of system calls from
# `perf stat -e syscalls:sys_enter_*` on the pid over the same run. Microseconds depend on the
# machine's load; the counts do not.
#
# Usage: benches/process_cost.sh [SHAPE...]    (closed attack bodyattack by default; get works too)
# Env:   DURATION=6  PORTCULLIS=target/release/portcullis  POLICY=/tmp/bench-policy.json
#        NGINX=1 (also measure nginx's closed shape)  PORT_BASE=18680
set -euo pipefail

DURATION=${DURATION:-6}
PORT_BASE=${PORT_BASE:-18680}
UP=$((PORT_BASE + 1)); NGX=$((PORT_BASE + 2)); PC=$((PORT_BASE + 3))
. "$(dirname "$0")/lib.sh"
ports_free $UP $NGX $PC
portcullis_binary release
need "apt-get install wrk linux-perf nginx libnginx-mod-http-echo" wrk perf nginx
SHAPES=${*:-closed attack bodyattack}
shared_bench_backend $UP

# wrk scripts with shared/bench's headers; bodyattack's body as shared/bench's bench.sh has it.
L=$WORK/lua; mkdir -p "$L"
HDRS='wrk.headers["Host"] = "127.0.0.1"
wrk.headers["User-Agent"] = "bench-client/1.0 (wrk)"
wrk.headers["Accept"] = "application/json"
wrk.headers["Accept-Language"] = "en-US,en;q=0.8"
wrk.headers["Authorization"] = "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyLTEyMyJ9.c2lnbmF0dXJlLXBsYWNlaG9sZGVy"
wrk.headers["X-Request-Id"] = "4f8b1c2e-9d3a-4e5b-8f6a-123456789abc"'
BADBODY='{"id":124,"name":"Max","tag":"dog","status":"available","category":{"id":7,"name":"Dogs"},"photoUrls":["https://img.example.test/pets/124/1.jpg"],"tags":[{"id":1,"name":"friendly"}],"owner":{"firstName":"Bob","lastName":"1'"'"' OR '"'"'1'"'"'='"'"'1","email":"bob@example.test"},"description":"<script>alert(document.cookie)</script> Max is a playful dog who loves to run around the garden all day long and chase squirrels up the old oak tree near the fence."}'
printf 'wrk.method = "GET"\n%s\n' "$HDRS" >"$L/get.lua"
cp "$L/get.lua" "$L/attack.lua"
printf 'wrk.method = "GET"\n%s\nwrk.headers["Connection"] = "close"\n' "$HDRS" >"$L/closed.lua"
printf 'wrk.method = "POST"\n%s\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = "%s"\n' \
  "$HDRS" "$(printf '%s' "$BADBODY" | sed 's/\\/\\\\/g; s/"/\\"/g')" >"$L/bodyattack.lua"
declare -A SPATH=([get]='/api/pets/123?limit=10' [closed]='/api/pets/123?limit=10'
  [attack]='/api/pets/123?q=1%27%20OR%20%271%27%3D%271' [bodyattack]='/api/pets')
CALLS="accept4 epoll_ctl epoll_wait close recvfrom sendto read write writev futex madvise getsockopt setsockopt shutdown connect"
EVENTS=context-switches$(for c in $CALLS; do printf ',syscalls:sys_enter_%s' "$c"; done)

switches() { # pid -> "voluntary involuntary", summed over its threads
  awk '/^voluntary_ctxt/ {v += $2} /^nonvoluntary_ctxt/ {n += $2} END {print v, n}' /proc/"$1"/task/*/status
}

measure() { # label pid port shape
  local pid=$2 url=http://127.0.0.1:$3${SPATH[$4]} out n f0 u0 s0 f1 u1 s1 v0 n0 v1 n1
  wrk -t2 -c64 -d2s -s "$L/$4.lua" "$url" >/dev/null 2>&1
  read -r f0 u0 s0 < <(awk '{print $10, $14, $15}' /proc/"$pid"/stat)
  read -r v0 n0 < <(switches "$pid")
  perf stat -x, -e "$EVENTS" -p "$pid" -o "$WORK/perf.txt" &
  local ps=$!
  sleep 0.3 # perf attached to every thread before the first request
  out=$(wrk -t2 -c64 -d"${DURATION}s" -s "$L/$4.lua" "$url" 2>&1)
  kill -INT "$ps"; wait "$ps" 2>/dev/null || true
  read -r f1 u1 s1 < <(awk '{print $10, $14, $15}' /proc/"$pid"/stat)
  read -r v1 n1 < <(switches "$pid")
  n=$(awk '/requests in/ {print $1}' <<<"$out")
  awk -F, -v l="$1" -v s="$4" -v n="$n" -v hz="$TICKS" -v u=$((u1 - u0)) -v st=$((s1 - s0)) \
    -v flt=$((f1 - f0)) -v v=$((v1 - v0)) -v nv=$((n1 - n0)) '
    $3 != "" { c[$3] = $1 }
    END {
      printf "%-10s %-10s %7d requests: user %.1f sys %.1f us/request, faults %.3f, switches %.3f (voluntary %.3f involuntary %.3f)\n",
        l, s, n, u / hz * 1e6 / n, st / hz * 1e6 / n, flt / n, c["context-switches"] / n, v / n, nv / n
      line = ""; total = 0
      for (k in c) if (k ~ /sys_enter_/) { name = k; sub(/.*sys_enter_/, "", name); total += c[k] / n
        if (c[k] / n >= 0.001) line = line sprintf(" %s %.3f", name, c[k] / n) }
      printf "%-21s system calls/request %.2f:%s\n", "", total, line
    }' "$WORK/perf.txt"
}

echo "wrk -t2 -c64 -d${DURATION}s, $(basename "$PORTCULLIS") $(cd "$ROOT" && git rev-parse --short HEAD), load: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "${NGINX:-1}" = 1 ]; then
  nginx_reverse_proxy proxy $NGX $UP
  run_nginx proxy
  master=$SPAWNED
  wait_port $NGX
  measure nginx "$(pgrep -P "$master" | head -1)" $NGX closed
fi
portcullis_proxy portcullis $PC "http://127.0.0.1:$UP"
PC_PID=$SPAWNED
wait_port $PC "$WORK/portcullis.log"
for shape in $SHAPES; do measure portcullis "$PC_PID" $PC "$shape"; done
