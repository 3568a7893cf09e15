#!/usr/bin/env bash
# Detection through the real proxy: builds the release binary (plain `--release`: what is blocked
# does not depend on how the binary is optimised), starts a tiny upstream that answers
# 200 to everything, runs `portcullis proxy --workers 2` with policies/eval/generic-blocking.json and
# replays the detection corpus with waf_eval.py (blocked = 403 or the default "Request Rejected" page).
#
# Usage: benches/detection.sh [CORPUS]      (default /work/shared/corpus/dev.jsonl)
# Env:   CORPUS=... EVAL=/work/shared/corpus/waf_eval.py PORT_BASE=18180 MAX_SECONDS=900
#        PORTCULLIS=path/to/binary (skips the build)  EVAL_ARGS="--sample 500" (extra waf_eval.py flags)
set -euo pipefail

. "$(dirname "$0")/lib.sh"
CORPUS=${1:-${CORPUS:-/work/shared/corpus/dev.jsonl}}
EVAL=${EVAL:-$(dirname "$CORPUS")/waf_eval.py}
PORT_BASE=${PORT_BASE:-18180}
MAX_SECONDS=${MAX_SECONDS:-900}
UP_PORT=$((PORT_BASE + 1))
PC_PORT=$((PORT_BASE + 2))
ports_free $UP_PORT $PC_PORT
POLICY=${POLICY:-$ROOT/policies/eval/generic-blocking.json}

[ -f "$CORPUS" ] || { echo "corpus not found: $CORPUS" >&2; exit 1; }
[ -f "$EVAL" ] || { echo "waf_eval.py not found: $EVAL (set EVAL=)" >&2; exit 1; }

portcullis_binary release

# Upstream: answers 200 with a short body to every method and path (reads and discards the body).
cat >"$WORK/upstream.py" <<'PY'
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class Ok(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def handle_one_request(self):
        try:
            self.raw_requestline = self.rfile.readline(65537)
            if not self.raw_requestline or not self.parse_request():
                self.close_connection = True
                return
            n = int(self.headers.get("Content-Length") or 0)
            if n:
                self.rfile.read(n)
            body = b"ok\n"
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            # A HEAD answer has no body: bytes after it would be read as the next response of
            # the pooled connection.
            if self.command != "HEAD":
                self.wfile.write(body)
            self.wfile.flush()
        except (ConnectionError, ValueError):
            self.close_connection = True
    def log_message(self, *args):
        pass

ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Ok).serve_forever()
PY
spawn python3 "$WORK/upstream.py" "$UP_PORT"
WORKERS=2 portcullis_proxy portcullis "$PC_PORT" "http://127.0.0.1:$UP_PORT"
wait_port "$UP_PORT"; wait_port "$PC_PORT" "$WORK/portcullis.log"

# shellcheck disable=SC2086
python3 "$EVAL" --target "http://127.0.0.1:$PC_PORT" --corpus "$CORPUS" --detail \
  --block-status 403 --block-pattern 'Request Rejected' --max-seconds "$MAX_SECONDS" \
  --label portcullis-generic-blocking ${EVAL_ARGS:-}

# Which violations fired (from the event log), to explain false positives.
if [ -s "$WORK/portcullis.events" ] && [ -n "${EVENTS_OUT:-}" ]; then cp "$WORK/portcullis.events" "$EVENTS_OUT"; fi
