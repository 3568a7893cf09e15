//! Random (version 4) UUIDs in their usual text form, for machine ids, pool and member ids.

use rand::RngExt as _;

/// A new random UUID, `xxxxxxxx-xxxx-4xxx-axxx-xxxxxxxxxxxx` (lower-case hex).
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

/// Whether `s` has the text form of a UUID (any version).
pub fn is_uuid(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.chars().all(|c| c.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_are_well_formed_and_distinct() {
        let (a, b) = (new_uuid(), new_uuid());
        assert!(is_uuid(&a) && is_uuid(&b), "{a} {b}");
        assert_ne!(a, b);
        assert_eq!(&a[14..15], "4");
        assert!(!is_uuid("not-a-uuid"));
    }
}
