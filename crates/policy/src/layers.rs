//! Policy layering on the raw JSON (`docs/policy.md`, "Pipeline"):
//! template → OpenAPI → policy body → `modifications`, later layers win field by field;
//! `$action: "delete"` removes the entity with the same merge key (a URL deleted without a protocol
//! is deleted for both).

use serde_json::{Map, Value};

use crate::PolicyError;
use crate::sections::merge_key;

/// Lists nested inside entities that merge by key too (e.g. a URL's `signatureOverrides`).
const NESTED_LISTS: &[&str] = &[
    "violations",
    "evasions",
    "http-protocols",
    "characterSet",
    "signatureOverrides",
    "metacharOverrides",
    "valueMetacharOverrides",
    "nameMetacharOverrides",
    "methodOverrides",
    "urlContentProfiles",
];

/// Merges layer `over` onto `base` (both `policy` objects).
pub fn merge_policy(base: &mut Map<String, Value>, over: &Map<String, Value>) {
    for (key, value) in over {
        merge_field(base, key, value);
    }
}

fn merge_field(base: &mut Map<String, Value>, key: &str, value: &Value) {
    match (base.get_mut(key), value) {
        (Some(Value::Array(items)), Value::Array(new)) if is_keyed(key, new) => {
            merge_list(key, items, new);
        }
        (Some(Value::Object(obj)), Value::Object(new)) => {
            for (k, v) in new {
                merge_field(obj, k, v);
            }
        }
        _ => {
            let mut v = value.clone();
            if let Value::Array(items) = &mut v {
                // A fresh list: drop delete markers, they have nothing to delete.
                items.retain(|i| !is_delete(i));
            }
            base.insert(key.to_string(), v);
        }
    }
}

fn is_keyed(key: &str, items: &[Value]) -> bool {
    (crate::sections::all().any(|s| s == key) || NESTED_LISTS.contains(&key))
        && items.iter().all(Value::is_object)
}

fn is_delete(v: &Value) -> bool {
    v.get("$action").and_then(Value::as_str) == Some("delete")
}

/// Merges entity list `new` into `items` by merge key.
pub fn merge_list(section: &str, items: &mut Vec<Value>, new: &[Value]) {
    for entity in new {
        let Some(key) = merge_key(section, entity) else {
            if !is_delete(entity) {
                items.push(entity.clone());
            }
            continue;
        };
        if is_delete(entity) {
            let all_protocols = section == "urls" && entity.get("protocol").is_none();
            items.retain(|old| {
                let Some(k) = merge_key(section, old) else {
                    return true;
                };
                if all_protocols {
                    strip_last(&k) != strip_last(&key)
                } else {
                    k != key
                }
            });
            continue;
        }
        match items
            .iter_mut()
            .find(|old| merge_key(section, old).as_deref() == Some(key.as_str()))
        {
            Some(Value::Object(old)) => {
                if let Value::Object(fields) = entity {
                    for (k, v) in fields {
                        merge_field(old, k, v);
                    }
                }
            }
            _ => items.push(entity.clone()),
        }
    }
}

fn strip_last(k: &str) -> &str {
    k.rsplit_once('\u{1}').map(|(a, _)| a).unwrap_or(k)
}

/// `modifications[].entityType` → the section it edits.
fn section_of(entity_type: &str) -> Option<&'static str> {
    Some(match entity_type {
        "signature" => "signatures",
        "signature-set" => "signature-sets",
        "filetype" => "filetypes",
        "url" => "urls",
        "parameter" => "parameters",
        "header" => "headers",
        "cookie" => "cookies",
        "method" => "methods",
        "server-technology" => "server-technologies",
        "response-page" => "response-pages",
        "json-profile" => "json-profiles",
        "xml-profile" => "xml-profiles",
        "sensitive-parameter" => "sensitive-parameters",
        "violation" => "violations",
        "evasion" => "evasions",
        "http-protocol" => "http-protocols",
        "character-set" => "character-sets",
        "policy" => "policy",
        _ => return None,
    })
}

