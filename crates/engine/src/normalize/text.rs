//! Text decoders for inspection: HTML character references (XSS contexts), JSON string escapes, NUL
//! detection, ASCII case folding and the de-obfuscated variant the signature matcher also scans.

use std::borrow::Cow;

use super::shell::{glued_braced_var, glued_fragment, special_param};
use crate::parse::query::hex_digit;

/// Whether the value has a NUL byte (a violation of its own, and a classic C-string truncation trick).
pub fn contains_nul(value: &[u8]) -> bool {
    value.contains(&0)
}

/// ASCII lower-casing (bytes ≥ 0x80 unchanged).
pub fn fold_case(value: &[u8]) -> Cow<'_, [u8]> {
    if value.iter().any(u8::is_ascii_uppercase) {
        Cow::Owned(value.to_ascii_lowercase())
    } else {
        Cow::Borrowed(value)
    }
}

fn named_entity(name: &[u8]) -> Option<u8> {
    Some(match name.to_ascii_lowercase().as_slice() {
        b"lt" => b'<',
        b"gt" => b'>',
        b"amp" => b'&',
        b"quot" => b'"',
        b"apos" => b'\'',
        b"colon" => b':',
        b"lpar" => b'(',
        b"rpar" => b')',
        b"sol" => b'/',
        b"bsol" => b'\\',
        b"semi" => b';',
        b"tab" => b'\t',
        b"newline" => b'\n',
        b"nbsp" => b' ',
        b"grave" => b'`',
        b"equals" => b'=',
        b"period" => b'.',
        b"comma" => b',',
        b"excl" => b'!',
        b"num" => b'#',
        b"lsqb" | b"lbrack" => b'[',
        b"rsqb" | b"rbrack" => b']',
        b"lcub" | b"lbrace" => b'{',
        b"rcub" | b"rbrace" => b'}',
        _ => return None,
    })
}

/// Whether `first` is directly followed by `second` somewhere in `value` (a two-byte search
/// without building a substring searcher, which costs more than it saves on short values).
pub(crate) fn has_pair(value: &[u8], first: u8, second: u8) -> bool {
    memchr::memchr_iter(first, value).any(|i| value.get(i + 1) == Some(&second))
}

/// Whether [`decode_html_entities`] would change `value`.
fn has_entity(value: &[u8]) -> bool {
    // A named reference ends with a `;`: none after an `&` (a query string's `&`s), no name to read.
    let last_semicolon = memchr::memrchr(b';', value);
    memchr::memchr_iter(b'&', value).any(|i| {
        let rest = &value[i + 1..];
        match rest.first() {
            Some(b'#') => match rest.get(1) {
                Some(b'x' | b'X') => rest.get(2).is_some_and(u8::is_ascii_hexdigit),
                Some(d) => d.is_ascii_digit(),
                None => false,
            },
            _ if last_semicolon.is_none_or(|s| s < i) => false,
            _ => {
                let n = rest
                    .iter()
                    .take(10)
                    .take_while(|b| b.is_ascii_alphanumeric())
                    .count();
                n > 0 && rest.get(n) == Some(&b';') && named_entity(&rest[..n]).is_some()
            }
        }
    })
}

