//! SQL injection and XSS tokenizers in the style of libinjection, behind the [`Tokenizer`] trait.
//!
//! The implementation is `libinjectionrs` (a pure-Rust port of libinjection: SQL tokenizer with
//! fingerprint folding, HTML5 tokenizer for XSS). It is a young crate, so it sits behind a trait, is
//! gated by cheap byte checks (a value with none of the characters an injection needs is never
//! tokenized), is size-capped, and has its own tests and fuzz targets here.
//!
//! Imports: `libinjectionrs`, `memchr` only.

/// Longest prefix given to a tokenizer: libinjection's SQL fingerprint looks at the first five folded
/// tokens and its HTML tokenizer is linear, but the cap bounds time on huge bodies.
pub const MAX_TOKENIZE: usize = 64 * 1024;

/// An injection detector for one language.
pub trait Tokenizer: Sync {
    /// Whether `input` parses as an injection.
    fn detect(&self, input: &[u8]) -> bool;
    /// A short description of what matched (the SQL fingerprint), for logs.
    fn fingerprint(&self, input: &[u8]) -> Option<String>;
}

/// The SQL injection tokenizer (libinjection's fingerprint algorithm).
pub struct Sqli;
/// The XSS tokenizer (libinjection's HTML5 tokenizer in five contexts).
pub struct Xss;

fn cap(input: &[u8]) -> &[u8] {
    &input[..input.len().min(MAX_TOKENIZE)]
}

/// SQL words that make an injection on their own (`1 union select 2`, `1 waitfor delay 5`).
const SQL_STRONG: &[&[u8]] = &[
    b"union",
    b"select",
    b"having",
    b"order",
    b"group",
    b"exec",
    b"execute",
    b"sleep",
    b"benchmark",
    b"waitfor",
    b"insert",
    b"update",
    b"delete",
    b"drop",
    b"procedure",
    b"rlike",
    b"regexp",
    b"between",
];
/// SQL operators spelled as words, which need a number or a second SQL word to matter (`1 or 1`).
const SQL_WEAK: &[&[u8]] = &[
    b"or", b"and", b"xor", b"div", b"like", b"not", b"null", b"true", b"false", b"is", b"case",
    b"when", b"if", b"limit",
];

const fn longest(set: &[&[u8]], mut max: usize) -> usize {
    let mut i = 0;
    while i < set.len() {
        if set[i].len() > max {
            max = set[i].len();
        }
        i += 1;
    }
    max
}

/// The longest SQL word: longer words need no comparison.
const SQL_WORD_MAX: usize = longest(SQL_WEAK, longest(SQL_STRONG, 0));

/// Could this value be SQL at all? An injection needs a quote, a comment, an operator or a parenthesis;
/// without punctuation, a strong SQL word, or a weak one next to a number or another SQL word. Prose
/// such as "colours and sizes" is never tokenized.
fn sqli_candidate(input: &[u8]) -> bool {
    let punct = input.iter().any(|b| {
        matches!(
            b,
            b'\''
                | b'"'
                | b'`'
                | b'('
                | b')'
                | b'#'
                | b';'
                | b'='
                | b'<'
                | b'>'
                | b'|'
                | b'&'
                | b'@'
                | b'\\'
                | b'*'
                | b'!'
                | b'^'
                | b'~'
        )
    }) || memchr::memmem::find(input, b"--").is_some()
        || memchr::memmem::find(input, b"/*").is_some();
    if punct {
        return true;
    }
    if input.len() > 4096 {
        return false;
    }
    let is = |set: &[&[u8]], w: &[u8]| set.iter().any(|k| k.eq_ignore_ascii_case(w));
    let (mut weak, mut number) = (0usize, false);
    for w in input
        .split(|b| !b.is_ascii_alphanumeric() && *b != b'_')
        .filter(|w| !w.is_empty())
    {
        if w.len() <= SQL_WORD_MAX {
            if is(SQL_STRONG, w) {
                return true;
            }
            weak += usize::from(is(SQL_WEAK, w));
        }
        number |= w.iter().all(u8::is_ascii_digit);
    }
    weak >= 2 || (weak == 1 && number)
}

/// Could this value be HTML/JS at all? XSS needs a tag, an attribute or a URL scheme.
fn xss_candidate(input: &[u8]) -> bool {
    input.iter().any(|b| matches!(b, b'<' | b'=' | b'`' | b':'))
}

impl Tokenizer for Sqli {
    fn detect(&self, input: &[u8]) -> bool {
        sqli_candidate(input) && libinjectionrs::detect_sqli(cap(input)).is_injection()
    }
    fn fingerprint(&self, input: &[u8]) -> Option<String> {
        let r = libinjectionrs::detect_sqli(cap(input));
        if r.is_injection() {
            r.fingerprint.map(|f| f.to_string())
        } else {
            None
        }
    }
}

impl Tokenizer for Xss {
    fn detect(&self, input: &[u8]) -> bool {
        xss_candidate(input) && libinjectionrs::detect_xss(cap(input)).is_injection()
    }
    fn fingerprint(&self, _input: &[u8]) -> Option<String> {
        None
    }
}

/// SQL injection check used by the signature database.
pub fn is_sqli(input: &[u8]) -> bool {
    Sqli.detect(input)
}

/// XSS check used by the signature database.
pub fn is_xss(input: &[u8]) -> bool {
    Xss.detect(input)
}

#[cfg(test)]
mod tests;
