//! The text form of UUIDs (`8-4-4-4-12` hex digits): OpenAPI's `uuid` format, pool and member ids.
//! (New random ones come from `mgmt::seed::new_uuid`.)

/// Whether `s` has the text form of a UUID (any version).
pub fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
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
