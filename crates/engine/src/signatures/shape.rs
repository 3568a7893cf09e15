//! What kind of text a value is, for the signatures whose patterns mean an attack in some values
//! and nothing in others (`unless:` in the database). A comment-after-quote (`'--`) or a shell
//! separator before a short word is an injection in a form field, and an accident in the bytes
//! of a protobuf message or a zlib stream carried in a JSON string; `union select` in a search
//! query is a payload, and in another site's URL carried in a `Referer` it is that site's search;
//! `select 1 from a` typed into a search box is somebody looking for SQL, not an injection.
//!
//! The shapes are judged only for a value some such signature matched (rarely), never on the
//! clean path.

/// A shape a signature can be exempt in (bit flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Binary data: control bytes, C1 controls or invalid UTF-8 make up a noticeable part of it
    /// (protobuf, compressed or image bytes, Latin-1-decoded binary in a JSON string).
    Binary = 1,
    /// An absolute `http(s)` URL with nothing in it that could leave a quoted SQL string or an
    /// HTML attribute (no quote, no `<` or `>`): another page's address, its query the
    /// parameters of that page.
    Url = 2,
    /// One SQL query typed as text (`select 1 from a`, `site:example.com select a from t where
    /// b = 1`): it begins with `select` and holds nothing that leaves a quoted string (quote,
    /// backtick, backslash, an escape), extends an expression (parenthesis, `;`, comment, `union`)
    /// or reaches what a payload is after (`*`, hex literals, system catalogs, sleep functions).
    /// Put in a value, such a statement is a syntax error in every context a value lands in
    /// (after `=`, inside quotes, in a list); only a fragment can continue a query, so a
    /// statement left open at its end (`… where`) does not count as typed text.
    SqlText = 4,
    /// One JavaScript function expression, defined and not called (`function(e){…}`): what
    /// error loggers and bundlers send as a function's source. It runs nothing where it lands
    /// (in markup it is text; evaluated, it only makes a function), so the sinks and calls in
    /// its body are not an injection; a call after it (`}()`, `}+alert(1)`) is not this shape.
    Function = 8,
    /// Text whose every quote is punctuation (`"LIKE" STAMP`, `I'll`, `36" X 48"`; see
    /// [`crate::injection::prose`]), with at least one quote: none of them closes a string
    /// literal with SQL after it, which is what a quote-breakout signature looks for.
    Prose = 16,
    /// A query in a search engine's or code host's syntax (`title="sql" && app="x"`; see
    /// [`super::search`]): its quotes delimit whole field values and phrases.
    SearchQuery = 32,
    /// A document of three or more lines of text starting with a word or a heading (a YAML
    /// scanner template, a README, code): a path never holds a line break, so the value as a
    /// whole is no path a traversal could reach a file through, whatever paths it quotes.
    Document = 64,
}

impl Shape {
    /// The database spelling: `binary`, `url`, `sql-text`, `function`, `prose`, `search-query`,
    /// `document`.
    pub fn parse(name: &str) -> Option<Shape> {
        match name {
            "binary" => Some(Shape::Binary),
            "url" => Some(Shape::Url),
            "sql-text" => Some(Shape::SqlText),
            "function" => Some(Shape::Function),
            "prose" => Some(Shape::Prose),
            "search-query" => Some(Shape::SearchQuery),
            "document" => Some(Shape::Document),
            _ => None,
        }
    }
}

/// The shapes of `value`, as a bit set of [`Shape`]s.
pub fn shapes(value: &[u8]) -> u8 {
    let mut out = 0;
    if is_binary(value) {
        out |= Shape::Binary as u8;
    }
    if is_plain_url(value) {
        out |= Shape::Url as u8;
    }
    if is_sql_text(value) {
        out |= Shape::SqlText as u8;
    }
    if is_function_expression(value) {
        out |= Shape::Function as u8;
    }
    out | text_shapes(value)
}

