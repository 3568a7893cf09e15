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
. "$(dirname "$0")/lib.sh"
ports_free $UP_PORT $NGX_PORT $PC_PORT
PATH_UNDER_TEST=/api/users/1

apt_for "wrk nginx" wrk nginx
portcullis_binary dist

start_nginx_and_portcullis $UP_PORT $NGX_PORT $PC_PORT

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
  wrk_figures "$out"
  printf '%-22s %12s %10s %10s %14s  %s\n' "$label" "$RPS" "$P50" "$P99" "$(us_per $((after - before)) "$TOTAL")" "$ERRORS"
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
  for label in "$NGX_LABEL" "$PC_LABEL"; do
    rows=$(grep -F "$label" "$WORK/rounds")
    rps=$(awk '{ print $4 }' <<<"$rows" | median)
    p99=$(awk '{ print $6 }' <<<"$rows" | ms | median)
    cpu=$(awk '{ print $7 }' <<<"$rows" | median)
    printf 'median of %s rounds, %-22s %10.0f req/s   p99 %.2fms   %.1f CPU us/req\n' "$ROUNDS" "$label" "$rps" "$p99" "$cpu"
  done
fi
