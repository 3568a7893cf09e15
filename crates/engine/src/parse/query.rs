//! Query strings and `application/x-www-form-urlencoded` bodies: `name=value` pairs split on `&`
//! (and `;` is left alone), `+` as space, percent-decoding with evasion flags.

/// What decoding noticed: evasion techniques and encoding errors.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DecodeFlags {
    /// A `%` not followed by two hex digits.
    pub bad_escape: bool,
    /// `%uXXXX` (IIS) encoding was used.
    pub percent_u: bool,
    /// The value still contained escapes after one pass (double encoding); counts passes.
    pub passes: u8,
    /// Escapes were still left after the last allowed pass (`maxDecodingPasses`): the value is
    /// encoded more deeply than the policy decodes.
    pub exhausted: bool,
    /// A NUL byte appeared after decoding.
    pub nul: bool,
    /// An overlong UTF-8 sequence (e.g. `%c0%af`) appeared after decoding.
    pub overlong: bool,
}

/// The value of one hexadecimal digit (either case): the one reader of `%XX`, `%uXXXX` and the
/// escapes `normalize` decodes.
pub(crate) fn hex_digit(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// [`BYTE_CLASS`] bits: `%`, `+`, and the other bytes `decode` must look at (NUL, a UTF-8 lead
/// byte that may be overlong). A table read per byte costs less than a `memchr` call on the short
/// values most parameters are.
const PERCENT: u8 = 1;
const PLUS: u8 = 2;
const OTHER: u8 = 4;
static BYTE_CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    t[b'%' as usize] = PERCENT;
    t[b'+' as usize] = PLUS;
    t[0] = OTHER;
    let mut b = 0xc0;
    while b < 256 {
        t[b] = OTHER;
        b += 1;
    }
    t
};

/// Where the first byte of a class in `mask` is.
fn find(input: &[u8], mask: u8) -> Option<usize> {
    input
        .iter()
        .position(|&b| BYTE_CLASS[b as usize] & mask != 0)
}

/// One percent-decoding pass into `out` (cleared first); `plus` turns `+` into a space. The runs
/// between escapes are copied whole.
pub fn decode_once(input: &[u8], plus: bool, out: &mut Vec<u8>, flags: &mut DecodeFlags) {
    out.clear();
    out.reserve(input.len());
    let mask = if plus { PERCENT | PLUS } else { PERCENT };
    let mut i = 0;
    while i < input.len() {
        let Some(at) = find(&input[i..], mask).map(|n| i + n) else {
            out.extend_from_slice(&input[i..]);
            break;
        };
        out.extend_from_slice(&input[i..at]);
        i = at + decode_special(input, at, out, flags);
    }
}

/// Decodes the `%` or `+` at `input[at]` onto `out`; returns how many bytes it took.
fn decode_special(input: &[u8], at: usize, out: &mut Vec<u8>, flags: &mut DecodeFlags) -> usize {
    if input[at] == b'+' {
        out.push(b' ');
        return 1;
    }
    if let (Some(h), Some(l)) = (
        input.get(at + 1).copied().and_then(hex_digit),
        input.get(at + 2).copied().and_then(hex_digit),
    ) {
        out.push(h << 4 | l);
        return 3;
    }
    if matches!(input.get(at + 1), Some(b'u') | Some(b'U')) {
        let digits = (2..6).try_fold(0u32, |a, k| {
            input
                .get(at + k)
                .copied()
                .and_then(hex_digit)
                .map(|x| a << 4 | u32::from(x))
        });
        if let Some(cp) = digits {
            // `escape()` in JavaScript writes non-Latin text this way (`%u4F60`): what hides
            // from a decoder that knows only `%XX` is ASCII, or the full-width forms IIS maps
            // onto it.
            flags.percent_u |= cp < 0x80 || (0xff01..=0xff5e).contains(&cp);
            let ch = char::from_u32(cp).unwrap_or('\u{fffd}');
            let mut buf = [0u8; 4];
            // IIS maps full-width forms onto ASCII; keep the low byte for ASCII look-alikes.
            let mapped = if (0xff01..=0xff5e).contains(&cp) {
                char::from_u32(cp - 0xfee0).unwrap_or(ch)
            } else {
                ch
            };
            out.extend_from_slice(mapped.encode_utf8(&mut buf).as_bytes());
            return 6;
        }
    }
    // A `%` before two bytes that are not hex digits is a percent sign written as it is (`100%
    // sure`, a URL pasted with `%sa` in it): every decoder leaves it alone. Half an escape
    // (`%2g`, `%a` at the end) is what decoders disagree on.
    flags.bad_escape |= input.get(at + 1).copied().and_then(hex_digit).is_some();
    out.push(b'%');
    1
}

