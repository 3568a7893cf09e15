//! Cheap checks run before a tokenizer: a value that fails them cannot be flagged, so the
//! tokenizer's work is skipped. The XSS check is exact in that direction (it follows libinjection's
//! HTML5 tokenizer: see [`xss_candidate`]); the SQL check is a cheaper, documented approximation.
//!
//! Imports: `memchr`, [`ByteSet`].

use crate::waf::normalize::{ByteSet, has_pair};

/// Punctuation an SQL injection is made of.
const SQL_PUNCT: ByteSet = ByteSet::from_bytes(b"'\"`()#;=<>|&@\\*!^~");

/// A word of SQL that matters on its own, or only next to a number or another SQL word.
#[derive(Clone, Copy, PartialEq, Eq)]
enum SqlWord {
    Strong,
    Weak,
}

fn sql_word(w: &[u8]) -> Option<SqlWord> {
    let mut low = [0u8; 9];
    let n = w.len();
    if !(2..=9).contains(&n) {
        return None;
    }
    for (d, s) in low.iter_mut().zip(w) {
        *d = s.to_ascii_lowercase();
    }
    match &low[..n] {
        b"union" | b"select" | b"having" | b"order" | b"group" | b"exec" | b"execute"
        | b"sleep" | b"benchmark" | b"waitfor" | b"insert" | b"update" | b"delete" | b"drop"
        | b"procedure" | b"rlike" | b"regexp" | b"between" => Some(SqlWord::Strong),
        b"or" | b"and" | b"xor" | b"div" | b"like" | b"not" | b"null" | b"true" | b"false"
        | b"is" | b"case" | b"when" | b"if" | b"limit" => Some(SqlWord::Weak),
        _ => None,
    }
}

/// Could this value be SQL at all? An injection needs a quote, a comment, an operator or a parenthesis;
/// without punctuation, a strong SQL word, or a weak one next to a number or another SQL word. Prose
/// such as "colours and sizes" is never tokenized. `present` is the value's byte set.
pub fn sqli_candidate(input: &[u8], present: &ByteSet) -> bool {
    if present.intersects(&SQL_PUNCT)
        || (present.contains(b'-') && has_pair(input, b'-', b'-'))
        || (present.contains(b'*') && has_pair(input, b'/', b'*'))
    {
        return true;
    }
    if input.len() > 4096 {
        return false;
    }
    let (mut weak, mut number) = (0usize, false);
    for w in input
        .split(|b| !b.is_ascii_alphanumeric() && *b != b'_')
        .filter(|w| !w.is_empty())
    {
        match sql_word(w) {
            Some(SqlWord::Strong) => return true,
            Some(SqlWord::Weak) => weak += 1,
            None => {}
        }
        number |= w.iter().all(u8::is_ascii_digit);
    }
    weak >= 2 || (weak == 1 && number)
}

fn is_html_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// Attribute names libinjection treats as dangerous besides `on…` handlers and `xmlns`/`xlink`
/// prefixes (its `BLACK_ATTRS`: URL, style and indirect attributes, compared case-insensitively
/// with NUL bytes ignored).
const BLACK_ATTRS: &[&[u8]] = &[
    b"action",
    b"attributename",
    b"by",
    b"background",
    b"dataformatas",
    b"datasrc",
    b"dynsrc",
    b"filter",
    b"formaction",
    b"folder",
    b"from",
    b"handler",
    b"href",
    b"lowsrc",
    b"poster",
    b"src",
    b"style",
    b"to",
    b"values",
    b"xlink:href",
];

/// Whether libinjection could take `name` for a dangerous attribute: its `is_black_attr` compares
/// names with NUL bytes ignored, so this looks at `name` without them, and counts any `on…` name
/// instead of its list of event names (a superset).
fn may_be_black_attr(name: &[u8]) -> bool {
    let mut plain = [0u8; 16];
    let mut n = 0;
    let mut long = false;
    for &b in name.iter().filter(|&&b| b != 0) {
        if n == plain.len() {
            long = true; // longer than every listed name: only the prefix rules apply
            break;
        }
        plain[n] = b.to_ascii_lowercase();
        n += 1;
    }
    let plain = &plain[..n];
    (n >= 3 && plain.starts_with(b"on"))
        || plain.starts_with(b"xmlns")
        || plain.starts_with(b"xlink")
        || (!long && BLACK_ATTRS.contains(&plain))
}

