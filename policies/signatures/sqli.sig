# SQL injection signatures (ids 300001000-300001999). Format: see src/waf/signatures/db.rs.
# Regexes are case-insensitive and byte-oriented; every regex match must contain one of its literals.

id: 300001000
name: SQL injection (tokenizer fingerprint)
type: SQL-Injection
accuracy: high
risk: high
# Not `query`: the tokenizer reads one value; a whole `k=v&k=v` query string fingerprints as an
# expression (`q=1950 or 1960`), and every parameter of it is scanned on its own.
targets: param-name, param-value, cookie, body, json, xml, grpc
# A whole SELECT typed into a search box (`select 1 from a`) cannot continue the query it lands
# in, whatever the context: only a fragment can (`1 union select`, `x' or 1=1`), see `sql-text`.
# Nor in a search engine's query (`title="sql" && app="x"`): its quotes delimit field values.
unless: binary, sql-text, search-query
engine: sqli
test: 1' OR '1'='1
test: 1 AND 1=1 --
pass: O'Brien and sons
pass: select 1 from a
pass: "LIKE" STAMP
pass: SMALL "&" SIGN
pass: Mark, 'Call me when you get to the gate and I'll come out and open it up'
pass: 1611-IioXXIG1ti8rspL2vbXFy--
pass: title="sql" && product="wordpress" || author=="CT Stack"
test: 1 or 1=1--
test: O'Brien' OR 1=1--

