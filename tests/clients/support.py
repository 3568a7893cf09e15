"""What the client tests and the browser test share: starting and stopping the real
`portcullis serve` / `portcullis central`, a free loopback port, a loopback HTTP upstream answering
every GET with one body, and waiting for an iControl task to finish.

Imported as `support` (pytest puts this directory on sys.path: it has no __init__.py; the browser
test's conftest adds it). The binary is $PORTCULLIS_BIN, else $CARGO_TARGET_DIR/debug/portcullis,
else target/debug/portcullis. Each server's data directory is temporary and removed when the server
stops; its stderr is kept there (and shown if it does not start), its stdout (security events) is
read and dropped.
"""
import http.server
import os
import pathlib
import shutil
import socket
import subprocess
import tempfile
import threading
import time

LISTENING = "portcullis: admin API listening on "


def binary():
    if os.environ.get("PORTCULLIS_BIN"):
        return os.environ["PORTCULLIS_BIN"]
    root = pathlib.Path(__file__).resolve().parents[2]
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", root / "target"))
    return str(target / "debug" / "portcullis")


class Server:
    def __init__(self, proc, host, port, data_dir, password):
        self.proc, self.host, self.port, self.data_dir = proc, host, port, data_dir
        self.device = f"{host}:{port}"
        self.base = f"https://{self.device}"
        self.user, self.password = "admin", password


def start(role, password, ready=LISTENING):
    """Starts `portcullis <role>` on a free loopback port with the admin password `password`;
    waits for its stdout line starting with `ready`."""
    data_dir = tempfile.mkdtemp(prefix=f"portcullis-{role}-")
    env = dict(os.environ, PORTCULLIS_ADMIN_PASSWORD=password)
    log = open(os.path.join(data_dir, "stderr.log"), "w")
    proc = subprocess.Popen(
        [binary(), role, "--admin-listen", "127.0.0.1:0", "--data-dir", data_dir],
        stdout=subprocess.PIPE, stderr=log, env=env, text=True)
    log.close()
    prefix = LISTENING + "https://"
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
    return Server(proc, host, int(port), data_dir, password)


def stop(s):
    s.proc.kill()
    s.proc.wait()
    shutil.rmtree(s.data_dir, ignore_errors=True)


def free_port():
    """A port the kernel just gave out on 127.0.0.1 (bound then released for the server to bind)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def hello_upstream(body):
    """A threading HTTP server on 127.0.0.1 answering every GET with 200 and `body` (bytes);
    the caller shuts it down (`server_address[1]` is its port)."""
    class Hello(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hello)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def wait(task):
    """Refreshes an f5-sdk task until it is COMPLETED or FAILURE (within 60 s); returns it."""
    deadline = time.time() + 60
    while task.status not in ("COMPLETED", "FAILURE"):
        assert time.time() < deadline, task.raw
        time.sleep(0.2)
        task.refresh()
    return task
