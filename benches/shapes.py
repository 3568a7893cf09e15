#!/usr/bin/env python3
"""Sends N requests of one of shared/bench's shapes to 127.0.0.1:PORT and checks every status.

The requests are byte for byte the ones shared/bench's wrk scripts send (its headers, its 1 KB
JSON pet, its attacks): get and post on one kept-alive connection, closed, attack and bodyattack
on a fresh connection each (a blocked request's answer closes the connection). A count of
requests that is exact, unlike wrk's, is what instruction counts per request need.

Usage: shapes.py PORT SHAPE N
"""

import socket
import sys

HEAD = (
    "Host: api.example.test\r\n"
    "User-Agent: bench-client/1.0 (wrk)\r\n"
    "Accept: application/json\r\n"
    "Accept-Language: en-US,en;q=0.8\r\n"
    "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyLTEyMyJ9.c2lnbmF0dXJlLXBsYWNlaG9sZGVy\r\n"
    "X-Request-Id: 4f8b1c2e-9d3a-4e5b-8f6a-123456789abc\r\n"
)
BODY = (
    '{"id":123,"name":"Rex","tag":"dog","status":"available","category":{"id":7,"name":"Dogs"},'
    '"photoUrls":["https://img.example.test/pets/123/1.jpg","https://img.example.test/pets/123/2.jpg"],'
    '"tags":[{"id":1,"name":"friendly"},{"id":2,"name":"vaccinated"},{"id":3,"name":"house-trained"}],'
    '"owner":{"firstName":"Alice","lastName":"Smith","email":"alice.smith@example.test","phone":"+1-555-0100",'
    '"address":{"street":"42 Main Street","city":"Springfield","zip":"12345","country":"US"}},'
    '"medical":{"weightKg":21.5,"heightCm":55,"vaccinations":[{"name":"rabies","date":"2024-03-01"},'
    '{"name":"distemper","date":"2024-04-15"}],"notes":"Healthy and active. Enjoys long walks in the park '
    'and playing fetch with a tennis ball every morning."},"description":"Rex is a loyal and gentle companion '
    "who gets along well with children and other pets. He knows basic commands like sit, stay and come, and "
    'he loves treats, naps in the sun and car rides to the beach on weekends with the family."}'
)
BADBODY = (
    '{"id":124,"name":"Max","tag":"dog","status":"available","category":{"id":7,"name":"Dogs"},'
    '"photoUrls":["https://img.example.test/pets/124/1.jpg"],"tags":[{"id":1,"name":"friendly"}],'
    '"owner":{"firstName":"Bob","lastName":"1\' OR \'1\'=\'1","email":"bob@example.test"},'
    '"description":"<script>alert(document.cookie)</script> Max is a playful dog who loves to run around '
    'the garden all day long and chase squirrels up the old oak tree near the fence."}'
)


def request(method, target, body="", close=False):
    head = f"{method} {target} HTTP/1.1\r\n{HEAD}"
    if close:
        head += "Connection: close\r\n"
    if body:
        head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    return (head + "\r\n" + body).encode()


# shape -> (request bytes, expected status, fresh connection per request)
SHAPES = {
    "get": (request("GET", "/api/pets/123?limit=10"), 200, False),
    "post": (request("POST", "/api/pets", BODY), 200, False),
    "closed": (request("GET", "/api/pets/123?limit=10", close=True), 200, True),
    "attack": (request("GET", "/api/pets/123?q=1%27%20OR%20%271%27%3D%271"), 403, True),
    "bodyattack": (request("POST", "/api/pets", BADBODY), 403, True),
}


def read_until(sock, buf, end):
    """Reads until `end` is in `buf`."""
    while end not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            raise SystemExit(f"connection closed early: {buf[:200]!r}")
        buf += chunk
    return buf


def read_exact(sock, buf, n):
    """Reads until `buf` holds at least `n` bytes."""
    while len(buf) < n:
        chunk = sock.recv(65536)
        if not chunk:
            raise SystemExit("connection closed mid-body")
        buf += chunk
    return buf


def read_response(sock, buf):
    """Reads one response (Content-Length or chunked body); returns (status, rest of buf)."""
    buf = read_until(sock, buf, b"\r\n\r\n")
    head, _, rest = buf.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split()[1])
    fields = {}
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        fields[name.strip().lower()] = value.strip()
    if fields.get(b"transfer-encoding", b"").lower() == b"chunked":
        while True:
            rest = read_until(sock, rest, b"\r\n")
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line.split(b";")[0], 16)
            rest = read_exact(sock, rest, size + 2)
            rest = rest[size + 2 :]
            if size == 0:
                return status, rest
    length = int(fields.get(b"content-length", b"0"))
    rest = read_exact(sock, rest, length)
    return status, rest[length:]


def main():
    port, shape, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    wire, expected, fresh = SHAPES[shape]
    sock, buf = None, b""
    for _ in range(n):
        if sock is None:
            sock, buf = socket.create_connection(("127.0.0.1", port)), b""
        sock.sendall(wire)
        status, buf = read_response(sock, buf)
        if status != expected:
            raise SystemExit(f"{shape}: status {status}, expected {expected}")
        if fresh:
            sock.close()
            sock = None


if __name__ == "__main__":
    main()
