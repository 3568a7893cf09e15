# What the shell benches share, sourced by each (`. "$(dirname "$0")/lib.sh"`): a work directory
# and the processes started in it, removed and stopped on exit; the binary under test; the nginx
# upstream and reverse proxy they measure against; waiting for a port; CPU time and wrk's figures.
# shellcheck shell=bash

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
NICE=() # a command prefix for every process the bench starts (`nice -n -19`)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/portcullis-bench.XXXXXX")
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# Runs CMD... in the background, to be stopped on exit; its pid is in $SPAWNED. Redirections of
# the call apply to CMD.
spawn() {
  "$@" &
  SPAWNED=$!
  PIDS+=("$SPAWNED")
}

# Exits with a hint unless every TOOL is on PATH: `need "apt-get install ..." TOOL...`.
need() {
  local hint=$1 tool
  shift
  for tool in "$@"; do
    command -v "$tool" >/dev/null 2>&1 || { echo "needs $tool ($hint)" >&2; exit 2; }
  done
}

# Installs the Debian PACKAGES unless every TOOL is already there: `apt_for "PACKAGES" TOOL...`.
apt_for() {
  local packages=$1 tool sudo=""
  shift
  for tool in "$@"; do
    command -v "$tool" >/dev/null 2>&1 && continue
    echo "installing $packages (apt)..." >&2
    [ "$(id -u)" -ne 0 ] && sudo=sudo
    $sudo apt-get update -qq >/dev/null
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $packages >/dev/null
    return
  done
}

# Sets $PORTCULLIS to the binary under test: as given, else the PROFILE build (dist, release),
# built when missing.
portcullis_binary() {
  PORTCULLIS=${PORTCULLIS:-${CARGO_TARGET_DIR:-$ROOT/target}/$1/portcullis}
  [ -x "$PORTCULLIS" ] || (cd "$ROOT" && cargo build --profile "$1" --quiet --bin portcullis)
}

# Exits unless nothing listens on any of the loopback PORTs: a second benchmark run on the same
# ports would send its requests to the first run's processes and measure them, not its own.
ports_free() { # port...
  for p in "$@"; do
    if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "port $p is in use (another benchmark running?): set PORT_BASE to a free range" >&2
      exit 2
    fi
  done
}

# Waits (20 s at the most) until something listens on 127.0.0.1:PORT; else prints LOG, if given,
# and exits.
wait_port() {
  for _ in $(seq 200); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "port $1 not up" >&2
  [ -z "${2:-}" ] || cat "$2" >&2
  exit 1
}

# Writes $WORK/NAME/nginx.conf: one worker, no access log, temporary files under $WORK/NAME, and
# HTTP_BLOCK inside `http { }`; MAIN_LINES (load_module ...) go first.
nginx_conf() { # name http-block [main-lines]
  mkdir -p "$WORK/$1/logs"
  cat >"$WORK/$1/nginx.conf" <<EOF
${3:-}
daemon off; master_process on; worker_processes 1; pid $WORK/$1/nginx.pid;
error_log $WORK/$1/logs/error.log warn;
events { worker_connections 4096; }
http { access_log off; client_body_temp_path $WORK/$1/body; proxy_temp_path $WORK/$1/proxy;
  fastcgi_temp_path $WORK/$1/fastcgi; uwsgi_temp_path $WORK/$1/uwsgi; scgi_temp_path $WORK/$1/scgi;
  keepalive_requests 1000000;
  $2
}
EOF
}

# The upstream every proxy bench measures against: nginx on PORT answering a static JSON 200.
nginx_static_upstream() { # name port
  nginx_conf "$1" "server { listen 127.0.0.1:$2; location / { default_type application/json; return 200 '{\"id\":1,\"name\":\"Ada\"}'; } }"
}

# nginx as a plain reverse proxy on LISTEN_PORT in front of 127.0.0.1:UPSTREAM_PORT (keep-alive).
nginx_reverse_proxy() { # name listen-port upstream-port
  nginx_conf "$1" "upstream up { server 127.0.0.1:$3; keepalive 64; }
  server { listen 127.0.0.1:$2; location / { proxy_pass http://up; proxy_http_version 1.1;
    proxy_set_header Connection \"\"; proxy_set_header Host \$host;
    proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for; } }"
}