/// Decodes up to `max_passes` times while escapes remain; records passes beyond the first,
/// NUL bytes and overlong UTF-8 in `flags`.
#[inline]
pub fn decode<'a>(
    input: &'a [u8],
    plus: bool,
    max_passes: u8,
    flags: &mut DecodeFlags,
) -> std::borrow::Cow<'a, [u8]> {
    let special = if plus {
        PERCENT | PLUS | OTHER
    } else {
        PERCENT | OTHER
    };
    if find(input, special).is_none() {
        flags.passes = 1;
        return std::borrow::Cow::Borrowed(input);
    }
    std::borrow::Cow::Owned(decode_escaped(input, plus, max_passes, flags))
}

/// [`decode`] of a value with something to decode.
fn decode_escaped(input: &[u8], plus: bool, max_passes: u8, flags: &mut DecodeFlags) -> Vec<u8> {
    let mut cur = Vec::new();
    decode_once(input, plus, &mut cur, flags);
    flags.passes = 1;
    let mut next = Vec::new();
    while flags.passes < max_passes && has_escape(&cur) {
        let mut f = DecodeFlags::default();
        decode_once(&cur, false, &mut next, &mut f);
        flags.percent_u |= f.percent_u;
        std::mem::swap(&mut cur, &mut next);
        flags.passes += 1;
    }
    flags.exhausted |= (flags.passes >= max_passes && has_escape(&cur)) || escapes_escaped(input);
    flags.nul |= memchr::memchr(0, &cur).is_some();
    flags.overlong |= !cur.is_ascii() && has_overlong(&cur);
    cur
}

/// An escape whose hex digits are escaped themselves (`%25%37%33` for `%73`): no client encodes
/// a hex digit, so the value was encoded to get past a single decoding; a URL carried in a
/// parameter (`%2520`) escapes the `%` only.
fn escapes_escaped(s: &[u8]) -> bool {
    // One pass over the bytes: a value with escapes is decoded a byte at a time anyway, and a
    // substring searcher's set-up (or a `memchr` call per `%` of an escaped value) costs more
    // than the pass. Two `%25` cannot overlap, so this finds what a searcher would.
    let mut at_25 = s
        .iter()
        .enumerate()
        .filter(|&(i, &b)| b == b'%' && s.get(i + 1..i + 3) == Some(b"25"))
        .map(|(i, _)| i);
    at_25.any(|i| {
        let esc = |at: usize| -> Option<u8> {
            match s.get(at..at + 3)? {
                [b'%', h, l] => Some(hex_digit(*h)? << 4 | hex_digit(*l)?),
                _ => None,
            }
        };
        esc(i + 3).is_some_and(|b| b.is_ascii_hexdigit() || b == b'u' || b == b'U')
    })
}

/// True when `s` contains a valid `%XX` or `%uXXXX` escape.
pub fn has_escape(s: &[u8]) -> bool {
    memchr::memchr_iter(b'%', s).any(|i| match s.get(i + 1..i + 3) {
        Some(&[a, b]) => (hex_digit(a).is_some() && hex_digit(b).is_some()) || a | 0x20 == b'u',
        _ => false,
    })
}

fn has_overlong(s: &[u8]) -> bool {
    s.windows(2)
        .any(|w| matches!(w[0], 0xc0 | 0xc1) && (0x80..=0xbf).contains(&w[1]))
        || s.windows(3).any(|w| {
            (w[0] == 0xe0 && (0x80..=0x9f).contains(&w[1]))
                // Four- to six-byte forms (`F0 80 80 BC`, `F8 80 80 80 BC`): `F8` and `FC` lead
                // nothing valid, and `F0 80` is below the four-byte range.
                || (w[0] == 0xf0 && (0x80..=0x8f).contains(&w[1]))
                || (matches!(w[0], 0xf8 | 0xfc) && w[1] == 0x80 && w[2] == 0x80)
        })
}

