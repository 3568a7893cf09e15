//! Meta-character tables per context (the BIG-IP 13.1 Rapid Deployment defaults),
//! overridable by `character-sets` and per-entity `metacharOverrides`. A table flags the
//! disallowed bytes, checked with one lookup per byte.

/// Disallowed bytes, one flag per byte value (a lookup per byte, the cheapest test a header's
/// every byte can get).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Table([bool; 256]);

impl Table {
    pub const EMPTY: Table = Table([false; 256]);

    fn from(ranges: &[(u8, u8)], chars: &[u8]) -> Table {
        let mut t = Table::EMPTY;
        for (a, b) in ranges {
            for c in *a..=*b {
                t.set(c, true);
            }
        }
        for c in chars {
            t.set(*c, true);
        }
        t
    }

    pub fn set(&mut self, c: u8, disallowed: bool) {
        self.0[usize::from(c)] = disallowed;
    }

    pub fn disallows(&self, c: u8) -> bool {
        self.0[usize::from(c)]
    }

    /// The first disallowed byte of `s`.
    pub fn first_bad(&self, s: &[u8]) -> Option<u8> {
        s.iter().copied().find(|c| self.disallows(*c))
    }

    pub fn url() -> Table {
        Table::from(&[(0, 0x1f), (0x7f, 0x7f)], b"!\"$&'*:;<=>@[\\]^`{|}~")
    }
    pub fn param_value() -> Table {
        Table::from(&[(0, 0x1f), (0x7f, 0x7f)], b"\"$%&';<>[\\]`{|}")
    }
    pub fn param_name() -> Table {
        Table::from(&[(0, 0x1f), (0x7f, 0x7f)], b"!\"#$%&'*/:;<=>?@[\\]^`{|}~")
    }
    pub fn header() -> Table {
        let mut t = Table::from(&[(0, 0x1f), (0x7f, 0x7f), (0x80, 0xbf)], b"'`\xd7\xf7");
        t.set(b'\t', false);
        t
    }
    pub fn json() -> Table {
        Table::from(
            &[(0, 0x1f), (0x7f, 0x7f)],
            b"!\"#$%&'()*-/:;<>?@[\\]^`{|}~ ",
        )
    }
    pub fn xml() -> Table {
        let mut t = Table::from(&[(0, 0x1f), (0x7f, 0x7f)], b"!\"#$%&'()*-/:;<>?@[\\]^`{|}~");
        for c in [b'\t', b'\n', b'\r'] {
            t.set(c, false);
        }
        t
    }
}

/// The header table with the two other byte checks every header value gets (NUL, bytes from 0x80
/// up), as class bits per byte value: one pass over a value says which of the three checks can
/// find something, and a clean value (nearly every one) needs no other pass.
#[derive(Clone, Copy, Debug)]
pub struct HeaderBytes([u8; 256]);

impl HeaderBytes {
    /// A byte the header table disallows.
    pub const METACHAR: u8 = 1;
    pub const NUL: u8 = 2;
    /// A byte from 0x80 up.
    pub const HIGH: u8 = 4;
    /// `%`, where a header value may hide a control byte or a URL's slashes.
    pub const PERCENT: u8 = 8;
    /// `&` or `\`: an HTML or JavaScript escape, or a backslash that may stand for a slash.
    pub const ESCAPE: u8 = 16;

    pub fn new(table: &Table) -> HeaderBytes {
        let mut classes = [0u8; 256];
        for (b, class) in (0..=255u8).zip(classes.iter_mut()) {
            *class = u8::from(table.disallows(b)) * Self::METACHAR
                + u8::from(b == 0) * Self::NUL
                + u8::from(b >= 0x80) * Self::HIGH
                + u8::from(b == b'%') * Self::PERCENT
                + u8::from(b == b'&' || b == b'\\') * Self::ESCAPE;
        }
        HeaderBytes(classes)
    }

    /// The classes of the bytes of `s`, or-ed.
    pub fn classes(&self, s: &[u8]) -> u8 {
        s.iter().fold(0, |seen, &b| seen | self.0[usize::from(b)])
    }

    /// The first byte of `s` the header table disallows.
    pub fn first_bad(&self, s: &[u8]) -> Option<u8> {
        s.iter()
            .copied()
            .find(|&b| self.0[usize::from(b)] & Self::METACHAR != 0)
    }
}

/// Parses `"0x3c"`, `"0X3C"` or a single character into a byte.
pub fn parse_metachar(s: &str) -> Option<u8> {
    let t = s.trim();
    if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return u8::from_str_radix(hex, 16).ok();
    }
    let mut chars = t.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) if c.is_ascii() => Some(c as u8),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_bytes_agree_with_the_three_checks() {
        let mut custom = Table::header();
        custom.set(b'a', true);
        custom.set(0, false);
        for table in [Table::header(), custom, Table::EMPTY] {
            let hb = HeaderBytes::new(&table);
            for seed in 0..2000u32 {
                let v: Vec<u8> = (0..seed % 23)
                    .map(|i| (seed.wrapping_mul(2_654_435_761).rotate_left(i) % 256) as u8)
                    .map(|b| if seed % 3 == 0 { b % 0x7f } else { b })
                    .collect();
                let seen = hb.classes(&v);
                assert_eq!(hb.first_bad(&v), table.first_bad(&v), "{v:?}");
                assert_eq!(
                    seen & HeaderBytes::METACHAR != 0,
                    table.first_bad(&v).is_some()
                );
                assert_eq!(seen & HeaderBytes::NUL != 0, v.contains(&0));
                assert_eq!(seen & HeaderBytes::HIGH != 0, !v.is_ascii());
                assert_eq!(seen & HeaderBytes::PERCENT != 0, v.contains(&b'%'));
                assert_eq!(
                    seen & HeaderBytes::ESCAPE != 0,
                    v.contains(&b'&') || v.contains(&b'\\')
                );
            }
        }
    }

    #[test]
    fn defaults_follow_the_rapid_deployment_tables() {
        assert!(Table::url().disallows(b'<'));
        assert!(!Table::url().disallows(b'/'));
        assert!(Table::param_value().disallows(b'\''));
        assert!(!Table::param_value().disallows(b'('));
        assert!(Table::param_name().disallows(b'/'));
        assert!(!Table::header().disallows(b'\t'));
        assert!(Table::header().disallows(0x85));
        assert!(Table::json().disallows(b' '));
        assert!(!Table::xml().disallows(b'\n'));
        assert_eq!(parse_metachar("0x3c"), Some(b'<'));
        assert_eq!(parse_metachar("<"), Some(b'<'));
        assert_eq!(parse_metachar("0xZZ"), None);
    }
}
