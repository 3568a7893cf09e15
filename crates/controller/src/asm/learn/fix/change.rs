//! Each kind of change: a signature or metacharacter allowed on an entity, a parameter field, a
//! URL added, JSON limits raised (never lowered), the character-set fallbacks.

use serde_json::{Map, Value, json};

use super::entity::{find, named_entity, param_entity, url_entity};
use super::{Fix, Kind, Learned, Scope, broad, fix, learned, obj, relax_violation};
use portcullis_engine::policy::{BodyOwner, Named};
use portcullis_engine::signatures::SignatureDb;
use portcullis_engine::{Context, Violation, ViolationKind as K};

/// `metacharacter 0x27` → `0x27`.
pub(super) fn metachar_of(v: &Violation) -> Option<String> {
    let hex = v.detail.strip_prefix("metacharacter ")?;
    (hex.len() == 4 && hex.starts_with("0x")).then(|| hex.to_ascii_lowercase())
}

/// The first number in a detail (`2100 bytes`, `length 300`).
pub(super) fn number_in(s: &str) -> Option<u64> {
    s.split(|c: char| !c.is_ascii_digit())
        .find(|w| !w.is_empty())?
        .parse()
        .ok()
}

fn sig_name(id: u32) -> String {
    SignatureDb::builtin()
        .get(id)
        .map_or_else(|| id.to_string(), |s| format!("{id} ({})", s.name))
}

/// A parameter violation raised by the OpenAPI spec rather than a policy entity (its detail
/// names the location: `query parameter: expected integer, got string`).
pub(super) fn spec_detail(v: &Violation) -> bool {
    v.detail
        .split(' ')
        .nth(1)
        .is_some_and(|w| w.starts_with("parameter"))
}

pub(super) fn signature_fix(cx: &Scope<'_>, v: &Violation, id: u32) -> Fix {
    let overrides = json!({"signatureOverrides": [{"signatureId": id, "enabled": false}]});
    let what = format!("sig{id}");
    let on = |ty: &'static str, e: Map<String, Value>, label: String| {
        let mut f = fix(
            Kind::DisableSignature,
            ty,
            e,
            overrides.clone(),
            &what,
            format!("Disable signature {} on {label}", sig_name(id)),
        );
        f.signature = Some(id);
        f
    };
    let name = v.name.as_deref().unwrap_or_default();
    let target = match (v.context, name.is_empty()) {
        (Context::Parameter | Context::Query | Context::Header | Context::Cookie, false) => {
            named_entity(cx, v.context, name).map(|(t, e, l)| on(t, e, l))
        }
        (Context::Json, _) | (Context::Xml, _) => match &cx.owners.body {
            BodyOwner::Json(p) => Some(on(
                "json-profile",
                obj(json!({"name": p})),
                format!("JSON profile {p}"),
            )),
            BodyOwner::Xml(p) => Some(on(
                "xml-profile",
                obj(json!({"name": p})),
                format!("XML profile {p}"),
            )),
            BodyOwner::Other => None,
        },
        // The URL, the whole query string and a raw body are judged with the URL's overrides.
        (Context::Url | Context::Query, _) | (Context::Body, true) => {
            url_entity(cx).map(|(e, l)| on("url", e, l))
        }
        _ => None,
    };
    target.unwrap_or_else(|| {
        let mut f = broad(fix(
            Kind::DisableSignature,
            "signature",
            obj(json!({"signatureId": id})),
            json!({"enabled": false}),
            &what,
            format!("Disable signature {} in the whole policy", sig_name(id)),
        ));
        f.signature = Some(id);
        f
    })
}

pub(super) fn metachar_fix(cx: &Scope<'_>, v: &Violation, c: &str) -> Fix {
    let allow = json!([{"metachar": c, "isAllowed": true}]);
    let name = v.name.as_deref().unwrap_or_default();
    let (ty, entity, field, label) = match v.context {
        Context::Parameter | Context::Query if !name.is_empty() => {
            match named_entity(cx, v.context, name) {
                Some((t, e, l)) => (t, e, "valueMetacharOverrides", l),
                None => return charset_fix(c, "parameter-value"),
            }
        }
        Context::Json => match &cx.owners.body {
            BodyOwner::Json(p) => (
                "json-profile",
                obj(json!({"name": p})),
                "metacharOverrides",
                format!("JSON profile {p}"),
            ),
            _ => return charset_fix(c, "json-content"),
        },
        Context::Xml => match &cx.owners.body {
            BodyOwner::Xml(p) => (
                "xml-profile",
                obj(json!({"name": p})),
                "metacharOverrides",
                format!("XML profile {p}"),
            ),
            _ => return charset_fix(c, "xml-content"),
        },
        Context::Url => match url_entity(cx) {
            Some((e, l)) => ("url", e, "metacharOverrides", l),
            None => return charset_fix(c, "url"),
        },
        Context::Header => return charset_fix(c, "header"),
        _ => return charset_fix(c, "parameter-value"),
    };
    let mut changes = Map::new();
    changes.insert(field.into(), allow);
    fix(
        Kind::AllowMetachar,
        ty,
        entity,
        Value::Object(changes),
        c,
        format!("Allow metacharacter {c} in {label}"),
    )
}

