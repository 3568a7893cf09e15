//! Cheap checks run before a tokenizer: a value that fails them cannot be flagged, so the
//! tokenizer's work is skipped. The XSS check is exact in that direction (it follows libinjection's
//! HTML5 tokenizer: see [`xss_candidate`]); the SQL check is a cheaper, documented approximation.

use crate::normalize::{ByteSet, has_pair};

/// Punctuation an SQL injection is made of.
const SQL_PUNCT: ByteSet = ByteSet::from_bytes(b"'\"`()#;=<>|&@\\*!^~");

const LETTERS: ByteSet = ByteSet::EMPTY.with_range(b'a', b'z').with_range(b'A', b'Z');
/// Letters, digits and `_`: the bytes of one SQL word.
const WORD: ByteSet = LETTERS.with_range(b'0', b'9').with_range(b'_', b'_');

/// Values made of `alphabet`'s bytes alone and shorter than this are never [`sqli_candidate`]s:
/// without letters there is no SQL word; one word is a candidate only when it is a strong SQL
/// word, the shortest of which (`exec`, `drop`) has four letters; else two bytes may already be
/// one (`--`, `'`). Proved over every short value by the tests.
pub fn sql_free_below(alphabet: &ByteSet) -> usize {
    if alphabet.intersects(&SQL_PUNCT) {
        0
    } else if !alphabet.intersects(&LETTERS) {
        usize::MAX
    } else if alphabet.is_subset(&WORD) {
        4
    } else {
        2
    }
}

/// Values made of `alphabet`'s bytes alone and shorter than this are never [`xss_candidate`]s:
/// a candidate needs a `<` or a `=`, so without them no value is one.
pub fn xss_free_below(alphabet: &ByteSet) -> usize {
    if alphabet.contains(b'<') || alphabet.contains(b'=') {
        0
    } else {
        usize::MAX
    }
}

/// A word of SQL that matters on its own, or only next to a number or another SQL word.
#[derive(Clone, Copy, PartialEq, Eq)]
enum SqlWord {
    Strong,
    Weak,
}

/// A word's last (up to) eight bytes, lower case, packed into an integer: the key the SQL words
/// are looked up by without copying the word.
const fn pack(word: &[u8]) -> u64 {
    let mut key = 0u64;
    let mut i = 0;
    while i < word.len() {
        key = key << 8 | word[i].to_ascii_lowercase() as u64;
        i += 1;
    }
    key
}

/// `key` packs the last eight bytes of a word of `len` bytes. Nine-letter words are known by
/// their last eight (any word ending so is taken for them: the pre-check may let more through, never
/// less).
fn sql_word(key: u64, len: usize) -> Option<SqlWord> {
    const UNION: u64 = pack(b"union");
    const SELECT: u64 = pack(b"select");
    const HAVING: u64 = pack(b"having");
    const ORDER: u64 = pack(b"order");
    const GROUP: u64 = pack(b"group");
    const EXEC: u64 = pack(b"exec");
    const EXECUTE: u64 = pack(b"execute");
    const SLEEP: u64 = pack(b"sleep");
    const BENCHMARK: u64 = pack(b"benchmark");
    const WAITFOR: u64 = pack(b"waitfor");
    const INSERT: u64 = pack(b"insert");
    const UPDATE: u64 = pack(b"update");
    const DELETE: u64 = pack(b"delete");
    const DROP: u64 = pack(b"drop");
    const PROCEDURE: u64 = pack(b"procedure");
    const RLIKE: u64 = pack(b"rlike");
    const REGEXP: u64 = pack(b"regexp");
    const BETWEEN: u64 = pack(b"between");
    const OR: u64 = pack(b"or");
    const AND: u64 = pack(b"and");
    const XOR: u64 = pack(b"xor");
    const DIV: u64 = pack(b"div");
    const LIKE: u64 = pack(b"like");
    const NOT: u64 = pack(b"not");
    const NULL: u64 = pack(b"null");
    const TRUE: u64 = pack(b"true");
    const FALSE: u64 = pack(b"false");
    const IS: u64 = pack(b"is");
    const CASE: u64 = pack(b"case");
    const WHEN: u64 = pack(b"when");
    const IF: u64 = pack(b"if");
    const LIMIT: u64 = pack(b"limit");
    if !(2..=9).contains(&len) {
        return None;
    }
    match key {
        UNION | SELECT | HAVING | ORDER | GROUP | EXEC | EXECUTE | SLEEP | BENCHMARK | WAITFOR
        | INSERT | UPDATE | DELETE | DROP | PROCEDURE | RLIKE | REGEXP | BETWEEN => {
            Some(SqlWord::Strong)
        }
        OR | AND | XOR | DIV | LIKE | NOT | NULL | TRUE | FALSE | IS | CASE | WHEN | IF | LIMIT => {
            Some(SqlWord::Weak)
        }
        _ => None,
    }
}

