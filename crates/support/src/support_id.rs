//! Support ids: the random unsigned 64-bit decimal that ties a block response to its event.

use std::fmt;

use rand::RngExt as _;

/// The id shown to a blocked client and written to the event log, so a user's report
/// can be matched to the event that blocked them.
/// Random, unsigned 64-bit, rendered in decimal without padding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SupportId(pub u64);

impl SupportId {
    /// A fresh random id. Ids below 10^18 are redrawn so that every id has 19 or 20 digits,
    /// as on the systems we stand in for.
    #[inline]
    pub fn random() -> Self {
        let mut rng = rand::rng();
        loop {
            let v: u64 = rng.random();
            if v >= 1_000_000_000_000_000_000 {
                return SupportId(v);
            }
        }
    }
}

impl fmt::Display for SupportId {
    #[inline]
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl std::str::FromStr for SupportId {
    type Err = std::num::ParseIntError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.parse().map(SupportId)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_have_19_or_20_digits_and_differ() {
        let a = SupportId::random();
        let b = SupportId::random();
        assert_ne!(a, b);
        for id in [a, b] {
            let s = id.to_string();
            assert!((19..=20).contains(&s.len()), "{s}");
            assert_eq!(s.parse::<SupportId>().unwrap(), id);
        }
    }
}