/// Decodes HTML character references as a browser would in an attribute: `&#60;`, `&#x3c;` (with
/// or without `;`, leading zeros allowed) and common named references. Unknown references are kept.
pub fn decode_html_entities(value: &[u8]) -> Cow<'_, [u8]> {
    if !value.contains(&b'&') {
        return Cow::Borrowed(value);
    }
    let mut out = Vec::with_capacity(value.len());
    let mut i = 0;
    while i < value.len() {
        if value[i] != b'&' {
            out.push(value[i]);
            i += 1;
            continue;
        }
        let rest = &value[i + 1..];
        if let Some(num) = rest.strip_prefix(b"#") {
            let (radix, digits_start) = match num.first() {
                Some(b'x' | b'X') => (16, 1),
                _ => (10, 0),
            };
            let digits: &[u8] = &num[digits_start..];
            let n = digits
                .iter()
                .take_while(|b| (**b as char).is_digit(radix))
                .count();
            if n > 0 {
                let mut cp: u32 = 0;
                for &d in &digits[..n] {
                    let v = (d as char).to_digit(radix).unwrap_or(0);
                    cp = cp
                        .saturating_mul(radix)
                        .saturating_add(v)
                        .min(0x10_FFFF + 1);
                }
                let c = char::from_u32(cp).unwrap_or('\u{FFFD}');
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                i += 2 + digits_start + n;
                if value.get(i) == Some(&b';') {
                    i += 1;
                }
                continue;
            }
        } else {
            let n = rest
                .iter()
                .take(10)
                .take_while(|b| b.is_ascii_alphanumeric())
                .count();
            if n > 0
                && rest.get(n) == Some(&b';')
                && let Some(c) = named_entity(&rest[..n])
            {
                out.push(c);
                i += n + 2;
                continue;
            }
        }
        out.push(b'&');
        i += 1;
    }
    Cow::Owned(out)
}

/// A JSON string body whose escape at byte `at` cannot be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnescapeError {
    #[error("dangling backslash at byte {at}")]
    Dangling { at: usize },
    #[error("invalid escape \\{} at byte {at}", char::from(*.escape))]
    Escape { escape: u8, at: usize },
    #[error("invalid \\u escape at byte {at}")]
    Unicode { at: usize },
}

/// Decodes the escapes of a JSON string body (without the surrounding quotes): `\" \\ \/ \b \f \n \r
/// \t \uXXXX` (surrogate pairs joined, lone surrogates become U+FFFD). Errors name the byte offset.
pub fn unescape_json_string(value: &[u8]) -> Result<Vec<u8>, UnescapeError> {
    let mut out = Vec::with_capacity(value.len());
    let mut i = 0;
    let hex4 = |at: usize| -> Option<u32> {
        let s = value.get(at..at + 4)?;
        let s = std::str::from_utf8(s).ok()?;
        u32::from_str_radix(s, 16).ok()
    };
    while i < value.len() {
        let b = value[i];
        if b != b'\\' {
            out.push(b);
            i += 1;
            continue;
        }
        let Some(&e) = value.get(i + 1) else {
            return Err(UnescapeError::Dangling { at: i });
        };
        let simple = match e {
            b'"' => Some(b'"'),
            b'\\' => Some(b'\\'),
            b'/' => Some(b'/'),
            b'b' => Some(8),
            b'f' => Some(12),
            b'n' => Some(b'\n'),
            b'r' => Some(b'\r'),
            b't' => Some(b'\t'),
            _ => None,
        };
        if let Some(c) = simple {
            out.push(c);
            i += 2;
            continue;
        }
        if e != b'u' {
            return Err(UnescapeError::Escape { escape: e, at: i });
        }
        let Some(mut cp) = hex4(i + 2) else {
            return Err(UnescapeError::Unicode { at: i });
        };
        i += 6;
        if (0xD800..0xDC00).contains(&cp)
            && value.get(i..i + 2) == Some(b"\\u")
            && let Some(lo) = hex4(i + 2).filter(|lo| (0xDC00..0xE000).contains(lo))
        {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            i += 6;
        }
        let c = char::from_u32(cp).unwrap_or('\u{FFFD}');
        let mut buf = [0u8; 4];
        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
    }
    Ok(out)
}

/// The value with only its character encodings undone (JavaScript escapes, then HTML references),
/// or `None` when it has none. [`deobfuscate`] also drops the shell's no-op quoting, which reads
/// an encoded `$x`, `\r` or `/\host` as quoting and removes what a template, header or redirect
/// payload is made of: this view keeps them.
pub fn decoded_text(value: &[u8]) -> Option<Vec<u8>> {
    let escaped = decode_js_escapes(value);
    let text: &[u8] = escaped.as_deref().unwrap_or(value);
    if !has_entity(text) {
        return escaped;
    }
    Some(decode_html_entities(text).into_owned())
}

