"""What the client tests share: a free loopback port, a loopback HTTP upstream answering every
GET with one body, and waiting for an iControl task to finish.

Imported as `support` (pytest puts this directory on sys.path: it has no __init__.py)."""
import http.server
import socket
import threading
import time


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
