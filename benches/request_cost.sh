#!/usr/bin/env bash
# User-space instructions per request of `portcullis proxy --workers 1` for shared/bench's request
# shapes (get, post, closed, attack, bodyattack; benches/shapes.py sends them), and of nginx as a
# plain reverse proxy for the same requests, both under valgrind's callgrind in front of the same
# nginx+echo backend (POST bodies echoed, as in shared/bench). Each shape: a warm-up, the counters
# zeroed, then exactly N requests, so the figure does not depend on the machine's load.
#
# Usage: benches/request_cost.sh [SHAPE...]    (default: get post closed attack bodyattack)
# Env:   N=200  PORTCULLIS=target/release/portcullis  POLICY=/tmp/bench-policy.json (made from
#        shared/bench's bench-policy.json.in when missing)  NGINX=1 (also measure nginx)
#        PORT_BASE=18480  KEEP=DIR (keeps the callgrind profiles there, for callgrind_annotate)
set -euo pipefail

N=${N:-200}
PORT_BASE=${PORT_BASE:-18480}
UP=$((PORT_BASE + 1)); NGX=$((PORT_BASE + 2)); PC=$((PORT_BASE + 3))
. "$(dirname "$0")/lib.sh"
ports_free $UP $NGX $PC
portcullis_binary release
need "apt-get install valgrind nginx libnginx-mod-http-echo python3" valgrind callgrind_control nginx python3
SHAPES=${*:-get post closed attack bodyattack}
shared_bench_backend $UP

# Instructions per request of each shape for the proxy on PORT, run by CMD... under callgrind.
measure() { # label port cmd...
  local label=$1 port=$2 shape total dump
  shift 2
  valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.$label.%p" "$@" >"$WORK/$label.stdout" 2>"$WORK/valgrind.$label.log" &
  local vg=$!
  PIDS+=("$vg")
  # The start under valgrind (the signature database compiled) takes tens of seconds.
  for _ in $(seq 1200); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.25; done
  for shape in $SHAPES; do
    python3 "$ROOT/benches/shapes.py" "$port" "$shape" 20
    callgrind_control -z "$vg" >/dev/null 2>&1
    python3 "$ROOT/benches/shapes.py" "$port" "$shape" "$N"
    callgrind_control --dump="$label.$shape" "$vg" >/dev/null 2>&1
    dump=$(ls -t "$WORK"/cg."$label".* | head -1)
    total=$(awk -F': ' '/^summary:/ {print $2}' "$dump")
    printf "%-10s %-10s %8d instructions/request (%d requests)\n" "$label" "$shape" $((total / N)) "$N"
    [ -z "${KEEP:-}" ] || { mkdir -p "$KEEP" && cp "$dump" "$KEEP/cg.$label.$shape"; }
  done
  kill "$vg" 2>/dev/null || true
}

echo "N=$N, $(basename "$PORTCULLIS") $(cd "$ROOT" && git rev-parse --short HEAD), policy $POLICY"
if [ "${NGINX:-1}" = 1 ]; then
  # nginx without a master: its one process is the worker; it answers 403 to nothing, so the
  # blocked shapes are compared with its `closed`.
  nginx_reverse_proxy proxy $NGX $UP
  sed -i 's/master_process on;/master_process off;/' "$WORK/proxy/nginx.conf"
  SHAPES=$(tr ' ' '\n' <<<"$SHAPES" | grep -vx 'attack\|bodyattack' | tr '\n' ' ') \
    measure nginx $NGX nginx -p "$WORK/proxy" -c "$WORK/proxy/nginx.conf"
fi
measure portcullis $PC "$PORTCULLIS" proxy --listen 127.0.0.1:$PC --upstream http://127.0.0.1:$UP \
  --policy "$POLICY" --workers 1
