#!/usr/bin/env bash
# Where a proxied request's CPU goes, for nginx (plain reverse proxy, 1 worker) and `portcullis proxy
# --workers 1` (demo policy), same upstream and load as benches/load.sh (wrk -t1 -c50, GET
# /api/users/1, loopback):
#   * user and system CPU microseconds per request (utime/stime deltas from /proc/<pid>/stat);
#   * system calls per request (`perf stat -e 'syscalls:sys_enter_*'` on the proxy process);
#   * with CALLGRIND=1, the user-space instructions per request of both (valgrind callgrind, zeroed
#     after a warm-up, so load-independent; ~50x slower, so fewer requests).
#
# Usage: benches/proxy_cost.sh        (needs wrk, nginx, perf; valgrind for CALLGRIND=1)
# Env:   DURATION=6 PORT_BASE=18180 PORTCULLIS=target/dist/portcullis CALLGRIND=0
#        CALLGRIND_OUT=FILE (keeps Portcullis's callgrind profile of those requests)
set -euo pipefail

DURATION=${DURATION:-6}
PORT_BASE=${PORT_BASE:-18180}
UP=$((PORT_BASE + 1)); NGX=$((PORT_BASE + 2)); PC=$((PORT_BASE + 3))
. "$(dirname "$0")/lib.sh"
ports_free $UP $NGX $PC
URL_PATH=/api/users/1
portcullis_binary dist
need "apt-get install wrk nginx linux-perf" wrk nginx perf

start_nginx_and_portcullis $UP $NGX $PC

EVENTS=raw_syscalls:sys_enter
for s in recvfrom read readv sendto write writev epoll_wait getsockopt; do EVENTS+=",syscalls:sys_enter_$s"; done
EVENTS+=",context-switches"

cost() { # label pid port
  wrk -t1 -c50 -d2s "http://127.0.0.1:$3$URL_PATH" >/dev/null
  local before after out n
  before=$(awk '{print $14, $15}' "/proc/$2/stat")
  perf stat -x, -e "$EVENTS" -p "$2" -o "$WORK/perf.$1" -- sleep $((DURATION + 1)) &
  local perf_pid=$!
  sleep 0.3
  out=$(wrk -t1 -c50 -d"${DURATION}s" "http://127.0.0.1:$3$URL_PATH")
  wait $perf_pid
  after=$(awk '{print $14, $15}' "/proc/$2/stat")
  n=$(awk '/requests in/ {print $1}' <<<"$out")
  read -r u0 s0 <<<"$before"; read -r u1 s1 <<<"$after"
  awk -v l="$1" -v u=$((u1 - u0)) -v s=$((s1 - s0)) -v hz="$TICKS" -v n="$n" \
    'BEGIN { printf "%-12s %8d requests  user %5.1f us/req  system %5.1f us/req\n", l, n, u/hz*1e6/n, s/hz*1e6/n }'
  awk -F, -v n="$n" '$1 ~ /^[0-9]+$/ && $1 > 0 { printf "    %-36s %7.2f /req\n", $3, $1 / n }' "$WORK/perf.$1"
}

echo "wrk -t1 -c50 -d${DURATION}s GET $URL_PATH; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
cost nginx "$NGX_WORKER" $NGX
cost portcullis "$PC_PID" $PC

# User-space instructions per request under callgrind (zeroed after a warm-up, so independent of
# the load and of the machine's other tenants): `callgrind LABEL PORT CMD...` runs CMD (a proxy
# listening on PORT, in front of the same upstream) and prints its instructions per request.
callgrind() {
  local label=$1 port=$2; shift 2
  valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.$label" "$@" 2>"$WORK/valgrind.$label.log" &
  local vg=$!; PIDS+=($vg)
  for _ in $(seq 300); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.2; done
  wrk -t1 -c50 -d3s "http://127.0.0.1:$port$URL_PATH" >/dev/null
  callgrind_control -z "$vg" >/dev/null 2>&1
  local n
  n=$(wrk -t1 -c50 -d10s "http://127.0.0.1:$port$URL_PATH" | awk '/requests in/ {print $1}')
  callgrind_control -d "$vg" >/dev/null 2>&1
  sleep 1
  local dump total
  dump=$(ls -t "$WORK"/cg."$label".* | head -1)
  total=$(awk -F': ' '/^summary:/ {print $2}' "$dump")
  printf "%-12s user-space instructions: %6d per request (%d requests under callgrind)\n" \
    "$label" $((total / n)) "$n"
  kill "$vg" 2>/dev/null || true
  LAST_PROFILE=$dump
}

if [ "${CALLGRIND:-0}" = 1 ]; then
  command -v valgrind >/dev/null || { echo "CALLGRIND=1 needs valgrind" >&2; exit 1; }
  VG_PORT=$((PORT_BASE + 4)); VG_NGX=$((PORT_BASE + 5))
  # nginx in the foreground without a master: its one process is the worker.
  nginx_reverse_proxy vgproxy $VG_NGX $UP
  sed -i 's/master_process on;/master_process off;/' "$WORK/vgproxy/nginx.conf"
  callgrind nginx $VG_NGX nginx -p "$WORK/vgproxy" -c "$WORK/vgproxy/nginx.conf"
  callgrind portcullis $VG_PORT "$PORTCULLIS" proxy \
    --listen 127.0.0.1:$VG_PORT --upstream http://127.0.0.1:$UP \
    --policy "$ROOT/policies/demo/policy.json" --workers 1 --event-log "$WORK/vg.events"
  if [ -n "${CALLGRIND_OUT:-}" ]; then cp "$LAST_PROFILE" "$CALLGRIND_OUT" && echo "profile: $CALLGRIND_OUT (callgrind_annotate)"; fi
fi
