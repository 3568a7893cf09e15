//! The search-query shape: a value that is wholly a query in the syntax of a search engine, a
//! code host or a log search (`title="sql" && product="wordpress"`, `app:"nginx" AND
//! country:"DE"`, `intitle:"index of" "parent directory"`): fields compared with quoted
//! values, quoted phrases and plain words, joined by `&&`, `||`, `AND`, `OR`, `NOT` and
//! brackets. Quotes there delimit whole values: every one is paired, opens right after a
//! field's operator or at a term's start, and closes before a connector, a bracket or the end,
//! so none closes a literal of the query the value lands in with SQL after it; a breakout
//! (`x" || 1=1--`, `" union select …`) leaves a term that is no field, phrase or word.

/// Words that join terms.
fn connector(w: &[u8]) -> bool {
    [&b"and"[..], b"or", b"not"]
        .iter()
        .any(|c| c.eq_ignore_ascii_case(w))
}

/// Words that a term may not be: SQL that a breakout continues with.
fn sql_word(w: &[u8]) -> bool {
    [
        &b"union"[..],
        b"select",
        b"sleep",
        b"benchmark",
        b"waitfor",
        b"exec",
        b"execute",
        b"drop",
        b"insert",
        b"update",
        b"delete",
        b"from",
        b"where",
        b"having",
        b"order",
        b"group",
        b"limit",
        b"like",
        b"is",
        b"in",
        b"null",
        b"xor",
        b"between",
        b"regexp",
        b"rlike",
        b"declare",
        b"case",
        b"when",
        b"then",
    ]
    .iter()
    .any(|c| c.eq_ignore_ascii_case(w))
}

fn word_len(v: &[u8]) -> usize {
    v.iter()
        .take_while(|b| b.is_ascii_alphanumeric() || b"_.-/*".contains(b) || **b >= 0x80)
        .count()
}

/// The length of the quoted string `v` starts with (its quotes included), if it is one: no
/// backslash, no other quote of its kind inside, no line break.
fn quoted_len(v: &[u8]) -> Option<usize> {
    let q = *v.first().filter(|q| matches!(**q, b'"' | b'\''))?;
    let len = memchr::memchr(q, &v[1..])?;
    let text = &v[1..1 + len];
    (!text.iter().any(|b| matches!(b, b'\\' | b'\n' | b'\r'))).then_some(len + 2)
}

/// See the module comment: a value of terms and connectors, with at least one field compared
/// with a quoted value.
pub fn is_search_query(v: &[u8]) -> bool {
    let mut i = 0;
    let mut depth = 0usize;
    let mut fields = 0;
    // Whether the last thing read was a term (a term must be followed by a separator).
    let mut after_term = false;
    while i < v.len() {
        let b = v[i];
        if b.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if v[i..].starts_with(b"&&") || v[i..].starts_with(b"||") {
            if !after_term {
                return false;
            }
            after_term = false;
            i += 2;
            continue;
        }
        match b {
            b'(' => {
                depth += 1;
                i += 1;
                continue;
            }
            b')' => {
                if depth == 0 || !after_term {
                    return false;
                }
                depth -= 1;
                i += 1;
                continue;
            }
            b'!' | b'-' if !after_term => {
                i += 1;
                continue;
            }
            _ => {}
        }
        if after_term && !v[i - 1].is_ascii_whitespace() {
            return false;
        }
        if let Some(n) = quoted_len(&v[i..]) {
            // A phrase: its first word is no SQL a breakout continues with.
            let inner = &v[i + 1..i + n - 1];
            let first = inner.trim_ascii_start();
            if sql_word(&first[..word_len(first).min(first.len())]) {
                return false;
            }
            i += n;
            after_term = true;
            continue;
        }
        let n = word_len(&v[i..]);
        if n == 0 || !v[i].is_ascii_alphabetic() && v[i] < 0x80 {
            return false;
        }
        let word = &v[i..i + n];
        i += n;
        if connector(word) {
            if !after_term {
                // `NOT` may open a term.
                if !word.eq_ignore_ascii_case(b"not") {
                    return false;
                }
            }
            after_term = false;
            continue;
        }
        if sql_word(word) {
            return false;
        }
        // A field's operator, then its value.
        let mut j = i;
        while v.get(j).is_some_and(|b| *b == b' ') {
            j += 1;
        }
        let op = [&b"=="[..], b"!=", b"~=", b"*=", b"^=", b"$=", b"=", b":"]
            .into_iter()
            .find(|op| v[j..].starts_with(op));
        if let Some(op) = op {
            j += op.len();
            while v.get(j).is_some_and(|b| *b == b' ') {
                j += 1;
            }
            if let Some(n) = quoted_len(&v[j..]) {
                fields += 1;
                i = j + n;
            } else if op == b":" && v.get(j).is_some_and(u8::is_ascii_alphanumeric) {
                i = j + word_len(&v[j..]);
            } else {
                return false;
            }
        }
        after_term = true;
    }
    depth == 0 && after_term && fields > 0
}

#[cfg(test)]
mod tests {
    use super::is_search_query;

    #[test]
    fn search_syntaxes_are_search_queries() {
        for q in [
            "title=\"sql\" && product=\"wordpress\" || author==\"CT Stack\"",
            "app=\"Apache-Tomcat\" && country=\"CN\"",
            "product:\"Apache httpd\" port:\"80\"",
            "user.name:\"alice\" and not event.code:\"4625\"",
            "intitle:\"index of\" \"parent directory\"",
            "(title:\"rust\" OR title:\"go\") AND tag:\"web\"",
        ] {
            assert!(is_search_query(q.as_bytes()), "{q}");
        }
    }

    #[test]
    fn breakouts_are_not_search_queries() {
        for q in [
            "title=\"sql\" || 1=1--",
            "\" || \"1\"==\"1",
            "x\" && sleep(5)--",
            "app=\"x\" UNION SELECT password FROM users--",
            "title=\"x\"; DROP TABLE t--",
            "\"union select 1\" && a=\"b\"",
            "intitle:index",
        ] {
            assert!(!is_search_query(q.as_bytes()), "{q}");
        }
    }
}
