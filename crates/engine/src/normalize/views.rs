//! The extra views of one value that signatures are matched against, besides the value itself:
//! leftover percent-encoding decoded, de-obfuscated text, and base64-wrapped text. Each view is only
//! built when the value's byte set says it can differ, so clean values cost no pass of their own.

use super::embedded::{base64_tokens, element_text, unsplit_words, url_query_base64, utf16_text};
use super::percent::fold_overlong;
use super::{ByteSet, Evasions, base64_text, decode_percent, decoded_text, deobfuscate};

/// Decoding passes for the leftover-percent view (the caller has already decoded once).
const VIEW_PASSES: u32 = 3;

/// Bytes without which `deobfuscate` returns `None`: it needs a JS escape (`\`), one of these
/// characters, several `+`, an HTML reference (`&` with a `#` or a `;`) or a `/*` comment (the
/// last two are checked as both bytes present).
const DEOBFUSCATE_TRIGGERS: ByteSet = ByteSet::from_bytes(b"\\^'\"$+`");
/// Every byte a value `base64_text` accepts may hold (a space is read as `+`, `=` pads).
const BASE64_BYTES: ByteSet = ByteSet::from_bytes(b"+/-_= ")
    .with_range(b'0', b'9')
    .with_range(b'a', b'z')
    .with_range(b'A', b'Z');

fn has_escape(v: &[u8]) -> bool {
    memchr::memchr_iter(b'%', v).any(|i| match (v.get(i + 1), v.get(i + 2)) {
        (Some(a), Some(b)) => {
            (a.is_ascii_hexdigit() && b.is_ascii_hexdigit()) || matches!(a, b'u' | b'U')
        }
        _ => false,
    })
}

/// Whether `deobfuscate` may return a view of a value made of the bytes in `present`.
pub(super) fn may_deobfuscate(present: &ByteSet) -> bool {
    present.intersects(&DEOBFUSCATE_TRIGGERS)
        || (present.contains(b'&') && (present.contains(b'#') || present.contains(b';')))
        || (present.contains(b'/') && present.contains(b'*'))
}

/// Lead bytes of overlong UTF-8 forms (`C0 BC` for `<`): a value without any has no overlong view.
const OVERLONG_LEADS: ByteSet = ByteSet::from_bytes(b"\xc0\xc1\xe0\xf0\xf8\xfc");
/// Shortest value searched for base64 tokens embedded in other text.
const EMBEDDED_MIN_LEN: usize = 20;

/// Shortest value tried as base64 (a URL's segments are tried whatever the path's length).
const BASE64_MIN_LEN: usize = super::text::BASE64_MIN_CHARS;

/// Values made of `alphabet`'s bytes alone and shorter than this have no inspection views (a
/// URL path always may: its segments are tried as base64 whatever its length).
pub fn views_free_below(alphabet: &ByteSet, url: bool) -> usize {
    if url || alphabet.contains(b'%') || may_deobfuscate(alphabet) {
        0
    } else {
        BASE64_MIN_LEN
    }
}

/// Extra views of `value` (never equal to it, no duplicates); `present` is `ByteSet::of(value)`.
/// `url` marks a URL path, each of whose segments is also tried as base64.
pub fn inspection_views(value: &[u8], present: &ByteSet, url: bool) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = Vec::new();
    let push = |v: Vec<u8>, out: &mut Vec<Vec<u8>>| {
        if v != value && !out.contains(&v) {
            out.push(v);
        }
    };
    let push_some = |v: Option<Vec<u8>>, out: &mut Vec<Vec<u8>>| {
        if let Some(v) = v {
            push(v, out);
        }
    };
    let mut bases: Vec<Vec<u8>> = Vec::new();
    if present.contains(b'%') && has_escape(value) {
        let mut ev = Evasions::default();
        let decoded = decode_percent(value, VIEW_PASSES, &mut ev);
        // Base64 whose padding or `+`/`/` were percent-encoded (a cookie's `%3D`).
        if !url && decoded.len() >= BASE64_MIN_LEN && ByteSet::of(&decoded).is_subset(&BASE64_BYTES)
        {
            bases.extend(base64_text(&decoded));
        }
        // Form encoding (`quote_plus`, `URLSearchParams`) writes a space as `+`: a cookie or a
        // header value carrying it is read by the application as a form value.
        if present.contains(b'+') && !present.contains(b' ') {
            let spaced: Vec<u8> = value
                .iter()
                .map(|&b| if b == b'+' { b' ' } else { b })
                .collect();
            bases.push(decode_percent(
                &spaced,
                VIEW_PASSES,
                &mut Evasions::default(),
            ));
        }
        bases.push(decoded);
    }
    if url {
        // REST paths carry encoded identifiers and payloads in any segment, not only the last.
        bases.extend(value.split(|&b| b == b'/').filter_map(base64_text));
    } else if value.len() >= BASE64_MIN_LEN && present.is_subset(&BASE64_BYTES) {
        bases.extend(base64_text(value));
    } else if value.len() >= EMBEDDED_MIN_LEN {
        bases.extend(base64_tokens(value));
    }
    if !url && present.contains(b'?') && present.contains(b'=') {
        bases.extend(url_query_base64(value));
    }
    if present.intersects(&OVERLONG_LEADS) {
        let folded = fold_overlong(value.to_vec(), &mut Evasions::default());
        if folded != value {
            bases.push(folded);
        }
    }
    if present.contains(0) {
        bases.extend(utf16_text(value));
    }
    if present.contains(b'<') && present.contains(b'>') {
        bases.extend(unsplit_words(value));
        if !url {
            bases.extend(element_text(value));
        }
    }
    if may_deobfuscate(present)
        && let Some(d) = deobfuscate(value)
    {
        push(d, &mut out);
        if present.contains(b'\\') || present.contains(b'&') {
            push_some(decoded_text(value), &mut out);
        }
    }
    for b in bases {
        if let Some(d) = deobfuscate(&b) {
            push(d, &mut out);
            push_some(decoded_text(&b), &mut out);
        }
        push(b, &mut out);
    }
    // A word split by a tag (`o<x>nfocus`, which a filter that strips tags joins) can itself be
    // under base64, HTML references or JavaScript escapes: the views that decoded those are
    // joined too, as the value was above.
    for i in 0..out.len() {
        if memchr::memchr(b'<', &out[i]).is_some() && memchr::memchr(b'>', &out[i]).is_some() {
            push_some(unsplit_words(&out[i]), &mut out);
        }
    }
    // Percent-encoding under another encoding (`%09` inside base64 or HTML references) gets one
    // more decoding; only views built above can hold it, so clean values never pay for it.
    for i in 0..out.len() {
        if has_escape(&out[i]) {
            let decoded = decode_percent(&out[i], VIEW_PASSES, &mut Evasions::default());
            push(decoded, &mut out);
        }
    }
    out
}
