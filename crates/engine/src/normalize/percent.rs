//! Percent-decoding: `%XX`, IIS `%uXXXX`, overlong UTF-8, bare bytes, repeated up to a pass limit.

use super::{Evasion, Evasions};
use crate::parse::query::hex_digit;

/// Maps a `%u` code point to bytes: ASCII as is, full-width ASCII (U+FF01..U+FF5E) folded to ASCII
/// the way IIS best-fit mapping does (reported as "IIS Unicode codepoints"), the rest as UTF-8.
fn push_codepoint(cp: u32, out: &mut Vec<u8>, ev: &mut Evasions) {
    // IIS best-fit: division slash, fraction slash and set minus act as path separators.
    if matches!(cp, 0x2215 | 0x2044) {
        ev.insert(Evasion::IisUnicodeCodepoints);
        out.push(b'/');
        return;
    }
    if cp == 0x2216 {
        ev.insert(Evasion::IisUnicodeCodepoints);
        out.push(b'\\');
        return;
    }
    if (0xFF01..=0xFF5E).contains(&cp) {
        ev.insert(Evasion::IisUnicodeCodepoints);
        out.push((cp - 0xFF01 + 0x21) as u8);
        return;
    }
    let c = char::from_u32(cp).unwrap_or('\u{FFFD}');
    let mut buf = [0u8; 4];
    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
}

/// Folds overlong two-byte UTF-8 encodings of ASCII (`C0 AF` = `/`, `C1 9C` = `\`) to the ASCII byte,
/// reporting "IIS Unicode codepoints"; other bytes ≥ 0x80 that are not valid UTF-8 are kept and
/// reported as "Bare byte decoding".
pub(super) fn fold_overlong(input: Vec<u8>, ev: &mut Evasions) -> Vec<u8> {
    if input.is_ascii() {
        return input;
    }
    let mut out = Vec::with_capacity(input.len());
    let mut i = 0;
    while i < input.len() {
        let b = input[i];
        if (b == 0xC0 || b == 0xC1) && i + 1 < input.len() && input[i + 1] >= 0x80 {
            let next = input[i + 1];
            // A proper overlong form (continuation byte) of ASCII punctuation, or the lax decoding some
            // servers apply (`C0 EE` = `.`) when it yields a path character. Overlong letters and digits
            // stay as raw bytes so that they still read as junk between `..` and a file name.
            let strict = ((b & 0x01) << 6) | (next & 0x3F);
            let lax = next & 0x3F;
            let ch = if next & 0xC0 == 0x80 && !strict.is_ascii_alphanumeric() {
                Some(strict)
            } else if matches!(lax, b'.' | b'/' | b'\\') {
                Some(lax)
            } else {
                None
            };
            if let Some(c) = ch {
                ev.insert(Evasion::IisUnicodeCodepoints);
                out.push(c);
                i += 2;
                continue;
            }
        }
        if b == 0xE0
            && i + 2 < input.len()
            && input[i + 1] & 0xE0 == 0x80
            && input[i + 2] & 0xC0 == 0x80
        {
            ev.insert(Evasion::IisUnicodeCodepoints);
            out.push(((input[i + 1] & 0x1F) << 6) | (input[i + 2] & 0x3F));
            i += 3;
            continue;
        }
        // Longer overlong forms (F0 80 80 xx, F8 80 80 80 xx, FC 80 80 80 80 xx) of ASCII.
        let extra = match b {
            0xF0 => 3,
            0xF8 => 4,
            0xFC => 5,
            _ => 0,
        };
        if extra > 0
            && i + extra < input.len()
            && input[i + 1..i + extra].iter().all(|&c| c == 0x80)
            && input[i + extra] & 0xC0 == 0x80
        {
            ev.insert(Evasion::IisUnicodeCodepoints);
            out.push(input[i + extra] & 0x3F);
            i += extra + 1;
            continue;
        }
        // A two-byte lead followed by plain ASCII: IIS dropped the lead byte.
        if (b == 0xC0 || b == 0xC1) && i + 1 < input.len() && input[i + 1] < 0x80 {
            ev.insert(Evasion::BareByte);
            i += 1;
            continue;
        }
        out.push(b);
        i += 1;
    }
    if std::str::from_utf8(&out).is_err() {
        ev.insert(Evasion::BareByte);
    }
    out
}

/// One decoding pass. Returns the decoded bytes and whether any escape was decoded. A `%` not followed
/// by a valid escape is kept literally and reported as "Bad unescape".
pub fn decode_percent_once(input: &[u8], ev: &mut Evasions) -> (Vec<u8>, bool) {
    let mut out = Vec::with_capacity(input.len());
    let mut changed = false;
    let mut i = 0;
    while i < input.len() {
        let b = input[i];
        if b != b'%' {
            out.push(b);
            i += 1;
            continue;
        }
        if let (Some(h), Some(l)) = (
            input.get(i + 1).and_then(|&c| hex_digit(c)),
            input.get(i + 2).and_then(|&c| hex_digit(c)),
        ) {
            out.push(h << 4 | l);
            changed = true;
            i += 3;
            continue;
        }
        if matches!(input.get(i + 1), Some(b'u' | b'U')) {
            let digits: Option<Vec<u8>> = (2..6)
                .map(|k| input.get(i + k).and_then(|&c| hex_digit(c)))
                .collect();
            if let Some(d) = digits {
                let cp = d.iter().fold(0u32, |acc, &x| acc << 4 | u32::from(x));
                ev.insert(Evasion::PercentU);
                push_codepoint(cp, &mut out, ev);
                changed = true;
                i += 6;
                continue;
            }
        }
        ev.insert(Evasion::BadUnescape);
        out.push(b);
        i += 1;
    }
    (out, changed)
}

/// Decodes repeatedly until nothing changes or `max_passes` passes ran (at least one). A second pass
/// that still finds escapes is reported as "Multiple decoding". Overlong UTF-8 is folded at the end.
pub fn decode_percent(input: &[u8], max_passes: u32, ev: &mut Evasions) -> Vec<u8> {
    let mut cur = input.to_vec();
    for pass in 0..max_passes.max(1) {
        if !cur.contains(&b'%') {
            break;
        }
        let mut pass_ev = Evasions::default();
        let (next, changed) = decode_percent_once(&cur, &mut pass_ev);
        if !changed {
            // Only report a bad escape seen on the final, undecodable text.
            ev.extend(pass_ev);
            break;
        }
        if pass > 0 {
            ev.insert(Evasion::MultipleDecoding);
        }
        pass_ev.0 &= !(1 << (Evasion::BadUnescape as u16));
        ev.extend(pass_ev);
        cur = next;
    }
    fold_overlong(cur, ev)
}
