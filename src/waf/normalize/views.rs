//! The extra views of one value that signatures are matched against, besides the value itself:
//! leftover percent-encoding decoded, de-obfuscated text, and base64-wrapped text. Each view is only
//! built when a cheap byte check says it can differ, so clean values cost one scan.
//!
//! Imports: the sibling decoders only.

use super::{Evasions, base64_text, decode_percent, deobfuscate};

/// Decoding passes for the leftover-percent view (the caller has already decoded once).
const VIEW_PASSES: u32 = 3;

fn has_escape(v: &[u8]) -> bool {
    memchr::memchr_iter(b'%', v).any(|i| match (v.get(i + 1), v.get(i + 2)) {
        (Some(a), Some(b)) => {
            (a.is_ascii_hexdigit() && b.is_ascii_hexdigit()) || matches!(a, b'u' | b'U')
        }
        _ => false,
    })
}

/// Extra views of `value` (never equal to it, no duplicates). `url` marks a URL path, whose last
/// segment is also tried as base64.
pub fn inspection_views(value: &[u8], url: bool) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = Vec::new();
    let push = |v: Vec<u8>, out: &mut Vec<Vec<u8>>| {
        if v != value && !out.contains(&v) {
            out.push(v);
        }
    };
    let mut bases: Vec<Vec<u8>> = Vec::new();
    if has_escape(value) {
        let mut ev = Evasions::default();
        bases.push(decode_percent(value, VIEW_PASSES, &mut ev));
    }
    let b64_source = if url {
        value.rsplit(|&b| b == b'/').next().unwrap_or(value)
    } else {
        value
    };
    if let Some(b) = base64_text(b64_source) {
        bases.push(b);
    }
    if let Some(d) = deobfuscate(value) {
        push(d, &mut out);
    }
    for b in bases {
        if let Some(d) = deobfuscate(&b) {
            push(d, &mut out);
        }
        push(b, &mut out);
    }
    out
}
