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
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CALL=/demo.v1.Greeter/SayHello

if ! command -v h2load >/dev/null 2>&1; then
  echo "installing h2load (apt: nghttp2-client)..." >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nghttp2-client >/dev/null
fi

PORTCULLIS=${PORTCULLIS:-}
if [ -z "$PORTCULLIS" ]; then
  TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
  (cd "$ROOT" && cargo build --profile dist --quiet --bin portcullis)
  PORTCULLIS=$TARGET/dist/portcullis
fi

WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# One gRPC message: HelloRequest{name: "ada"} (field 1, length 3), uncompressed 5-byte prefix.
printf '\x00\x00\x00\x00\x05\x0a\x03ada' >"$WORK/hello.bin"

"$PORTCULLIS" demo >"$WORK/demo.out" 2>"$WORK/demo.err" & PIDS+=($!)
UP=""
for _ in $(seq 100); do
  UP=$(sed -n 's/.*demo API (upstream) *http:\/\/\([0-9.:]*\).*/\1/p' "$WORK/demo.out" | head -1)
  [ -n "$UP" ] && break
  sleep 0.1
done
[ -n "$UP" ] || { echo "portcullis demo did not start:" >&2; cat "$WORK/demo.err" >&2; exit 1; }

"$PORTCULLIS" proxy --listen 127.0.0.1:$PORT --upstream "http://$UP" \
  --policy "$ROOT/policies/demo/policy.json" --workers 1 --event-log "$WORK/events.log" \
  2>"$WORK/proxy.log" & PC_PID=$!; PIDS+=($PC_PID)
for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/$PORT) 2>/dev/null && break; sleep 0.1; done

TICKS=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

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
    us=$(awk -v t=$((after - before)) -v hz="$TICKS" -v n="$done" 'BEGIN { printf "%.1f", t / hz * 1e6 / n }')
  fi
  printf '%-30s %12s %10s %10s %12s  %s calls, %s with HTTP 2xx\n' "$label" "$rps" "$mean" "$max" "$us" "$done" "$ok"
}

# Every call through the proxy must pass the WAF and reach the service (grpc-status 0).
status=$(curl -s -o /dev/null -w '%{http_code}' --http2-prior-knowledge -X POST \
  -H 'content-type: application/grpc' -H 'te: trailers' --data-binary @"$WORK/hello.bin" \
  "http://127.0.0.1:$PORT$CALL")
[ "$status" = 200 ] || { echo "warm-up call through the proxy got HTTP $status" >&2; exit 1; }
[ ! -s "$WORK/events.log" ] || { echo "the demo call was flagged:" >&2; cat "$WORK/events.log" >&2; exit 1; }

echo "h2load -c$CLIENTS -m$STREAMS -t$THREADS -D$DURATION, unary $CALL (HelloRequest, 10-byte frame), loopback, h2c"
printf '%-30s %12s %10s %10s %12s\n' "path" "requests/s" "mean" "max" "CPU us/call"
run "direct to the demo service" "http://$UP"
run "portcullis (1 worker)" "http://127.0.0.1:$PORT" "$PC_PID"
[ ! -s "$WORK/events.log" ] || { echo "security events during the run:" >&2; head -3 "$WORK/events.log" >&2; exit 1; }
