#!/usr/bin/env bash
# End-to-end gRPC throughput on loopback: h2load (Debian package nghttp2-client) sends unary
# demo.v1.Greeter/SayHello calls to the demo gRPC service (the upstream `portcullis demo` starts,
# h2c) directly, and through `portcullis proxy --workers 1` with the demo policy, whose gRPC profile
# decodes and checks every message against policies/demo/demo.proto. Prints requests/s, mean and
# max latency, and the proxy's CPU microseconds per call (utime+stime from /proc/<pid>/stat).
#
# Usage: benches/grpc_load.sh        (builds the dist binary if needed; `portcullis demo`
#                                     needs 127.0.0.1:8080 free)
# Env:   DURATION=10 CLIENTS=50 STREAMS=10 THREADS=1 PORT=18093 PORTCULLIS=target/dist/portcullis
set -euo pipefail

DURATION=${DURATION:-10}
CLIENTS=${CLIENTS:-50}
STREAMS=${STREAMS:-10}
THREADS=${THREADS:-1}
PORT=${PORT:-18093}
. "$(dirname "$0")/lib.sh"
CALL=/demo.v1.Greeter/SayHello

apt_for nghttp2-client h2load
portcullis_binary dist

# One gRPC message: HelloRequest{name: "ada"} (field 1, length 3), uncompressed 5-byte prefix.
printf '\x00\x00\x00\x00\x05\x0a\x03ada' >"$WORK/hello.bin"

spawn "$PORTCULLIS" demo >"$WORK/demo.out" 2>"$WORK/demo.err"
UP=""
for _ in $(seq 100); do
  UP=$(sed -n 's/.*demo API (upstream) *http:\/\/\([0-9.:]*\).*/\1/p' "$WORK/demo.out" | head -1)
  [ -n "$UP" ] && break
  sleep 0.1
done
[ -n "$UP" ] || { echo "portcullis demo did not start:" >&2; cat "$WORK/demo.err" >&2; exit 1; }

portcullis_proxy proxy "$PORT" "http://$UP"
PC_PID=$SPAWNED
wait_port "$PORT" "$WORK/proxy.log"

load() { # url [duration]
  h2load -D "${2:-$DURATION}" -c "$CLIENTS" -m "$STREAMS" -t "$THREADS" -d "$WORK/hello.bin" \
    -H 'content-type: application/grpc' -H 'te: trailers' "$1$CALL"
}

run() { # label url [pid]
  local label=$1 url=$2 pid=${3:-}
  load "$url" 2 >/dev/null # warm-up
  local before=0 after=0 out
  [ -n "$pid" ] && before=$(cpu_ticks "$pid")
  out=$(load "$url")
  [ -n "$pid" ] && after=$(cpu_ticks "$pid")
  local rps mean max done ok
  rps=$(awk '/^finished in/ {print $4}' <<<"$out")
  mean=$(awk '/^time for request:/ {print $6}' <<<"$out")
  max=$(awk '/^time for request:/ {print $5}' <<<"$out")
  done=$(awk '/^requests:/ {print $8}' <<<"$out")
  ok=$(awk '/^status codes:/ {print $3}' <<<"$out")
  local us="-"
  if [ -n "$pid" ]; then
    us=$(us_per $((after - before)) "$done")
  fi
  printf '%-30s %12s %10s %10s %12s  %s calls, %s with HTTP 2xx\n' "$label" "$rps" "$mean" "$max" "$us" "$done" "$ok"
}

# Every call through the proxy must pass the WAF and reach the service (grpc-status 0).
status=$(curl -s -o /dev/null -w '%{http_code}' --http2-prior-knowledge -X POST \
  -H 'content-type: application/grpc' -H 'te: trailers' --data-binary @"$WORK/hello.bin" \
  "http://127.0.0.1:$PORT$CALL")
[ "$status" = 200 ] || { echo "warm-up call through the proxy got HTTP $status" >&2; exit 1; }
[ ! -s "$WORK/proxy.events" ] || { echo "the demo call was flagged:" >&2; cat "$WORK/proxy.events" >&2; exit 1; }

echo "h2load -c$CLIENTS -m$STREAMS -t$THREADS -D$DURATION, unary $CALL (HelloRequest, 10-byte frame), loopback, h2c"
printf '%-30s %12s %10s %10s %12s\n' "path" "requests/s" "mean" "max" "CPU us/call"
run "direct to the demo service" "http://$UP"
run "portcullis (1 worker)" "http://127.0.0.1:$PORT" "$PC_PID"
[ ! -s "$WORK/proxy.events" ] || { echo "security events during the run:" >&2; head -3 "$WORK/proxy.events" >&2; exit 1; }
