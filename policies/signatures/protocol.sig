# HTTP protocol attacks in header fields (ids 300007000-300007999): the grammar of one header
# (`headers:` scopes a signature to those header names) and headers a browser never sends.
# Format: see src/waf/signatures/db.rs. Pass examples are real browsers' and API clients' values.

id: 300007001
name: HTTP protocol: obsolete Request-Range header
# No client has sent `Request-Range` since Netscape 4: its only use now is the byte-range
# exhaustion of servers that still honour it, so any value counts, well-formed or not.
type: HTTP Parser Attack
accuracy: high
risk: medium
targets: header
headers: request-range
unless: binary
regex: \S
test: bytes=0-1023
test: bytes=1073741824-2147483647
test: invalid-range-spec
test: none

id: 300007002
name: HTTP protocol: more byte ranges than a client asks for
type: HTTP Parser Attack
accuracy: high
risk: medium
targets: header
headers: range, request-range, if-range
unless: binary
literal: ,
regex: ^\s*bytes\s*=\s*(?:[^,]*,){5,}
test: bytes=0-1,2-3,4-5,6-7,8-9,10-11
pass: bytes=0-1023
pass: bytes=0-50, 100-150

id: 300007003
name: HTTP protocol: response charset requested in Accept
type: HTTP Parser Attack
accuracy: high
risk: medium
targets: header
headers: accept
unless: binary
literal: charset
regex: ;\s*charset\s*=
test: text/html;q=0.9;charset=CP1026,*/*;q=0.8
test: text/html; charset=CP1026
pass: text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8
pass: application/json, text/plain, */*

