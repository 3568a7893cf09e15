#!/usr/bin/env python3
r"""Re-places and re-encodes attacks: every payload in every zone and every encoding, one request
each, in the corpus format `portcullis replay` reads. It measures whether detection follows a
technique wherever and however it is carried, rather than the request shapes the test sets use.

Usage:
  generate.py CORPUS.jsonl [PER_CLASS]  payloads of the corpus's attacks (the `q=`, `tp_param=`,
                                        form and path values of dev.jsonl's sources), PER_CLASS
                                        (default 15) per category, picked by a stable hash
  generate.py PAYLOADS.tsv              `category<TAB>payload` lines (techniques.tsv), every one

  benches/encodings/generate.py techniques.tsv > /tmp/enc.jsonl
  portcullis replay --policy POLICY /tmp/enc.jsonl --results /tmp/enc.res
  benches/encodings/pivot.py /tmp/enc.res

Each request's `source` is ZONE/ENCODING and its `category` the payload's class. Zones: query,
form, JSON, XML (a text node, and an attribute value, where the CRS test runner places them),
multipart, cookie, a custom header, User-Agent, a URL in the Referer, a path segment.
Encodings: as written, base64 (standard and URL-safe, with and without padding), `\u00XX`,
`\xXX`, named and numeric HTML references, double percent-encoding, one XML element around the
escaped text (`<string>&#x27; or 1=1--</string>`).
"""
import base64, collections, hashlib, html, json, sys, urllib.parse as U

def h(s): return int(hashlib.sha1(s.encode('utf-8', 'surrogatepass')).hexdigest()[:8], 16)

def unb64(v):
    try: return base64.urlsafe_b64decode(v + '=' * (-len(v) % 4)).decode('utf-8')
    except Exception: return None

def payload_of(r):
    s, m = r['source'], r.get('meta') or {}
    path = r['path']
    def one(q):
        ps = U.parse_qsl(q, keep_blank_values=True)
        return ps[0][1] if len(ps) == 1 else None
    if s == 'libinjection' or (s == 'mgm-payloads' and m.get('variant') == 'get'):
        return one(U.urlsplit(path).query)
    if s == 'mgm-payloads' and m.get('variant') == 'post' and r.get('body'):
        return one(r['body'])
    if s == 'gotestwaf' and m.get('encoder') in ('URL', 'Plain', 'Base64Flat'):
        v = None
        if m.get('placeholder') == 'URLParam': v = one(U.urlsplit(path).query)
        elif m.get('placeholder') == 'HTMLForm' and r.get('body'): v = one(r['body'])
        elif m.get('placeholder') == 'URLPath': v = U.unquote(path[1:])
        if v and m['encoder'] == 'Base64Flat': v = unb64(v)
        return v
    return None

src = sys.argv[1]
# Hand-written technique payloads are all sent; a corpus's payloads are sampled per class.
per_class = int(sys.argv[2]) if len(sys.argv) > 2 else (None if src.endswith('.tsv') else 15)
by = collections.defaultdict(dict)
if src.endswith('.tsv'):
    for l in open(src):
        if l.strip() and not l.startswith('#'):
            c, p = l.rstrip('\n').split('\t', 1)
            by[c][p] = 1
for l in (open(src) if src.endswith('.jsonl') else []):
    r = json.loads(l)
    if r['expect'] != 'block': continue
    p = payload_of(r)
    if not p or len(p) > 600: continue
    by[r['category']][p] = 1
pay = []
for c, ps in sorted(by.items()):
    ps = sorted(ps, key=h)
    for p in ps[:per_class]: pay.append((c, p))

def b64(p, url=False, pad=True):
    b = p.encode('utf-8', 'surrogatepass')
    e = base64.urlsafe_b64encode(b) if url else base64.b64encode(b)
    e = e.decode()
    return e if pad else e.rstrip('=')

