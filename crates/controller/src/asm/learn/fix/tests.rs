//! The mapping from violations to changes, on real compiled policies.

use serde_json::json;

use super::*;
use crate::asm::compile::Stored;
use crate::asm::learn::merged_body;
use portcullis_engine::MemResolver;

/// The fixes of each violation of `request` under the policy `doc`.
fn fixes_of(doc: serde_json::Value, request: serde_json::Value) -> Vec<Vec<Fix>> {
    let policy = portcullis_engine::policy::load(
        &serde_json::to_vec(&doc).unwrap(),
        "",
        &MemResolver::default(),
    )
    .unwrap()
    .policy;
    let merged = merged_body(&Stored {
        doc,
        ..Stored::default()
    });
    let r = Request::from_stored(&request);
    let owners = policy.owners(&r.head().into(), false);
    let scope = Scope {
        policy: &policy,
        merged: &merged,
        owners: &owners,
        request: &r,
    };
    r.violations.iter().map(|v| fixes(&scope, v)).collect()
}

fn doc(extra: serde_json::Value) -> serde_json::Value {
    let mut p = json!({"name": "p", "template": {"name": "POLICY_TEMPLATE_NGINX_BASE"},
        "parameters": [{"name": "qty", "type": "explicit", "dataType": "integer"}],
        "urls": [{"name": "/known", "method": "GET", "protocol": "http", "isAllowed": false}]});
    if let (Some(p), Some(e)) = (p.as_object_mut(), extra.as_object()) {
        p.extend(e.clone());
    }
    json!({"policy": p})
}

#[test]
fn each_violation_goes_to_its_entity() {
    let request = json!({"method": "POST", "uri": "/shop/cart.php?qty=2.5",
        "headers": [["content-type", "application/json"], ["cookie", "sid=x"]],
        "violations": [
            {"kind": "VIOL_PARAMETER_DATA_TYPE", "context": "query", "name": "qty", "snippet": "2.5", "detail": "expected integer"},
            {"kind": "VIOL_URL_LENGTH", "context": "url", "detail": "3000 bytes"},
            {"kind": "VIOL_EVASION", "context": "url", "detail": "Directory traversals"},
            {"kind": "VIOL_ATTACK_SIGNATURE", "context": "cookie", "name": "sid", "signatureIds": [300001004]},
            {"kind": "VIOL_ATTACK_SIGNATURE", "context": "url", "signatureIds": [300004002]},
            {"kind": "VIOL_FILETYPE", "context": "url", "snippet": "php"},
            {"kind": "VIOL_JSON_MALFORMED", "context": "json"},
            {"kind": "VIOL_RATING_THREAT", "context": "request"}]});
    let all = fixes_of(doc(json!({})), request);
    let m = |i: usize| all[i][0].modification();
    assert_eq!(
        m(0),
        json!({"entityType": "parameter", "entity": {"name": "qty"}, "entityChanges": {"dataType": "decimal"}, "action": "add-or-update"}),
        "the explicit parameter's data type, learned from its value"
    );
    assert_eq!(
        m(1)["entity"],
        json!({"name": "*"}),
        "the matched file type"
    );
    assert_eq!(
        m(1)["entityChanges"],
        json!({"checkUrlLength": true, "urlLength": 3000})
    );
    assert_eq!(m(2)["entityType"], "evasion");
    assert!(all[2][0].broad);
    assert_eq!(m(3)["entityType"], "cookie");
    assert_eq!(m(3)["entity"]["name"], "sid");
    assert_eq!(
        m(3)["entity"]["type"],
        "explicit",
        "a copy of the wildcard cookie"
    );
    assert_eq!(
        m(3)["entityChanges"],
        json!({"signatureOverrides": [{"signatureId": 300001004, "enabled": false}]})
    );
    assert_eq!(m(4)["entityType"], "url");
    assert_eq!(
        m(4)["entity"]["name"],
        "/shop/cart.php",
        "an explicit URL from the wildcard"
    );
    assert_eq!(m(4)["entity"]["method"], "*");
    assert!(
        m(4)["entity"]["urlContentProfiles"].is_array(),
        "with the wildcard's settings"
    );
    assert_eq!(
        m(5),
        json!({"entityType": "filetype", "entity": {"name": "php", "type": "explicit"},
        "entityChanges": {"allowed": true}, "action": "add-or-update"})
    );
    assert_eq!(m(6)["entityType"], "violation");
    assert!(all[6][0].broad);
    assert!(all[7].is_empty(), "the rating goes with its causes");
}

#[test]
fn urls_methods_and_spec_parameters() {
    let request = json!({"method": "PUT", "uri": "/known",
        "headers": [["content-type", "application/json"]],
        "violations": [
            {"kind": "VIOL_URL", "context": "url", "detail": "disallowed URL"},
            {"kind": "VIOL_METHOD", "context": "request", "snippet": "PUT"},
            {"kind": "VIOL_PARAMETER_DATA_TYPE", "context": "query", "name": "limit",
             "detail": "query parameter: expected integer, got string"}]});
    let all = fixes_of(doc(json!({})), request);
    assert_eq!(all[0][0].kind, Kind::AllowUrl);
    assert_eq!(all[1][0].modification()["entity"], json!({"name": "PUT"}));
    assert_eq!(
        all[2][0].kind,
        Kind::RelaxViolation,
        "an OpenAPI type is not the policy's to change"
    );
    let request = json!({"method": "POST", "uri": "/new/path",
        "headers": [["content-type", "application/json; charset=utf-8"]],
        "violations": [{"kind": "VIOL_URL", "context": "url", "detail": "URL not in the policy"}]});
    let f = &fixes_of(doc(json!({})), request)[0][0];
    assert_eq!(f.description, "Add URL POST /new/path (application/json)");
    assert_eq!(
        f.modification()["entityChanges"]["urlContentProfiles"][0],
        json!({"headerName": "Content-Type", "headerValue": "*json*", "headerOrder": "1", "type": "json", "contentProfile": {"name": "Default"}})
    );
}

#[test]
fn learned_values_merge() {
    let mut l = Learned::of_value("12");
    l.merge(&Learned::of_value("-3"));
    let mut c = Map::new();
    l.apply(&mut c);
    assert_eq!(c["dataType"], "integer");
    l.merge(&Learned::of_value("abc"));
    l.apply(&mut c);
    assert_eq!(c["dataType"], "alpha-numeric");
    let mut n = Learned::Longest {
        field: "defenseAttributes.maximumValueLength".into(),
        value: 10,
    };
    n.merge(&Learned::Longest {
        field: "defenseAttributes.maximumValueLength".into(),
        value: 30,
    });
    let mut c = Map::new();
    n.apply(&mut c);
    assert_eq!(
        json!(c),
        json!({"defenseAttributes": {"maximumValueLength": 30}})
    );
}