/// See [`Shape::Document`]. Markup (`<`) and JSON (`{`, `[`) documents are not this shape: their
/// elements and strings are values in their own right, and may each be a path.
fn is_document(v: &[u8]) -> bool {
    let first = v.iter().find(|b| !b.is_ascii_whitespace());
    first.is_some_and(|b| b.is_ascii_alphabetic() || *b == b'#')
        && v.split(|b| *b == b'\n')
            .filter(|line| !line.trim_ascii().is_empty())
            .nth(2)
            .is_some()
}

/// The [`Shape::Prose`], [`Shape::SearchQuery`] and [`Shape::Document`] bits of `value`, or of
/// its text when it is percent-encoded (a cookie keeping the last search) or base64 as a whole
/// (a search page that sends its query base64-encoded, `qbase64=`): the signatures see that
/// text as a view of the value.
fn text_shapes(value: &[u8]) -> u8 {
    let of = |v: &[u8]| {
        let mut out = 0;
        if crate::injection::prose::prose_quotes(v).1 {
            out |= Shape::Prose as u8;
        }
        if super::search::is_search_query(v) {
            out |= Shape::SearchQuery as u8;
        }
        if is_document(v) {
            out |= Shape::Document as u8;
        }
        out
    };
    match of(value) {
        0 if value.contains(&b'%') => {
            let mut ev = crate::normalize::Evasions::default();
            of(&crate::normalize::decode_percent_once(value, &mut ev).0)
        }
        0 => crate::normalize::base64_text(value).map_or(0, |text| of(&text)),
        found => found,
    }
}

/// A whole `k=v&k=v` string (a query string, a form body) without the pairs whose value has one
/// of the shapes `unless`; `None` when no pair has one. A match that only such a value holds is
/// that parameter's, which its own scan judged with its shape; what a payload split across
/// parameters is made of stays in the rest.
pub fn without_shaped_pairs(value: &[u8], unless: u8) -> Option<Vec<u8>> {
    let mut rest = Vec::with_capacity(value.len());
    let mut dropped = false;
    for pair in value.split(|&b| b == b'&') {
        let shaped =
            memchr::memchr(b'=', pair).is_some_and(|eq| shapes(&pair[eq + 1..]) & unless != 0);
        if shaped {
            dropped = true;
            continue;
        }
        if !rest.is_empty() {
            rest.push(b'&');
        }
        rest.extend_from_slice(pair);
    }
    dropped.then_some(rest)
}

/// Whether `value` is an absolute `http(s)` URL with a query: its `&`-separated pairs are the
/// parameters of the page it names, judged as [`without_shaped_pairs`] judges a query string's.
pub fn carries_query(value: &[u8]) -> bool {
    let v = value.trim_ascii_start();
    (v.len() > 8 && v[..8].eq_ignore_ascii_case(b"https://")
        || v.len() > 7 && v[..7].eq_ignore_ascii_case(b"http://"))
        && v.contains(&b'?')
}

/// Odd bytes make up at least one byte in fifty, there are at least six of them and at least four
/// different ones: control bytes other than white space, DEL, C1 controls (UTF-8 `c2 80`–`c2 9f`)
/// and bytes that are not UTF-8. Binary encodings use many different such bytes (protobuf tags
/// and lengths, compressed streams); a payload that slips a NUL or a vertical tab between its
/// characters (`.%00./`, `1%0Band%0B1=1`) repeats one or two and stays text.
fn is_binary(v: &[u8]) -> bool {
    let mut seen = [false; 256];
    let mut odd = 0usize;
    let mut note = |b: u8, odd: &mut usize| {
        *odd += 1;
        seen[usize::from(b)] = true;
    };
    let mut rest = v;
    while !rest.is_empty() {
        let (good, bad) = match std::str::from_utf8(rest) {
            Ok(s) => (s, &[][..]),
            Err(e) => {
                let (g, b) = rest.split_at(e.valid_up_to());
                (std::str::from_utf8(g).unwrap_or_default(), b)
            }
        };
        for c in good.chars() {
            if (c.is_control() && !matches!(c, '\t' | '\n' | '\r')) || c == '\u{7f}' {
                // C0 controls and DEL by their value, C1 controls by theirs.
                note((u32::from(c) & 0xff) as u8, &mut odd);
            }
        }
        if bad.is_empty() {
            break;
        }
        // An overlong form of an ASCII character (`C0 BC` for `<`) is text written to get past a
        // decoder, not binary data: counted as odd, a few of them would exempt the payload they
        // spell from every signature that binary values are exempt from.
        if let Some(n) = overlong_ascii(bad) {
            rest = &bad[n..];
            continue;
        }
        note(bad[0], &mut odd);
        rest = &bad[1..];
    }
    let distinct = seen.iter().filter(|&&x| x).count();
    odd >= 6 && distinct >= 4 && odd * 50 >= v.len()
}

