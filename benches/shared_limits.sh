#!/usr/bin/env bash
# What a rate limit shared in Redis adds to a request, on loopback: three `portcullis proxy
# --workers 1` (demo policy, an access profile admitting anonymous requests) in front of the same
# nginx upstream (a static 200), differing only in the rate limit:
#   none    no rate limit
#   local   a token bucket counted by the node itself
#   shared  the same bucket counted in a local redis-server (one EVALSHA round trip per request)
# The limit never refuses (10^9/s), so every request goes upstream. wrk drives each in turn
# (rounds alternate the order), first with one connection (latency without queueing), then with
# CONNS connections; printed: requests/s, p50, p99 and the proxy's CPU microseconds per request,
# and per connection count the p99 the shared store adds over the local limit (medians of rounds).
# The shared proxy's own measure of what each Redis call took (`portcullis_shared_store_seconds`,
# before and after each run) gives the p50/p99 of the time a limited request waits on the store,
# which the machine's other jobs disturb less than wrk's end-to-end p99. Run as root, every process
# of the bench runs at nice -19 (the machine is shared with compilers).
#
# Usage: flock /work/.bench.lock benches/shared_limits.sh      (needs wrk, nginx, redis-server)
# Env:   DURATION=8 CONNS=16 ROUNDS=3 PORT_BASE=18280 PORTCULLIS=target/dist/portcullis
set -euo pipefail

DURATION=${DURATION:-8}
CONNS=${CONNS:-16}
ROUNDS=${ROUNDS:-3}
PORT_BASE=${PORT_BASE:-18280}
UP_PORT=$((PORT_BASE + 1)); REDIS_PORT=$((PORT_BASE + 2)); METRICS_PORT=$((PORT_BASE + 3))
. "$(dirname "$0")/lib.sh"
ports_free $UP_PORT $REDIS_PORT $METRICS_PORT
[ "$(id -u)" = 0 ] && NICE=(nice -n -19)
portcullis_binary dist
need "apt-get install wrk nginx redis-server" wrk nginx redis-server
URL_PATH=/api/users/1

nginx_static_upstream up $UP_PORT
run_nginx up
spawn "${NICE[@]}" redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --daemonize no \
  --dir "$WORK" >"$WORK/redis.log" 2>&1

profile() { # name rateLimit-json
  printf '{"methods": {"k": {"apiKey": {"in": "header", "name": "x-api-key", "keys": []}}}, "default": []%s}\n' "$2" \
    >"$WORK/$1.json"
}
LIMIT='"requestsPerSecond": 1000000000, "burst": 1000000000, "by": "ip"'
profile none ''
profile local ", \"rateLimit\": {$LIMIT}"
profile shared ", \"rateLimit\": {$LIMIT, \"store\": {\"redis\": \"redis://127.0.0.1:$REDIS_PORT/0\", \"timeoutMs\": 50}}"

declare -A PORT PID
i=10
for cfg in none local shared; do
  PORT[$cfg]=$((PORT_BASE + i)); i=$((i + 1))
  extra=(); [ "$cfg" = shared ] && extra=(--metrics-listen 127.0.0.1:$METRICS_PORT)
  portcullis_proxy "$cfg" "${PORT[$cfg]}" http://127.0.0.1:$UP_PORT --access "$WORK/$cfg.json" "${extra[@]}"
  PID[$cfg]=$SPAWNED
done
wait_port $UP_PORT; wait_port $REDIS_PORT
for cfg in none local shared; do wait_port "${PORT[$cfg]}" "$WORK/$cfg.log"; done
grep -q "shared store connected" "$WORK/shared.log" || { echo "the shared proxy is not connected to Redis" >&2; cat "$WORK/shared.log" >&2; exit 1; }