id: 300001001
name: SQL injection: UNION SELECT
type: SQL-Injection
accuracy: high
risk: high
targets: @values, header, url, param-name
unless: binary
literal: union
regex: \bunion\b(?:[\s(+]|/\*.*?\*/|/\*!\d*|%20)*(?:all|distinct)?(?:[\s(+]|/\*.*?\*/|%20)*select\b(?:[\s(+]|/\*.*?\*/|%20)*(?:$|[\d@*('"`\-]|null\b|all\b|distinct\b|top\b|\w+\s*(?:[,(]|\bfrom\b|$|--|#|/\*))
test: 0 union all select 1,2,3
test: x')UNION(SELECT(password)FROM(users))
test: 1 union select user_id from users
test: union select
# A select list follows a real UNION SELECT; a search about the keywords goes on in words.
pass: the union selected a new leader
pass: site:segmentfault.com union select 关键字怎么用

id: 300001002
name: SQL injection: time delay functions
type: SQL-Injection
accuracy: high
risk: high
systems: MySQL, PostgreSQL, Microsoft SQL Server, Oracle
targets: @values, header, url, param-name
unless: binary
literal: sleep
literal: benchmark
literal: waitfor
literal: dbms_pipe
literal: randomblob
literal: dbms_lock
regex: \b(?:sleep|pg_sleep|benchmark|randomblob|dbms_lock\.sleep|dbms_pipe\.receive_message)\s*\(\s*[\d'"(@\w]|\bwaitfor\s+(?:delay|time)\s+['"\d]|\bpg_sleep\s*\(\s*\[
test: 1 and sleep(5)
test: '; waitfor delay '0:0:5'--
test: 1 OR BENCHMARK(5000000,MD5(1))
pass: how much sleep do I need

id: 300001003
name: SQL injection: stacked query
type: SQL-Injection
accuracy: high
risk: high
targets: @values, header, url
unless: binary
literal: drop
literal: insert
literal: update
literal: delete
literal: create
literal: alter
literal: exec
literal: declare
literal: truncate
literal: shutdown
literal: select
literal: grant
regex: ;\s*(?:drop\s+(?:table|database|user|view|procedure|function|index)|insert\s+into|update\s+\S+\s+set\b|delete\s+from|create\s+(?:table|user|database|procedure|function|trigger|view)|alter\s+(?:table|user|database)|exec(?:ute)?\s*(?:\(|@|'|"|master\b|xp_|sp_|\w+\s*['"@])|declare\s+@|truncate\s+(?:table\s+)?\w|shutdown\b|select\s+[\w*@(]|grant\s+\w)
test: 1; DROP TABLE users
test: x'; insert into admins values('a','b')--
pass: please delete from my list; thanks
pass: 1; exec will create the case 7

id: 300001004
name: SQL injection: quote followed by comment
type: SQL-Injection
accuracy: medium
risk: high
targets: @values, header, url
# Not where every quote is text punctuation (`the 'classic'-- a remake`): a quotation that opened
# after a blank closes at its second quote, and in a string that quote opens a new literal the
# `--` sits inside; a breakout's quote follows a word (`admin'--`).
unless: binary, prose
literal: --
literal: #
literal: /*
regex: (?:'|(?:^|[^`])`)\s*\)*\s*(?:--[\s\x00-\x1f]|--$|#(?:[^\d]|$)|/\*)|"\s*\)*\s*(?:--[\s\x00-\x1f]|--$|/\*)
test: admin'--
test: admin')#
pass: Let's go -- now
pass: 7" #2 CIRCULAR NEEDLE
pass: the 'classic'-- a remake
pass: She said "never"-- and left
test:  ( 'a' )  --
test: x' and 'classic'-- a remake
pass: Code blocks are placed between two code fences:\n\n```\n#include <stdio.h>
test: `id`#

id: 300001005
name: SQL injection: quoted boolean tautology
type: SQL-Injection
accuracy: high
risk: high
targets: @values, header, url, param-name
# Not where every quote is text punctuation or delimits a search query's values: none closes a literal.
unless: binary, prose, search-query
literal: '
literal: "
literal: `
literal: )
regex: ['"`)]\s*(?:\bor\b|\band\b|\bxor\b|\|\||&&)\s*\(?\s*(?:['"`]?[\w.]*['"`]?\s*(?:[=<>!]=?|<>|\blike\b|\bis\b|\brlike\b|\bregexp\b)\s*\(?['"`]?[\w.]*|\d+\b|true\b|false\b|not\b|null\b|'[^']*'\s*(?:--|#|$))
test: x' or 'a'='a
test: ") OR 1=1 --
test: ' or true--
pass: it's "or" not "and"
pass: "WOOD" AND "SIGN" AND "POLKA DOTS"
pass: she said 'yes' and 'no' or 'maybe'
pass: app="Apache-Tomcat" && country="CN"
test: 18' or '1'='1

id: 300001006
name: SQL injection: numeric boolean tautology
type: SQL-Injection
accuracy: medium
risk: medium
targets: @values, header, url
unless: binary
literal: =
literal: <
literal: >
literal: like
regex: (?:^|[\s)(])(?:or|and|\|\||&&)[\s(]+(\d+|'[^']*'|"[^"]*")\s*(?:=|<>|!=|<=>|\blike\b|>|<)\s*(\d+|'[^']*'|"[^"]*")(?:[\s)]*(?:--|#|/\*|;|$|\b(?:and|or|limit|order|group|union)\b))
test: 1 or 1=1
test: 5 AND 3>2--
pass: 3 or 4 = 7 reasons

id: 300001007
name: SQL injection: schema and catalog enumeration
type: SQL-Injection
accuracy: high
risk: high
targets: @values, header, url, param-name
unless: binary
literal: information_schema
literal: sysobjects
literal: syscolumns
literal: sysusers
literal: pg_catalog
literal: pg_shadow
literal: pg_user
literal: sqlite_master
literal: mysql.user
literal: all_tables
literal: user_tables
literal: sys.tables
literal: msysobjects
literal: sysdatabases
literal: pg_database
literal: all_users
literal: dba_users
literal: v$version
regex: information_schema[`"\]]?\s*(?:/\*.*?\*/\s*)*\.|\buse\s+[`"\[]?information_schema\b[`"\]]?\s*(?:;|$)|\b(?:master\.\.)?sys(?:objects|columns|users|databases|logins)\b|\bpg_(?:catalog|shadow|user|database)\b|\bsqlite_master\b|\bmysql\.user\b|\b(?:all|user|dba)_(?:tables|tab_columns|users)\b|\bsys\.tables\b|\bmsysobjects\b|\bv\$version\b
test: select table_name from information_schema.tables
test: 1 AND (SELECT count(*) FROM sysobjects)>0
pass: the information about the schema
pass: use information_schema to list columns
pass: information_schema is a read-only database
test: 1 union select 1 from information_schema . tables
test: 1 union select schema_name from `information_schema`.`schemata`
test: 1;use information_schema;select table_name from tables

id: 300001008
name: SQL injection: database fingerprinting functions and variables
type: SQL-Injection
accuracy: high
risk: medium
targets: @values, header, url, param-name
unless: binary
literal: @@
literal: version(
literal: database(
literal: user(
literal: schema(
literal: current_user
literal: session_user
literal: system_user
literal: db_name(
literal: host_name(
literal: banner
literal: select
literal: connection_id(
literal: last_insert_id(
literal: row_count(
regex: @@(?:version|datadir|hostname|basedir|servername|identity|spid|tmpdir|language|microsoftversion|global|session)|\b(?:version|database|user|schema|current_user|session_user|system_user|db_name|host_name|connection_id|last_insert_id|row_count)\s*\(\s*\d*\s*\)|\bcurrent_user\b\s*(?:--|#|\)|,|;|$)|\bselect\s+(?:session_user|current_user|system_user|user|database\s*\(|version\s*\(|@@\w+)\b|\bbanner\s+from\b
test: 1 union select @@version
test: ' and database()='x
pass: what version do you use

id: 300001009
name: SQL injection: file and command access from SQL
type: SQL-Injection
accuracy: high
risk: high
systems: MySQL, Microsoft SQL Server, PostgreSQL
targets: @values, header, url, param-name
unless: binary
literal: load_file
literal: outfile
literal: dumpfile
literal: xp_cmdshell
literal: xp_regread
literal: xp_dirtree
literal: sp_oacreate
literal: sp_executesql
literal: sp_makewebtask
literal: openrowset
literal: opendatasource
literal: utl_http
literal: utl_inaddr
literal: lo_import
literal: copy
literal: bulk insert
literal: sp_configure
regex: \bload_file\s*\(|\binto\s+(?:out|dump)file\s+['"]|\bxp_(?:cmdshell|regread|dirtree|fileexist|servicecontrol)\b|\bsp_(?:oacreate|executesql|makewebtask|configure|addsrvrolemember|password)\b|\bopen(?:rowset|datasource)\s*\(|\butl_(?:http|inaddr|file)\.|\blo_import\s*\(|\bcopy(?:\s+\w+\s*(?:\([\w\s,]*\))?|\s*\((?:[^()]|\([^()]*\)){1,300}\))\s*(?:from|to)\s+(?:program|'/)|\bbulk\s+insert\b
test: ' union select load_file('/etc/passwd')--
test: 1;exec master..xp_cmdshell 'dir'
test: 1;copy (select '') to program 'id'
test: ';COPY cmd_exec FROM PROGRAM 'id'--
pass: please copy this file
pass: copy-to-clipboard@3.3.3,csstype@3.1.2,date-fns@2.30.0

id: 300001010
name: SQL injection: error-based extraction functions
type: SQL-Injection
accuracy: high
risk: high
systems: MySQL, Microsoft SQL Server, Oracle, PostgreSQL
targets: @values, header, url, param-name
unless: binary
literal: extractvalue
literal: updatexml
literal: exp(
literal: floor(
literal: geometrycollection
literal: multipoint
literal: polygon
literal: linestring
literal: name_const
literal: ctxsys
literal: convert(
literal: cast(
literal: xmltype
literal: json_keys
literal: gtid_subset
regex: \b(?:extractvalue|updatexml)\s*\(|\bexp\s*\(\s*~|\bfloor\s*\(\s*rand\s*\(|\b(?:geometrycollection|multipoint|polygon|multipolygon|linestring|multilinestring)\s*\(\s*\(?\s*select|\bname_const\s*\(|\bctxsys\.|\bconvert\s*\(\s*int\s*,|\bcast\s*\(\s*\(?\s*select\b|\bxmltype\s*\(|\bgtid_subset\s*\(|\bcast\s*\([^)]{0,80}\bas\s+(?:int|char|varchar|numeric|signed|unsigned|text)\b[^)]*\)\s*(?:--|#|=|<|>|\))
test: and extractvalue(1,concat(0x7e,version()))
test: 1 and 1=convert(int,(select @@version))
pass: convert your files

id: 300001011
name: SQL injection: hex, char() and concat() payload building
type: SQL-Injection
accuracy: medium
risk: medium
targets: @values, header, url, param-name
unless: binary
literal: char(
literal: chr(
literal: concat
literal: 0x
literal: unhex
literal: ascii(
literal: substr
literal: mid(
literal: ord(
literal: hex(
regex: \b(?:char|chr|nchar)\s*\(\s*\d+\s*\)\s*(?:\+|\|\||,|&)\s*(?:char|chr|nchar)\s*\(|\b(?:group_)?concat(?:_ws)?\s*\([^)]{0,100}(?:0x[0-9a-f]{2,}|@@|\bselect\b|\bversion\s*\(|\buser\s*\(|\bdatabase\s*\()|\bunhex\s*\(|(?:\b(?:ascii|ord|hex)\s*\(\s*)?\b(?:substr(?:ing)?|mid)\s*\(\s*\(?\s*(?:select|user|version|database|@@)|\b0x(?:[2-7][0-9a-f]){4,}\b|(?:\b(?:or|and|select|where|values|like|in)\b|[=,(])\s*0x(?:[2-7][0-9a-f]){2,}\b
test: concat(0x3a,user())
test: 1 and ascii(substring((select password from users),1,1))>64
test: char(65)+char(66)
test: 1 and password=0x61646d696e
test: ' union select 0x3c3f706870
# A hex literal is payload building when its bytes are text; a 64-bit id written in hex is not.
pass: concatenate two strings
pass: ie=utf-8&f=8&rsv_bp=1&rsv_idx=1&tn=baidu&wd=web&fenlei=256&rsv_pq=0xb513b424000662f2&rsv_t=27ddT5tGG0nZ5
pass: https://www.baidu.com/s?ie=utf-8&wd=web&rsv_pq=0xe6365931000b4bad&rsv_t=5a63KaE7iJ8q
pass: color=0xff8800

id: 300001012
name: SQL injection: ORDER BY / GROUP BY / HAVING probing
type: SQL-Injection
accuracy: medium
risk: medium
targets: @values, header, url
unless: binary
literal: order
literal: group
literal: having
literal: procedure analyse
regex: \b(?:order|group)\s+by\s+\d+\s*(?:--|#|/\*|;|\)|,\s*\d)|\bhaving\s+\d+\s*=\s*\d+|\bprocedure\s+analyse\s*\(|['"]\s*(?:order|group)\s+by\b
test: 1 order by 10--
test: ' group by password having 1=1--
pass: order by price

id: 300001013
name: SQL injection: subquery or conditional in a value
type: SQL-Injection
accuracy: medium
risk: high
targets: @values, header, url
# A statement in another page's address (a search engine's results page in a Referer) is
# that page's search; breaking out of a quoted string in it needs a quote.
unless: url, binary, sql-text
literal: select
literal: case
literal: iif
literal: if(
literal: elt(
literal: decode(
regex: \(\s*select\s+[\w@*(]|\bselect\s+(?:\*|\w+\s*\(|@@|\d+\s*,|null\b|top\s+\d|count\s*\()[\s\S]{0,200}?\bfrom\b|\bselect\s+[\w.*,\s"`\[\]]{1,200}\bfrom\s+[\w.\[\]`"]+\s*(?:where\s+[\w.'"(`]+\s*(?:[=<>!]|\blike\b|\bin\b|\bis\b|\bnot\b|\bbetween\b)|limit\s+\d|--|#|;|\))|\bcase\s+when\b[\s\S]{1,200}?\bthen\b|\biif\s*\([^)]{1,100}[=<>]|\bif\s*\(\s*(?:\(?\s*select|\d+\s*[=<>]|ascii|substr|length|mid|ord)|\belt\s*\(\s*\d|\bdecode\s*\(\s*\(?\s*select
test: 1 and (select 1 from dual)
test: 1;select username, password from users where id=1
test: IF(1=1,SLEEP(1),0)
pass: please select one from the list below
pass: select x from y where
pass: site:segmentfault.com select user_id,user_nickname,user_status from yy_user where user_status = 1 // 第一次查询

id: 300001014
name: SQL injection: MSSQL/Oracle/Postgres specific statements
type: SQL-Injection
accuracy: high
risk: high
targets: @values, header, url
unless: binary
literal: exec
literal: dbms_
literal: pg_read_file
literal: pg_ls_dir
literal: from dual
literal: rownum
literal: nvarchar
literal: declare
literal: backup
regex: \bexec(?:ute)?\s*(?:master\.|sp_|xp_|\(?\s*@|immediate\b)|\bdeclare\s+@\w+\s+n?(?:var)?char\b|\bbackup\s+(?:database|log)\s+\w+\s+to\s+disk|\bdbms_(?:xmlgen|java|scheduler|output|sql|aw|utility)\b|\bpg_(?:read_file|ls_dir|read_binary_file|stat_file)\s*\(|\bfrom\s+dual\b[\s\S]{0,40}(?:--|#|\)|where|$)|\brownum\s*[<=>]|\bcast\s*\([^)]*nvarchar
test: exec master.dbo.sp_who
test: ' union select null from dual--
pass: execute the plan

id: 300001015
name: SQL injection: comment-obfuscated keywords
type: SQL-Injection
accuracy: high
risk: high
systems: MySQL
targets: @values, header, url, param-name
unless: binary
literal: /*!
regex: /\*!\d*\s*(?:select|union|and|or|from|where|insert|update|delete|drop|concat|sleep|benchmark|\d)
test: 1 /*!50000union*/ select 1
pass: /*! comment */

id: 300001016
name: SQL injection: boolean operator injected at the start of a value
type: SQL-Injection
accuracy: medium
risk: high
targets: @values, header, param-name
unless: binary
literal: or
literal: and
literal: xor
literal: ||
literal: &&
regex: ^\s*(?:or|and|xor|\|\||&&)\s+(?:not\s+)?(?:[\w'"().]+\s*(?:=|<>|!=|<|>|\blike\b|\bis\b)\s*[\w'"().]+|true\b|false\b|exists\b|\(\s*select\b)|['"]\s*(?:or|and)\s*\(?\s*exists\b|['"`)]\s*(?:or|and)\s+[a-z_][\w.$]*\s*\([^)]*\)\s*(?:=|<|>|--|#|$)|['"]\s*\|\|\s*[\w.$]+\s*\([^)]*\)\s*\|\|\s*['"]
test: OR x=x
test: or true--
test: ' or (EXISTS)
test: -1') OR JSON_EXTRACT('{}', '$.a') = 9648
test: ' || pkg.adduser('a', 'b') || '
pass: or maybe not
pass: and then there were none
pass: Oregon = Portland

id: 300001451
name: SQL injection: a regular expression or LIKE pattern given as a hex literal
# Blind extraction tests a column against a pattern one character at a time (`1 regexp
# 0x5e61`, `x rlike 0x5e`); writing the pattern as a hex literal needs no quote, so filters on
# quotes pass it. `regexp` and `rlike` are operators only; after `like` an SQL operand and a
# boolean operator before it are required, since prose writes `looks like 0x0`.
type: SQL-Injection
accuracy: high
risk: high
systems: MySQL
targets: @values, header
unless: binary
literal: regexp
literal: rlike
literal: like
regex: \b(?:regexp|rlike)\s+(?:binary\s+)?0x[0-9a-f]{2,}\b|\b(?:and|or|xor|where|having|when)\s+(?:[\w.@`]+|'[^']*'|"[^"]*")\s+(?:not\s+)?like\s+(?:binary\s+)?0x[0-9a-f]{2,}\b
test: 1 regexp 0x5e61
test: 1 and 1 rlike 0x5e
test: 1 and 0x61 like 0x61
test: ' or name not like binary 0x25
pass: rsv_pq=0xb14b23320001bbdc&rsv_t=d418BEsK3eSjV

id: 300001452
name: SQL injection: the session's login, user or database compared to a name
# Blind injection asks who the query runs as (`system_user='sa'`, `db_name()='master'`,
# `is_srvrolemember('sysadmin')=1`): niladic identity functions and identity functions called
# with no argument, compared to a quoted name, occur in no prose or real parameter; a JSON key
# of the same words (`"page_current_user_role":"editor"`) is not a call.
type: SQL-Injection
accuracy: high
risk: high
targets: @values, header
unless: binary
literal: system_user
literal: session_user
literal: user_name
literal: suser_
literal: db_name
literal: host_name
literal: current_
literal: schema_name
literal: original_login
literal: rolemember
regex: \b(?:system_user|session_user)\s*(?:=|<>|!=|\blike\b)\s*['"]|\b(?:suser_s?name|user_name|db_name|host_name|current_database|current_schema|current_user|schema_name|original_login)\s*\(\s*\)\s*(?:=|<>|!=|\blike\b)\s*['"]|\bis_(?:srv)?rolemember\s*\(\s*['"]
test: 1 and system_user='sa'
test: 1 and session_user like 'root%'
test: 1 and db_name()='master'
test: 1 and is_srvrolemember('sysadmin')=1
pass: "page_current_user_role":"editor","page_is_peek":false

id: 300001485
name: SQL injection: a number, a boolean operator and a string or boolean literal
# The boolean probe of a numeric parameter: `1 and 'a'`, `5 or "x"`, `1 and true`. The value
# closes nothing, so the query reads the number as the column's value and the rest as a
# condition on a constant (true or false by the database's string-to-number cast); a value that
# starts with a number and then joins a quoted string with a logical operator is no quantity or
# phrase, nor is one that ends on `true` or `false` after it (before a comment at most).
type: SQL-Injection
accuracy: medium
risk: medium
targets: @values, header, param-name
unless: binary
literal: and
literal: or
literal: div
regex: ^\s*\(*\s*-?\d+(?:\.\d+)?\s*\)*\s*(?:\s(?:and|x?or|div)\s|&&|\|\|)\s*\(*\s*(?:(?:binary\s+)?['"]|(?:true|false)\s*\)*\s*(?:$|--|#|/\*|;))
test: 1 and 'abc'
test: 5 OR "x"
test: -1 xor 'a'
test: 7 && 'x'
test: (1) and ('a'
test: 1 and true
test: 0 OR false-- -
test: 5 && true)
pass: 3 and true crime podcasts
pass: Chapter 1 and 'Dune'
pass: 10 ounces
pass: 1 orange

id: 300001486
name: SQL injection: HAVING clause after a number
# A `HAVING` condition appended to a numeric parameter (`1 having count(*)>0`, `-1 having 1`)
# probes for a grouped query or forces an error that names the selected column: what follows
# `having` is a number, a parenthesis, a quote or an aggregate call, never a word of prose.
type: SQL-Injection
accuracy: medium
risk: medium
targets: @values, header, param-name
unless: binary
literal: having
regex: ^\s*\(*\s*-?\d+\s*\)*\s+having\s*(?:\d|\(|['"]|(?:count|sum|avg|min|max|length|len|ascii|char_length)\s*\()
test: 1 having count(*)>0
test: -1 having 1
test: 1) HAVING (1=1
test: 3 having sum(price)>100
pass: 3 having fun
pass: 2 having been there
pass: the best having 1 cup