/// The de-obfuscated variant of a value that signatures also see, or `None` when it would equal the
/// value: HTML references decoded, SQL comments `/*…*/` replaced by a space, and the shell's
/// no-op quoting removed (`c''a""t`, `c'a't`, `'c'at`, `c``at`, `c\at`, `c^a^t`). Bounded: one linear pass per transform.
pub fn deobfuscate(value: &[u8]) -> Option<Vec<u8>> {
    let escaped = decode_js_escapes(value);
    let value: &[u8] = escaped.as_deref().unwrap_or(value);
    let between_alnum = |i: usize| {
        i > 0
            && value[i - 1].is_ascii_alphanumeric()
            && value.get(i + 1).is_some_and(u8::is_ascii_alphanumeric)
    };
    // Exactly the values some step below changes: an entity that decodes, `+` for spaces, a
    // comment, or a byte the last pass removes.
    let interesting = has_entity(value)
        || memchr::memchr2_iter(b'\\', b'^', value).any(|i| {
            value
                .get(i + 1)
                .is_some_and(|n| n.is_ascii_alphanumeric() || *n == b'/')
        })
        || (if value.len() < 64 {
            memchr::memchr2_iter(b'\'', b'"', value)
                .any(|i| value.get(i + 1) == Some(&value[i]) || between_alnum(i))
        } else {
            has_removable_quote(value)
        })
        || memchr::memchr_iter(b'$', value).any(|i| {
            value.get(i + 1).is_some_and(|n| {
                n.is_ascii_alphanumeric()
                    || matches!(n, b'@' | b'*')
                    || special_param(value, i)
                    || glued_braced_var(value, i).is_some()
                    || value.get(i + 1..i + 3) == Some(&b"()"[..])
            })
        })
        || (memchr::memchr_iter(b'+', value).nth(1).is_some()
            && memchr::memchr(b' ', value).is_none())
        || has_pair(value, b'/', b'*')
        || has_pair(value, b'`', b'`');
    if !interesting {
        return escaped;
    }
    rewrite(value, escaped.is_some())
}

/// Whether a quote of `value` is one the shell-quoting pass of [`rewrite`] removes: doubled
/// (`''`, `""`) or between two letters or digits (`c'a't`). Written as a branch-free pass over
/// blocks of bytes, which the compiler turns into vector code: a JSON text has a quote every few
/// bytes, too many to jump from one to the next.
fn has_removable_quote(value: &[u8]) -> bool {
    const BLOCK: usize = 64;
    let quote = |b: u8| (b == b'\'') | (b == b'"');
    if value.len() >= 2 && quote(value[0]) && value[1] == value[0] {
        return true;
    }
    // Middle bytes: `value[i]` with `value[i - 1]` and `value[i + 1]`.
    let (prev, mid, next) = match value.len() {
        n if n >= 3 => (&value[..n - 2], &value[1..n - 1], &value[2..]),
        _ => return false,
    };
    let mut at = 0;
    while at < mid.len() {
        let end = (at + BLOCK).min(mid.len());
        let window = prev[at..end].iter().zip(&mid[at..end]).zip(&next[at..end]);
        let found = window.fold(false, |acc, ((&p, &c), &n)| {
            let between = p.is_ascii_alphanumeric() & n.is_ascii_alphanumeric();
            acc | (quote(c) & ((n == c) | between))
        });
        if found {
            return true;
        }
        at = end;
    }
    false
}

/// [`deobfuscate`] without its check for values no step changes (the tests compare the two).
#[cfg(test)]
pub(super) fn deobfuscate_every_step(value: &[u8]) -> Option<Vec<u8>> {
    let escaped = decode_js_escapes(value);
    rewrite(escaped.as_deref().unwrap_or(value), escaped.is_some())
}

/// The bytes the shell-quoting pass of [`rewrite`] may remove.
const SHELL_QUOTING: [bool; 256] = {
    let mut t = [false; 256];
    t[b'\\' as usize] = true;
    t[b'^' as usize] = true;
    t[b'$' as usize] = true;
    t[b'\'' as usize] = true;
    t[b'"' as usize] = true;
    t[b'`' as usize] = true;
    t
};

