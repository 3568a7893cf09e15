#!/usr/bin/env python3
"""Security events to a SIEM, measured on loopback with real servers: a `portcullis serve`
(`dist` build) whose virtual server blocks every request but GET /allowed, with a security log profile
sending CEF over syslog/TLS (RFC 5425) to a real rsyslogd (gtls driver, certificates made with
openssl), which writes what it parsed to a file.

1. N (default 10,000) blocked requests; waits until rsyslog has written N CEF records, parses every
   record back (RFC 5424 header fields as rsyslog parsed them, the 7 CEF header fields, all 24
   extension keys) and checks each against the request that produced it (support id, client,
   method, URL, status, violation).
2. CPU microseconds of the serve process per blocked request (wrk -t1 -c16, DURATION s), with the
   receiver up, then killed (its queue fills and drops its oldest records), then up again.

Usage: flock /work/.bench.lock benches/siem_export.py   (needs rsyslog, rsyslog-gnutls, nginx, wrk,
openssl). Env: EVENTS=10000 DURATION=8 PORTCULLIS=target/dist/portcullis
"""

import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleet_bench as fb  # noqa: E402

EVENTS = int(os.environ.get("EVENTS", "10000"))
DURATION = int(os.environ.get("DURATION", "8"))
CEF_KEYS = ["rt", "dvchost", "externalId", "src", "requestMethod", "request", "app", "act", "cn1",
            "cn1Label", "cn2", "cn2Label", "cs1", "cs1Label", "cs2", "cs2Label", "cs3", "cs3Label",
            "cs4", "cs4Label", "cs5", "cs5Label", "msg", "deviceProcessName"]


def pki(d):
    def run(*a):
        subprocess.run(["openssl", *a], check=True, cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
        "-subj", "/CN=bench CA", "-keyout", "ca.key", "-out", "ca.pem")
    run("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=localhost",
        "-keyout", "server.key", "-out", "server.csr")
    with open(os.path.join(d, "san.ext"), "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
        "-days", "2", "-extfile", "san.ext", "-out", "server.pem")
    return open(os.path.join(d, "ca.pem")).read()


def rsyslog(procs, port):
    d = procs.work
    conf = os.path.join(d, "rsyslog.conf")
    with open(conf, "w") as f:
        f.write(f"""global(workDirectory="{d}" defaultNetstreamDriverCAFile="{d}/ca.pem"
  defaultNetstreamDriverCertFile="{d}/server.pem" defaultNetstreamDriverKeyFile="{d}/server.key"
  maxMessageSize="64k")
module(load="imtcp" maxSessions="100")
template(name="parsed" type="string" string="%hostname%\\t%app-name%\\t%msgid%\\t%structured-data%\\t%msg%\\n")
ruleset(name="tls") {{ action(type="omfile" file="{d}/cef.log" template="parsed" asyncWriting="on" flushOnTXEnd="off" ioBufferSize="256k") }}
input(type="imtcp" address="127.0.0.1" port="{port}" ruleset="tls" streamDriver.name="gtls"
      streamDriver.mode="1" streamDriver.authMode="anon")
""")
    p = procs.start(["rsyslogd", "-n", "-f", conf, "-i", os.path.join(d, "rsyslogd.pid")], "rsyslogd.log")
    fb.wait_port(port)
    return p


def split_unescaped(s, sep, limit):
    out, start, esc = [], 0, False
    for i, c in enumerate(s):
        if len(out) + 1 == limit:
            break
        if esc:
            esc = False
        elif c == "\\":
            esc = True
        elif c == sep:
            out.append(s[start:i])
            start = i + 1
    out.append(s[start:])
    return out


KEY = re.compile(r"(?:^| )([A-Za-z0-9]+)=")


def parse_cef(record):
    assert record.startswith("CEF:"), record
    parts = split_unescaped(record[4:], "|", 8)
    assert len(parts) == 8, record
    ext = parts[7]
    keys = [m for m in KEY.finditer(ext) if m.start(1) == 0 or ext[m.start(1) - 1] == " "]
    keys = [m for m in keys if not (m.start(1) > 0 and ext[m.end(1) - 1] == "\\")]
    fields = {}
    for i, m in enumerate(keys):
        end = keys[i + 1].start() if i + 1 < len(keys) else len(ext)
        fields[m.group(1)] = ext[m.end():end].replace("\\=", "=").replace("\\\\", "\\")
    return parts[:7], fields


