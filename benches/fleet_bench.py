"""Shared pieces of the fleet benches (benches/siem_export.py, benches/fleet_search.py), standard
library only: real servers on loopback (an nginx upstream, `portcullis serve` controllers with an
ASM policy that blocks everything but GET /allowed, `portcullis central`, PostgreSQL, rsyslogd with
TLS), the admin REST API with token authentication, and a keep-alive load driver that returns the
support ids of the blocked requests.
"""

import base64
import glob
import http.client
import json
import os
import shutil
import socket
import ssl
import subprocess
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PASS = "Bench-admin-pass-1"
UNVERIFIED = ssl._create_unverified_context()


def binary():
    exe = os.environ.get("PORTCULLIS") or os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "dist", "portcullis")
    if not os.access(exe, os.X_OK):
        subprocess.run(["cargo", "build", "--profile", "dist", "--quiet", "--bin", "portcullis"], cwd=ROOT, check=True)
    return exe


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, secs=30):
    deadline = time.time() + secs
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"port {port} did not open")


class Procs:
    """Processes started by a bench, stopped at the end."""

    def __init__(self):
        self.work = tempfile.mkdtemp(prefix="portcullis-bench-")
        self.procs = []
        self.cleanups = []

    def start(self, args, log, **kw):
        p = subprocess.Popen(args, stdout=kw.pop("stdout", open(os.path.join(self.work, log), "w")),
                             stderr=subprocess.STDOUT, **kw)
        self.procs.append(p)
        return p

    def close(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        for f in self.cleanups:
            f()
        shutil.rmtree(self.work, ignore_errors=True)


def main(run):
    """Runs `run(procs)`, stopping every process it started, whatever happens."""
    procs = Procs()
    try:
        run(procs)
    finally:
        procs.close()


def nginx_upstream(procs):
    """A static 200 on loopback; its port."""
    port = free_port()
    d = os.path.join(procs.work, "nginx")
    os.makedirs(os.path.join(d, "logs"))
    with open(os.path.join(d, "nginx.conf"), "w") as f:
        f.write(f"""daemon off; master_process off; worker_processes 1; pid {d}/nginx.pid;
error_log {d}/logs/error.log warn; events {{ worker_connections 4096; }}
http {{ access_log off; client_body_temp_path {d}/b; proxy_temp_path {d}/p; fastcgi_temp_path {d}/f;
  uwsgi_temp_path {d}/u; scgi_temp_path {d}/s; keepalive_requests 1000000;
  server {{ listen 127.0.0.1:{port}; location / {{ return 200 'ok'; }} }} }}
""")
    procs.start(["nginx", "-p", d, "-c", os.path.join(d, "nginx.conf")], "nginx.log")
    wait_port(port)
    return port


class Api:
    """The admin REST API of a controller or central manager, with a token."""

    def __init__(self, base):
        self.host, self.port = base.removeprefix("https://").rsplit(":", 1)
        self.port = int(self.port)
        self.token = None
        self.local = threading.local()
        self.token = self.call("POST", "/mgmt/shared/authn/login",
                               {"username": "admin", "password": PASS, "loginProviderName": "tmos"})[1]["token"]["token"]

    def conn(self):
        c = getattr(self.local, "conn", None)
        if c is None:
            c = http.client.HTTPSConnection(self.host, self.port, context=UNVERIFIED, timeout=60)
            self.local.conn = c
        return c

    def call(self, method, path, body=None, headers=None, raw=None):
        h = {"content-type": "application/json"}
        if self.token:
            h["x-f5-auth-token"] = self.token
        else:
            h["authorization"] = "Basic " + base64.b64encode(f"admin:{PASS}".encode()).decode()
        h.update(headers or {})
        data = raw if raw is not None else (json.dumps(body) if body is not None else None)
        for attempt in range(2):
            try:
                c = self.conn()
                c.request(method, path, body=data, headers=h)
                r = c.getresponse()
                text = r.read()
                return r.status, (json.loads(text) if text else None)
            except (http.client.HTTPException, OSError):
                self.local.conn = None
                if attempt:
                    raise

    def ok(self, method, path, body=None, **kw):
        st, b = self.call(method, path, body, **kw)
        if st not in (200, 202):
            raise SystemExit(f"{method} {path}: {st} {b}")
        return b

    def task(self, path, body):
        t = self.ok("POST", path, body)
        tid = t["id"]
        while True:
            t = self.ok("GET", f"{path}/{tid}")
            if t["status"] not in ("STARTED", "NEW", "RUNNING"):
                return t
            time.sleep(0.1)


def spawn(procs, role, args, log, ready):
    """`portcullis <role>` on a free admin port; its https:// base once `ready` is printed."""
    p = procs.start([binary(), role, "--admin-listen", "127.0.0.1:0", *args], log, stdout=subprocess.PIPE,
                    env={**os.environ, "PORTCULLIS_ADMIN_PASSWORD": PASS, "RUST_LOG": "warn"})
    base = None
    for line in p.stdout:
        line = line.decode().strip()
        if line.startswith("portcullis: admin API listening on "):
            base = line.removeprefix("portcullis: admin API listening on ").removesuffix("/mgmt")
        if base is not None and (ready is None or line == ready):
            break
    threading.Thread(target=lambda: [None for _ in p.stdout], daemon=True).start()
    if base is None:
        raise SystemExit(f"portcullis {role} did not start")
    return p, base


BLOCK_ALL = {"policy": {
    "name": "bench", "template": {"name": "POLICY_TEMPLATE_API_SECURITY"}, "enforcementMode": "blocking",
    "urls": [{"name": "*", "type": "wildcard", "method": "*", "$action": "delete"},
             {"name": "/allowed", "method": "GET"}],
    "blocking-settings": {"violations": [{"name": "VIOL_URL", "alarm": True, "block": True}]}}}


def controller(procs, upstream, name, mgmt=None):
    """A `portcullis serve` with virtual `vs` (pool on `upstream`) running BLOCK_ALL; (process, api,
    virtual port)."""
    d = os.path.join(procs.work, name)
    os.makedirs(d)
    cfg = os.path.join(d, "serve.json")
    with open(cfg, "w") as f:
        json.dump({"mgmt": mgmt or {}}, f)
    p, base = spawn(procs, "serve", ["--data-dir", os.path.join(d, "data"), "--config", cfg],
                    f"{name}.log", None)
    api = Api(base)
    vs = free_port()
    api.ok("POST", "/mgmt/tm/ltm/pool", {"name": "web", "members": [{"name": f"127.0.0.1:{upstream}"}]})
    api.ok("POST", "/mgmt/tm/ltm/virtual", {"name": "vs", "destination": f"127.0.0.1:{vs}", "pool": "/Common/web"})
    doc = json.dumps(BLOCK_ALL).encode()
    api.ok("POST", "/mgmt/tm/asm/file-transfer/uploads/bench.json", raw=doc,
           headers={"content-type": "application/octet-stream", "content-range": f"0-{len(doc) - 1}/{len(doc)}"})
    t = api.task("/mgmt/tm/asm/tasks/import-policy", {"filename": "bench.json", "policy": {"fullPath": "/Common/bench"}})
    assert t["status"] == "COMPLETED", t
    link = t["result"]["policyReference"]["link"]
    pid = link.split("/policies/")[1].split("?")[0]
    api.ok("PATCH", f"/mgmt/tm/asm/policies/{pid}", {"virtualServers": ["/Common/vs"]})
    t = api.task("/mgmt/tm/asm/tasks/apply-policy", {"policyReference": {"link": link}})
    assert t["status"] == "COMPLETED", t
    wait_port(vs)
    return p, api, vs


def blast(port, n, threads=8, path="/blocked"):
    """`n` blocked GETs over `threads` keep-alive connections; the support ids, in order of answer."""
    ids, lock = [], threading.Lock()

    def worker(count):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        mine = []
        for i in range(count):
            c.request("GET", f"{path}?n={i}")
            r = c.getresponse()
            body = r.read()
            assert r.status == 403, (r.status, body)
            mine.append(json.loads(body)["supportID"])
        with lock:
            ids.extend(mine)

    ts = [threading.Thread(target=worker, args=(n // threads + (1 if k < n % threads else 0),))
          for k in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return ids


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def postgres(procs):
    """A PostgreSQL server (initdb/pg_ctl as the postgres user when root); its URL."""
    bindir = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2]))[-1]
    d = os.path.join(procs.work, "pg")
    os.makedirs(d)
    port = free_port()
    root = os.getuid() == 0
    if root:
        shutil.chown(procs.work, "postgres")
        shutil.chown(d, "postgres")
    as_pg = (lambda a: ["runuser", "-u", "postgres", "--", *a]) if root else (lambda a: a)
    subprocess.run(as_pg([f"{bindir}/initdb", "-D", f"{d}/data", "-U", "portcullis", "--auth=trust", "--no-sync"]),
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run(as_pg([f"{bindir}/pg_ctl", "-D", f"{d}/data", "-l", f"{d}/log", "-w", "start", "-o",
                          f"-p {port} -k {d} -c listen_addresses=127.0.0.1 -c shared_buffers=256MB"]),
                   check=True, stdout=subprocess.DEVNULL)
    procs.cleanups.insert(0, lambda: subprocess.run(
        as_pg([f"{bindir}/pg_ctl", "-D", f"{d}/data", "-m", "fast", "stop"]), stdout=subprocess.DEVNULL))
    return f"postgres://portcullis@127.0.0.1:{port}/postgres", bindir


def percentile(values, p):
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]