/// Every step of [`deobfuscate`] on `value` (JS escapes already decoded when `escaped`).
fn rewrite(value: &[u8], escaped: bool) -> Option<Vec<u8>> {
    let mut v = decode_html_entities(value).into_owned();
    // Payload lists written for URLs use '+' for spaces; a value without any space but with several
    // '+' gets them back (a single '+' is more likely an e-mail tag or a sum).
    if !v.contains(&b' ') && v.iter().filter(|&&b| b == b'+').count() >= 2 {
        for b in v.iter_mut() {
            if *b == b'+' {
                *b = b' ';
            }
        }
    }
    // Comments become one space (an unterminated one runs to the end); text between them is
    // copied in runs.
    if let Some(first) = memchr::memmem::find(&v, b"/*") {
        let mut out = Vec::with_capacity(v.len());
        let (mut i, mut at) = (0, Some(first));
        while let Some(start) = at {
            out.extend_from_slice(&v[i..start]);
            out.push(b' ');
            i = match memchr::memmem::find(&v[start + 2..], b"*/") {
                Some(p) => start + 2 + p + 2,
                None => v.len(),
            };
            at = memchr::memmem::find(&v[i..], b"/*").map(|p| i + p);
        }
        out.extend_from_slice(&v[i..]);
        v = out;
    }
    // The shell's no-op quoting: only its bytes are looked at, the runs between them copied whole.
    let mut out = Vec::with_capacity(v.len());
    let mut i = 0;
    while i < v.len() {
        let run = v[i..]
            .iter()
            .position(|&b| SHELL_QUOTING[usize::from(b)])
            .map_or(v.len(), |k| i + k);
        out.extend_from_slice(&v[i..run]);
        i = run;
        if i == v.len() {
            break;
        }
        let b = v[i];
        let next = v.get(i + 1).copied();
        match b {
            b'\\' | b'^' if next.is_some_and(|n| n.is_ascii_alphanumeric() || n == b'/') => {}
            // Empty shell variables spliced into words: `c$@at`, `/etc$u/passwd`.
            b'$' if matches!(next, Some(b'@' | b'*'))
                || special_param(&v, i)
                || (next.is_some_and(|n| n.is_ascii_alphanumeric())
                    && !v.get(i + 2).is_some_and(|n| n.is_ascii_alphanumeric())) =>
            {
                i += 1
            }
            b'\'' | b'"' if next == Some(b) => i += 1,
            // An unset variable in braces spliced into a word (`wh${x}oami`).
            b'$' if next == Some(b'{') && glued_braced_var(&v, i).is_some() => {
                i += glued_braced_var(&v, i).unwrap_or(1) - 1
            }
            // An empty command substitution inside a word (`wh``oami`); not a Markdown fence.
            b'`' if next == Some(b'`')
                && i > 0
                && v[i - 1].is_ascii_alphanumeric()
                && v.get(i + 2).is_some_and(u8::is_ascii_alphanumeric) =>
            {
                i += 1
            }
            // The same in `$( )` form (`who$()ami`).
            b'$' if next == Some(b'(')
                && v.get(i + 2) == Some(&b')')
                && i > 0
                && v[i - 1].is_ascii_alphanumeric()
                && v.get(i + 3).is_some_and(u8::is_ascii_alphanumeric) =>
            {
                i += 2
            }
            b'\'' | b'"'
                if i > 0
                    && v[i - 1].is_ascii_alphanumeric()
                    && next.is_some_and(|n| n.is_ascii_alphanumeric()) => {}
            // The opening quote of a quoted fragment glued to the word after it (`'c'url`,
            // `"w"get`): its closing quote sits between two letters and goes by the rule above.
            b'\'' | b'"' if glued_fragment(&v, i) => {}
            _ => out.push(b),
        }
        i += 1;
    }
    if out == value && !escaped {
        None
    } else {
        Some(out)
    }
}