def run(procs):
    ca = pki(procs.work)
    port = fb.free_port()
    receiver = rsyslog(procs, port)
    upstream = fb.nginx_upstream(procs)
    serve, api, vs = fb.controller(procs, upstream, "waf", {"events_max_count": 1000})
    api.ok("POST", "/mgmt/tm/security/log/profile", {"name": "siem", "application": {"siem": {
        "localStorage": "disabled", "remoteStorage": "arcsight", "protocol": "tls",
        "servers": [{"name": f"127.0.0.1:{port}"}], "tls": {"caCertificate": ca, "serverName": "localhost"}}}})
    api.ok("PATCH", "/mgmt/tm/ltm/virtual/~Common~vs", {"securityLogProfiles": ["/Common/siem"]})
    print(f"load: {os.popen('uptime').read().strip()}")

    t0 = time.time()
    ids = fb.blast(vs, EVENTS)
    sent = time.time() - t0
    log = os.path.join(procs.work, "cef.log")
    deadline = time.time() + 120
    lines = []
    while time.time() < deadline:
        lines = [l for l in open(log, errors="replace").read().splitlines() if "\tCEF:0|" in l] if os.path.exists(log) else []
        if len(lines) >= len(ids):
            break
        time.sleep(0.2)
    received = time.time() - t0
    want = set(ids)
    seen, bad = set(), []
    for line in lines:
        host, app, msgid, sd, record = line.split("\t", 4)
        header, f = parse_cef(record)
        problems = [k for k in CEF_KEYS if k not in f]
        if header[:3] != ["0", "Portcullis", "WAF"] or header[4] != "VIOL_URL" or header[5] != "Request blocked":
            problems.append(f"header {header}")
        if (app, msgid, sd) != ("portcullis", "blocked", "-"):
            problems.append(f"syslog header {(app, msgid, sd)}")
        if f.get("externalId") not in want or f.get("cs5") != f.get("externalId"):
            problems.append("support id")
        if (f.get("src"), f.get("requestMethod"), f.get("act"), f.get("cn1"), f.get("cs3"), f.get("cs1")) != \
                ("127.0.0.1", "GET", "blocked", "403", "VIOL_URL", "/Common/bench"):
            problems.append("fields")
        if not re.fullmatch(r"/blocked\?n=\d+", f.get("request", "")) or not f.get("rt", "").isdigit():
            problems.append("request/rt")
        if problems:
            bad.append((problems, line[:300]))
        seen.add(f.get("externalId"))
    print(f"{len(ids)} blocked requests sent in {sent:.1f} s; rsyslog wrote {len(lines)} CEF records "
          f"({received:.1f} s after the first request); {len(seen & want)} distinct support ids of the "
          f"{len(want)} sent; {len(lines) - len(bad)} records with every field (7 header + 24 extension) "
          f"parsed back and matching; {len(bad)} not")
    for b in bad[:5]:
        print("  mismatch:", b)

    def cpu_per_request(label):
        subprocess.run(["wrk", "-t1", "-c16", "-d2s", f"http://127.0.0.1:{vs}/blocked"], stdout=subprocess.DEVNULL)
        before = fb.cpu_seconds(serve.pid)
        out = subprocess.run(["wrk", "-t1", "-c16", f"-d{DURATION}s", f"http://127.0.0.1:{vs}/blocked"],
                             capture_output=True, text=True).stdout
        used = fb.cpu_seconds(serve.pid) - before
        total = int(re.search(r"(\d+) requests in", out).group(1))
        rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
        print(f"  {label:<40} {rps:9.0f} blocked req/s  {used / total * 1e6:6.1f} CPU us/request")

    print(f"CPU of the serve process per blocked request (wrk -t1 -c16 -d{DURATION}s, every request an event):")
    cpu_per_request("receiver up (CEF over TLS)")
    receiver.kill()
    receiver.wait()
    cpu_per_request("receiver killed")
    cpu_per_request("receiver killed (second run)")
    rsyslog(procs, port)
    time.sleep(1)
    cpu_per_request("receiver up again")


if __name__ == "__main__":
    fb.main(run)