id: 300007004
name: HTTP protocol: Accept-Encoding outside the content-coding grammar
type: HTTP Parser Attack
accuracy: high
risk: medium
targets: header
headers: accept-encoding
unless: binary
literal: &
literal: **
literal: '
literal: "
literal: <
literal: \\
literal: (
literal: |
regex: [&'"<>\\()|{}]|\*\*
test: AAAA,AAAA&AA&**AAAA**A,AAAA, *, ,
pass: gzip, deflate, br, zstd
pass: gzip;q=1.0, identity; q=0.5, *;q=0

id: 300007005
name: HTTP header injection: Proxy header (httpoxy)
type: HTTP Parser Attack
accuracy: high
risk: high
targets: header
headers: proxy
unless: binary
literal: :
literal: .
regex: \S
test: http://evil.example:8080
test: 10.0.0.1:3128
pass: none

id: 300007006
name: HTTP header injection: URL override headers
type: HTTP Parser Attack
accuracy: medium
risk: high
targets: header
headers: x-original-url, x-rewrite-url, x-override-url
unless: binary
literal: /
regex: ^\s*/
test: /admin
test: /console/login
pass: https://example.com/page

id: 300007007
name: Path injection: line break in the URL path (PHP-FPM path info, response splitting)
type: HTTP Parser Attack
accuracy: high
risk: high
targets: url
unless: binary
literal: \n
literal: \r
regex: [\r\n]
test: /index.php/PHP\ninfo.php
test: /foo\nbar
pass: /products/shoes

id: 300007008
name: SSRF: Apache mod_proxy unix socket target (CVE-2021-40438)
# The path is seen with its slashes merged, so one slash after the scheme's colon is enough.
type: Server-Side Request Forgery (SSRF)
accuracy: high
risk: high
targets: @values, url, param-name
unless: binary
literal: unix:
regex: \bunix:[^|]*\|\s*(?:https?|ftp|ws|fcgi|ajp|h2c?):/
test: unix:AAAAAAAAA|http://coreruleset.org/
test: /unix:/run/php/php-fpm.sock|fcgi:/localhost/index.php
pass: unix: a history

id: 300007009
name: Predictable resource: backup or editor copy of a file
type: Predictable Resource Location
accuracy: medium
risk: low
targets: url
unless: binary
literal: ~
literal: .swp
literal: .bak
literal: .orig
literal: .old
regex: \.(?:php\d?|phtml|asp|aspx|jsp|cgi|pl|py|rb|inc|conf|config|ini|env|ya?ml|json|xml|sql|sh)~(?:/|$)|/\.[\w.-]+\.sw[op](?:/|$)|\.(?:php|asp|aspx|jsp|inc|conf|config)\.(?:bak|orig|old|save|backup)(?:/|$)
test: /index.php~/foo/bar/
test: /.index.php.swp
test: /config.php.bak
pass: /~user/index.html
pass: /docs/a~b.html

id: 300007010
name: Open redirect: URL that parsers and browsers read as another host
type: Open Redirect
accuracy: high
risk: medium
targets: @values, param-name, header
unless: binary
literal: /\\
literal: \\/
literal: \\
literal: ///
literal: %5c
literal: %2f%2f
literal: :/\\
literal: :\\
literal: https:
literal: http:
literal: @
regex: ^\s*(?:https?:)?//[\w-]+(?:\.[\w-]+)+(?::[^@/\s]*)?@[\w-]+(?:\.[\w-]+)*\.[a-z]{2,}|^\s*(?:/\\|\\/|\\\\|/{3,}|/%5c|%5c|%2f%2f|/%2f|%2f/)[/\\]*[\w.-]*[\w-]\.[a-z]{2,}\b|^\s*https?:(?:/\\|\\/|\\\\|\\|/{3,})\s*[\w.-]+\.[a-z]{2,}|^\s*https?:/[\w-][\w.-]*\.[a-z]{2,}|^\s*https?:[\w-]+\.[a-z]{2,}\b
test: /\\evil.com
test: \\/\\/evil.com
test: ///evil.com
test: /%5Cevil.com
test: https:/\\evil.com
test: https:evil.com
test: https://trusted.example@evil.example/login
test: //bank.example:x@203.0.113.9.nip.io/
pass: mailto:someone@example.com
pass: https://user@example.com/
pass: foo.bar@example.com
pass: //kns.cnki.net/KXReader/Detail?dbcode=CJFD
pass: /account/settings
pass: https://example.com/return
pass: https://segmentfault.com/a/1190000007926959
pass: Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/114.0.0.0 Safari/537.36

id: 300007011
name: Open redirect: a host hidden from the server's URL check by bytes browsers drop or fold
type: Open Redirect
accuracy: high
risk: medium
targets: @values, param-name, header
unless: binary
literal: /\t/
literal: /\n/
literal: /\r/
literal: /\r\n/
literal: 。
literal: ．
literal: ｡
regex: ^\s*(?:https?:)?/[\t\r\n]+/+\s*[\w.-]*[\w-]\.[a-z]{2,}|^\s*(?:https?:)?//[\w.-]*[\w-](?:\xe3\x80\x82|\xef\xbc\x8e|\xef\xbd\xa1)[a-z]{2,}\b
test: /\t/evil.com
test: /\r\n/evil.example/login
test: https:/\t/evil.com
test: //evil。com
test: https://attacker．example/
pass: /account/settings
pass: //kns.cnki.net/KXReader/Detail?dbcode=CJFD
pass: 搜索。数据
pass: a/\tb/c

id: 300007012
name: HTTP protocol: fetch metadata or client hint boolean that is not ?0 or ?1
# Browsers fill these structured-field booleans themselves and send only `?0` or `?1`; any other
# value is written by a tool probing how the application reads headers.
type: HTTP Parser Attack
accuracy: high
risk: medium
targets: header
headers: sec-fetch-user, sec-ch-ua-mobile
unless: binary
regex: ^\s*(?:[^?\s]|\?(?:[^01]|[01]\s*\S))
test: foo
test: ?2
test: ?1;a
test: 1
pass: ?1
pass: ?0

id: 300007013
name: HTTP protocol: punctuation in a fetch metadata token
# `Sec-Fetch-Site`, `-Mode` and `-Dest` are lower-case tokens from a fixed list (`same-origin`,
# `no-cors`, `serviceworker`, ...) that browsers write themselves: quotes, brackets, escapes or
# shell and SQL punctuation in them are a tool's probe or an injection into a header the
# application may log or reflect. Literal bytes only, so browsers' values cost no regex run.
type: HTTP Parser Attack
accuracy: high
risk: medium
targets: header
headers: sec-fetch-site, sec-fetch-mode, sec-fetch-dest
unless: binary
literal: "
literal: '
literal: <
literal: >
literal: ;
literal: (
literal: )
literal: {
literal: }
literal: \\
literal: `
literal: $
literal: |
literal: &
literal: %
test: same-origin"
test: <script>
test: document'--
pass: same-origin
pass: no-cors
pass: serviceworker

id: 300007014
name: HTTP header injection: Connection names end-to-end headers to be stripped, or contradicts itself
# A header listed in `Connection` is hop-by-hop: a proxy honouring it drops that header before the
# next hop, so listing `X-Forwarded-For`, `Authorization` or `Cookie` removes what the application's
# access or identity decisions read. Clients list only their own options (`keep-alive`, `close`,
# `Upgrade`, `HTTP2-Settings`, `TE`); `keep-alive` and `close` together are a desync probe.
type: HTTP Parser Attack
accuracy: high
risk: medium
targets: header
headers: connection
unless: binary
literal: forward
literal: x-
literal: auth
literal: cookie
literal: host
literal: content-
literal: transfer-encoding
literal: via
literal: close
regex: (?:^|,)\s*(?:x-[\w-]+|forwarded|authorization|proxy-authorization|cookie|host|content-(?:length|type)|transfer-encoding|via|true-client-ip|cf-connecting-ip)\s*(?:,|$)|\bkeep-alive\s*,(?:.*,)?\s*close\b|\bclose\s*,(?:.*,)?\s*keep-alive\b
test: close, X-Forwarded-For
test: keep-alive, Authorization
test: Cookie
test: keep-alive, close
test: close,keep-alive
pass: close
pass: keep-alive
pass: Upgrade
pass: Upgrade, HTTP2-Settings
pass: TE

id: 300007351
name: HTTP header injection: Connection lists the same option twice
# A client writes its connection options once (`keep-alive`, `close`, `Upgrade`); the same option
# twice (`close, close`, `keep-alive,keep-alive`) is a field joined from two, the shape a request
# takes when a second `Connection` line is smuggled in and folded by one parser but not the next.
# Contradicting options are 300007014's. Only a list is read: the one option nearly every request
# sends is settled by its literal.
type: HTTP Parser Attack
accuracy: high
risk: medium
targets: header
headers: connection
unless: binary
literal: ,
regex: \bclose\s*,(?:[^,]*,)*\s*close\b|\bkeep-alive\s*,(?:[^,]*,)*\s*keep-alive\b|\bupgrade\s*,(?:[^,]*,)*\s*upgrade\b
test: close,close
test: keep-alive, keep-alive
test: Upgrade, keep-alive, Upgrade
pass: close
pass: upgrade
pass: keep-alive, Upgrade

id: 300007352
name: HTTP protocol: request charset set through x-up-devcap-post-charset
# ASP.NET decodes a form body in the charset this header names when the `User-Agent` starts with
# `UP` (the WAP browsers of the Openwave gateways that sent it), which moves the body out of the
# charset a filter in front decoded it with (`ibm500`, `utf-32`), so an encoded payload reaches
# the application decoded and the filter sees bytes. No browser or library has sent it since those
# gateways went away, so any value counts.
type: HTTP Parser Attack
accuracy: high
risk: medium
targets: header
headers: x-up-devcap-post-charset
unless: binary
regex: \S
test: ibm500
test: utf-32
test: UTF-7

id: 300007201
name: HTTP protocol: WebDAV lock or IIS source-access header on an ordinary request
# `Translate: f` asks IIS for a script's source instead of its output; `If` and `Lock-Token`
# carry WebDAV lock tokens, which only a WebDAV client sends, and only with the WebDAV methods
# (LOCK, UNLOCK, PUT to a locked resource). Browsers and API clients send none of them.
type: HTTP Parser Attack
accuracy: medium
risk: medium
targets: header
headers: translate, lock-token, if
unless: binary
regex: \S
test: f
test: <opaquelocktoken:a515cfa4-5da4-22e1-f5b5-00a0451e6bf7>
test: (<urn:uuid:181d4fae-7d8c-11d0-a765-00a0c91e6bf2>)

id: 300007601
name: HTTP header injection: Next.js middleware subrequest header
# Next.js marks the requests its middleware makes itself with `x-middleware-subrequest` and runs
# no middleware on a request that carries it, so a client that sends it skips whatever the
# middleware enforces (authentication, redirects, rewrites). No browser, CDN or library sends it
# from outside, so any value counts.
type: HTTP Parser Attack
accuracy: high
risk: high
targets: header
headers: x-middleware-subrequest
unless: binary
regex: \S
test: middleware
test: src/middleware:src/middleware:src/middleware:src/middleware:src/middleware
test: pages/_middleware

id: 300007602
name: HTTP protocol: Accept-Charset asking for a charset that is not ASCII-compatible
# A page served as UTF-7, UTF-16 or an EBCDIC code page is read by every ASCII-based filter
# in front of the browser as something other than what the browser runs (`+ADw-script+AD4-`).
# Browsers stopped sending `Accept-Charset`; the clients that still do ask for UTF-8 or a Latin
# or CJK charset, all ASCII-compatible. No literals: `utf` and `cp` would wake the database's
# automaton on ordinary values, and the regex runs only on this rare header.
type: HTTP Parser Attack
accuracy: high
risk: medium
targets: header
headers: accept-charset
unless: binary
regex: (?:^|[\s,;=])(?:utf-?7|utf-?16(?:[lb]e)?|utf-?32(?:[lb]e)?|ucs-?[24]|ibm-?0?(?:37|273|277|278|280|284|285|290|297|420|423|424|500|870|871|875|880|905|918|1025|1026|1047|114\d)|cp-?0?(?:37|273|277|278|280|284|285|290|297|420|423|424|500|870|871|875|880|905|918|1025|1026|1047|114\d)|ebcdic[\w-]*)(?:$|[\s,;])
test: utf-7
test: UTF-16LE, utf-8;q=0.5
test: ibm037
test: iso-8859-1, CP1026;q=0.7
pass: utf-8
pass: ISO-8859-1,utf-8;q=0.7,*;q=0.3
pass: GBK,utf-8;q=0.7,*;q=0.3
pass: windows-1252, cp936

id: 300007485
name: HTTP protocol: multipart file name carrying a parameter separator or a quote
# A `Content-Disposition` parameter list is read differently by multipart parsers: one honours
# `\"` inside a quoted file name, another ends the name there; one splits on every `;`, another
# only outside quotes. A stored file name that still holds a double quote, a `;` or a `=` after
# our parser's reading is where two readings part (`filename="a\";name=x.php"`), so the name the
# application checks is not the one it stores. People's own file names carry apostrophes,
# ampersands and HTML entities such as `&amp;` (kept out), not these separators.
type: HTTP Parser Attack
accuracy: medium
risk: medium
targets: filename
unless: binary
regex: ["=]|(?:^|[^&\w])[\w.\s-]*;
test: file=.txt
test: a";.php
test: x;name=y.php
test: &amp;x;y.jpg
test: report;.php
pass: John's resume.pdf
pass: Q&amp;A notes.docx
pass: a & b (copy 2).txt
pass: 文件.png
pass: IMG_0001.HEIC