/// Decodes JavaScript/Java string escapes `\uXXXX`, `\u{X…}`, `\xXX` and three-digit octal `\NNN`
/// (as used to hide `${jndi:` or `<script>`), or `None` when there are none.
pub fn decode_js_escapes(value: &[u8]) -> Option<Vec<u8>> {
    let is_escape = |i: usize| -> Option<(u32, usize)> {
        if value.get(i) != Some(&b'\\') {
            return None;
        }
        if matches!(value.get(i + 1), Some(b'u' | b'U')) && value.get(i + 2) == Some(&b'{') {
            let digits = value.get(i + 3..)?.iter().take(7);
            let n = digits.take_while(|d| d.is_ascii_hexdigit()).count();
            if (1..=6).contains(&n) && value.get(i + 3 + n) == Some(&b'}') {
                let cp = value[i + 3..i + 3 + n]
                    .iter()
                    .fold(0u32, |a, &d| a << 4 | u32::from(hex_digit(d).unwrap_or(0)));
                return Some((cp, n + 4));
            }
            return None;
        }
        if let Some(&[a @ b'0'..=b'3', b @ b'0'..=b'7', c @ b'0'..=b'7']) = value.get(i + 1..i + 4)
        {
            let cp = u32::from(a - b'0') << 6 | u32::from(b - b'0') << 3 | u32::from(c - b'0');
            return Some((cp, 4));
        }
        let (n, skip) = match value.get(i + 1) {
            Some(b'u' | b'U') => (4, 2),
            Some(b'x' | b'X') => (2, 2),
            _ => return None,
        };
        let hex = |digits: &[u8]| {
            digits
                .iter()
                .try_fold(0u32, |cp, &d| Some(cp << 4 | u32::from(hex_digit(d)?)))
        };
        match value.get(i + skip..i + skip + n).and_then(hex) {
            Some(cp) => Some((cp, skip + n)),
            // A control character written with its code point's digits unpadded (`\u00a`, a
            // line feed: what `hex(ord(c))` with `0x` replaced by `\u00` makes), taken only where
            // the next escape or the end of the value shows that no digit is missing.
            None if n == 4 && value.get(i + 2..i + 4) == Some(b"00") => {
                let d = u32::from(hex_digit(*value.get(i + 4)?)?);
                matches!(value.get(i + 5), None | Some(b'\\')).then_some((d, 5))
            }
            None => None,
        }
    };
    if !memchr::memchr_iter(b'\\', value).any(|i| is_escape(i).is_some()) {
        return None;
    }
    let mut out = Vec::with_capacity(value.len());
    let mut i = 0;
    while i < value.len() {
        if let Some((cp, len)) = is_escape(i) {
            let c = char::from_u32(cp).unwrap_or('\u{FFFD}');
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            i += len;
        } else {
            out.push(value[i]);
            i += 1;
        }
    }
    Some(out)
}

/// Counts the bytes of decoded base64 that are not text as it is decoded, a byte at a time so that
/// random tokens are refused within a few bytes. Text is printable ASCII, tab and line breaks, and
/// well-formed UTF-8 for a character that is not a control: payloads are often written around
/// non-ASCII text (`嘍Set-Cookie:`, full-width look-alikes), and the bytes of random tokens
/// almost never form UTF-8 sequences. The bytes of a malformed sequence (a stray continuation,
/// a lead byte cut short, an overlong or surrogate form) count as not text, as
/// `str::from_utf8` would split them off.
#[derive(Default)]
struct TextCount {
    unprintable: usize,
    /// The bytes of the multi-byte sequence being read, and how many more it needs.
    seq: [u8; 4],
    len: usize,
    need: usize,
}

