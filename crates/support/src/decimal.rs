//! Integers as decimal text without the formatter: what `Display` writes for an integer, put
//! digit by digit into a buffer on the stack. Code that writes numbers on every request (the
//! event log's lines, the values a body's signature scan reads) uses it.

/// Room for any `u64` in decimal with a sign.
pub const DECIMAL_MAX: usize = 21;

/// `n` in decimal, after a `-` when `negative`, written at the end of `buf`; the text returned.
pub fn decimal(n: u64, negative: bool, buf: &mut [u8; DECIMAL_MAX]) -> &str {
    let mut at = buf.len();
    let mut rest = n;
    loop {
        at -= 1;
        buf[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if negative {
        at -= 1;
        buf[at] = b'-';
    }
    std::str::from_utf8(&buf[at..]).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_as_display_writes() {
        let mut buf = [0; DECIMAL_MAX];
        for n in [0, 7, 10, 99, 123, 1_000_000, u64::MAX] {
            assert_eq!(decimal(n, false, &mut buf), n.to_string());
        }
        for n in [1, 42, i64::MIN.unsigned_abs()] {
            assert_eq!(decimal(n, true, &mut buf), format!("-{n}"));
        }
    }
}
