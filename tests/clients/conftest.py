"""Starts real `portcullis serve` (controller) and `portcullis central` (central manager) processes
for the client tests.

The binary is $PORTCULLIS_BIN, else $CARGO_TARGET_DIR/debug/portcullis, else target/debug/portcullis.
REQUESTS_CA_BUNDLE / CURL_CA_BUNDLE are removed from the environment: requests lets them override
`session.verify=False`, which breaks bigrest against a self-signed certificate.
"""
import os
import pathlib
import subprocess
import tempfile

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
    proc = subprocess.Popen(
        [_binary(), role, "--admin-listen", "127.0.0.1:0", "--data-dir", data_dir],
        stdout=subprocess.PIPE, env=env, text=True)
    prefix = "portcullis: admin API listening on https://"
    hostport = None
    for line in proc.stdout:
        if line.startswith(prefix):
            hostport = line[len(prefix):].strip().removesuffix("/mgmt")
        if hostport and line.startswith(ready):
            break
    else:
        raise RuntimeError(f"portcullis {role} did not start")
    host, port = hostport.rsplit(":", 1)
    return Server(proc, host, int(port), data_dir)


def _stop(s):
    s.proc.kill()
    s.proc.wait()


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
