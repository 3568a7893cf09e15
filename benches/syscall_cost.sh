#!/usr/bin/env bash
# System calls per request of `portcullis proxy --workers 1` for shared/bench's request shapes
# (benches/shapes.py sends them), and of nginx as a plain reverse proxy for the same requests,
# both in front of the same nginx+echo backend as benches/request_cost.sh. The kernel's share of a
# loopback request's CPU is most of it and callgrind does not see it; counting the calls per
# request (strace -f -c, every thread of the proxy) shows what each shape asks of the kernel.
# Each shape: a warm-up, then strace attached for exactly N requests.
#
# Usage: benches/syscall_cost.sh [SHAPE...]    (default: get post closed attack bodyattack)
# Env:   N=200  PORTCULLIS=target/release/portcullis  POLICY=/tmp/bench-policy.json (made from
#        shared/bench's bench-policy.json.in when missing)  NGINX=1 (also measure nginx)
#        PORT_BASE=18580  KEEP=DIR (keeps strace's tables there)
set -euo pipefail

N=${N:-200}
PORT_BASE=${PORT_BASE:-18580}
UP=$((PORT_BASE + 1)); NGX=$((PORT_BASE + 2)); PC=$((PORT_BASE + 3))
. "$(dirname "$0")/lib.sh"
ports_free $UP $NGX $PC
portcullis_binary release
need "apt-get install strace nginx libnginx-mod-http-echo python3" strace nginx python3
SHAPES=${*:-get post closed attack bodyattack}
shared_bench_backend $UP

# Calls per request of each shape for the proxy PID on PORT: each call's name and count / N.
measure() { # label port pid
  local label=$1 port=$2 pid=$3 shape out
  for shape in $SHAPES; do
    python3 "$ROOT/benches/shapes.py" "$port" "$shape" 20
    out="$WORK/strace.$label.$shape"
    strace -f -c -o "$out" -p "$pid" 2>/dev/null &
    local st=$!
    sleep 1 # strace attaches to every thread before the first request
    python3 "$ROOT/benches/shapes.py" "$port" "$shape" "$N"
    sleep 0.5 # the event writer's late batch is counted too
    kill -INT "$st"; wait "$st" 2>/dev/null || true
    awk -v n="$N" -v l="$label" -v s="$shape" '
      $1 ~ /^[0-9.]+$/ && NF >= 5 { calls = $4; name = $NF; if (name == "total") next;
        per[name] = calls / n; total += calls / n }
      END { line = ""; for (k in per) line = line sprintf(" %s %.2f", k, per[k]);
        printf "%-10s %-10s %6.2f calls/request:%s\n", l, s, total, line }' "$out"
    [ -z "${KEEP:-}" ] || { mkdir -p "$KEEP" && cp "$out" "$KEEP/"; }
  done
}

echo "N=$N, $(basename "$PORTCULLIS") $(cd "$ROOT" && git rev-parse --short HEAD), policy $POLICY"
if [ "${NGINX:-1}" = 1 ]; then
  nginx_reverse_proxy proxy $NGX $UP
  sed -i 's/master_process on;/master_process off;/' "$WORK/proxy/nginx.conf"
  run_nginx proxy
  wait_port $NGX
  SHAPES=$(tr ' ' '\n' <<<"$SHAPES" | grep -vx 'attack\|bodyattack' | tr '\n' ' ') \
    measure nginx $NGX "$SPAWNED"
fi
spawn "$PORTCULLIS" proxy --listen 127.0.0.1:$PC --upstream http://127.0.0.1:$UP \
  --policy "$POLICY" --workers 1 >"$WORK/portcullis.stdout" 2>"$WORK/portcullis.log"
wait_port $PC "$WORK/portcullis.log"
measure portcullis $PC "$SPAWNED"