pub(super) fn charset_fix(c: &str, set: &str) -> Fix {
    broad(fix(
        Kind::AllowMetachar,
        "character-set",
        obj(json!({"characterSetType": set})),
        json!({"characterSet": [{"metachar": c, "isAllowed": true}]}),
        c,
        format!("Allow metacharacter {c} in the {set} character set of the policy"),
    ))
}

pub(super) fn parameter_change(cx: &Scope<'_>, v: &Violation, o: &Named) -> Fix {
    let e = param_entity(cx, Some(o), &o.name);
    let n = &o.name;
    let base = |changes: Value, what: &str, d: String| {
        fix(
            Kind::ChangeParameter,
            "parameter",
            e.clone(),
            changes,
            what,
            d,
        )
    };
    match v.kind {
        K::ParameterDataType => learned(
            base(
                json!({}),
                "dataType",
                format!("Learn the data type of parameter {n}"),
            ),
            Learned::of_value(&v.snippet),
        ),
        K::ParameterEmptyValue => base(
            json!({"allowEmptyValue": true}),
            "empty",
            format!("Allow an empty value in parameter {n}"),
        ),
        K::ParameterRepeated => base(
            json!({"allowRepeatedParameterName": true}),
            "repeated",
            format!("Allow parameter {n} to repeat"),
        ),
        K::ParameterLocation => base(
            json!({"parameterLocation": "any"}),
            "location",
            format!("Allow parameter {n} in any location"),
        ),
        _ => match number_in(&v.detail) {
            Some(len) => learned(
                base(
                    json!({"checkMaxValueLength": true}),
                    "length",
                    format!("Raise the maximum length of parameter {n}"),
                ),
                Learned::Longest {
                    field: "maximumLength".into(),
                    value: len,
                },
            ),
            None => relax_violation(v),
        },
    }
}

pub(super) fn add_url(cx: &Scope<'_>, path: &str, method: &str) -> Fix {
    let ct = cx
        .request
        .header("content-type")
        .unwrap_or_default()
        .to_ascii_lowercase();
    let profile = |t: &str, glob: &str, p: Option<&str>| {
        let mut rule = json!({"headerName": "Content-Type", "headerValue": glob, "headerOrder": "1", "type": t});
        if let Some(p) = p {
            rule["contentProfile"] = json!({"name": p});
        }
        rule
    };
    let mut changes = json!({"isAllowed": true});
    if ct.contains("json") {
        changes["urlContentProfiles"] = json!([profile("json", "*json*", Some("Default"))]);
    } else if ct.contains("xml") {
        changes["urlContentProfiles"] = json!([profile("xml", "*xml*", Some("Default"))]);
    } else if ct.contains("form") {
        changes["urlContentProfiles"] = json!([profile("form-data", "*form*", None)]);
    }
    let e = obj(json!({"name": path, "method": method, "protocol": "http", "type": "explicit"}));
    let d = match ct
        .split(';')
        .next()
        .map(str::trim)
        .filter(|c| !c.is_empty())
    {
        Some(c) => format!("Add URL {method} {path} ({c})"),
        None => format!("Add URL {method} {path}"),
    };
    fix(Kind::AddUrl, "url", e, changes, "", d)
}

/// The JSON profile limits a VIOL_JSON_FORMAT exceeded, each raised to what was seen.
pub(super) fn json_limits(cx: &Scope<'_>, v: &Violation) -> Option<Vec<Fix>> {
    let BodyOwner::Json(p) = &cx.owners.body else {
        return None;
    };
    let current = find(cx.merged, "json-profiles", &[("name", p)])
        .and_then(|j| j.get("defenseAttributes"))
        .cloned()
        .unwrap_or(Value::Null);
    let seen: Vec<(&str, u64)> = if let Some(n) = v.detail.strip_suffix(" bytes of JSON") {
        vec![("maximumTotalLengthOfJSONData", n.parse().ok()?)]
    } else {
        let nums: Vec<u64> = v
            .detail
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|w| w.parse().ok())
            .collect();
        let [depth, array, value] = nums[..] else {
            return None;
        };
        vec![
            ("maximumStructureDepth", depth),
            ("maximumArrayLength", array),
            ("maximumValueLength", value),
        ]
    };
    let fixes: Vec<Fix> = seen
        .into_iter()
        // Only the limits the request went over; a limit is never lowered.
        .filter(|(field, n)| {
            current
                .get(*field)
                .and_then(Value::as_u64)
                .is_none_or(|cur| *n > cur)
                && current.get(*field) != Some(&json!("any"))
        })
        .filter(|(field, n)| current.get(*field).is_some() || *n > default_json_limit(field))
        .map(|(field, n)| {
            learned(
                fix(
                    Kind::RelaxLength,
                    "json-profile",
                    obj(json!({"name": p})),
                    json!({}),
                    field,
                    format!("Raise {field} of JSON profile {p}"),
                ),
                Learned::Longest {
                    field: format!("defenseAttributes.{field}"),
                    value: n,
                },
            )
        })
        .collect();
    (!fixes.is_empty()).then_some(fixes)
}

fn default_json_limit(field: &str) -> u64 {
    match field {
        "maximumStructureDepth" => 10,
        "maximumArrayLength" => 1000,
        "maximumValueLength" => 100,
        _ => 10000,
    }
}
