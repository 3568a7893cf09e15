//! Integers as decimal text without the formatter: what `Display` writes for an integer, put
//! two digits at a time into a buffer on the stack. Code that writes numbers on every request (the
//! event log's lines, the values a body's signature scan reads) uses it.

/// Room for any `u64` in decimal with a sign.
pub const DECIMAL_MAX: usize = 21;

/// `n` in decimal, after a `-` when `negative`, written at the end of `buf`; the text returned.
#[inline]
pub fn decimal(n: u64, negative: bool, buf: &mut [u8; DECIMAL_MAX]) -> &str {
    std::str::from_utf8(decimal_bytes(n, negative, buf)).unwrap_or_default()
}

/// [`decimal`] as bytes, for a writer of bytes (an event line): the digits are ASCII, and
/// checking them again as UTF-8 costs a fair part of the whole. Inlined: this crate is built at
/// opt-level 1 (see the release profile), and a request writes several numbers.
#[inline]
pub fn decimal_bytes(n: u64, negative: bool, buf: &mut [u8; DECIMAL_MAX]) -> &[u8] {
    let mut at = buf.len();
    let mut rest = n;
    // Two digits per division, as core's formatter writes them: a support id has twenty.
    while rest >= 100 {
        let pair = (rest % 100) as usize * 2;
        rest /= 100;
        at -= 2;
        buf[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    }
    if rest >= 10 {
        let pair = rest as usize * 2;
        at -= 2;
        buf[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    } else {
        at -= 1;
        buf[at] = b'0' + rest as u8;
    }
    if negative {
        at -= 1;
        buf[at] = b'-';
    }
    &buf[at..]
}

/// "00", "01", ..., "99" back to back.
const PAIRS: [u8; 200] = {
    let mut t = [0; 200];
    let mut i = 0;
    while i < 100 {
        t[2 * i] = b'0' + (i / 10) as u8;
        t[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    t
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_as_display_writes() {
        let mut buf = [0; DECIMAL_MAX];
        for n in [0, 7, 9, 10, 11, 99, 100, 101, 123, 1_000_000, u64::MAX] {
            assert_eq!(decimal(n, false, &mut buf), n.to_string());
        }
        for n in (0..100_000).chain((0..64).map(|s| 1u64 << s)) {
            assert_eq!(decimal(n, false, &mut buf), n.to_string());
            assert_eq!(
                decimal(n.wrapping_sub(1), false, &mut buf),
                n.wrapping_sub(1).to_string()
            );
        }
        for n in [1, 42, i64::MIN.unsigned_abs()] {
            assert_eq!(decimal(n, true, &mut buf), format!("-{n}"));
        }
        for n in [0, 9, 10, 99, 100, 1234567, u64::MAX] {
            assert_eq!(decimal_bytes(n, false, &mut buf), n.to_string().as_bytes());
            assert_eq!(decimal_bytes(n, true, &mut buf), format!("-{n}").as_bytes());
        }
    }
}
