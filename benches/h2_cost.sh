#!/usr/bin/env bash
# User-space instructions per HTTP/2 request of `portcullis proxy --workers 1`: curl sends shared/
# bench's get request (`GET /api/pets/123?limit=10`) over h2c with prior knowledge, one request per
# connection (curl 7.88 fails a second stream on a reused prior-knowledge connection), to the proxy
# under valgrind's callgrind in front of an nginx upstream answering a static JSON 200. A warm-up,
# the counters zeroed, then exactly N requests: the figure does not depend on the machine's load.
# It includes each connection's HTTP/2 handshake.
#
# Usage: benches/h2_cost.sh
# Env:   N=100  PORTCULLIS=target/release/portcullis  POLICY=/tmp/bench-policy.json (made from
#        shared/bench's bench-policy.json.in when missing)  PORT_BASE=18680  KEEP=DIR (keeps the
#        callgrind profile there)
set -euo pipefail

N=${N:-100}
PORT_BASE=${PORT_BASE:-18680}
UP=$((PORT_BASE + 1)); PC=$((PORT_BASE + 3))
. "$(dirname "$0")/lib.sh"
ports_free $UP $PC
portcullis_binary release
need "apt-get install valgrind nginx curl" valgrind callgrind_control nginx curl
SHARED_BENCH=${SHARED_BENCH:-$ROOT/../shared/bench}
POLICY=${POLICY:-/tmp/bench-policy.json}
[ -f "$POLICY" ] || sed "s#@SPEC@#$SHARED_BENCH/openapi.yaml#" "$SHARED_BENCH/bench-policy.json.in" >"$POLICY"

nginx_static_upstream upstream $UP
run_nginx upstream
wait_port $UP

valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.%p" "$PORTCULLIS" proxy \
  --listen 127.0.0.1:$PC --upstream http://127.0.0.1:$UP --policy "$POLICY" --workers 1 \
  >"$WORK/proxy.stdout" 2>"$WORK/valgrind.log" &
VG=$!
PIDS+=("$VG")
# The start under valgrind (the signature database compiled) takes tens of seconds.
for _ in $(seq 1200); do (exec 3<>"/dev/tcp/127.0.0.1/$PC") 2>/dev/null && break; sleep 0.25; done

one() {
  curl -s -o /dev/null -w '%{http_code} HTTP/%{http_version}\n' --http2-prior-knowledge \
    -H 'Accept: application/json' -H 'User-Agent: bench-client/1.0 (curl)' \
    "http://127.0.0.1:$PC/api/pets/123?limit=10" || echo failed
}
for _ in $(seq 20); do one >/dev/null; done
callgrind_control -z "$VG" >/dev/null 2>&1
answers=$(for _ in $(seq "$N"); do one; done | sort | uniq -c | tr -s ' ')
callgrind_control --dump=h2 "$VG" >/dev/null 2>&1
dump=$(ls -t "$WORK"/cg.* | head -1)
total=$(awk -F': ' '/^summary:/ {print $2}' "$dump")
echo "N=$N, $(basename "$PORTCULLIS") $(cd "$ROOT" && git rev-parse --short HEAD), policy $POLICY"
printf "portcullis h2c-get %8d instructions/request (answers:%s)\n" $((total / N)) "$answers"
[ -z "${KEEP:-}" ] || { mkdir -p "$KEEP" && cp "$dump" "$KEEP/cg.portcullis.h2c-get"; }
