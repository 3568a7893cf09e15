//! Registration keys: the base-key form `AAAAA-BBBBB-CCCCC-DDDDD-EEEEEEE` (five groups of 5, 5, 5,
//! 5 and 7 letters or digits) that licensing pools are created from and billing reports are asked
//! for. Parsing normalises to upper case so one key has one spelling in the store and in reports.
//! Imports nothing internal.

/// Lengths of the dash-separated groups of a base registration key.
const GROUPS: [usize; 5] = [5, 5, 5, 5, 7];

/// Why text is not a base registration key; `Display` says what is wrong, for API messages and
/// CLI errors.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RegKeyError {
    #[error("the registration key is empty")]
    Empty,
    /// Not five groups of 5-5-5-5-7 letters and digits; `shown` is the start of the text.
    #[error(
        "'{shown}' is not a registration key (expected five groups of letters and digits, \
         5-5-5-5-7, like ABCDE-FGHIJ-KLMNO-PQRST-UVWXYZ1)"
    )]
    Malformed { shown: String },
}

/// Checks and normalises a base registration key (surrounding white space ignored, letters upper-cased).
pub fn parse_regkey(raw: &str) -> Result<String, RegKeyError> {
    let key = raw.trim();
    if key.is_empty() {
        return Err(RegKeyError::Empty);
    }
    let shown: String = key.chars().take(40).collect();
    let groups: Vec<&str> = key.split('-').collect();
    let lengths_ok =
        groups.len() == GROUPS.len() && groups.iter().zip(GROUPS).all(|(g, n)| g.len() == n);
    if !lengths_ok || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        return Err(RegKeyError::Malformed { shown });
    }
    Ok(key.to_ascii_uppercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_base_key_form_and_normalises_case() {
        assert_eq!(
            parse_regkey(" abcde-fghij-klmno-pqrst-uvwxyz1\n").as_deref(),
            Ok("ABCDE-FGHIJ-KLMNO-PQRST-UVWXYZ1")
        );
    }

    #[test]
    fn refuses_everything_else_with_a_reason() {
        for bad in [
            "",
            "ABCDE-FGHIJ-KLMNO-PQRST",
            "ABCDE-FGHIJ-KLMNO-PQRST-UVWXYZ12",
            "ABCDE-FGHIJ-KLMNO-PQRST-UVWXY_1",
            "ABCDE-FGHIJ-KLMNO-PQRST-UVWXYZ1-X",
            "ÄBCDE-FGHIJ-KLMNO-PQRST-UVWXYZ1",
        ] {
            let e = parse_regkey(bad).expect_err(bad);
            assert!(e.to_string().contains("registration key"), "{bad}: {e}");
        }
    }
}
