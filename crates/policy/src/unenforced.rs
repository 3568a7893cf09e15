//! Shape checks for sections this engine accepts but does not enforce (bot defense, brute force,
//! override rules): a value the product would refuse is refused here too, with its JSON path,
//! so `policy check` agrees with the product on what is a valid document.

use serde_json::Value;

use crate::PolicyError;

const BOT_ACTIONS: &[&str] = &["alarm", "block", "detect", "ignore"];
const NAP_BRUTE_FORCE_ACTIONS: &[&str] = &["alarm", "alarm-and-blocking-page"];
/// Collections an override-rule condition may index.
const CONDITION_COLLECTIONS: &[&str] = &[
    "ipAddressLists",
    "headers",
    "cookies",
    "parameters",
    "geolocations",
];

fn enum_err(path: &str, v: &str, allowed: &[&str]) -> PolicyError {
    PolicyError::invalid(
        path,
        format!("unknown value \"{v}\" (expected {})", allowed.join(", ")),
    )
}

/// Checks the raw `policy` body; `nap` is true for the NGINX templates (the NAP schema applies).
pub fn check(body: &serde_json::Map<String, Value>, nap: bool) -> Result<(), PolicyError> {
    if let Some(Value::Object(m)) = body.get("bot-defense").and_then(|b| b.get("mitigations")) {
        for (kind, list) in m {
            for (i, it) in list.as_array().into_iter().flatten().enumerate() {
                if let Some(a) = it.get("action").and_then(Value::as_str)
                    && !BOT_ACTIONS.contains(&a)
                {
                    return Err(enum_err(
                        &format!("policy.bot-defense.mitigations.{kind}[{i}].action"),
                        a,
                        BOT_ACTIONS,
                    ));
                }
            }
        }
    }
    if nap {
        for (i, bf) in body
            .get("brute-force-attack-preventions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            for key in ["loginAttemptsFromTheSameIp", "loginAttemptsFromTheSameUser"] {
                if let Some(a) = bf
                    .get(key)
                    .and_then(|v| v.get("action"))
                    .and_then(Value::as_str)
                    && !NAP_BRUTE_FORCE_ACTIONS.contains(&a)
                {
                    return Err(enum_err(
                        &format!("policy.brute-force-attack-preventions[{i}].{key}.action"),
                        a,
                        NAP_BRUTE_FORCE_ACTIONS,
                    ));
                }
            }
        }
    }
    for (i, rule) in body
        .get("override-rules")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let path = format!("policy.override-rules[{i}]");
        let name = rule.get("name").and_then(Value::as_str).unwrap_or("");
        let action = rule.get("actionType").and_then(Value::as_str).unwrap_or("");
        let over = rule.get("override");
        let inline = over.and_then(|o| o.get("policy"));
        if action == "replace-policy"
            && over.is_some_and(|o| o.get("$ref").is_none())
            && inline.and_then(|p| p.get("name")).is_none()
        {
            return Err(PolicyError::invalid(
                format!("{path}.override.policy.name"),
                format!("missing policy 'name' in the override rule '{name}'"),
            ));
        }
        if inline.is_some_and(|p| p.get("override-rules").is_some()) {
            return Err(PolicyError::invalid(
                format!("{path}.override.policy.override-rules"),
                "cyclic override-rules (an override policy may not have override rules)",
            ));
        }
        if let Some(cond) = rule.get("condition").and_then(Value::as_str) {
            check_condition(cond)
                .map_err(|e| PolicyError::invalid(format!("{path}.condition"), e))?;
        }
    }
    Ok(())
}

/// Every `identifier[` in a condition must index a known collection.
fn check_condition(cond: &str) -> Result<(), String> {
    let b = cond.as_bytes();
    for (i, c) in b.iter().enumerate() {
        if *c != b'[' {
            continue;
        }
        let start = b[..i]
            .iter()
            .rposition(|x| !(x.is_ascii_alphanumeric() || *x == b'_'))
            .map_or(0, |p| p + 1);
        let ident = &cond[start..i];
        if !ident.is_empty() && !CONDITION_COLLECTIONS.contains(&ident) {
            return Err(format!(
                "invalid field `{ident}` (expected one of {})",
                CONDITION_COLLECTIONS.join(", ")
            ));
        }
        if cond[i + 1..].starts_with("'']") {
            return Err("invalid value: empty string".into());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn body(v: Value) -> serde_json::Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn refuses_what_the_product_refuses() {
        let e = check(
            &body(
                json!({"bot-defense": {"mitigations": {"signatures": [{"name": "curl", "action": "ignoree"}]}}}),
            ),
            true,
        );
        assert_eq!(
            e.unwrap_err().path(),
            Some("policy.bot-defense.mitigations.signatures[0].action")
        );
        let rule = |p: Value, cond: &str| {
            body(
                json!({"override-rules": [{"name": "r", "condition": cond, "actionType": "replace-policy", "override": {"policy": p}}]}),
            )
        };
        assert!(
            check(
                &rule(
                    json!({"enforcementMode": "transparent"}),
                    "uri.contains('a')"
                ),
                true
            )
            .is_err()
        );
        assert!(
            check(
                &rule(
                    json!({"name": "x", "override-rules": []}),
                    "uri.contains('a')"
                ),
                true
            )
            .is_err()
        );
        assert!(
            check(
                &rule(json!({"name": "x"}), "clientIp.matches(invalidList['a'])"),
                true
            )
            .is_err()
        );
        assert!(
            check(
                &rule(
                    json!({"name": "x"}),
                    "clientIp.matches(ipAddressLists['a'])"
                ),
                true
            )
            .is_ok()
        );
        let bf = body(
            json!({"brute-force-attack-preventions": [{"loginAttemptsFromTheSameIp": {"action": "alarm-and-captcha"}}]}),
        );
        assert!(check(&bf, true).is_err());
        assert!(check(&bf, false).is_ok());
    }
}