/// Applies the `modifications` list (after the policy body).
pub fn apply_modifications(
    policy: &mut Map<String, Value>,
    mods: &Value,
    path: &str,
) -> Result<usize, PolicyError> {
    let list = mods
        .as_array()
        .ok_or_else(|| PolicyError::invalid(path, "expected an array of modifications"))?;
    for (i, m) in list.iter().enumerate() {
        let p = format!("{path}[{i}]");
        let ty = m
            .get("entityType")
            .and_then(Value::as_str)
            .ok_or_else(|| PolicyError::invalid(format!("{p}.entityType"), "missing"))?;
        let section = section_of(ty).ok_or_else(|| {
            PolicyError::invalid(
                format!("{p}.entityType"),
                format!(
                    "unknown value \"{ty}\" (expected signature, filetype, url, \
                 parameter, header, cookie, method, server-technology, violation, evasion, \
                 http-protocol, response-page, json-profile, xml-profile, policy, ...)"
                ),
            )
        })?;
        let action = m
            .get("action")
            .and_then(Value::as_str)
            .unwrap_or("add-or-update");
        let mut item = m
            .get("entity")
            .cloned()
            .unwrap_or(Value::Object(Map::new()));
        let Value::Object(fields) = &mut item else {
            return Err(PolicyError::invalid(
                format!("{p}.entity"),
                "expected an object",
            ));
        };
        if let Some(Value::Object(changes)) = m.get("entityChanges") {
            for (k, v) in changes {
                fields.insert(k.clone(), v.clone());
            }
        }
        match action {
            "add-or-update" => {}
            "delete" => {
                fields.insert("$action".into(), Value::String("delete".into()));
            }
            other => {
                return Err(PolicyError::invalid(
                    format!("{p}.action"),
                    format!("unknown value \"{other}\" (expected add-or-update or delete)"),
                ));
            }
        }
        if section == "policy" {
            merge_policy(policy, fields);
            continue;
        }
        let target = match section {
            "violations" | "evasions" | "http-protocols" => {
                let bs = policy
                    .entry("blocking-settings")
                    .or_insert_with(|| Value::Object(Map::new()));
                match bs {
                    Value::Object(o) => o,
                    _ => {
                        return Err(PolicyError::invalid(
                            p,
                            "blocking-settings is not an object",
                        ));
                    }
                }
            }
            _ => &mut *policy,
        };
        let list = target
            .entry(section)
            .or_insert_with(|| Value::Array(Vec::new()));
        match list {
            Value::Array(items) => merge_list(section, items, std::slice::from_ref(&item)),
            _ => {
                return Err(PolicyError::invalid(
                    p,
                    format!("policy.{section} is not a list"),
                ));
            }
        }
    }
    Ok(list.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn url_delete_without_protocol_removes_both() {
        let mut base = obj(json!({"urls": [
            {"name": "*", "type": "wildcard", "protocol": "http"},
            {"name": "*", "type": "wildcard", "protocol": "https"},
            {"name": "/a", "protocol": "http"}]}));
        merge_policy(
            &mut base,
            &obj(json!({"urls": [{"name": "*", "$action": "delete"}]})),
        );
        assert_eq!(base["urls"].as_array().map(Vec::len), Some(1));
    }

    #[test]
    fn field_level_overwrite_keeps_other_fields() {
        let mut base = obj(json!({"blocking-settings": {"violations": [
            {"name": "VIOL_URL", "alarm": true, "block": false}]}}));
        merge_policy(
            &mut base,
            &obj(
                json!({"blocking-settings": {"violations": [{"name": "VIOL_URL", "block": true}]}}),
            ),
        );
        assert_eq!(
            base["blocking-settings"]["violations"][0],
            json!({"name": "VIOL_URL", "alarm": true, "block": true})
        );
    }

    #[test]
    fn modifications_edit_and_delete() {
        let mut p = obj(json!({"filetypes": [{"name": "log", "allowed": true}, {"name": "*"}]}));
        apply_modifications(
            &mut p,
            &json!([
                {"entityType": "filetype", "entity": {"name": "log"}, "action": "delete"},
                {"entityType": "signature", "entity": {"signatureId": 200001834},
                 "entityChanges": {"enabled": false}, "action": "add-or-update"},
                {"entityType": "evasion", "entity": {"description": "Directory traversals"},
                 "entityChanges": {"enabled": true}}
            ]),
            "modifications",
        )
        .unwrap();
        assert_eq!(p["filetypes"], json!([{"name": "*"}]));
        assert_eq!(p["signatures"][0]["enabled"], json!(false));
        assert_eq!(
            p["blocking-settings"]["evasions"][0]["enabled"],
            json!(true)
        );
        let err = apply_modifications(&mut p, &json!([{"entityType": "nope"}]), "modifications");
        assert_eq!(err.unwrap_err().path(), Some("modifications[0].entityType"));
    }
}
