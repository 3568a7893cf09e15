//! Reading loosely typed JSON documents (admin request bodies, stored objects, OpenAPI files),
//! where a field of the wrong type is skipped rather than refused.

use serde_json::Value;

/// The strings of the JSON array `v`, other items skipped; empty when `v` is absent or not an
/// array.
pub fn json_strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_the_strings_of_an_array_are_taken() {
        assert_eq!(json_strings(Some(&json!(["a", 1, null, "b"]))), ["a", "b"]);
        assert!(json_strings(Some(&json!("a"))).is_empty());
        assert!(json_strings(None).is_empty());
    }
}