const DIGIT: u8 = 2;
/// Bytes of a word: 1 for letters and `_`, [`DIGIT`] for digits, 0 for the rest.
const WORD_BYTE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = if c.is_ascii_digit() {
            DIGIT
        } else if c.is_ascii_alphabetic() || c == b'_' {
            1
        } else {
            0
        };
        b += 1;
    }
    t
};

/// Could this value be SQL at all? An injection needs a quote, a comment, an operator or a parenthesis;
/// without punctuation, a strong SQL word, or a weak one next to a number or another SQL word. Prose
/// such as "colours and sizes" is never tokenized. `present` is the value's byte set. Words are
/// read in one pass, each packed into an integer as it goes.
pub fn sqli_candidate(input: &[u8], present: &ByteSet) -> bool {
    if present.intersects(&SQL_PUNCT)
        || (present.contains(b'-') && has_pair(input, b'-', b'-'))
        || (present.contains(b'*') && has_pair(input, b'/', b'*'))
    {
        return true;
    }
    // Every SQL word is made of letters: a number or a date is no candidate.
    if input.len() > 4096 || !present.intersects(&LETTERS) {
        return false;
    }
    let (mut weak, mut number) = (0usize, false);
    let (mut key, mut len, mut digits) = (0u64, 0usize, true);
    let mut end_word = |key: u64, len: usize, digits: bool| {
        if len > 0 {
            match sql_word(key, len) {
                Some(SqlWord::Strong) => return true,
                Some(SqlWord::Weak) => weak += 1,
                None => {}
            }
            number |= digits;
        }
        false
    };
    for &b in input {
        match WORD_BYTE[usize::from(b)] {
            0 => {
                if end_word(key, len, digits) {
                    return true;
                }
                (key, len, digits) = (0, 0, true);
            }
            class => {
                key = key << 8 | u64::from(b.to_ascii_lowercase());
                len += 1;
                digits &= class == DIGIT;
            }
        }
    }
    if end_word(key, len, digits) {
        return true;
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
    fn xss_precheck_never_hides_what_libinjection_flags() {
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
                    "pre-check hides {:?}",
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
    fn xss_precheck_skips_ordinary_header_values() {
        crate::test_support::assert_judges(
            |v| xss_candidate(v, &ByteSet::of(v)),
            &[],
            &[
                b"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
                b"en-US,en;q=0.9",
                b"max-age=0",
                b"session=abc; theme=dark",
                b"https://example.com/a?b=c&d=e",
            ],
        );
    }

    #[test]
    fn sql_precheck_words_and_punctuation() {
        let c = |v: &[u8]| sqli_candidate(v, &ByteSet::of(v));
        assert!(c(b"1 union all"));
        assert!(c(b"1 or 2"));
        assert!(c(b"a' b"));
        assert!(c(b"x -- y"));
        assert!(!c(b"colours and sizes"));
        assert!(!c(b"red shoes"));
    }
}