/// Could libinjection's XSS check flag this value? It flags a tag, comment or doctype token (all
/// start at a `<`), or an attribute value following a dangerous attribute name, which its
/// tokenizer only produces for `name [spaces] = value`. The name is the run of bytes before the
/// `=` (spaces and NULs skipped, as its tokenizer does) that holds no space, `/`, `=` or `>`,
/// starting at the run's start or just after a quote inside it (where a quoted value ends); every
/// such candidate is checked.
pub fn xss_candidate(input: &[u8], present: &ByteSet) -> bool {
    if present.contains(b'<') {
        return true;
    }
    if !present.contains(b'=') {
        return false;
    }
    memchr::memchr_iter(b'=', input).any(|eq| {
        let mut end = eq;
        while end > 0 && (is_html_space(input[end - 1]) || input[end - 1] == 0) {
            end -= 1;
        }
        let mut start = end;
        while start > 0
            && !is_html_space(input[start - 1])
            && !matches!(input[start - 1], b'/' | b'=' | b'>')
        {
            start -= 1;
        }
        let name = &input[start..end];
        may_be_black_attr(name)
            || name
                .iter()
                .enumerate()
                .any(|(i, b)| matches!(b, b'"' | b'\'' | b'`') && may_be_black_attr(&name[i + 1..]))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn xss(v: &[u8]) -> bool {
        libinjectionrs::detect_xss(v).is_injection()
    }

    /// Never says "cannot be XSS" for a value libinjection flags: hand-picked shapes plus a
    /// deterministic random walk over the characters the tokenizer cares about.
    #[test]
    fn xss_gate_never_hides_what_libinjection_flags() {
        let fixed: &[&[u8]] = &[
            b"x onload=alert(1)",
            b"onload=alert(1)",
            b"a\"onmouseover=alert(1)",
            b"a' style=x:expression(1)",
            b"x href=javascript:alert(1)",
            b"x onlo\0ad=1",
            b"x xmlns=1",
            b"x/onerror=alert(1)",
            b"x`onfocus=1",
            b"x to  =  javascript:1",
        ];
        for v in fixed {
            assert!(
                xss(v),
                "libinjection flags {:?}",
                String::from_utf8_lossy(v)
            );
            assert!(xss_candidate(v, &ByteSet::of(v)), "{v:?}");
        }
        let alphabet: &[&[u8]] = &[
            b"=",
            b" ",
            b"\"",
            b"'",
            b"`",
            b"/",
            b">",
            b"\0",
            b"on",
            b"load",
            b"error",
            b"x",
            b"style",
            b"href",
            b"src",
            b"to",
            b"javascript:",
            b"alert(1)",
            b"a",
            b"\t",
            b"xmlns",
            b"formaction",
            b"data",
            b"by",
            b";",
            b"&",
            b"%",
        ];
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut flagged = 0;
        for _ in 0..200_000 {
            let mut v = Vec::new();
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let parts = 1 + (seed % 9) as usize;
            let mut s = seed;
            for _ in 0..parts {
                v.extend_from_slice(alphabet[(s % alphabet.len() as u64) as usize]);
                s /= alphabet.len() as u64;
                if s == 0 {
                    s = seed.rotate_left(17);
                }
            }
            if xss(&v) {
                flagged += 1;
                assert!(
                    xss_candidate(&v, &ByteSet::of(&v)),
                    "gate hides {:?}",
                    String::from_utf8_lossy(&v)
                );
            }
        }
        assert!(
            flagged > 1000,
            "the walk must reach flagged values: {flagged}"
        );
    }

    #[test]
    fn xss_gate_skips_ordinary_header_values() {
        for v in [
            &b"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"[..],
            b"en-US,en;q=0.9",
            b"max-age=0",
            b"session=abc; theme=dark",
            b"https://example.com/a?b=c&d=e",
        ] {
            assert!(!xss_candidate(v, &ByteSet::of(v)), "{v:?}");
        }
    }

    #[test]
    fn sql_gate_words_and_punctuation() {
        let c = |v: &[u8]| sqli_candidate(v, &ByteSet::of(v));
        assert!(c(b"1 union all"));
        assert!(c(b"1 or 2"));
        assert!(c(b"a' b"));
        assert!(c(b"x -- y"));
        assert!(!c(b"colours and sizes"));
        assert!(!c(b"red shoes"));
    }
}
