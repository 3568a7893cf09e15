"""Starts real `portcullis serve` (controller) and `portcullis central` (central manager) processes
for the client tests.

The binary is $PORTCULLIS_BIN, else $CARGO_TARGET_DIR/debug/portcullis, else target/debug/portcullis.
REQUESTS_CA_BUNDLE / CURL_CA_BUNDLE are removed from the environment: requests lets them override
`session.verify=False`, which breaks bigrest against a self-signed certificate.
Each server's data directory is temporary and removed when the server stops; its stderr is kept
there (and printed if it does not start), its stdout (security events) is read and dropped.
"""
import os
import pathlib
import shutil
import subprocess
import tempfile
import threading

import pytest

PASSWORD = "Client-tests-pw1"

for var in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"):
    os.environ.pop(var, None)


def _binary():
    if os.environ.get("PORTCULLIS_BIN"):
        return os.environ["PORTCULLIS_BIN"]
    root = pathlib.Path(__file__).resolve().parents[2]
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", root / "target"))
    return str(target / "debug" / "portcullis")


class Server:
    def __init__(self, proc, host, port, data_dir):
        self.proc, self.host, self.port, self.data_dir = proc, host, port, data_dir
        self.device = f"{host}:{port}"
        self.user, self.password = "admin", PASSWORD


def _start(role, ready):
    """Starts `portcullis <role>` on a free loopback port; waits for the `ready` line."""
    data_dir = tempfile.mkdtemp(prefix=f"portcullis-clients-{role}-")
    env = dict(os.environ, PORTCULLIS_ADMIN_PASSWORD=PASSWORD)
    log = open(os.path.join(data_dir, "stderr.log"), "w")
    proc = subprocess.Popen(
        [_binary(), role, "--admin-listen", "127.0.0.1:0", "--data-dir", data_dir],
        stdout=subprocess.PIPE, stderr=log, env=env, text=True)
    log.close()
    prefix = "portcullis: admin API listening on https://"
    hostport = None
    for line in proc.stdout:
        if line.startswith(prefix):
            hostport = line[len(prefix):].strip().removesuffix("/mgmt")
        if hostport and line.startswith(ready):
            break
    else:
        proc.wait()
        with open(os.path.join(data_dir, "stderr.log")) as f:
            message = f.read()
        shutil.rmtree(data_dir, ignore_errors=True)
        raise RuntimeError(f"portcullis {role} did not start: {message}")
    # Keep reading stdout so a server writing events never blocks on a full pipe.
    threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()
    host, port = hostport.rsplit(":", 1)
    return Server(proc, host, int(port), data_dir)


def _stop(s):
    s.proc.kill()
    s.proc.wait()
    shutil.rmtree(s.data_dir, ignore_errors=True)


@pytest.fixture(scope="module")
def server():
    s = _start("serve", "portcullis: admin API listening on ")
    yield s
    _stop(s)


@pytest.fixture(scope="module")
def central_manager():
    """A `portcullis central` (the BIG-IQ role)."""
    s = _start("central", "portcullis: central manager ready")
    yield s
    _stop(s)


@pytest.fixture(scope="module")
def managed():
    """A controller for the central manager to trust, discover and import."""
    s = _start("serve", "portcullis: admin API listening on ")
    yield s
    _stop(s)