impl TextCount {
    fn push(&mut self, b: u8) {
        if self.need > 0 {
            let (lo, hi) = match (self.len, self.seq[0]) {
                (1, 0xe0) => (0xa0, 0xbf),
                (1, 0xed) => (0x80, 0x9f),
                (1, 0xf0) => (0x90, 0xbf),
                (1, 0xf4) => (0x80, 0x8f),
                _ => (0x80, 0xbf),
            };
            if (lo..=hi).contains(&b) {
                self.seq[self.len] = b;
                self.len += 1;
                self.need -= 1;
                // U+0080..U+009F (C2 80..C2 9F) are the C1 controls.
                if self.need == 0 && self.seq[0] == 0xc2 && self.seq[1] < 0xa0 {
                    self.unprintable += self.len;
                }
                return;
            }
            self.unprintable += self.finish();
        }
        match b {
            0x20..=0x7e | b'\t' | b'\r' | b'\n' => {}
            0xc2..=0xdf => self.start(b, 1),
            0xe0..=0xef => self.start(b, 2),
            0xf0..=0xf4 => self.start(b, 3),
            _ => self.unprintable += 1,
        }
    }

    fn start(&mut self, b: u8, need: usize) {
        self.seq[0] = b;
        self.len = 1;
        self.need = need;
    }

    /// The bytes of a sequence left unfinished, which are not text; resets the sequence.
    fn finish(&mut self) -> usize {
        let cut = if self.need > 0 { self.len } else { 0 };
        self.need = 0;
        self.len = 0;
        cut
    }
}

/// Fewest base64 characters (padding aside) decoded as text: six carry four bytes, enough for a
/// command after a separator (`| id`); shorter tokens are words and ids more often than payloads.
pub(super) const BASE64_MIN_CHARS: usize = 6;

/// The base64-decoded text of a value that is entirely base64 (standard or URL-safe alphabet,
/// [`BASE64_MIN_CHARS`] to 8192 characters) and decodes to text (printable ASCII or UTF-8,
/// [`TextCount`]); `None` otherwise.
/// Attack tools hide payloads this way; random tokens decode to binary and are skipped.
pub fn base64_text(value: &[u8]) -> Option<Vec<u8>> {
    let trimmed = value
        .strip_suffix(b"==")
        .or_else(|| value.strip_suffix(b"="))
        .unwrap_or(value);
    if trimmed.len() < BASE64_MIN_CHARS || trimmed.len() > 8192 || trimmed.len() % 4 == 1 {
        return None;
    }
    let sextet = |b: u8| -> u32 {
        u32::from(match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' | b' ' | b'-' => 62,
            _ => 63, // '/' or '_'
        })
    };
    // Decoded twice: first only to count unprintable bytes, stopping at the first one that makes
    // 95% printable impossible (random tokens and words fail within a few bytes), then into the
    // result. A byte outside both alphabets decodes as 63 here and is refused below.
    let total = trimmed.len() * 3 / 4;
    let decode = |emit: &mut dyn FnMut(u8) -> bool| -> bool {
        for group in trimmed.chunks(4) {
            let mut bits = 0u32;
            for (k, &c) in group.iter().enumerate() {
                bits |= sextet(c) << (18 - 6 * k);
            }
            // A short last group must leave its unused low bits zero (no trailing bits).
            let keep = group.len() - 1;
            if keep < 3 && bits & (0xff_ffff >> (8 * keep)) != 0 {
                return false;
            }
            if !bits.to_be_bytes()[1..=keep].iter().all(|&b| emit(b)) {
                return false;
            }
        }
        true
    };
    let mut count = TextCount::default();
    let printable_enough = decode(&mut |b| {
        count.push(b);
        count.unprintable * 100 <= total * 5
    });
    if !printable_enough || total == 0 || (count.unprintable + count.finish()) * 100 > total * 5 {
        return None;
    }
    // Checked after the count, which rejects most values within a few characters. Form
    // decoding turned base64 '+' into spaces (unless the value starts with one).
    let respace = value.contains(&b' ') && !value.starts_with(b" ");
    let (mut standard, mut url_safe) = (false, false);
    for &b in trimmed {
        match b {
            b'+' | b'/' => standard = true,
            b' ' if respace => standard = true,
            b'-' | b'_' => url_safe = true,
            _ if b.is_ascii_alphanumeric() => {}
            _ => return None,
        }
    }
    if standard && url_safe {
        return None; // neither alphabet decodes it
    }
    let mut out = Vec::with_capacity(total);
    decode(&mut |b| {
        out.push(b);
        true
    });
    Some(out)
}