# The cumulative buckets of portcullis_shared_store_seconds: "le count" lines (`le` may come
# before or after the `store` label).
store_seconds() {
  curl -s "http://127.0.0.1:$METRICS_PORT/metrics" |
    sed -n 's/^portcullis_shared_store_seconds_bucket{.*le="\([^"]*\)"[^}]*} \([0-9]*\).*/\1 \2/p'
}
# p50 and p99 (bucket upper bounds, ms) of the calls between the snapshot in $1 and stdin.
quantiles() {
  awk 'NR == FNR { before[$1] = $2; next }
       { le[++n] = $1; c[n] = $2 - before[$1] }
       END { total = c[n]; p50 = p99 = "";
             for (i = 1; i <= n; i++) {
               if (p50 == "" && c[i] >= 0.5 * total) p50 = le[i];
               if (p99 == "" && c[i] >= 0.99 * total) p99 = le[i] }
             printf "%d %.3f %.3f\n", total, p50 * 1000, p99 * 1000 }' "$1" -
}

run() { # cfg conns
  local cfg=$1 conns=$2 port=${PORT[$1]} pid=${PID[$1]}
  local status
  status=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port$URL_PATH")
  [ "$status" = 200 ] || { echo "$cfg: warm-up request got HTTP $status" >&2; exit 1; }
  wrk -t1 -c"$conns" -d2s "http://127.0.0.1:$port$URL_PATH" >/dev/null
  local before after out
  [ "$cfg" = shared ] && store_seconds >"$WORK/hist.before"
  before=$(cpu_ticks "$pid")
  out=$("${NICE[@]}" wrk -t1 -c"$conns" -d"${DURATION}s" --latency "http://127.0.0.1:$port$URL_PATH")
  after=$(cpu_ticks "$pid")
  [ "$cfg" = shared ] && store_seconds | quantiles "$WORK/hist.before" >>"$WORK/store.c$conns"
  wrk_figures "$out"
  printf '%-8s %5s %12s %9.3f %9.3f %10s  %s\n' "$cfg" "$conns" "$RPS" "$(ms <<<"$P50")" "$(ms <<<"$P99")" \
    "$(us_per $((after - before)) "$TOTAL")" "$ERRORS"
}

echo "wrk -t1, ${DURATION}s per run, GET $URL_PATH, loopback; upstream nginx static 200; proxies --workers 1"
echo "load: $(uptime)"
printf '%-8s %5s %12s %9s %9s %10s\n' limit conns requests/s "p50 ms" "p99 ms" "CPU us/req"
for round in $(seq "$ROUNDS"); do
  order="none local shared"
  [ $((round % 2)) = 0 ] && order="shared local none"
  for conns in 1 "$CONNS"; do
    for cfg in $order; do run "$cfg" "$conns"; done
  done
done | tee "$WORK/rounds"
for conns in 1 "$CONNS"; do
  for cfg in none local shared; do
    rows=$(awk -v c="$cfg" -v n="$conns" '$1 == c && $2 == n' "$WORK/rounds")
    printf 'median of %s rounds, %-6s c=%-3s %9.0f req/s  p50 %.3f ms  p99 %.3f ms  %.1f CPU us/req\n' "$ROUNDS" "$cfg" "$conns" \
      "$(awk '{print $3}' <<<"$rows" | median)" "$(awk '{print $4}' <<<"$rows" | median)" \
      "$(awk '{print $5}' <<<"$rows" | median)" "$(awk '{print $6}' <<<"$rows" | median)"
  done
  p_local=$(awk -v n="$conns" '$1 == "local" && $2 == n {print $5}' "$WORK/rounds" | median)
  p_shared=$(awk -v n="$conns" '$1 == "shared" && $2 == n {print $5}' "$WORK/rounds" | median)
  awk -v a="$p_shared" -v b="$p_local" -v n="$conns" 'BEGIN { printf "c=%s: the shared store adds %.3f ms to the p99 of a limited request (wrk, median of rounds)\n", n, a - b }'
  awk -v n="$conns" '{ calls += $1; if ($2 > p50) p50 = $2; if ($3 > p99) p99 = $3 }
    END { printf "c=%s: time waiting on Redis per limited request (%d calls): p50 <= %.3f ms, p99 <= %.3f ms (the worst round'"'"'s histogram bucket)\n", n, calls, p50, p99 }' "$WORK/store.c$conns"
done
echo "redis: $(redis-cli -p "$REDIS_PORT" info stats | awk -F: '/total_commands_processed/ {print $2}' | tr -d '\r') commands; fallbacks: $(grep -c 'shared store unavailable' "$WORK/shared.log" || true)"
