# SQL injection by syntax fragments (ids 300001100-300001199): the pieces an injection is built of
# when it is not a whole classic payload (function calls, operators, casts, statements, comments),
# for MySQL, MSSQL, PostgreSQL, Oracle and SQLite. Format: see src/waf/signatures/db.rs.
# Every pass example is drawn from real traffic (search queries, ids, telemetry, code snippets).

id: 300001100
name: SQL injection: SQL function called with SQL arguments
type: SQL-Injection
accuracy: medium
risk: high
targets: @values, header, url, param-name
unless: binary
literal: benchmark
literal: sleep
literal: concat
literal: load_file
literal: make_set
literal: name_const
literal: substr
literal: mid
literal: unhex
literal: ascii
literal: char
literal: chr
literal: ord
literal: hex
literal: md5
literal: sha1
literal: sha2
literal: ifnull
literal: isnull
literal: nullif
literal: coalesce
literal: strcmp
literal: find_in_set
literal: instr
literal: locate
literal: elt
literal: extractvalue
literal: updatexml
literal: compress
literal: sysdate
literal: current_user
literal: session_user
literal: system_user
literal: database
literal: schema
literal: version
literal: user
literal: last_insert_id
literal: row_count
literal: connection_id
literal: json_
literal: jsonb_
literal: to_char
literal: cast
literal: convert
literal: regexp_
literal: soundex
literal: lpad
literal: rpad
literal: collation
literal: charset
literal: get_lock
literal: conv
literal: lcase
literal: ucase
literal: unistr
literal: starts_with
literal: lo_get
literal: query_to_xml
literal: string_agg
literal: array_agg
literal: current_database
literal: current_setting
literal: sys_context
literal: sqlite_version
literal: randomblob
literal: likelihood
literal: nvl
literal: decode
literal: encode
literal: gtid_subset
literal: exp(
literal: floor(
literal: rand(
literal: uuid
literal: bit_length
literal: octet_length
literal: char_length
literal: quote(
literal: space(
literal: unicode(
regex: (?:^|[^\w.$])(?:benchmark|sleep|pg_sleep|concat|concat_ws|group_concat|load_file|make_set|name_const|substr|substring|substring_index|mid|unhex|ascii|char|nchar|chr|ord|hex|md5|sha1|sha2|ifnull|isnull|nullif|coalesce|strcmp|find_in_set|instr|locate|elt|extractvalue|updatexml|compress|uncompress|jsonb?_\w+|to_char|cast|convert|regexp_\w+|soundex|lpad|rpad|collation|charset|get_lock|conv|lcase|ucase|unistr|starts_with|lo_get|query_to_xml|string_agg|array_agg|current_setting|sys_context|randomblob|likelihood|nvl|decode|encode|gtid_subset|exp|floor|rand|bit_length|octet_length|char_length|quote|space|unicode)\s*(?:/\*[^*]*\*/\s*)*\(\s*(?:$|\)|['"@(\d*~\-]|0x|select\b|null\b|\w+\s*\(|[\w.]+\s*[,|+]|[\w.]+\s*\)\s*(?:::|[=<>|+,]|--|#))|(?:^|[^\w.$])(?:sysdate|current_user|session_user|system_user|database|schema|version|user|last_insert_id|row_count|connection_id|uuid|current_database|sqlite_version|current_schema|inet_server_addr)\s*(?:/\*[^*]*\*/\s*)*\(\s*(?:$|\)\s*(?:$|::|[=<>|+,)]|--|#|\s*\b(?:and|or|like|union|from)\b))
test: benchmark(3000000,MD5(4)
test: concat_ws(0x3a,user(),database())
test: starts_with(password,'a')::int
test: sleep(
test: 1 and extractvalue(rand(),concat(0x3a,version()))--
test: jsonb_pretty(json_build_object(1,password))::int
test: ' and database()='x
test: user(
pass: Math.floor(Math.random() * 10)
pass: Add user (admin)
pass: Select user(s) to notify
pass: function(n){n.key===e&&t(n.value)}
pass: version (2.4.1) released

id: 300001101
name: SQL injection: function name left open at the end of a value
type: SQL-Injection
accuracy: medium
risk: medium
targets: @values, header, url, param-name
unless: binary
literal: (
regex: (?:^|[^\w.$])(?:abs|acos|asin|atan2?|avg|bin|cast|ceil(?:ing)?|char|chr|coalesce|concat\w*|convert|cos|cot|count|curdate|curtime|date\w*|day\w*|default|degrees|elt|exp|extract\w*|field|find_in_set|floor|format|from_\w+|greatest|group_concat|hex|hour|if|ifnull|iif|in|insert|instr|isnull|last_day|lcase|least|left|length|ln|local\w*|locate|log\d*|lower|lpad|ltrim|make_set|max|md5|mid|min|minute|mod|month\w*|now|nullif|oct|ord|password|pi|position|pow(?:er)?|quarter|radians|rand|repeat|replace|reverse|right|round|rpad|rtrim|schema|second|sha[12]?|sign|sin|sleep|space|sqrt|str_to_date|strcmp|subdate|substr\w*|sum|sysdate|tan|time\w*|trim|truncate|ucase|unhex|upper|user|uuid|values|version|week\w*|year\w*|benchmark|pg_sleep|load_file|extractvalue|updatexml|name_const|exists|not)\s*[^\w\s]{0,6}\s*\(\s*$
test: ABS(
test: date]=(
test: length||!!$(
test: if (
test: values (
pass: Please pick one (
pass: f(x) = x^2 + 1
pass: Total (3 items)

id: 300001102
name: SQL injection: SQL operator or predicate as the whole value
type: SQL-Injection
accuracy: medium
risk: medium
targets: @values, header, param-name
unless: binary
literal: =
literal: rlike
literal: <
literal: >
literal: !=
literal: ||
literal: &&
literal: ==
literal: ->
literal: is
literal: like
literal: regexp
literal: glob
literal: xor
literal: notnull
literal: between
literal: in
regex: ^\s*(?:<>|!=|<=>|>=|<=|==|\|\||&&|<<|>>|->>|#>>?|@>|<@|\?\||\?&|!<|!>|\^=)\s*$|^\s*(?:is\s+(?:not\s+)?null|(?:not\s+)?(?:like|rlike|regexp|ilike|glob|similar\s+to)\s+(?:null|binary|['"])|xor|notnull|isnull|(?:not\s+)?between\s+['"\d]\S*\s+and)\b|\b(?:like|rlike|regexp|ilike|glob)\s+['"]\s*$|^\s*(?:[\w.]+\s*,\s*)?\d+\s*(?:=|<=>|<>|!=|\blike\b|\brlike\b|\bregexp\b)\s*\d+\s*$|^\s*(?:not\s+)?(?:rlike|regexp|xor|ilike)\s*$|^\s*(?:not\s+)?in\s*\(\s*(?:['"][^'"]*['"]|-?\d+)(?:\s*,\s*(?:['"][^'"]*['"]|-?\d+))+\s*\)\s*$
test: <=>
test: ||
test: IS NULL
test: LIKE NULL
test: something LIKE '
test: in (0,1)
test: 1=1
test: b,1=1
test: 42 like 42
test: RLIKE
test: IN (815914, 815913)
pass: is it null and void
pass: ->
pass: like a rolling stone

id: 300001103
name: SQL injection: PostgreSQL casts and JSON operators
type: SQL-Injection
accuracy: medium
risk: high
targets: @values, header, url, param-name
unless: binary
literal: ::
literal: ->
literal: #>
literal: @>
literal: <@
literal: ?|
literal: ?&
literal: @?
literal: @@
literal: #-
regex: (?:\)|['"\]\w])\s*::\s*(?:jsonb?|int[248]?|integer|bigint|text|varchar|numeric|regclass|bytea|boolean|oid|inet)\b|['")\]]\s*(?:->>?|#>>?|@>|<@|\?[|&]|@\?|@@|#-)\s*(?:['"\d]|array\b)|\bor\s+['"][\[{][^'"]*['"]\s*(?:::|->|#>|@>|<@|\?|@@|\|\||[<>=])
test: 1+current_user::int
test: OR '{"b":2}'::jsonb <@ '{"a":1, "b":2}'::jsonb
test: '["a", "b"]'::jsonb - 1
test: OR '{"a":2,"c":[4,5,{"f":7}]}' -> '$.c[2].f' = 7
pass: std::string and std::vector
pass: fe80::1
pass: {"a": "b"} -> next

id: 300001104
name: SQL injection: integer overflow and float edge values
type: SQL-Injection
accuracy: medium
risk: medium
targets: @values, header, param-name
unless: binary
literal: 2147483648
literal: 4294967296
literal: 9223372036854775808
literal: 18446744073709551616
literal: 2.2250738585072011e-308
literal: 1e309
literal: 0x8000
literal: 0xffffffff
literal: 2147483649
literal: 9223372036854775809
literal: 0x7fffffff
# One past either end of a 32- or 64-bit signed integer (`-2147483649`), and the largest signed
# value in hex (`0x7fffffff`): the decimal maxima themselves are ordinary limits in real values.
regex: (?:^|[^\d.])-?(?:2147483648|2147483649|4294967296|9223372036854775808|9223372036854775809|18446744073709551616)(?:$|[^\d])|2\.2250738585072011e-308|(?:^|[^\w.])-?1e309\b|\b0x(?:80000000|ffffffff|7fffffff|8000000000000000|ffffffffffffffff|7fffffffffffffff)\b
test: 2147483648
test: -9223372036854775808
test: -2147483649
test: -9223372036854775809
test: 0x7fffffff
pass: 4294967295
test: 2.2250738585072011e-308
pass: 2147483647
pass: order 21474836481 shipped

id: 300001105
name: SQL injection: conditional expression (CASE, WHEN, IF, IIF)
type: SQL-Injection
accuracy: medium
risk: high
targets: @values, header, url, param-name
unless: binary
literal: when
literal: then
literal: if
literal: case
regex: \)\s*when\s+[\w'"()-]+\s+then\b|\bcase\s+when\s+(?:\d|[\w.'"()@]+\s*(?:[=<>!]|\bis\b|\blike\b|\bin\b|\bthen\b))|\bwhen\s+\d+\s*[=<>]\s*\d+\s+then\b|\bthen\s+[\w'"()]+\s+else\s+[\w'"()]+\s+end\b|\bselect\s+(?:\(\s*)?(?:case|if|iif)\b|\bif\s*\(\s*(?:\d+\s*[=<>!]|(?:ascii|ord|substr|substring|mid|length|sleep|benchmark|user|version|database|exists)\b|[\w'"]+\s*[=<>]\s*[\w'"]+\s*,)|\biif\s*\(\s*[\w'"()]+\s*[=<>]
test: ) when 234 then
test: SELECT (CASE
test: 1 and if(1=1,sleep(5),0)
test: case when 1=1 then 1 else 0 end
pass: and then when you arrive call me
pass: in case when you need it

id: 300001106
name: SQL injection: statements that define or change the database
type: SQL-Injection
accuracy: medium
risk: high
targets: @values, header, url, param-name
unless: url, binary
literal: create
literal: procedure
literal: declare
literal: exec
literal: load
literal: alter
literal: insert
literal: update
literal: delete
literal: drop
literal: truncate
literal: replace
literal: returns
literal: handler
literal: rename
literal: grant
literal: revoke
literal: shutdown
regex: \bcreate\s+(?:or\s+replace\s+)?(?:temporary\s+)?(?:function|procedure|trigger|table|view|user|database|schema|index|event|definer|aggregate|role|login)\s+[\w`"\[@(]|\bprocedure\s+analyse\b|\bdeclare\s+@\w+|\bexec(?:ute)?\s*\(\s*@|\bexecute\s+(?:immediate|sp_|xp_|as\s+login|procedure)\b|\breturns\s+\w+(?:\s*\(\s*\d+\s*\))?\s+(?:deterministic|soname|as\b|language\b)|\bload\s+data\s+(?:local\s+)?infile\b|\balter\s+(?:table|database|user|login|schema|procedure|function)\s+[\w`"\[]|\binsert\s+(?:ignore\s+)?into\s+[\w`".\[\]]+\s*(?:\(|values\b|select\b|set\b)|\bupdate\s+[\w`".\[\]]+\s+set\s+[\w`"\[]+\s*=|\bdelete\s+from\s+[\w`".\[\]]+\s*(?:where\b|;|--|#|$)|\bdrop\s+(?:table|database|schema|function|procedure|user|view|index|trigger|login)\s+(?:if\s+exists\s+)?[\w`"\[]|\btruncate\s+(?:table\s+)?[\w`".]+\s*(?:;|--|#|$)|\breplace\s*(?:/\*.*?\*/\s*)*\w*\s*(?:/\*.*?\*/\s*)*\(\s*\w+\s*,[\w\s,]*\)\s*values\b|;\s*(?:truncate|rename|drop|alter|create|handler|grant|revoke|shutdown|replace|lock|unlock|flush|kill)\b\W*(?:table|\w)|\b(?:grant|revoke)\s+(?:all|select|insert|update|delete|execute|dba|connect)\b[\w\s,]*\s(?:on|to|from)\s+[\w`'"*]
test: CREATE FUNCTION hello (s CHAR(20)) RETURNS CHAR(50) DETERMINISTIC RETURN CONCAT('Hello, ',s,'!');
test: ;truncate[xx
test: ;RePLAcE/*test*/test/*test*/(id, name) VALUES (1, 'test');
test: a=/CREATE TABLE Persons
test: '; drop table users--
test: 1; update users set password='x' where id=1
pass: please create a new table for me
pass: how to drop the price alert
pass: https://segmentfault.com/search?q=create+table+persons

id: 300001107
name: SQL injection: select list, alias and FROM fragments
type: SQL-Injection
accuracy: medium
risk: high
# Not `query`: each parameter is judged on its own, and a search typed as SQL (`sql-text`) is
# exempt in its parameter, not in the whole `type=content&q=select 1 from a`.
targets: param-value, cookie, body, json, xml, grpc, header, url, param-name
unless: url, binary, sql-text
literal: values
literal: except
literal: intersect
literal: minus
literal: as
literal: from
literal: select
literal: limit
literal: order
literal: group
literal: having
literal: execute
regex: (?:[)`'"\d*]|\bselect\b[^;]{0,100})\s*as\s+[`'"]?[\w$]+[`'"]?\s+from\b|[`'"!;\d]\s*as\s*[`'"]\s*from\b|[`'"!;\d]\s+as\s+not\s+from\b|\bfrom\s*(?:/\*.*?\*/\s*)*\(\s*select\b|\bfrom\s+(?:`[^`]+`|[\w$]+)\.(?:`[^`]+`|[\w$]+)\s*(?:where|limit|group|order|join|union|;|--|#|\)|$)|\bfrom\s+[\w.`$\[\]]+\s+(?:where\s+[\w.`\[\]]+\s*(?:[=<>!]|like\b|in\s*\(|regexp\b|is\b|between\b)|limit\s+\d|group\s+by\s+\w|order\s+by\s+\w)|\bselect\s+(?:\d+|null|@@\w+|\*|'[^']*'|"[^"]*"|\w+\s*\([^)]*\))\s*(?:,\s*(?:\d+|null|'[^']*'))*\s*(?:from\b|--|#|;|$|\|\|)|\bselect\s+(?:char|chr|concat\w*|group_concat|load_file|upper|lower|sleep|pg_sleep|benchmark|version|user|database|current_user)\s*\(|\bselect\s+(?:pg_sleep|sleep|benchmark|load_file|@@\w+)\b|\b(?:order|group)\s+by\s*$|\bvalues\s*\(\s*(?:['"][^'"]*['"]|-?\d+|null)\s*,|\b(?:except|intersect|minus)\s+(?:all\s+)?(?:select|values)\b|\bhaving\s+\d+\s*[=<>]|\bexecute\s+[a-z_]\w*\s*$|\bexecute\s*\(\s*$|\bselect\s+(?:top\s+\d+\s+)?[\w,\s`"\[\]*.]{1,100}\binto\s+[\w@#]
test: 1234 AS "foobar" FROM tablevar2=whatever
test: ` AS `edit_user_id` from
test: ) AS Role FROM
test: from(select count(*),concat((select (select concat(0x53) from `information_schema`.tables limit
test: from `db_miwf`.`sys_refindex` limit
test: SELECT 6229 FROM
test: ORder by
test: execute php
test: from information_schema.tables where BINARY LEFT(table_name, 1) = 'nnn' LIMIT
test: select pg_sleep
test: VALUES ('192.168.0.1', 'test')
test: except values(1,2)
pass: such as text from the book
pass: we are from here where we live
pass: order by price ascending
pass: select one from the list
pass: limit
pass: select 1 from a
pass: site:segmentfault.com select user_id,user_nickname,user_status from yy_user where user_status = 1

id: 300001108
name: SQL injection: quote closed, then a SQL keyword or operator
type: SQL-Injection
accuracy: medium
risk: high
targets: @values, header, url, param-name
# Not where every quote is text punctuation or delimits a search query's values: none closes a literal.
unless: binary, prose, search-query
literal: '
literal: "
literal: `
literal: ’
literal: ‘
literal: ´
regex: (?:['"`]|’|‘|´)\s*\)*\s*(?:/\*.*?\*/\s*)*(?:like\s*\(|(?:union|alter|procedure|into\s+(?:out|dump)file|rlike|regexp|glob|sounds\s+like|collate|div|notnull|isnull|waitfor)(?:\s|\(|/|$)|(?:select|insert|update|delete|drop|create|exec|execute|declare|truncate|having|where|order\s+by|group\s+by|limit|print)\s*$|select(?:\s*(?:[\d@*('"`\-]|/\*)|\s+(?:null|all|distinct|top|case|if|char|concat|sleep|user|version|database|benchmark|pg_sleep|load_file|\w+\s*(?:,|\(|\bfrom\b|$)))|insert\s+(?:into|ignore)\b|delete\s+from\b|update\s+[\w.`"\[\]]+\s+set\b|(?:drop|create)\s+(?:table|database|user|view|function|procedure|index|schema|trigger|login|role|or\s+replace|temp|temporary|if)\b|truncate\s+(?:table\s+)?[\w`"]|exec(?:ute)?\s*(?:\(|@|master\b|xp_|sp_)|declare\s+@|print\s*[(@'"]|where\s*\(|where\s+[\w.`'"]+\s*(?:[=<>!(]|\b(?:like|in|between|is|not|regexp|rlike)\b)|having\s+[\w(]+\s*[=<>(]|(?:order|group)\s+by\s+(?:\d|[\w`"]+\s*(?:,|--|#|/\*|\basc\b|\bdesc\b|$))|limit\s+\d)|(?:['"`]|’|‘|´)\s*\)*\s*(?:or|and|xor|\|\||&&)\s*(?:\(|not\b|exists\b|[\w$]+\s*\(|(?:['"`]|’|‘|´)?[\w.]*(?:['"`]|’|‘|´)?\s*(?:[=<>!~]|\b(?:i|r)?like\b|\bglob\b|\bis\b|\bin\b|\bbetween\b|\bnotnull\b|\bregexp\b|\bsimilar\s+to\b|\bnot\s+(?:similar|like|in|regexp|between)\b|\[)|\d+\s*(?:$|[-+*/=<>]|--|#)|\w+\s*(?:--|#|;|-\s*$))|(?:['"`]|’|‘|´)\s*\)*\s*(?:--|#)(?:[\s+-]|$)|(?:['"`]|’|‘|´)\s*\)*\s*;\s*(?:--|#|/\*|@@|(?:select|insert|update|delete|drop|exec|execute|declare|shutdown|print|waitfor|create|alter|truncate|if|begin|set|union)\b)|(?:^|[\s(,=:])[^'"`\s]+['"`]\s*\)*\s*;\s*$|['"]\s*['"]\s+\d|['"]\s*(?:<=>|!=|<>|=|\|\||&&)\s*['"(\d]|['"]\|\s*\d|\\\s*['"]\s*(?:(?:and|or)\b|;|\))
test: 'alter a
test: " UNION A
test: 'union/
test: 'or(id glob 1)--
test: ';print'
test: 3' ' 1
test: admin@juice-sh.op';
test: admin'#
test: x')like('x
test: x'--+
test: 'x'|1
pass: status: 'active' | 'inactive'
pass: status 'ok' | 200 rows
test: 1');
test: 7'));
test: '; @@#--
test: 1’ OR ’1’=’x’#;--()
test: email=admin@juice-sh.op\\' or json (id);
test: ' or xyz-
test: admin@juice-sh.op' and email ilike email--
test: ' and email not similar to id--
test: x' or array[id] is not null--
test: 'admin', '1'='1'
pass: it's or it isn't
pass: "WOOD" AND "SIGN" AND "POLKA DOTS"
pass: Tom's Diner, New York
pass: {"tag":"div","type":null,"union":{"utmSource":"pc"},"Limit":10}
pass: {"COLOR":"#2A1100","BACKGROUNDCOLOR":"WHITE"}
pass: "Not.A/Brand";v="8", "Chromium";v="114", "Google Chrome";v="114"
pass: script-src https: 'strict-dynamic' 'report-sample' 'nonce-bE8wzNsdY='; base-uri 'self';
pass: you said 'hello' and left
pass: {"innerText":"CREATE AN ACCOUNT","numChildButtons":2}
pass: "CREATE A CRITTER"
pass: [\\"MenuPopups\\",\\"OrderCart\\"]
test: ' order by 1--
test: " where `t`.`id` = 2
test: '; select pg_sleep(5)
test: ')) limit 1
pass: "SELECT" BUTTON KEYCAP
pass: Children's books 'where the wild things are'
pass: title="sql" && product="wordpress" || author=="CT Stack"
test: "SELECT" BUTTON' union select 1--
pass: https://safeline.com/poc/list?page=1&search=title%3D%22sql%22%20%26%26%20product%3D%22wordpress%22%20%7C%7C%20author%3D%3D%22CT%20Stack%22
test: https://shop.example/p?id=1&q=x%27%20union%20select%20password%20from%20users--

id: 300001109
name: SQL injection: boolean operator with a literal at the start of a value
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
regex: ^\s*(?:x?or|and|\|\||&&)\s+(?:\d+|['"][^'"]*['"]?|[\w.]+\s*[-=<>!]|[\w.]+\s*$|\(|not\b|true\b|false\b|null\b)|\bxor\s*[\s(]\s*(?:\d|['"]|\w+\s*[=<>(])|\b(?:and|or)\s*\(\s*(?:likelihood|glob|sleep|benchmark|\w+\s*\(|select\b|\d+\s*[=<>])
test: or 88
test: xor 2 <
test: or 'a' <
test: xor	5>
test: and( likelihood (id,.0));
pass: or maybe not
pass: and so on
pass: 20 or 30 people

id: 300001110
name: SQL injection: inline comments splitting keywords and statement endings
type: SQL-Injection
accuracy: medium
risk: high
targets: @values, header, url, param-name
# A `) --` ending a value closes the application's bracket only when the value opened none.
unless: binary
literal: /*
literal: */
literal: --
literal: #
regex: \b(?:select|union|from|where|and|or|insert|update|delete|drop|exec|order|group|having|into|values|table|sleep|benchmark)\s*/\*[^*]*\*+(?:[^/*][^*]*\*+)*/|/\*[^*]*\*+(?:[^/*][^*]*\*+)*/\s*(?:select|union|from|where|and|or|insert|update|delete|drop|exec|order|group|having|into|values|table|concat|char|sleep|benchmark|\d)\b|\w/\*[^*]{0,40}\*/\w|;\s*(?:--|#)\s*$|;\s*/\*|\b(?:table|drop|select|from|union)\w*\s*;\s*--|['"]\s*/\*|\*/\s*['"]|^[^(]*\)\s*--\s*[+\-]*\s*$
test: DROP/*comment*/sampletable
test: DR/**/OP sampletable
test: SELECT/*avoid-spaces*/password/**/FROM/**/Members
test: DROP sampletable;--
test: ' OR '1'='1'/*
test: 1;#
pass: /* a comment */
pass: see section 3; -- ok
pass: https://example.com/a/*/b
pass: */*
pass: SCRAPBOOK PAPER PACK (8.5X11"-300 DPI) --
test: 1) --
test: admin') --

id: 300001111
name: SQL injection: MSSQL and Oracle procedures, types and packages
type: SQL-Injection
accuracy: medium
risk: high
targets: @values, header, url, param-name
unless: binary
literal: xp_
literal: sp_
literal: openrowset
literal: opendatasource
literal: utl_
literal: dbms_
literal: varchar
literal: waitfor
literal: @@
literal: ctxsys
literal: sysobjects
literal: msysaccessobjects
regex: \bxp_(?:cmdshell|regread|regwrite|dirtree|fileexist|servicecontrol|availablemedia|loginconfig|makecab|ntsec_enumdomains|terminate_process|subdirs|enumgroups)\b|\bsp_(?:password|executesql|configure|addlogin|addsrvrolemember|makewebtask|oacreate|oamethod|oagetproperty|send_dbmail|start_job|addextendedproc|dropextendedproc|prepare|execute|replwritetovarbin|who|helpdb|columns|tables|linkedservers)\b|\bopen(?:rowset|datasource|query|xml)\b|\butl_(?:http|inaddr|file|smtp|tcp)\b|\bdbms_(?:pipe|lock|xmlgen|java|scheduler|output|sql|aw|utility|export_extension|metadata|random)\b|\bn?varchar2?\s*\(\s*(?:max|\d+)\s*\)\s*(?:[,)+;]|$)|\bconvert\s*\(\s*n?varchar|\bdeclare\s+@\w+\s+n?varchar|^\s*n?varchar2?\s*$|\bas\s+n?varchar|\bwaitfor\s+(?:delay|time)\b|@@(?:version|servername|spid|datafirst|language|microsoftversion|identity|rowcount|trancount|hostname|datadir|basedir|tmpdir)\b|\bctxsys\.|\bm?sys(?:objects|columns|comments|logins|databases|accessobjects|processes)\b
test: nvarchar
test: sp_password
test: UTL_HTTP
test: OPENROWSET
test: sp_executesql
test: '; waitfor delay '0:0:5'--
pass: sp_id=1234
pass: varchars are strings
pass: Best practices for exporting data from Amazon Aurora: varchar and text columns
pass: | orderpriority   | varchar(15) | NO   |     | NULL    |
test: convert(varchar(100),@@version)

id: 300001112
name: SQL injection: SQLite and MySQL specific forms
type: SQL-Injection
accuracy: medium
risk: high
systems: MySQL
targets: @values, header, url, param-name
unless: binary
literal: sqlite_
literal: collate
literal: notnull
literal: glob
literal: .e
literal: e.
literal: load_extension
literal: zeroblob
literal: json_valid
literal: sounds
literal: procedure
literal: mysql.
literal: information_schema
regex: \bsqlite_(?:master|temp_master|version|sequence|schema)\b|\bcollate\s+(?:nocase|binary|rtrim|utf8\w*)\b|['")\w]\s*notnull\b|\bglob\s+(?:['"\d]|\(\s*['"\d])|\b\d+\.e(?:\(|\.\w|\s+(?:union|select|from|or|and)\b)|\b(?:load_extension|zeroblob|json_valid)\s*\(|\bsounds\s+like\b|\bmysql\.(?:user|db|proc|func)\b|\binformation_schema[`"\]]?\s*(?:/\*.*?\*/\s*)*\.
test: email notnull--
test: var=user'collate nocase--
test: foo=1.e(ascii)
test: foo=1.e.tables
test: 'glob 1;
pass: the nocase flag
pass: 1.e5 kg

id: 300001301
name: SQL injection: JSON document literal compared through a JSON operator after a boolean operator
type: SQL-Injection
accuracy: medium
risk: high
# PostgreSQL and MySQL read a quoted `{...}`/`[...]` as a JSON document once an operator such as
# `?`, `@>` or `->` is applied to it: the boolean stays true whatever the row, as `OR 1=1` does,
# but no number or keyword comparison appears for the tautology signatures to see.
targets: @values, header, url, param-name
unless: binary
literal: '{
literal: '[
literal: "{
literal: "[
regex: \b(?:or|and|not|xor)\s*\(?\s*(?:'[\[{][^']*'|"[\[{][^"]*")\s*(?:::\s*jsonb?|->>?|#>>?|@>|<@|\?[|&]?|@\?|@@|#-)\s*(?:['"\d(]|array\b)
test: OR '{"a":"b"}' ? 'a'
test: OR '[1,2]' ? '1'
test: 1 and '{"x":1}' @> '{"x":1}'
test: x' or '["a"]' ->> 0 = 'a
pass: {"filter":{"or":[{"a":"b"}]}}
pass: color or "[red]" ? maybe
pass: and '{braces}' look nice

id: 300001302
name: SQL injection: logical operator appended to a numeric id
type: SQL-Injection
accuracy: medium
risk: high
# `id=7||1`, `/products/7||this.x`: the id column, or a server-side JavaScript (NoSQL `$where`)
# expression built around it, turns true for every row. An id is never followed by `||` and an
# operand; `&&` is left out, as query strings carried in values hold empty pairs (`efirst=0&&"`).
targets: @values, header, url, param-name
unless: binary
literal: ||
regex: (?:^|[/=:,(\s])\d+\s*\|\|\s*(?:true\b|false\b|null\b|this\s*\.|\d+\s*(?:[=<>!]|$)|\d+\s*/|['"(!]|sleep\s*\(|[a-z_]\w*\s*\(|1\b)
test: /rest/products/2499999||this.product/reviews
test: 7||1
test: id=3 || sleep(5000)
test: 12||true
test: 5 || '1'='1
pass: 1990||2000 editions
pass: tags=a||b
pass: /video/123||
pass: ecount=20&efirst=0&&","format"

id: 300001303
name: SQL injection: operator glued to its operands with backticks
type: SQL-Injection
accuracy: medium
risk: high
systems: MySQL
# MySQL reads a backtick as the end of an identifier, so `1`or`1` is `1 or 1` without the spaces
# that keyword signatures and tokenizers look for between words.
targets: @values, header, url, param-name
unless: binary
literal: `
regex: [\w'")]`\s*(?:or|and|xor|div|like|rlike|regexp|union|having|where|sounds)\s*`[\w'"(@-]
test: 1`or`1
test: x'`and`'1
test: `id`union`select
pass: use `or` to join the two conditions
pass: see `config.or` in the docs

id: 300001701
name: SQL injection: system database and catalog names of MSSQL, Oracle and PostgreSQL
# Enumeration reads the server's own databases and catalogs: MSSQL's `msdb` and `tempdb`,
# PostgreSQL's `pg_toast`, Oracle's `SYSAUX` tablespace, the `schema_name` column and
# `sys.database_name`. The other catalogs (`information_schema`, `sqlite_master`, `pg_catalog`,
# `MSysObjects`) have their own signatures.
type: SQL-Injection
accuracy: high
risk: high
targets: @values, header, param-name
unless: binary, url
literal: msdb
literal: tempdb
literal: pg_toast
literal: sysaux
literal: schema_name
literal: database_name
regex: \b(?:msdb|tempdb|pg_toast\w*|sysaux|schema_name|sys\s*\.\s*database_name)\b
test: msdb
test: 1 union select name from msdb..backupset
test: tempdb
test: select schema_name from information_schema.schemata
test: sys.database_name
pass: Db_Name=shop&page=2
pass: sysadmin

id: 300001501
name: SQL injection: a server variable read after an SQL operator or inside a call
# MySQL and MSSQL expose their version, paths and settings as `@@` variables
# (`@@innodb_version`, `@@datadir`, `@@servername`); an injection reads them as an operand
# (`1 AND @@version`, `(@@hostname)`). Real values hold `@@` as a template marker
# (`@@CRITEO_USERID@@`, `@@container(#module)`), never after a boolean operator or an opening
# parenthesis.
type: SQL-Injection
accuracy: high
risk: high
systems: MySQL
targets: @values, header
unless: binary
literal: @@
regex: (?:\b(?:and|or|xor|not|select|where|having|union|like|when|then)\s+|[(,]\s*)@@[a-z_]\w*
test: 1 AND @@innodb_version
test: 1 or @@datadir like '%'
test: 1 UNION SELECT @@hostname,2
test: concat(@@version_compile_os,1)
pass: @@container(#new-warning-module)[u8sTzuXkzrpBUgtYOdTUP]/DESCRIBE_EVENT_
pass: https://cm.g.doubleclick.net/pixel?google_nid=cjp&google_hm=@@CRITEO_USERID@@&google_push=PUSH_DATA

id: 300001502
name: SQL injection: SQLite attaching a database file after a statement separator
# SQLite's `ATTACH DATABASE 'file' AS x` after a `;` creates a file the attacker then writes a
# table into (a web shell under the document root). The separator and the quoted file name
# keep prose (`attach database backups`) out.
type: SQL-Injection
accuracy: high
risk: high
targets: @values, header
unless: binary
literal: attach
regex: ;\s*attach\s+(?:database\s+)?['"]
test: 1;ATTACH DATABASE '/var/www/x.php' AS x;
test: '; attach 'shell.php' as s--
pass: how to attach database files; attach database backups
