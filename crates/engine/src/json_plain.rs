//! The bytes a JSON string holds as they are: everything but `"`, `\\` and the control bytes below
//! 0x20. Reading a request document and writing an event line both skip such runs eight bytes at
//! a time, since most strings of either hold nothing else.

/// How many bytes from the start of `bytes` run before a `"`, a backslash or a control byte.
/// Inlined into its callers' per-string loops, which it is most of.
#[inline]
pub(crate) fn plain_run(bytes: &[u8]) -> usize {
    let mut n = 0;
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let stop = stops(u64::from_le_bytes(w.try_into().unwrap_or_default()));
        if stop != 0 {
            return n + (stop.trailing_zeros() / 8) as usize;
        }
        n += 8;
    }
    let rest = words.remainder();
    if rest.is_empty() {
        return n;
    }
    // The tail of a run of eight bytes or more is tested as the last eight, overlapping the words
    // before it, rather than a byte at a time: the bytes before `n` are plain, so the first stop
    // that word holds is at or after `n`.
    if let Some(last) = bytes.last_chunk::<8>() {
        let stop = stops(u64::from_le_bytes(*last));
        let from = bytes.len() - 8;
        return if stop == 0 {
            bytes.len()
        } else {
            from + (stop.trailing_zeros() / 8) as usize
        };
    }
    rest.iter()
        .take_while(|&&b| b != b'"' && b != b'\\' && b >= 0x20)
        .count()
}

/// Whether every byte of `bytes` is ASCII that a JSON string holds as it is: such bytes are valid
/// UTF-8 and need no escape, so a writer copies them whole without reading them again.
#[inline]
pub(crate) fn plain_ascii(bytes: &[u8]) -> bool {
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    // A flag of `stops` is either a true stop or above one, so any flag means the word has one.
    let clean = |w: &[u8; 8]| {
        let w = u64::from_le_bytes(*w);
        (stops(w) | (w & HIGH)) == 0
    };
    let (words, rest) = bytes.as_chunks::<8>();
    if !words.iter().all(clean) {
        return false;
    }
    match bytes.last_chunk::<8>() {
        // The tail tested as the last eight bytes, overlapping the words before it.
        Some(last) if !rest.is_empty() => clean(last),
        Some(_) => true,
        None => rest
            .iter()
            .all(|&b| b.is_ascii() && b >= 0x20 && b != b'"' && b != b'\\'),
    }
}

/// The high bit of each byte of `w` that is a `"`, a backslash or a control byte. A byte flagged
/// by one of the tests is a true stop when it is the lowest flagged: the borrow of the subtraction
/// only sets false flags above a true one.
#[inline(always)]
fn stops(w: u64) -> u64 {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    let zero = |w: u64| w.wrapping_sub(ONES) & !w & HIGH;
    zero(w ^ (ONES * u64::from(b'"')))
        | zero(w ^ (ONES * u64::from(b'\\')))
        | (w.wrapping_sub(ONES * 0x20) & !w & HIGH)
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
        // Every length up to three words, a stop of each kind at every position (the tail read
        // as an overlapping word, non-ASCII bytes around it), against a byte at a time.
        let plain = "aé\u{7f}Zé€ 9~xyzé!#[]{}".as_bytes();
        for len in 0..=24 {
            let base: Vec<u8> = plain.iter().copied().cycle().take(len).collect();
            let one_by_one = |v: &[u8]| {
                v.iter()
                    .take_while(|&&b| b != b'"' && b != b'\\' && b >= 0x20)
                    .count()
            };
            assert_eq!(plain_run(&base), one_by_one(&base));
            for at in 0..len {
                for stop in [b'"', b'\\', 0x00, 0x1f, b'\n'] {
                    let mut v = base.clone();
                    v[at] = stop;
                    assert_eq!(plain_run(&v), one_by_one(&v), "{v:?}");
                }
            }
        }
    }

    #[test]
    fn plain_ascii_is_ascii_without_a_quote_backslash_or_control_byte() {
        let byte_by_byte = |v: &[u8]| {
            v.iter()
                .all(|&b| (0x20..0x80).contains(&b) && b != b'"' && b != b'\\')
        };
        // Every length up to three words, each kind of byte at every position of a plain value.
        for len in 0..=24 {
            let base: Vec<u8> = b"Mozilla/5.0 (X11) ~!#[]{}\x7f"
                .iter()
                .copied()
                .cycle()
                .take(len)
                .collect();
            assert!(plain_ascii(&base), "{base:?}");
            for at in 0..len {
                for odd in [b'"', b'\\', 0x00, 0x1f, b'\t', 0x80, 0xc3, 0xff, b' ', 0x7f] {
                    let mut v = base.clone();
                    v[at] = odd;
                    assert_eq!(plain_ascii(&v), byte_by_byte(&v), "{v:?}");
                }
            }
        }
    }
}
