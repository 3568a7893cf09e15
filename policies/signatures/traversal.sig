# Path traversal, local and remote file inclusion (ids 300004000-300004999).

id: 300004001
name: Path traversal: repeated parent-directory segments
type: Path Traversal
accuracy: high
risk: high
targets: @values, header, url, param-name
# Not in a multi-line document (a scanner template, a README): it is no path as a whole.
unless: binary, document
literal: ..
regex: (?:\.\.+[/\\]+){2,}|(?:^|[/\\=])\.\.+[/\\]+[\w.-]+[/\\]|[/\\]\.\.+(?:[/\\]|$)[\s\S]*[/\\]\.\.+(?:[/\\]|$)
test: ../../../etc/passwd
test: ..\\..\\boot.ini
test: /static/../../../x
pass: wait... really?
pass: name: poc-yaml-ind780-cve-2021-40661-lfi\r\ntransport: http\r\nrules:\r\n  r0:\r\n    request:\r\n      method: GET\r\n      path: /IND780/excalweb.dll?webpage=../../AutoCE.ini\r\n      follow_redirects: false\r\n

id: 300004002
name: Path traversal: parent-directory segment in a value
type: Path Traversal
accuracy: medium
risk: medium
targets: @values, header, param-name
# Not in a multi-line document (a scanner template, a README): it is no path as a whole.
unless: binary, document
literal: ..
regex: (?:^|[/\\=:])\.\.+[/\\]|[/\\]\.\.$
test: ../config.php
pass: ok.. thanks
pass: abc;/...
pass: name: poc-yaml-ind780-cve-2021-40661-lfi\r\ntransport: http\r\nrules:\r\n  r0:\r\n    request:\r\n      method: GET\r\n      path: /IND780/excalweb.dll?webpage=../../AutoCE.ini\r\n      follow_redirects: false\r\n

id: 300004003
name: Path traversal: encoded dots and separators left after decoding
type: Path Traversal
accuracy: high
risk: high
targets: @values, header, url, param-name
unless: binary
literal: %2e
literal: %252e
literal: %c0%ae
literal: %u002e
literal: %uff0e
literal: %c0%af
literal: %c1%9c
literal: %e0%80%af
literal: %2f
literal: %5c
literal: ..;
literal: ....//
literal: 0x2e
literal: %25
regex: (?:%(?:25)*2e|%c0%ae|%u002e|%uff0e|0x2e|\.){2,}(?:%(?:25)*(?:2f|5c)|%c0%af|%c1%9c|%e0%80%af|%u2215|%u2216|%uff0f|[/\\])|\.\.;[/\\]|\.\.\.\.[/\\]+
test: %2e%2e%2fetc%2fpasswd
test: ..%252f..%252fetc
test: /..;/admin
test: ....//....//etc/passwd
pass: 100%2e5 percent

