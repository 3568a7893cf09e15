//! The text form of UUIDs (`8-4-4-4-12` hex digits): OpenAPI's `uuid` format, pool and member ids.
//! and new random (version 4) ones.

use rand::RngExt as _;

/// Whether `s` has the text form of a UUID (any version).
#[inline]
pub fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// A random (version 4) UUID: machine ids, central manager task ids.
pub fn new_uuid() -> String {
    let b: [u8; 16] = rand::rng().random();
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-4{}-a{}-{}",
        &h[0..8],
        &h[8..12],
        &h[13..16],
        &h[17..20],
        &h[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_text_form() {
        assert!(is_uuid("123e4567-e89b-12d3-a456-426614174000"));
        assert!(!is_uuid("123e4567-e89b-12d3-a456-42661417400g"));
        assert!(!is_uuid("123e4567e89b-12d3-a456-4266141740000"));
        assert!(!is_uuid("not-a-uuid"));
    }
}
