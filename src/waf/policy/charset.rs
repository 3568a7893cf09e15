//! Meta-character tables per context (waf-semantics §5, BIG-IP 13.1 Rapid Deployment defaults),
//! overridable by `character-sets` and per-entity `metacharOverrides`. A table flags the
//! disallowed bytes, checked with one lookup per byte. Imports: nothing.

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
    fn defaults_follow_the_research_tables() {
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
