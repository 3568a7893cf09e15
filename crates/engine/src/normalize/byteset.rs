//! A 256-bit set of byte values, built in one pass over a value: the matcher and the view builders
//! consult it instead of searching the value again for each character they care about.

/// Which byte values occur (or are allowed, or are wanted), one bit per value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ByteSet([u64; 4]);

impl ByteSet {
    pub const EMPTY: ByteSet = ByteSet([0; 4]);

    /// The bytes occurring in `value`.
    pub fn of(value: &[u8]) -> ByteSet {
        if value.len() >= 512 {
            return ByteSet::of_long(value);
        }
        // Two tables, merged at the end, halve the dependency chain of the loop.
        let (mut a, mut b) = ([0u64; 4], [0u64; 4]);
        let mut pairs = value.chunks_exact(2);
        for p in &mut pairs {
            a[usize::from(p[0] >> 6)] |= 1 << (p[0] & 63);
            b[usize::from(p[1] >> 6)] |= 1 << (p[1] & 63);
        }
        for &x in pairs.remainder() {
            a[usize::from(x >> 6)] |= 1 << (x & 63);
        }
        ByteSet([a[0] | b[0], a[1] | b[1], a[2] | b[2], a[3] | b[3]])
    }

    /// [`ByteSet::of`] for long values: one store per byte into a table (no chain of
    /// read-modify-writes on four words), folded into bits once at the end.
    fn of_long(value: &[u8]) -> ByteSet {
        let mut seen = [false; 256];
        for &x in value {
            seen[usize::from(x)] = true;
        }
        let mut s = [0u64; 4];
        for (x, _) in seen.iter().enumerate().filter(|(_, on)| **on) {
            s[x >> 6] |= 1 << (x & 63);
        }
        ByteSet(s)
    }

    /// The set of the given bytes (a `const` table).
    pub const fn from_bytes(bytes: &[u8]) -> ByteSet {
        let mut s = [0u64; 4];
        let mut i = 0;
        while i < bytes.len() {
            let x = bytes[i];
            s[(x >> 6) as usize] |= 1 << (x & 63);
            i += 1;
        }
        ByteSet(s)
    }

    /// Every byte in `lo..=hi` added.
    pub const fn with_range(self, lo: u8, hi: u8) -> ByteSet {
        let mut s = self.0;
        let mut x = lo as usize;
        while x <= hi as usize {
            s[x >> 6] |= 1 << (x & 63);
            x += 1;
        }
        ByteSet(s)
    }

    pub fn insert(&mut self, x: u8) {
        self.0[usize::from(x >> 6)] |= 1 << (x & 63);
    }

    pub const fn contains(&self, x: u8) -> bool {
        self.0[(x >> 6) as usize] & (1 << (x & 63)) != 0
    }

    /// Whether every byte of `self` is in `other`.
    pub fn is_subset(&self, other: &ByteSet) -> bool {
        (0..4).all(|i| self.0[i] & !other.0[i] == 0)
    }

    /// Whether a byte of `lo..=hi` is in the set (`lo <= hi`): a mask per word, not a test per byte.
    pub fn intersects_range(&self, lo: u8, hi: u8) -> bool {
        let (first, last) = (usize::from(lo >> 6), usize::from(hi >> 6));
        (first..=last).any(|w| {
            let from = if w == first { lo & 63 } else { 0 };
            let to = if w == last { hi & 63 } else { 63 };
            self.0[w] & (u64::MAX >> (63 - to)) & (u64::MAX << from) != 0
        })
    }

    /// Whether the sets share a byte.
    pub fn intersects(&self, other: &ByteSet) -> bool {
        (0..4).any(|i| self.0[i] & other.0[i] != 0)
    }

    /// The bytes in both sets.
    pub const fn and(&self, other: &ByteSet) -> ByteSet {
        ByteSet([
            self.0[0] & other.0[0],
            self.0[1] & other.0[1],
            self.0[2] & other.0[2],
            self.0[3] & other.0[3],
        ])
    }

    /// The bytes in either set.
    pub const fn or(&self, other: &ByteSet) -> ByteSet {
        ByteSet([
            self.0[0] | other.0[0],
            self.0[1] | other.0[1],
            self.0[2] | other.0[2],
            self.0[3] | other.0[3],
        ])
    }

    /// The bytes of the set, in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = u8> + '_ {
        self.0.iter().enumerate().flat_map(|(w, &word)| {
            let mut bits = word;
            std::iter::from_fn(move || {
                if bits == 0 {
                    return None;
                }
                let b = bits.trailing_zeros();
                bits &= bits - 1;
                Some((w as u32 * 64 + b) as u8)
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::ByteSet;

    #[test]
    fn sets_hold_exactly_their_bytes() {
        let s = ByteSet::of(b"a;\xff\0a");
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![0, b';', b'a', 0xff]);
        assert!(ByteSet::from_bytes(b";a").is_subset(&s));
        assert!(!ByteSet::from_bytes(b";b").is_subset(&s));
        assert!(s.intersects(&ByteSet::from_bytes(b"zzz\xff")));
        assert!(!s.intersects(&ByteSet::from_bytes(b"xyz")));
        let r = ByteSet::EMPTY.with_range(b'0', b'9');
        assert!(r.contains(b'5') && !r.contains(b'a'));
        assert_eq!(s.and(&r), ByteSet::EMPTY);
        assert_eq!(ByteSet::of(b""), ByteSet::EMPTY);
        let long: Vec<u8> = (0..2000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut short = ByteSet::EMPTY;
        long.chunks(100)
            .for_each(|c| short = short.or(&ByteSet::of(c)));
        assert_eq!(ByteSet::of(&long), short);
    }

    #[test]
    fn range_test_agrees_with_byte_by_byte() {
        for set in [
            ByteSet::of(b"a;\xff\0A~"),
            ByteSet::from_bytes(b"\x3f\x40\x7f\x80\xc0"),
        ] {
            for lo in 0..=255u8 {
                for hi in lo..=255u8 {
                    let slow = (lo..=hi).any(|b| set.contains(b));
                    assert_eq!(set.intersects_range(lo, hi), slow, "{lo}..={hi}");
                }
            }
        }
    }
}
