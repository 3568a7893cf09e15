#!/usr/bin/env bash
# Runs the bigsuds client test against examples/soap_server.rs: creates a venv (VENV, default
# .venv-soap) with suds-community + bigsuds, builds the example, runs pytest. Needs python3 with
# venv, and dig (bind9-dnsutils) for the DNS checks.
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV="${VENV:-.venv-soap}"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
"$VENV/bin/pip" install -q -r tests/clients/requirements-soap.txt
"$VENV/bin/pip" install -q --no-deps bigsuds==1.0.6
cargo build --locked --quiet --example soap_server
export SOAP_SERVER_BIN="${CARGO_TARGET_DIR:-target}/debug/examples/soap_server"
exec "$VENV/bin/python" -m pytest -q tests/clients/test_bigsuds.py "$@"
