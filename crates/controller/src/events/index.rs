//! Secondary indexes of the local request-event log, so the request log can be searched by
//! client address, URL, violation, signature and policy without reading every stored event.
//!
//! Each index entry is a key alone (value `null`) in `Table::Events`:
//! `x/<field>/<value>\u{1}<timeMicros, 20 digits>/<supportId>`. The `\u{1}` ends the value (a URL
//! `/a` must not match `/a/b`), and the time order within one value makes "newest first" a reverse
//! range scan, a time range a key range, and a page cursor a key. The entries of an event are
//! derived from its stored JSON alone, so the writer and the pruner compute the same ones.

use serde_json::Value;

use super::syslog::split_uri;

/// The index fields, with the one-letter prefix of their keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    Client,
    Url,
    Violation,
    Signature,
    Policy,
}

impl Field {
    fn tag(self) -> &'static str {
        match self {
            Field::Client => "c",
            Field::Url => "u",
            Field::Violation => "v",
            Field::Signature => "s",
            Field::Policy => "p",
        }
    }
}

pub const PREFIX: &str = "x/";
/// Separates an indexed value from the time in a key.
const END: char = '\u{1}';
/// Longest indexed value (bytes): longer URLs are indexed by their first bytes only, so one
/// request cannot make keys of unbounded size (a search for such a URL compares the events).
const VALUE_MAX: usize = 512;

fn cut(v: &str) -> &str {
    let mut end = v.len().min(VALUE_MAX);
    while !v.is_char_boundary(end) {
        end -= 1;
    }
    &v[..end]
}

/// `x/<tag>/<value>\u{1}`: every entry of one value starts with it.
pub fn value_prefix(field: Field, value: &str) -> String {
    format!("{PREFIX}{}/{}{END}", field.tag(), cut(value))
}

/// The key of one entry; `time_and_id` is `<timeMicros, 20 digits>/<supportId>`.
pub fn key(field: Field, value: &str, time_and_id: &str) -> String {
    format!("{}{time_and_id}", value_prefix(field, value))
}

/// The `<timeMicros>/<supportId>` tail of an index or item key.
pub fn time_and_id(key: &str) -> &str {
    match key.rfind(END) {
        Some(i) => &key[i + END.len_utf8()..],
        None => key.strip_prefix(super::local::ITEMS).unwrap_or(key),
    }
}

/// The signature ids of a stored violation (`signatureIds`, or `signature_ids` in events stored
/// before field names were camelCase).
pub fn signature_ids(v: &Value) -> impl Iterator<Item = u64> + '_ {
    v.get("signatureIds")
        .or_else(|| v.get("signature_ids"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_u64)
}

/// Every index key of the stored event `e` whose item key ends in `time_and_id`.
pub fn keys_of(e: &Value, time_and_id: &str) -> Vec<String> {
    let s = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or_default();
    let mut out = Vec::with_capacity(8);
    let mut add = |f: Field, v: &str| {
        let k = key(f, v, time_and_id);
        if !v.is_empty() && !out.contains(&k) {
            out.push(k);
        }
    };
    add(Field::Client, s("clientIp"));
    add(Field::Url, split_uri(s("uri")).0);
    add(Field::Policy, s("policyFullPath"));
    for v in e
        .get("violations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        add(
            Field::Violation,
            v.get("kind").and_then(Value::as_str).unwrap_or_default(),
        );
        for id in signature_ids(v) {
            add(Field::Signature, &id.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_end_their_value_and_keep_time_order() {
        let e = json!({"clientIp": "192.0.2.7", "uri": "/a/b?x=1", "policyFullPath": "/Common/p",
            "violations": [{"kind": "VIOL_ATTACK_SIGNATURE", "signature_ids": [200001, 200002]},
                           {"kind": "VIOL_ATTACK_SIGNATURE", "signatureIds": [200001]}]});
        let keys = keys_of(&e, "00000000000000000042/77");
        assert_eq!(keys.len(), 6, "{keys:?}");
        assert!(keys.contains(&key(Field::Url, "/a/b", "00000000000000000042/77")));
        assert!(
            !keys
                .iter()
                .any(|k| k.starts_with(&value_prefix(Field::Url, "/a/b?x")))
        );
        assert!(!keys[1].starts_with(&value_prefix(Field::Url, "/a")));
        assert_eq!(time_and_id(&keys[0]), "00000000000000000042/77");
        assert_eq!(
            time_and_id("e/00000000000000000042/77"),
            "00000000000000000042/77"
        );
        let e = json!({"uri": "/r?next=http://h/x"});
        assert_eq!(
            keys_of(&e, "1/2"),
            [key(Field::Url, "/r", "1/2")],
            "a URL in the query is not the path"
        );
        let e = json!({"uri": "http://h:8/p/q?x=1"});
        assert_eq!(
            keys_of(&e, "1/2"),
            [key(Field::Url, "/p/q", "1/2")],
            "absolute form"
        );
        let long = "/".repeat(2000);
        assert!(value_prefix(Field::Url, &long).len() < 600);
    }
}