# shared/bench's policy and backend, for the benches that send its request shapes
# (request_cost.sh, syscall_cost.sh): $POLICY made from shared/bench's bench-policy.json.in when
# missing, and nginx with the echo module on PORT answering a static JSON 200, POST bodies echoed
# back, as in shared/bench.
shared_bench_backend() { # port
  local echo_module=/usr/lib/nginx/modules/ngx_http_echo_module.so
  [ -f "$echo_module" ] || { echo "needs $echo_module (apt-get install libnginx-mod-http-echo)" >&2; exit 2; }
  SHARED_BENCH=${SHARED_BENCH:-$ROOT/../shared/bench}
  POLICY=${POLICY:-/tmp/bench-policy.json}
  [ -f "$POLICY" ] || sed "s#@SPEC@#$SHARED_BENCH/openapi.yaml#" "$SHARED_BENCH/bench-policy.json.in" >"$POLICY"
  nginx_conf upstream "server { listen 127.0.0.1:$1; location / { default_type application/json;
    if (\$request_method = POST) { echo_read_request_body; echo_request_body; break; }
    return 200 '{\"id\":123,\"name\":\"Rex\",\"tag\":\"dog\",\"status\":\"available\"}\n'; } }" \
    "load_module $echo_module;"
  run_nginx upstream
  wait_port "$1"
}

# Runs nginx with $WORK/NAME/nginx.conf (in the background; its master's pid in $SPAWNED).
run_nginx() { # name
  spawn "${NICE[@]}" "$(command -v nginx || echo /usr/sbin/nginx)" -p "$WORK/$1" -c "$WORK/$1/nginx.conf"
}

# Starts `portcullis proxy` on PORT in front of UPSTREAM (a URL) with $POLICY (default: the demo
# policy) and $WORKERS workers (default 1); events in $WORK/NAME.events, stderr in $WORK/NAME.log,
# its pid in $SPAWNED. EXTRA arguments go last.
portcullis_proxy() { # name port upstream-url [extra...]
  local name=$1 port=$2 upstream=$3
  shift 3
  spawn "${NICE[@]}" "$PORTCULLIS" proxy --listen "127.0.0.1:$port" --upstream "$upstream" \
    --policy "${POLICY:-$ROOT/policies/demo/policy.json}" --workers "${WORKERS:-1}" \
    --event-log "$WORK/$name.events" "$@" 2>"$WORK/$name.log"
}

# What load.sh and proxy_cost.sh compare: the static upstream on port UP, nginx proxying to it on
# NGX, Portcullis on PC. Sets NGX_WORKER (the nginx proxy's one worker process) and PC_PID.
start_nginx_and_portcullis() { # up ngx pc
  nginx_static_upstream upstream "$1"
  nginx_reverse_proxy proxy "$2" "$1"
  run_nginx upstream
  run_nginx proxy
  local master=$SPAWNED
  portcullis_proxy portcullis "$3" "http://127.0.0.1:$1"
  PC_PID=$SPAWNED
  wait_port "$1"; wait_port "$2"; wait_port "$3" "$WORK/portcullis.log"
  NGX_WORKER=$(pgrep -P "$master" | head -1)
}

TICKS=$(getconf CLK_TCK)
# User plus system CPU of PID so far, in clock ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# CPU microseconds per request: TICKS clock ticks over N requests.
us_per() { awk -v t="$1" -v hz="$TICKS" -v n="$2" 'BEGIN { printf "%.1f", t / hz * 1e6 / n }'; }

# Reads wrk's output (run with --latency) and sets RPS, P50, P99 (as wrk prints them), TOTAL
# (requests) and ERRORS (its Non-2xx and socket error lines).
wrk_figures() { # wrk-output
  RPS=$(awk '/^Requests\/sec/ {print $2}' <<<"$1")
  P50=$(awk '$1=="50%" {print $2}' <<<"$1")
  P99=$(awk '$1=="99%" {print $2}' <<<"$1")
  TOTAL=$(awk '/requests in/ {print $1}' <<<"$1")
  ERRORS=$(awk '/Non-2xx|Socket errors/ {print}' <<<"$1" | tr '\n' ' ')
}

# A latency as wrk prints it (850.00us, 1.20ms, 1.01s) in milliseconds.
ms() { awk '{ v = $1; print v ~ /us$/ ? v / 1000 : v ~ /ms$/ ? v + 0 : v * 1000 }'; }

# The median of the numbers on stdin, one a line.
median() { sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
