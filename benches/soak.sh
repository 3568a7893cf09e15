#!/usr/bin/env bash
# Memory soak: does the proxy's footprint stay flat under sustained load? Starts an nginx+echo backend
# and `portcullis proxy --workers 1` with the side-by-side benchmark's policy (OpenAPI + signatures),
# drives it with wrk -t2 -c64 using a mix of the benchmark's shapes (get, a 1 KB JSON post, a query
# attack and a body attack, so blocked requests, events and the scan memo are all exercised), and
# samples the proxy's PSS every INTERVAL seconds.
#
# A leak shows as PSS still rising after the warm-up: caches, memo slots and allocator arenas fill in
# the first minute and must then stay flat. The verdict compares the first sample after WARMUP with
# the highest later one and fails (exit 1) when it grew by more than GROWTH_MAX_KB.
#
# Usage: benches/soak.sh            (builds the dist binary if needed)
# Env:   DURATION=600 WARMUP=60 INTERVAL=30 GROWTH_MAX_KB=2048 PORT_BASE=19400
#        PORTCULLIS=target/dist/portcullis  SHARED=../shared (for bench/openapi.yaml and its policy)
set -euo pipefail

DURATION=${DURATION:-600}
WARMUP=${WARMUP:-60}
INTERVAL=${INTERVAL:-30}
GROWTH_MAX_KB=${GROWTH_MAX_KB:-2048}
PORT_BASE=${PORT_BASE:-19400}
. "$(dirname "$0")/lib.sh"
SHARED=${SHARED:-$ROOT/../shared}
UP_PORT=$((PORT_BASE + 1))
PC_PORT=$((PORT_BASE + 2))
ports_free $UP_PORT $PC_PORT

need "apt-get install nginx libnginx-mod-http-echo wrk curl" nginx wrk curl
ECHO_MODULE=/usr/lib/nginx/modules/ngx_http_echo_module.so
[ -f "$ECHO_MODULE" ] || { echo "missing $ECHO_MODULE (apt-get install libnginx-mod-http-echo)" >&2; exit 2; }

portcullis_binary dist

# The backend answers GETs with a fixed pet and echoes POST bodies, like the side-by-side benchmark's.
nginx_conf nginx "default_type application/json;
  server {
    listen 127.0.0.1:$UP_PORT;
    location / {
      if (\$request_method = POST) { echo_read_request_body; echo_request_body; break; }
      return 200 '{\"id\":123,\"name\":\"Rex\",\"tag\":\"dog\",\"status\":\"available\"}\n';
    }
  }" "load_module $ECHO_MODULE;"
run_nginx nginx

sed "s#@SPEC@#$SHARED/bench/openapi.yaml#" "$SHARED/bench/bench-policy.json.in" > "$WORK/policy.json"
POLICY=$WORK/policy.json portcullis_proxy proxy "$PC_PORT" "http://127.0.0.1:$UP_PORT"
PROXY=$SPAWNED
for _ in $(seq 100); do
  curl -fs -o /dev/null -H 'Host: api.example.test' "http://127.0.0.1:$PC_PORT/api/pets/123" && break
  sleep 0.1
done

# One request of each shape in turn; the bodies are the side-by-side benchmark's.
BODY='{"id":123,"name":"Rex","tag":"dog","status":"available","category":{"id":7,"name":"Dogs"},"photoUrls":["https://img.example.test/pets/123/1.jpg","https://img.example.test/pets/123/2.jpg"],"tags":[{"id":1,"name":"friendly"},{"id":2,"name":"vaccinated"},{"id":3,"name":"house-trained"}],"owner":{"firstName":"Alice","lastName":"Smith","email":"alice.smith@example.test","phone":"+1-555-0100","address":{"street":"42 Main Street","city":"Springfield","zip":"12345","country":"US"}},"medical":{"weightKg":21.5,"heightCm":55,"vaccinations":[{"name":"rabies","date":"2024-03-01"},{"name":"distemper","date":"2024-04-15"}],"notes":"Healthy and active. Enjoys long walks in the park and playing fetch with a tennis ball every morning."},"description":"Rex is a loyal and gentle companion who gets along well with children and other pets. He knows basic commands like sit, stay and come, and he loves treats, naps in the sun and car rides to the beach on weekends with the family."}'
BADBODY='{"id":124,"name":"Max","tag":"dog","status":"available","category":{"id":7,"name":"Dogs"},"photoUrls":["https://img.example.test/pets/124/1.jpg"],"tags":[{"id":1,"name":"friendly"}],"owner":{"firstName":"Bob","lastName":"1'"'"' OR '"'"'1'"'"'='"'"'1","email":"bob@example.test"},"description":"<script>alert(document.cookie)</script> Max is a playful dog who loves to run around the garden all day long and chase squirrels up the old oak tree near the fence."}'
cat > "$WORK/mix.lua" <<EOF
local shapes = {
  {"GET", "/api/pets/123?limit=10", nil},
  {"POST", "/api/pets", [[$BODY]]},
  {"GET", "/api/pets/123?q=1%27%20OR%20%271%27=%271", nil},
  {"POST", "/api/pets", [[$BADBODY]]},
}
local n = 0
wrk.headers["Host"] = "api.example.test"
wrk.headers["User-Agent"] = "bench-client/1.0 (wrk)"
wrk.headers["Accept"] = "application/json"
wrk.headers["Accept-Language"] = "en-US,en;q=0.8"
wrk.headers["Authorization"] = "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyLTEyMyJ9.c2lnbmF0dXJlLXBsYWNlaG9sZGVy"
wrk.headers["Content-Type"] = "application/json"
request = function()
  n = n + 1
  local s = shapes[(n % #shapes) + 1]
  return wrk.format(s[1], s[2], nil, s[3])
end
EOF

pss_kb() { awk '/^Pss:/ {print $2}' "/proc/$PROXY/smaps_rollup"; }

echo "# $(date -u +%FT%TZ) soak ${DURATION}s, wrk -t2 -c64, mix get/post/attack/bodyattack; load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# PSS after start: $(pss_kb) kB"
spawn wrk -t2 -c64 -d"${DURATION}s" --timeout 5s -s "$WORK/mix.lua" "http://127.0.0.1:$PC_PORT" > "$WORK/wrk.out" 2>&1
WRK=$SPAWNED

BASE=""
PEAK=0
printf '%8s %10s\n' seconds pss_kb
for ((t = INTERVAL; t <= DURATION; t += INTERVAL)); do
  sleep "$INTERVAL"
  kill -0 "$PROXY" 2>/dev/null || { echo "proxy exited; log:" >&2; cat "$WORK/proxy.log" >&2; exit 1; }
  pss=$(pss_kb)
  printf '%8d %10d\n' "$t" "$pss"
  if [ "$t" -ge "$WARMUP" ]; then
    if [ -z "$BASE" ]; then BASE=$pss; elif [ "$pss" -gt "$PEAK" ]; then PEAK=$pss; fi
  fi
done
wait "$WRK" || true
grep -E "requests in|Non-2xx|Socket errors" "$WORK/wrk.out" | sed 's/^/# wrk: /'

[ -n "$BASE" ] || { echo "DURATION must exceed WARMUP" >&2; exit 2; }
GROWTH=$((PEAK > BASE ? PEAK - BASE : 0))
echo "# PSS at ${WARMUP}s: $BASE kB; highest later: $PEAK kB; growth: $GROWTH kB (limit $GROWTH_MAX_KB kB)"
[ "$GROWTH" -le "$GROWTH_MAX_KB" ] || { echo "FAIL: PSS grew after warm-up" >&2; exit 1; }
echo "PASS"
