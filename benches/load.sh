#!/usr/bin/env bash
# End-to-end load comparison on loopback: nginx as a plain reverse proxy (1 worker) versus
# `portcullis proxy --workers 1` with the demo policy, in front of the same upstream (an nginx
# answering a static 200), driven by wrk. Prints requests/s, p50/p99 latency and CPU microseconds
# per request of the proxy process (utime+stime deltas from /proc/<pid>/stat).
#
# With ROUNDS=N (N > 1) the two proxies alternate (nginx first in odd rounds, Portcullis first in
# even ones, so neither always runs on the warmer machine) and a last line gives each one's medians.
#
# Usage: benches/load.sh            (builds the dist binary if needed: the shipped build, fat LTO)
# Env:   DURATION=10 CONNS=50 THREADS=1 ROUNDS=1 PORT_BASE=18080 PORTCULLIS=target/dist/portcullis
set -euo pipefail

DURATION=${DURATION:-10}
CONNS=${CONNS:-50}
THREADS=${THREADS:-1}
ROUNDS=${ROUNDS:-1}
PORT_BASE=${PORT_BASE:-18080}
UP_PORT=$((PORT_BASE + 1))
NGX_PORT=$((PORT_BASE + 2))
PC_PORT=$((PORT_BASE + 3))
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PATH_UNDER_TEST=/api/users/1

need() { command -v "$1" >/dev/null 2>&1; }
if ! need wrk || ! need nginx; then
  echo "installing wrk and nginx (apt)..." >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq wrk nginx-light >/dev/null 2>&1 \
    || DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq wrk nginx >/dev/null
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)

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

nginx_conf() { # name body
  mkdir -p "$WORK/$1/logs"
  cat >"$WORK/$1/nginx.conf" <<EOF
daemon off;
master_process on;
worker_processes 1;
pid $WORK/$1/nginx.pid;
error_log $WORK/$1/logs/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $WORK/$1/body;
  proxy_temp_path $WORK/$1/proxy;
  fastcgi_temp_path $WORK/$1/fastcgi;
  uwsgi_temp_path $WORK/$1/uwsgi;
  scgi_temp_path $WORK/$1/scgi;
  keepalive_requests 1000000;
  $2
}
EOF
}

nginx_conf upstream "server { listen 127.0.0.1:$UP_PORT; location / { default_type application/json; return 200 '{\"id\":1,\"name\":\"Ada\"}'; } }"
nginx_conf proxy "upstream up { server 127.0.0.1:$UP_PORT; keepalive 64; }
  server { listen 127.0.0.1:$NGX_PORT; location / { proxy_pass http://up; proxy_http_version 1.1;
    proxy_set_header Connection \"\"; proxy_set_header Host \$host;
    proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for; } }"

"$NGINX" -p "$WORK/upstream" -c "$WORK/upstream/nginx.conf" & PIDS+=($!)
"$NGINX" -p "$WORK/proxy" -c "$WORK/proxy/nginx.conf" & NGX_MASTER=$!; PIDS+=($NGX_MASTER)
"$PORTCULLIS" proxy --listen 127.0.0.1:$PC_PORT --upstream http://127.0.0.1:$UP_PORT \
  --policy "$ROOT/policies/demo/policy.json" --workers 1 --event-log "$WORK/events.log" \
  2>"$WORK/portcullis.log" & PC_PID=$!; PIDS+=($PC_PID)

wait_port() { for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/$1) 2>/dev/null && return 0; sleep 0.1; done; echo "port $1 not up" >&2; exit 1; }
wait_port $UP_PORT; wait_port $NGX_PORT; wait_port $PC_PORT

# The nginx proxy's worker: the child of its master.
NGX_WORKER=$(pgrep -P "$NGX_MASTER" | head -1)
TICKS=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

run() { # label pid port
  local label=$1 pid=$2 port=$3
  local status
  status=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port$PATH_UNDER_TEST")
  [ "$status" = 200 ] || { echo "$label: warm-up request got HTTP $status" >&2; exit 1; }
  wrk -t"$THREADS" -c"$CONNS" -d2s "http://127.0.0.1:$port$PATH_UNDER_TEST" >/dev/null # warm-up
  local before after out
  before=$(cpu_ticks "$pid")
  out=$(wrk -t"$THREADS" -c"$CONNS" -d"${DURATION}s" --latency "http://127.0.0.1:$port$PATH_UNDER_TEST")
  after=$(cpu_ticks "$pid")
  local rps p50 p99 total errors
  rps=$(awk '/^Requests\/sec/ {print $2}' <<<"$out")
  p50=$(awk '$1=="50%" {print $2}' <<<"$out")
  p99=$(awk '$1=="99%" {print $2}' <<<"$out")
  total=$(awk '/requests in/ {print $1}' <<<"$out")
  errors=$(awk '/Non-2xx|Socket errors/ {print}' <<<"$out" | tr '\n' ' ')
  local us_per_req
  us_per_req=$(awk -v t=$((after - before)) -v hz="$TICKS" -v n="$total" 'BEGIN { printf "%.1f", t / hz * 1e6 / n }')
  printf '%-22s %12s %10s %10s %14s  %s\n' "$label" "$rps" "$p50" "$p99" "$us_per_req" "$errors"
}

echo "wrk -t$THREADS -c$CONNS -d${DURATION}s, GET $PATH_UNDER_TEST, loopback, upstream: nginx static 200"
printf '%-22s %12s %10s %10s %14s\n' "proxy" "requests/s" "p50" "p99" "CPU us/req"
NGX_LABEL="nginx (1 worker)"
PC_LABEL="portcullis (1 worker)"
for round in $(seq "$ROUNDS"); do
  if [ $((round % 2)) = 1 ]; then
    run "$NGX_LABEL" "$NGX_WORKER" $NGX_PORT
    run "$PC_LABEL" "$PC_PID" $PC_PORT
  else
    run "$PC_LABEL" "$PC_PID" $PC_PORT
    run "$NGX_LABEL" "$NGX_WORKER" $NGX_PORT
  fi
done | tee "$WORK/rounds"
if [ "$ROUNDS" -gt 1 ]; then
  # Medians per proxy of requests/s, p99 (in ms) and CPU us/request over the rounds (fields 4, 6
  # and 7: each label is three words).
  median() { sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
  for label in "$NGX_LABEL" "$PC_LABEL"; do
    rows=$(grep -F "$label" "$WORK/rounds")
    rps=$(awk '{ print $4 }' <<<"$rows" | median)
    p99=$(awk '{ v = $6; print v ~ /us$/ ? v / 1000 : v ~ /ms$/ ? v + 0 : v * 1000 }' <<<"$rows" | median)
    cpu=$(awk '{ print $7 }' <<<"$rows" | median)
    printf 'median of %s rounds, %-22s %10.0f req/s   p99 %.2fms   %.1f CPU us/req\n' "$ROUNDS" "$label" "$rps" "$p99" "$cpu"
  done
fi
