//! The bytes a JSON string holds as they are: everything but `"`, `\\` and the control bytes below
//! 0x20. Reading a request document and writing an event line both skip such runs eight bytes at
//! a time, since most strings of either hold nothing else.

/// How many bytes from the start of `bytes` run before a `"`, a backslash or a control byte.
pub(crate) fn plain_run(bytes: &[u8]) -> usize {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    let zero = |w: u64| w.wrapping_sub(ONES) & !w & HIGH;
    let mut n = 0;
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let w = u64::from_le_bytes(w.try_into().unwrap_or_default());
        // A byte flagged by one of the tests is the first stop when it is the lowest flagged:
        // the borrow of the subtraction only sets false flags above a true one.
        let stop = zero(w ^ (ONES * u64::from(b'"')))
            | zero(w ^ (ONES * u64::from(b'\\')))
            | (w.wrapping_sub(ONES * 0x20) & !w & HIGH);
        if stop != 0 {
            return n + (stop.trailing_zeros() / 8) as usize;
        }
        n += 8;
    }
    n + words
        .remainder()
        .iter()
        .take_while(|&&b| b != b'"' && b != b'\\' && b >= 0x20)
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_run_stops_at_the_first_quote_backslash_or_control_byte() {
        let cases: [(&[u8], usize); 8] = [
            (b"abc\"", 3),
            (b"abcdefghijkl\\x", 12),
            (b"abcdefgh\x1fxyz", 8),
            (b"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\"", 10),
            (b"abcdefg", 7),
            (b"0123456789abcdef", 16),
            (b"\x7f\x80\xff !#[]\"", 8),
            (b"\x01", 0),
        ];
        for (bytes, n) in cases {
            assert_eq!(plain_run(bytes), n, "{}", String::from_utf8_lossy(bytes));
        }
    }
}