ENC = {
    'plain': lambda p: p,
    'b64': lambda p: b64(p),
    'b64-nopad': lambda p: b64(p, pad=False),
    'b64url': lambda p: b64(p, url=True),
    'b64url-nopad': lambda p: b64(p, url=True, pad=False),
    'u00': lambda p: ''.join('\\u%04x' % ord(ch) for ch in p),
    'xhex': lambda p: ''.join('\\x%02x' % b for b in p.encode()),
    'entity-named': lambda p: html.escape(p),
    'entity-num': lambda p: ''.join('&#%d;' % ord(ch) for ch in p),
    'double-url': lambda p: U.quote(U.quote(p, safe=''), safe=''),
    # One XML element around the escaped text, as XML serializers (Go's xml.Encoder) write a string.
    'xml-element': lambda p: '<string>' + html.escape(p) + '</string>',
}
UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/122.0.0.0 Safari/537.36'
def base_headers():
    return [['Host', 'shop.example.com'], ['User-Agent', UA], ['Accept', 'text/html,application/xhtml+xml,*/*;q=0.8'],
            ['Accept-Language', 'en-US,en;q=0.9']]
def hdr_safe(v):
    return ''.join(ch if 0x20 <= ord(ch) < 0x7f else U.quote(ch, safe='') for ch in v)
def cookie_safe(v):
    return ''.join(ch if (0x20 < ord(ch) < 0x7f and ch not in ';,"\\') else U.quote(ch, safe='') for ch in v)

def place(zone, v):
    hd = base_headers(); path = '/search'; body = None; method = 'GET'
    if zone == 'query': path = '/search?q=' + U.quote_plus(v)
    elif zone == 'form':
        method = 'POST'; body = 'q=' + U.quote_plus(v); hd.append(['Content-Type', 'application/x-www-form-urlencoded'])
    elif zone == 'json':
        method = 'POST'; body = json.dumps({'query': v, 'page': 1}); hd.append(['Content-Type', 'application/json'])
    elif zone == 'xml':
        method = 'POST'; body = '<?xml version="1.0"?><search><q>' + html.escape(v, quote=False) + '</q></search>'; hd.append(['Content-Type', 'application/xml'])
    elif zone == 'xml-attr':
        method = 'POST'; body = '<?xml version="1.0"?><root><a probe="' + html.escape(v) + '"></a></root>'
        hd.append(['Content-Type', 'application/xml'])
    elif zone == 'multipart':
        method = 'POST'; bd = '----WebKitFormBoundaryx7b3'
        body = '--%s\r\nContent-Disposition: form-data; name="q"\r\n\r\n%s\r\n--%s--\r\n' % (bd, v, bd)
        hd.append(['Content-Type', 'multipart/form-data; boundary=' + bd])
    elif zone == 'cookie': hd.append(['Cookie', 'session=8f14e45fceea167a; pref=' + cookie_safe(v)])
    elif zone == 'header': hd.append(['X-Search', hdr_safe(v)])
    elif zone == 'user-agent': hd[1][1] = hdr_safe(v)
    elif zone == 'referer': hd.append(['Referer', 'https://shop.example.com/list?q=' + U.quote_plus(v)])
    elif zone == 'path': path = '/search/' + U.quote(v, safe='')
    if body is not None: hd.append(['Content-Length', str(len(body.encode('utf-8', 'surrogatepass')))])
    return method, path, hd, body

ZONES = ['query', 'form', 'json', 'xml', 'xml-attr', 'multipart', 'cookie', 'header', 'user-agent', 'referer', 'path']
out = sys.stdout
for c, p in pay:
    for en, f in ENC.items():
        try: v = f(p)
        except Exception: continue
        for z in ZONES:
            m, path, hd, body = place(z, v)
            rec = {'id': '%s|%s|%08x' % (z, en, h(p)), 'source': z + '/' + en, 'category': c, 'method': m,
                   'path': path, 'headers': hd, 'body': body, 'expect': 'block'}
            out.write(json.dumps(rec) + '\n')