/// The length of the overlong UTF-8 form of an ASCII character that `v` starts with, if it
/// starts with one: a lead byte of two to six bytes (`C0`/`C1`, `E0`, `F0`, `F8`, `FC`) and
/// continuation bytes that carry no bit above the character's seven (`80`, the last but one
/// `80` or `81`, the last any).
fn overlong_ascii(v: &[u8]) -> Option<usize> {
    let n = match *v.first()? {
        0xc0 | 0xc1 => 2,
        0xe0 => 3,
        0xf0 => 4,
        0xf8 => 5,
        0xfc => 6,
        _ => return None,
    };
    let (conts, last) = v.get(1..n)?.split_at(n - 2);
    let zero = match conts.split_last() {
        Some((top, rest)) => top & 0xfe == 0x80 && rest.iter().all(|&b| b == 0x80),
        None => true,
    };
    (zero && last[0] & 0xc0 == 0x80).then_some(n)
}

/// `http://` or `https://`, a host name (letters, digits, `.`, `-`, an optional port), then the
/// end, a `/`, `?` or `#`; and no byte that breaks out of a quoted string or an attribute.
fn is_plain_url(v: &[u8]) -> bool {
    let v = v.trim_ascii_start();
    let rest = if v.len() >= 8 && v[..8].eq_ignore_ascii_case(b"https://") {
        &v[8..]
    } else if v.len() >= 7 && v[..7].eq_ignore_ascii_case(b"http://") {
        &v[7..]
    } else {
        return false;
    };
    let host = rest
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':'))
        .count();
    host > 0
        && matches!(rest.get(host), None | Some(b'/' | b'?' | b'#'))
        && !v
            .iter()
            .any(|b| matches!(b, b'\'' | b'"' | b'`' | b'<' | b'>' | b'\\'))
}

/// See [`Shape::SqlText`]. Search operators (`site:example.com`) may come before the statement.
fn is_sql_text(v: &[u8]) -> bool {
    let mut words = v.split(u8::is_ascii_whitespace).filter(|w| !w.is_empty());
    let Some(first) = words.find(|w| !w.contains(&b':')) else {
        return false;
    };
    if !first.eq_ignore_ascii_case(b"select")
        || v.iter().any(|b| b"'\"`\\%();@*#".contains(b))
        // Two-byte openings and the quotes some drivers fold to ASCII ones.
        || ["&#", "--", "/*", "..", "\u{2018}", "\u{2019}", "\u{201c}", "\u{201d}", "\u{ff02}", "\u{ff07}"]
            .iter()
            .any(|s| memchr::memmem::find(v, s.as_bytes()).is_some())
    {
        return false;
    }
    let mut last: &[u8] = b"";
    for word in v.split(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$'))) {
        if word.is_empty() {
            continue;
        }
        let w = word.to_ascii_lowercase();
        let reaches = w.starts_with(b"0x")
            || w.starts_with(b"sys")
            || w.starts_with(b"all_")
            || w.starts_with(b"pg_")
            || w.starts_with(b"sqlite_")
            || w.contains(&b'$')
            || matches!(
                &w[..],
                b"union"
                    | b"information_schema"
                    | b"master"
                    | b"mysql"
                    | b"dual"
                    | b"sleep"
                    | b"benchmark"
                    | b"waitfor"
                    | b"into"
                    | b"load_file"
                    | b"version"
            );
        if reaches {
            return false;
        }
        last = word;
    }
    ![
        "where", "and", "or", "not", "from", "by", "like", "select", "having", "on", "join",
    ]
    .iter()
    .any(|k| last.eq_ignore_ascii_case(k.as_bytes()))
}

