//! SQL injection and XSS tokenizers in the style of libinjection, behind the [`Tokenizer`] trait.
//!
//! The implementation is `libinjectionrs` (a pure-Rust port of libinjection: SQL tokenizer with
//! fingerprint folding, HTML5 tokenizer for XSS). It is a young crate, so it sits behind a trait, is
//! gated by cheap checks (`gate`: a value that cannot be flagged is never tokenized), is
//! size-capped, and has its own tests and fuzz targets here.
//!
//! Imports: `libinjectionrs`, `gate` (the checks before tokenizing), `waf::normalize::ByteSet`.

mod gate;

use crate::waf::normalize::ByteSet;

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

impl Tokenizer for Sqli {
    fn detect(&self, input: &[u8]) -> bool {
        gate::sqli_candidate(input, &ByteSet::of(input)) && detect_sqli(input)
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
        gate::xss_candidate(input, &ByteSet::of(input)) && detect_xss(input)
    }
    fn fingerprint(&self, _input: &[u8]) -> Option<String> {
        None
    }
}

fn detect_sqli(input: &[u8]) -> bool {
    libinjectionrs::detect_sqli(cap(input)).is_injection()
}

fn detect_xss(input: &[u8]) -> bool {
    libinjectionrs::detect_xss(cap(input)).is_injection()
}

/// Whether the SQL tokenizer could flag `input` at all (its gate); `present` is `ByteSet::of(input)`.
pub fn sqli_candidate(input: &[u8], present: &ByteSet) -> bool {
    gate::sqli_candidate(input, present)
}

/// Whether the XSS tokenizer could flag `input` at all (its gate, exact in that direction).
pub fn xss_candidate(input: &[u8], present: &ByteSet) -> bool {
    gate::xss_candidate(input, present)
}

pub use gate::{sql_free_below, xss_free_below};

/// SQL injection check used by the signature database; `present` is `ByteSet::of(input)`.
pub fn is_sqli(input: &[u8], present: &ByteSet) -> bool {
    gate::sqli_candidate(input, present) && detect_sqli(input)
}

/// XSS check used by the signature database; `present` is `ByteSet::of(input)`.
pub fn is_xss(input: &[u8], present: &ByteSet) -> bool {
    gate::xss_candidate(input, present) && detect_xss(input)
}

#[cfg(test)]
mod tests;