id: 300004004
name: Local file inclusion: Unix system files
type: Path Traversal
accuracy: high
risk: high
systems: Unix/Linux
targets: @values, header, url, param-name
# Not in a multi-line document (a scanner template, a README): it is no path as a whole.
unless: binary, document
literal: etc
literal: proc
literal: var/log
literal: .ssh
literal: .bash
literal: root/
literal: usr/local
literal: /dev/
regex: (?:^|[/\\\s=:"'*?;|&`(]|%2f|%5c)etc(?:[/\\]|%2f|%5c)+(?:passwd|shadow|group|gshadow|hosts|issue|motd|crontab|sudoers|hostname|resolv\.conf|fstab|mtab|inittab|profile|bashrc|environment|security|ssh|apache2?|httpd|nginx|mysql|php\d*|ssl|pam\.d|cron\.d|network|sysconfig|init\.d|os-release|lsb-release|redhat-release|debian_version|master\.passwd|passwd-|shadow-|x11|apt|aliases|ldap|samba|vsftpd|proftpd|knockd|ftphosts|exports|snmp|logrotate|mail|postfix|dovecot|tomcat\d*|redis|mongod)|(?:^|[/\\=:"'\s])proc[/\\]+(?:self|\d+|thread-self)[/\\]+(?:environ|cmdline|fd|maps|status|mem|exe|cwd|root|stat|mounts|net|attr|auxv|limits|smaps|loginuid)|(?:^|[/\\])proc[/\\]+(?:version|cpuinfo|meminfo|mounts|net[/\\]\w+|sched_debug|kcore|partitions|cmdline|config\.gz)\b|var[/\\]+(?:log|mail|spool|www|lib[/\\]+(?:mysql|php)|run)[/\\]+\w|[/\\]\.ssh[/\\]+(?:id_\w+|authorized_keys|known_hosts|config)|\.bash_(?:history|profile|logout)|\.(?:zsh|mysql|psql|node_repl|python|rediscli)_history|\.bashrc\b|(?:^|[/\\])root[/\\]+\.\w+|usr[/\\]+local[/\\]+(?:apache|etc|lib|www|nginx|bin)|/dev/(?:fd|stdin|stdout|stderr|mem|kmem|port|random|urandom|zero)\b
test: /etc/passwd
test: file=..%2f..%2fetc/shadow
test: /proc/self/environ
test: ~/.ssh/id_rsa
pass: etcetera and so on

id: 300004005
name: Local file inclusion: Windows system files
type: Path Traversal
accuracy: high
risk: high
systems: Microsoft Windows, IIS
targets: @values, header, url, param-name
# Not in a multi-line document (a scanner template, a README): it is no path as a whole.
unless: binary, document
literal: win.ini
literal: system.ini
literal: boot.ini
literal: windows
literal: winnt
literal: system32
literal: inetpub
literal: c:
literal: sam
literal: autoexec
literal: :$data
literal: ::$index
regex: (?:win|system|boot|php|my)\.ini\b|\b(?:windows|winnt)[/\\]+(?:system32|syswow64|repair|win\.ini|system\.ini|debug|panther|temp|microsoft\.net|iis\d*\.log)|\bsystem32[/\\]+(?:config|drivers|cmd\.exe|inetsrv|logfiles)|\binetpub[/\\]+|\b[a-z]:[/\\]+(?:windows|winnt|boot|inetpub|autoexec|config\.sys|pagefile|hiberfil|xampp|wamp)|[/\\](?:sam|security|system)(?:\.bak)?$|\bautoexec\.bat\b|::\$(?:data|index_allocation)\b
test: c:\\windows\\win.ini
test: ..\\..\\windows\\system32\\drivers\\etc\\hosts
test: index.php::$DATA
test: 0x2e0x2e0x2fboot.ini
pass: windows and doors

id: 300004006
name: Local file inclusion: application configuration and secrets
type: Path Traversal
accuracy: high
risk: high
targets: @values, header, url, param-name
unless: binary
literal: .htaccess
literal: .htpasswd
literal: web.config
literal: web-inf
literal: meta-inf
literal: .git
literal: .svn
literal: .hg
literal: .env
literal: wp-config
literal: config.php
literal: .ds_store
literal: id_rsa
literal: .aws
literal: .docker
literal: .kube
literal: composer.json
literal: settings.py
literal: application.properties
literal: database.yml
literal: local.xml
literal: configuration.php
literal: localsettings.php
literal: server.xml
literal: tomcat-users
literal: .npmrc
literal: .bak
literal: .old
literal: .swp
literal: ~
regex: \.ht(?:access|passwd|group)\b|\bweb\.config\b|\b(?:web|meta)-inf[/\\]|[/\\]\.(?:git|svn|hg|bzr|cvs)[/\\]|^\.(?:git|svn)[/\\]|(?:^|[/\\])\.env(?:\.\w+)?$|\bwp-config\.php|(?:^|[/\\])config\.php\b|\.ds_store\b|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|(?:^|[/\\])\.(?:aws|docker|kube|azure|gcloud)[/\\]|\bsettings\.py\b|\bapplication\.(?:properties|ya?ml)\b|\bdatabase\.yml\b|[/\\]app[/\\]etc[/\\]local\.xml|\bconfiguration\.php\b|\blocalsettings\.php\b|conf[/\\]server\.xml|\btomcat-users\.xml|(?:^|[/\\])\.npmrc\b|\.(?:php|asp|aspx|jsp|inc|conf|config|cfg|ini|sql|db)(?:\.bak|\.old|\.orig|\.save|\.swp|~)$
test: ../.htaccess
test: /WEB-INF/web.xml
test: /.git/config
test: /.env
pass: environment variables

id: 300004007
name: File inclusion: PHP stream wrappers and URL schemes
type: Path Traversal
accuracy: high
risk: high
systems: PHP
targets: @values, header, url, param-name
unless: binary
literal: php:
literal: zip:
literal: phar:
literal: expect:
literal: data:
literal: glob:
literal: compress.
literal: file:
literal: zlib:
literal: ogg:
literal: rar:
literal: ssh2.
literal: jar:
literal: netdoc:
literal: gopher:
literal: dict:
regex: \b(?:php|zip|phar|expect|glob|zlib|ogg|rar|jar|netdoc|compress\.(?:zlib|bzip2)):/{1,3}[^/\s]|\bssh2\.(?:shell|exec|tunnel|sftp|scp)://|\bdata:/{0,2}(?:text/plain|application/[\w.+-]+)?\s*;\s*base64\s*,|\bdata://|\bfile:(?://[^/\s]|/*(?:[a-z]:|\\\\|(?:etc|proc|windows|winnt|var|root|home|usr|dev|sys|boot|tmp|opt|srv)\b|[^\s]*\.\.[/\\]))|\bphp://(?:filter|input|stdin|fd|memory|temp)\b
test: php://filter/convert.base64-encode/resource=index.php
test: file:///etc/passwd
test: expect://id
test: data://text/plain;base64,PD9waHAgc3lzdGVtKCRfR0VUWydjJ10pOyA/Pg==
# In a URL path the wrapper's `//` reaches the signature as one slash: the path is normalized
# (multiple slashes collapsed) before it is scanned.
test: /download/phar:/uploads/avatar.jpg
test: phar:///tmp/upload/avatar.jpg/x
test: zip:///var/www/uploads/a.zip#shell.php
test: /view/php:/filter/read=convert.base64-encode/resource=index
pass: file:///vscode/resources/letterpress-dark.svg
pass: profile: https://example.com

id: 300004008
name: Remote file inclusion: URL to a script or ending in ? or NUL
# An FTP URL naming a script or text file is PHP's include wrapper at work: browsers and
# applications no longer link to FTP, so the whole value being one is the inclusion itself.
type: Remote File Include
accuracy: medium
risk: high
targets: @values, param-name
unless: binary
literal: http
literal: ftp
# A bare scheme and `?` (`file?`, `php?`) probes whether the value is handed to an include
# with something appended: the `?` turns the appended part into a query.
literal: file?
literal: php?
literal: data?
literal: \\
regex: ^\s*(?:https?|ftps?)://[^\s?#]+\.(?:txt|php\d?|phtml|inc|pl|py|sh|cgi|jsp|asp|aspx|jpg|gif|png)\?+\s*$|^\s*(?:https?|ftps?)://[^\s]*\x00|^\s*(?:https?|ftps?|file|php|data)\?+\s*$|^\s*(?:https?|ftps?)://(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?/[^\s]*\.(?:txt|php\d?|inc|pl|py|sh|cgi)\b|^\s*\\\\(?:\d{1,3}\.){3}\d{1,3}\\|^\s*\\\\[\w.-]+\\[\w$.-]+\\[\w.-]+\.(?:php|txt|inc)|^\s*ftps?://[^\s?#]+\.(?:txt|php\d?|phtml|inc|pl|py|sh|cgi)\s*$
test: http://evil.example/shell.txt?
test: https://203.0.113.9/c99.php
test: \\\\10.0.0.1\\share\\x.php
test: ftp://evil.example/backdoor.txt
pass: ftp://ftp.debian.org/debian/README
pass: https://codesandbox.io/cdn-cgi/rum?
test: http?
test: file?
test: PHP??
pass: https://example.com/page?id=1
pass: what is a php?
pass: file?name=report.pdf

id: 300004009
name: Path traversal: NUL byte truncation
type: Path Traversal
accuracy: high
risk: high
# A file name or path cut short by NUL before the extension the application appends or checks
# (`passwd%00.png`). Not raw bodies: binary encodings (protobuf, gzip, images) carry NUL bytes.
targets: query, param-value, param-name, cookie, json, xml, header, url
unless: binary
literal: \0
literal: %00
regex: (?:\.\.|[\w-]\.\w{1,5}|[/\\][\w.-]+|\w)(?:\x00|%00)(?:\.\w{1,6})?$|\.\w{1,5}(?:\x00|%00)[\s\S]{0,10}\.\w{1,6}$
test: ../../etc/passwd\x00.png
test: page.php%00.html
test: /etc/passwd%00
pass: plain value
pass: \n\x06021436\x12\x0c333.1007.0.0\x1a\x02\nw\x08d\x10\x05\x1a/54F00853\x00\x1a
pass: \x1f\x8b\x08\x00\x00\x00\x00\x00\x00\nU\x91\xc1n

id: 300004010
name: Path traversal: system file behind an unusual separator
type: Path Traversal
accuracy: high
risk: high
targets: @values, header, url, param-name
# Not in a multi-line document (a scanner template, a README): it is no path as a whole.
unless: binary, document
literal: etc
literal: windows
literal: winnt
regex: etc(?:[/\\]|%[0-9a-z]{2}|0x[0-9a-f]{2}|%u[0-9a-f]{4}|[^\w\s-]){1,12}(?:passwd|shadow|issue|hosts|group|motd|hostname)\b|(?:windows|winnt)(?:[/\\]|%[0-9a-z]{2}|0x[0-9a-f]{2}|%u[0-9a-f]{4}|[^\w\s-]){1,12}(?:system32|win\.ini|system\.ini|repair)\b
pass: /questions/445361/what-is-difference-between-etc-shadow-and-etc-passwd
test: ..%c1%pc..%c1%pcetc%c1%pcissue
test: 0x2e0x2e0x5cwindows0x5csystem32
pass: etc. passwords are secret

id: 300004011
name: Path traversal: dot-dot with encoded or junk separators
type: Path Traversal
accuracy: high
risk: high
targets: @values, header, url, param-name
# Not in a multi-line document (a scanner template, a README): it is no path as a whole.
unless: binary, document
literal: 0x2e
literal: %2e
literal: %u
literal: %c0
literal: ..
literal: .\0.
literal: .%00.
regex: (?:(?:\.|%2e|0x2e|%u002e|%uff0e|%c0%ae)(?:\x00|%00)?(?:\.|%2e|0x2e|%u002e|%uff0e|%c0%ae)(?:[/\\]|%[0-9a-z]{2}|0x[0-9a-f]{2}|%u[0-9a-f]{4}|\\x[0-9a-f]{2}|[^\w\s.]){1,10}){2,}|(?:^|[/\\=])\.\.;[./\\;]
test: ..;.\\.;\\.
test: /app/..;/admin
test: ..%c1%pc..%c1%pc
test: 0x2e0x2e%c0%2F0x2e0x2e%c0%2F
pass: wait... what?! ok...
pass: 1.5, 2.5, 3.5
pass: name: poc-yaml-ind780-cve-2021-40661-lfi\r\ntransport: http\r\nrules:\r\n  r0:\r\n    request:\r\n      method: GET\r\n      path: /IND780/excalweb.dll?webpage=../../AutoCE.ini\r\n      follow_redirects: false\r\n

id: 300004012
name: Path traversal: Windows administrative share and profile files
type: Path Traversal
accuracy: high
risk: high
systems: Microsoft Windows
targets: @values, header, url, param-name
unless: binary
literal: $\\
literal: $/
literal: ntuser
regex: (?:\\\\|//)[\w.:\[\]-]+[\\/][a-z]\$[\\/]|\bntuser\.dat\b|\badmin\$[\\/]|\bipc\$
test: \\\\::1\\c$\\users\\default\\ntuser.dat
pass: costs $5

id: 300004201
name: Local file inclusion: a path into a world-writable temporary directory or PHP's session store
# Every user can write `/tmp`, `/var/tmp` and `/dev/shm`, and PHP keeps its sessions there or in
# `/var/lib/php/sessions`: an attacker plants content in such a file (a session, an upload's
# temporary copy, a command's output) and then includes or runs it. Applications do not take
# these paths from their users; the value holds one at its start or after a separator, a
# redirection or a quote.
type: Path Traversal
accuracy: medium
risk: high
targets: @values, param-name
unless: binary
literal: /tmp/
literal: /var/tmp/
literal: /dev/shm/
literal: /sess
regex: (?:^|[\s=>|;&'"(`:,])(?:/var)?/tmp/[\w.-]|(?:^|[\s=>|;&'"(`:,])/dev/shm/[\w.-]|/var/lib/php[\w.]*/sess(?:ions)?/|(?:^|[/\\])sess_[0-9a-z,-]{20,}$
test: /tmp/sess_abc
test: >/tmp/curl
test: touch /tmp/success
test: /var/lib/php/sessions/sess_9hkcmk2ub0tfrvjeb3kh34a3r6
test: ../../../../tmp/sess_9hkcmk2ub0tfrvjeb3kh34a3r6
test: cat /dev/shm/x
pass: /static/tmp/a.png
pass: https://example.com/tmp/image.jpg
pass: temp files are kept in tmp/

id: 300004401
name: Local file inclusion: a path to a Java web application's deployment descriptor
type: Path Traversal
accuracy: high
risk: high
systems: Java Servlets/JSP
# A template, include or file parameter pointed at `WEB-INF/web.xml` or the container's own
# descriptors reads the application's servlet mappings, filters and credentials (the Confluence
# widget connector's `_template`, Struts and JSF includes). Applications name templates and
# files of their own, never these; the value is a path ending in one (`. /web.xml`,
# `../web.xml`, `file:///…/web.xml`), not a word in prose.
targets: @values
unless: binary
literal: .xml
regex: ^\s*(?:file:)?[\w.\s/\\:~-]{0,200}?[/\\]\s*(?:web|jboss-web|jboss-deployment-structure|weblogic|ejb-jar|faces-config|struts|struts-config|tomcat-users|applicationcontext|glassfish-web|sun-web|ibm-web-bnd|ibm-web-ext)\.xml\s*$
test: . /web.xml
test: ../../WEB-INF/web.xml
test: file:///opt/tomcat/conf/tomcat-users.xml
test: /WEB-INF/classes/applicationContext.xml
pass: web.xml
pass: how do I configure web.xml for servlets
pass: /sitemap.xml
pass: /feeds/web.xml.gz

id: 300004402
name: Local file access: a shell, editor or tool dotfile of a home directory
# Login shells, editors, REPLs and desktop tools keep their start-up scripts, histories and
# credentials in dot-named files and directories of the home directory (`.bashrc`,
# `.zsh_history`, `.my.cnf`, `.pgpass`, `.subversion/auth/`, `.gnupg/`): a scanner asks for
# each in turn, at the site root or under a user's directory, and a file parameter pointed at
# one reads it. A site serves none of them; the names a site does serve under a dot
# (`/.well-known/`) are not in the list. Files end the path; directories are followed by a
# slash, so a page named like one (`/.atom`) is not taken for it.
type: Path Traversal
accuracy: high
risk: medium
systems: Unix/Linux
targets: url, @values, param-name
unless: binary
literal: /.
regex: /\.(?:htdigest|bash_(?:config|logout|login|aliases)|(?:ba|c|k|z|tc|mk)shrc|profile|login|logout|(?:(?:ba|z|k|c|tc)?sh_|z|r|lldb-|nano_|php_|lua_|irb_|pry_|ipython_)?history|lhistory|lesshst|my\.cnf|pearrc|g?vimrc|exrc|xauthority|xinitrc|xsession(?:-errors)?|bowerrc|eslintrc(?:\.\w+)?|jshintrc|hgignore|hgrc|nsconfig|nsr|wgetrc|curlrc|irbrc|erlang\.cookie|dbshell|selected_editor|mailrc|forward|rhosts|shosts|k5login|pgpass|lftprc)(?:[.~][\w-]*)*(?:$|[?#])|/\.(?:aptitude|subversion|drush|lftp|pki|local/share|thunderbird|mozilla|vmware|java|anydesk|npm|nvm|minikube|atom|cups|dbus|gem|gnome2?|gsutil|m2|gradle|ivy2|sbt|kde4?|purple|irssi|filezilla|remmina|cargo|composer|config/(?:odesk|filezilla|gcloud|gh|hub|rclone))/
test: /.bashrc
test: /home/admin/.zsh_history
test: /.my.cnf
test: /.Rhistory
test: /.subversion/auth/svn.simple/x
test: /.local/share/mc/history
test: /.config/odesk/odesk team.conf
test: /.lldb-history
test: file=/root/.pgpass
test: /.vimrc~
pass: /.well-known/acme-challenge/token
pass: /.github/workflows/ci.yml
pass: /.br
pass: /feed/.atom
pass: /css/user.profile.css
pass: /images/.profile-pic.png

id: 300004403
name: Local file access: a framework's configuration file requested as a page
# Symfony and Rails keep database credentials and secrets in `config/*.yml`, Drupal in
# `sites/default/settings.php`, WordPress in `wp-config.php` (and editors leave copies beside it:
# `wp-config.txt`, `wp-config.php.save`), TypeORM in `ormconfig.json`, editor plug-ins their
# upload credentials in `sftp-config.json`, NetBeans its project in `nbproject/`. A site serves
# none of them by these names. A front-end project's build files (`tsconfig.json`,
# `webpack.config.js`) are left out: code hosts and package CDNs serve them from repositories
# (`raw.githubusercontent.com/…/jsconfig.json`, fetched by online editors).
type: Predictable Resource Location
accuracy: medium
risk: medium
targets: url
unless: binary
literal: config
literal: settings
literal: nbproject/
regex: (?:^|/)(?:app/)?config/(?:config(?:_\w+)?|parameters|routing|security|services|databases?|secrets|credentials(?:\.yml\.enc)?|storage|master)\.(?:ya?ml|key)(?:\.dist)?$|(?:^|/)sites/(?:default|all)/(?:default\.)?settings(?:\.local)?\.php$|(?:^|/)wp-config\.[\w.~-]+$|(?:^|/)(?:sftp-config|ormconfig)\.json$|(?:^|/)nbproject/
test: /config/parameters.yml
test: /app/config/config_dev.yml
test: /config/master.key
test: /sites/default/settings.php
test: /wp-config.txt
test: /blog/wp-config.php.save
test: /sftp-config.json
test: /ormconfig.json
test: /nbproject/project.properties
pass: /SchemaStore/schemastore/master/src/schemas/json/jsconfig.json
pass: /static/js/webpack-e05f1e9d6ad0bf2af5da.js
pass: /api/config.json
pass: /js/settings.min.js
pass: /config/site/Config_ba69773.js
pass: /npm/react@18.2.0/package.json