/// See [`Shape::Function`]: `function`, an optional name, a parameter list, then a body whose
/// closing brace is the value's last byte. Braces are counted outside strings, comments and
/// regular expression literals, read the way a JavaScript lexer reads them; a string that runs
/// past a line end, or anything the reading cannot place, means it is not this shape.
fn is_function_expression(v: &[u8]) -> bool {
    let v = v.trim_ascii();
    let Some(rest) = v.strip_prefix(b"function") else {
        return false;
    };
    if !rest
        .first()
        .is_some_and(|b| b.is_ascii_whitespace() || *b == b'(')
    {
        return false;
    }
    let name = rest.trim_ascii_start();
    let name_len = name
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$'))
        .count();
    if name
        .get(name_len..)
        .map(<[u8]>::trim_ascii_start)
        .and_then(|r| r.first())
        != Some(&b'(')
        || v.last() != Some(&b'}')
    {
        return false;
    }
    let mut depth = 0usize;
    let mut opened = false;
    // The last significant byte, which tells a regular expression's `/` from a division's.
    let mut prev = b'(';
    let mut i = 0;
    while i < v.len() {
        let b = v[i];
        match b {
            b'\'' | b'"' | b'`' => {
                i += 1;
                while i < v.len() && v[i] != b {
                    if v[i] == b'\\' {
                        i += 1;
                    } else if b != b'`' && matches!(v[i], b'\n' | b'\r') {
                        return false;
                    }
                    i += 1;
                }
                if i >= v.len() {
                    return false;
                }
            }
            b'/' if v.get(i + 1) == Some(&b'/') => {
                return false;
            }
            b'/' if v.get(i + 1) == Some(&b'*') => {
                let Some(end) = memchr::memmem::find(&v[i + 2..], b"*/") else {
                    return false;
                };
                i += end + 3;
                continue;
            }
            b'/' if b"(,=:[!&|?{};+-*%<>~^".contains(&prev) => {
                let mut class = false;
                i += 1;
                while i < v.len() && (class || v[i] != b'/') {
                    match v[i] {
                        b'\\' => i += 1,
                        b'[' => class = true,
                        b']' => class = false,
                        b'\n' | b'\r' => return false,
                        _ => {}
                    }
                    i += 1;
                }
                if i >= v.len() {
                    return false;
                }
            }
            b'{' => {
                depth += 1;
                opened = true;
            }
            b'}' => {
                depth = match depth.checked_sub(1) {
                    Some(d) => d,
                    None => return false,
                };
                if depth == 0 {
                    return opened && i + 1 == v.len();
                }
            }
            _ => {}
        }
        if !b.is_ascii_whitespace() {
            prev = b;
        }
        i += 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Asserts that each value's shapes, under `mask`, are `want`.
    fn assert_shapes(values: &[&str], mask: u8, want: u8) {
        for v in values {
            assert_eq!(shapes(v.as_bytes()) & mask, want, "{v}");
        }
    }

    #[test]
    fn values_are_told_apart() {
        let url = Shape::Url as u8;
        let bin = Shape::Binary as u8;
        assert_eq!(
            shapes(b"https://cn.bing.com/search?q=site:segmentfault.com union select 1"),
            url
        );
        assert_eq!(shapes(b"https://x.example/?q=1' union select 1"), 0);
        assert_eq!(shapes(b"https://x.example/\"><script>"), 0);
        assert_eq!(shapes(b"javascript://x.example/%0aalert(1)"), 0);
        assert_eq!(shapes(b"http://evil/?a=b"), url);
        // Overlong forms of `<` of every length spell text, not binary data.
        let overlong = b"\xc0\xbcscript>\xe0\x80\xbcscript>\xf0\x80\x80\xbcscript>\
                         \xf8\x80\x80\x80\xbcscript>\xfc\x80\x80\x80\x80\xbcscript>";
        assert_eq!(shapes(overlong) & bin, 0);
        assert_eq!(overlong_ascii(b"\xe0\x81\xbf"), Some(3));
        assert_eq!(overlong_ascii(b"\xe0\xa0\x80"), None);
        assert_eq!(overlong_ascii(b"\xf0\x90\x80\x80"), None);
        let protobuf =
            b"\n\xc3\x02\n\x06021436\x12\x0c333.1007.0.0\x1a\xaa\x02\nw\x08d\x10\x05\x1a/54F00853";
        assert_eq!(shapes(protobuf), bin);
        let zlib_in_json =
            "x\u{9c}\u{ed}}ks\u{1b}\u{c7}\u{95}\u{f6}_a\u{f1}\u{d3}n\u{95}Aa\u{6}\u{3}\u{cc}\u{80}";
        assert_eq!(shapes(zlib_in_json.as_bytes()), bin);
        assert_eq!(
            shapes(b"GIF89a\xa0\x00\xf7\x00\x00\xff\x00\x01\x02===\x13\x13\x1b"),
            bin
        );
        assert_eq!(shapes(b"../../etc/passwd\x00.png"), 0);
        assert_eq!(
            shapes(b".\x00.\\.\x00.\\.\x00.\\.\x00.\\windows\\win.ini"),
            0
        );
        assert_eq!(
            shapes(b"..\x01\xef\x80\xa5..\x01\xef\x80\xa5..\x01boot.ini"),
            0
        );
        assert_eq!(shapes("tab\tnew\nline 中文".as_bytes()), 0);
    }

    #[test]
    fn function_sources_are_told_from_calls() {
        let f = Shape::Function as u8;
        let sources = [
            "function(e){var n=new URL(window.location.href);e?(v(e.id),n.searchParams.delete(\"g\")):v(\"\")}",
            "function(){}",
            "function (t) { if (!t.correctedFrom) { var n = /[{}]/.test(t) ? '}' : \"{\"; } }",
            "function name(a, b) {\n  return a / b / 2 + `x${a}`;\n}",
        ];
        assert_shapes(&sources, f, f);
        let calls = [
            "function(){alert(1)}()",
            "function(){x=1}+alert(1)",
            "function(){x=/'/}+alert(1)//'}",
            "function(){x=\"{\"}+alert(1);{\"}\"}",
            "function(){x='}\nalert(1)//'}",
            "function(){}//}",
            "(function(){alert(1)})",
            "x=function(){}",
            "function(){/*}*/}alert(1)}",
        ];
        assert_shapes(&calls, f, 0);
    }

    #[test]
    fn sql_typed_as_text_is_told_from_fragments() {
        let text = Shape::SqlText as u8;
        let typed = [
            "select 1 from a",
            "SELECT name from users where id = 1",
            "site:segmentfault.com select user_id,user_nickname from yy_user where user_status = 1 // 第一次查询",
        ];
        assert_shapes(&typed, u8::MAX, text);
        let payloads = [
            "1 union select 1 from a",
            "select 1 from a where name = 'x' or 1=1",
            "select * from users",
            "select 1 from foo where",
            "select name from information_schema.tables",
            "select pg_sleep",
            "SELECT 0x7461626c65 FROM t",
            "select a from t -- x",
            "select a from t; drop table t",
            "select count(a) from t",
            "select a from t where b = %27x",
            "select a from t where b = \\u0027x",
            "select a from master..sysservers",
            "select password into outfile x from users",
            "x select 1 from a",
        ];
        assert_shapes(&payloads, text, 0);
    }
}