/// Splits `a=1&b=2` into raw (still encoded) `(name, value, has_equals)` pairs, at most `limit`.
pub fn pairs(input: &[u8], limit: usize) -> impl Iterator<Item = (&[u8], &[u8], bool)> {
    input
        .split(|b| *b == b'&')
        .filter(|p| !p.is_empty())
        .take(limit)
        .map(|p| match p.iter().position(|b| *b == b'=') {
            Some(i) => (&p[..i], &p[i + 1..], true),
            None => (p, &p[p.len()..], false),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_with_flags() {
        let mut f = DecodeFlags::default();
        assert_eq!(&*decode(b"a%2541+b", true, 3, &mut f), b"aA b");
        assert_eq!(f.passes, 2);
        assert!(!f.exhausted, "two passes of three: fully decoded");
        let mut f = DecodeFlags::default();
        assert_eq!(&*decode(b"%2525253C", false, 3, &mut f), b"%3C");
        assert!(f.exhausted, "still encoded after maxDecodingPasses");
        let mut f = DecodeFlags::default();
        assert_eq!(
            &*decode(b"%u003cscript%2z", false, 2, &mut f),
            b"<script%2z"
        );
        assert!(f.percent_u && f.bad_escape);
        // A percent sign written as it is, and JavaScript's escape() of Chinese text: ordinary.
        let mut f = DecodeFlags::default();
        decode(
            b"https%3A%2F%safeline.com%2F&%u4F60%u60F3",
            false,
            3,
            &mut f,
        );
        assert!(!f.bad_escape && !f.percent_u, "{f:?}");
        // Hex digits escaped inside an escape: encoded to get past one decoding.
        let mut f = DecodeFlags::default();
        assert_eq!(&*decode(b"%25%37%33ql", false, 3, &mut f), b"sql");
        assert!(f.exhausted);
        let mut f = DecodeFlags::default();
        decode(
            b"dl=https%3A%2F%2Fh%2F%3Fq%3Dapple%2520watch",
            false,
            3,
            &mut f,
        );
        assert!(
            !f.exhausted,
            "a URL carried in a parameter keeps its own escapes"
        );
        let mut f = DecodeFlags::default();
        decode(b"%c0%af%00", false, 2, &mut f);
        assert!(f.overlong && f.nul);
    }

    #[test]
    fn escaped_hex_digits_are_found_wherever_the_escapes_stand() {
        for (s, want) in [
            (&b"%25%37%33"[..], true),
            (b"a%25%41", true),
            (b"%25%75", true),
            (b"%2520", false),
            (b"%25", false),
            (b"%25%", false),
            (b"%25%2", false),
            (b"%%25%36%31", true),
            (b"%2%25%3", false),
            (b"100%25 sure %25%67", false),
            (b"x%25%25%36%36", true),
            (b"", false),
        ] {
            assert_eq!(escapes_escaped(s), want, "{}", String::from_utf8_lossy(s));
        }
    }

    /// The byte-at-a-time pass the run-copying `decode_once` replaced.
    fn reference_once(input: &[u8], plus: bool, flags: &mut DecodeFlags) -> Vec<u8> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < input.len() {
            if input[i] == b'%' || (plus && input[i] == b'+') {
                i += decode_special(input, i, &mut out, flags);
            } else {
                out.push(input[i]);
                i += 1;
            }
        }
        out
    }

    #[test]
    fn run_copying_agrees_with_byte_at_a_time() {
        let alphabet = b"%%+uU0aFgz\x00\xc0\xaf\xe0\x80 ";
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for len in (0..40).cycle().take(20_000) {
            let input: Vec<u8> = (0..len)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    alphabet[(seed % alphabet.len() as u64) as usize]
                })
                .collect();
            for plus in [false, true] {
                let (mut a, mut b) = (DecodeFlags::default(), DecodeFlags::default());
                let mut fast = Vec::new();
                decode_once(&input, plus, &mut fast, &mut a);
                assert_eq!(fast, reference_once(&input, plus, &mut b), "{input:?}");
                assert_eq!(a, b, "{input:?}");
                let windows = input.windows(3).any(|w| {
                    w[0] == b'%'
                        && ((hex_digit(w[1]).is_some() && hex_digit(w[2]).is_some())
                            || w[1] | 0x20 == b'u')
                });
                assert_eq!(has_escape(&input), windows, "{input:?}");
            }
        }
    }

    #[test]
    fn splits_pairs() {
        let v: Vec<_> = pairs(b"a=1&&b&c=", 10).collect();
        assert_eq!(
            v,
            vec![
                (&b"a"[..], &b"1"[..], true),
                (&b"b"[..], &b""[..], false),
                (&b"c"[..], &b""[..], true)
            ]
        );
    }
}
