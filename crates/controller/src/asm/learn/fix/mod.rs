//! From a violation to the policy change that stops it: one `modifications[]` entry on exactly the
//! entity that raised it (the engine says which, `waf::policy::explain`), narrowest first:
//!
//! | violation | change |
//! | --- | --- |
//! | attack signature S on parameter / header / cookie / URL / JSON or XML profile X | `signatureOverrides: [{signatureId: S, enabled: false}]` on X; a wildcard X becomes an explicit entity with the wildcard's settings; no entity of its own (an OpenAPI operation, a multipart part): S disabled in the policy (broad) |
//! | metacharacter C in a parameter value / URL / JSON or XML value | `valueMetacharOverrides` / `metacharOverrides: [{metachar: C, isAllowed: true}]` on the entity; in a header: the header character set (broad) |
//! | unknown parameter P | parameter P, explicit, with the data type learned from its values and its location |
//! | parameter data type, empty value, repetition, location, value length | that field of the explicit parameter entity (learned type, allowed, any, the longest value seen) |
//! | URL not in the policy / method not allowed on an OpenAPI URL | explicit URL with its method (and the JSON/XML/form content profile its content type asks for) |
//! | disallowed URL / file type | `isAllowed` / `allowed: true` |
//! | method | method M |
//! | URL, query, POST data, request length | that length of the matched file type, raised to the longest seen |
//! | header / cookie length, JSON limits | `header-settings` / `cookie-settings` / the profile's `defenseAttributes`, raised (never lowered) |
//! | evasion / HTTP-protocol sub-check | that sub-check disabled |
//! | anything else | the violation set not to block (broad; accept only) |
//!
//! [`entity`] finds the entity a change goes to; [`change`] builds each kind of change.

use serde_json::{Map, Value, json};

use super::request::Request;
use portcullis_engine::policy::CompiledPolicy;
use portcullis_engine::policy::Owners;
use portcullis_engine::{Context, Violation, ViolationKind as K};

mod change;
mod entity;
#[cfg(test)]
mod tests;

use change::{
    add_url, json_limits, metachar_fix, metachar_of, number_in, parameter_change, signature_fix,
    spec_detail,
};
use entity::url_entity;

/// What a fix does (its family, for scoring and display).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    DisableSignature,
    AllowMetachar,
    AddParameter,
    ChangeParameter,
    AddUrl,
    AllowUrl,
    AddMethod,
    AddFiletype,
    RelaxLength,
    DisableSubCheck,
    RelaxViolation,
}

/// A value learned over the requests behind a fix (merged when evidence is aggregated).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Learned {
    /// `entityChanges[field]` = the longest seen.
    Longest { field: String, value: u64 },
    /// `entityChanges.dataType` = the narrowest type every value seen fits.
    DataType {
        integer: u64,
        decimal: u64,
        other: u64,
    },
}

impl Learned {
    pub fn merge(&mut self, other: &Learned) {
        match (self, other) {
            (Learned::Longest { value, .. }, Learned::Longest { value: v, .. }) => {
                *value = (*value).max(*v)
            }
            (
                Learned::DataType {
                    integer,
                    decimal,
                    other,
                },
                Learned::DataType {
                    integer: i,
                    decimal: d,
                    other: o,
                },
            ) => {
                *integer += i;
                *decimal += d;
                *other += o;
            }
            _ => {}
        }
    }

    fn of_value(value: &str) -> Learned {
        let v = value.trim();
        let int = !v.is_empty()
            && v.strip_prefix('-')
                .unwrap_or(v)
                .bytes()
                .all(|b| b.is_ascii_digit());
        let dec = !int && v.parse::<f64>().is_ok_and(f64::is_finite);
        Learned::DataType {
            integer: u64::from(int),
            decimal: u64::from(dec),
            other: u64::from(!int && !dec),
        }
    }

    /// Writes what was learned into `changes`.
    pub fn apply(&self, changes: &mut Map<String, Value>) {
        match self {
            Learned::Longest { field, value } => {
                let (parent, leaf) = match field.split_once('.') {
                    Some((p, l)) => (Some(p), l),
                    None => (None, field.as_str()),
                };
                let target = match parent {
                    Some(p) => {
                        let o = changes.entry(p).or_insert_with(|| json!({}));
                        match o.as_object_mut() {
                            Some(o) => o,
                            None => return,
                        }
                    }
                    None => changes,
                };
                target.insert(leaf.to_string(), json!(value));
            }
            Learned::DataType {
                integer,
                decimal,
                other,
            } => {
                let t = if *other > 0 {
                    "alpha-numeric"
                } else if *decimal > 0 {
                    "decimal"
                } else if *integer > 0 {
                    "integer"
                } else {
                    "alpha-numeric"
                };
                changes.insert("dataType".into(), json!(t));
            }
        }
    }
}

/// One change that stops one violation (or one signature of it).
#[derive(Clone, Debug, PartialEq)]
pub struct Fix {
    pub kind: Kind,
    /// Identity: fixes with the same key are the same suggestion.
    pub key: String,
    /// The `modifications[]` entry, without what is learned.
    pub entity_type: &'static str,
    pub entity: Map<String, Value>,
    pub changes: Map<String, Value>,
    pub learned: Option<Learned>,
    pub description: String,
    /// Relaxes the check for the whole policy rather than one entity.
    pub broad: bool,
    /// The signature a `DisableSignature` fix turns off.
    pub signature: Option<u32>,
}

impl Fix {
    /// The `modifications[]` entry.
    pub fn modification(&self) -> Value {
        let mut changes = self.changes.clone();
        if let Some(l) = &self.learned {
            l.apply(&mut changes);
        }
        json!({"entityType": self.entity_type, "entity": self.entity, "entityChanges": changes,
               "action": "add-or-update"})
    }
}

/// What the fixes of one request need to know about its policy.
pub struct Scope<'a> {
    pub policy: &'a CompiledPolicy,
    /// The merged policy body (template, document, modifications), to copy wildcard entities.
    pub merged: &'a Map<String, Value>,
    pub owners: &'a Owners,
    pub request: &'a Request,
}

pub(super) fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

fn key_of(kind: Kind, entity_type: &str, entity: &Map<String, Value>, what: &str) -> String {
    let mut id: Vec<String> = [
        "name",
        "level",
        "method",
        "protocol",
        "characterSetType",
        "description",
        "signatureId",
    ]
    .iter()
    .filter_map(|k| entity.get(*k).map(|v| format!("{k}={v}")))
    .collect();
    if let Some(u) = entity.get("url") {
        id.push(format!("url={u}"));
    }
    format!("{kind:?}|{entity_type}|{}|{what}", id.join(","))
}

pub(super) fn fix(
    kind: Kind,
    entity_type: &'static str,
    entity: Map<String, Value>,
    changes: Value,
    what: &str,
    description: String,
) -> Fix {
    Fix {
        kind,
        key: key_of(kind, entity_type, &entity, what),
        entity_type,
        entity,
        changes: obj(changes),
        learned: None,
        description,
        broad: false,
        signature: None,
    }
}

pub(super) fn broad(mut f: Fix) -> Fix {
    f.broad = true;
    f
}

pub(super) fn learned(mut f: Fix, l: Learned) -> Fix {
    f.learned = Some(l);
    f
}

/// Turning a violation off entirely: the fallback when no entity can be relaxed.
pub(super) fn relax_violation(v: &Violation) -> Fix {
    let name = v.kind.name();
    broad(fix(
        Kind::RelaxViolation,
        "violation",
        obj(json!({"name": name})),
        json!({"alarm": true, "block": false}),
        "",
        format!("Stop blocking {name} (it stays alarmed) in the whole policy"),
    ))
}

/// The fixes that together stop violation `v` of the request (several for a violation with
/// several signatures; empty for a rating violation, which goes when its causes go).
pub fn fixes(cx: &Scope<'_>, v: &Violation) -> Vec<Fix> {
    let r = cx.request;
    let name = v.name.clone().unwrap_or_default();
    let path = String::from_utf8_lossy(&cx.owners.path).into_owned();
    match v.kind {
        K::RatingThreat | K::RatingNeedExamination => Vec::new(),
        K::AttackSignature => v
            .signature_ids
            .iter()
            .map(|&id| signature_fix(cx, v, id))
            .collect(),
        K::ParameterValueMetachar | K::UrlMetachar | K::HeaderMetachar => {
            let Some(c) = metachar_of(v) else {
                return vec![relax_violation(v)];
            };
            vec![metachar_fix(cx, v, &c)]
        }
        K::Parameter | K::ParameterNameMetachar if !name.is_empty() && !spec_detail(v) => {
            let location = if v.context == Context::Query {
                "query"
            } else {
                "any"
            };
            let e = obj(json!({"name": name, "type": "explicit", "level": "global"}));
            vec![learned(
                fix(
                    Kind::AddParameter,
                    "parameter",
                    e,
                    json!({"parameterLocation": location, "valueType": "user-input"}),
                    "",
                    format!("Add parameter {name} ({location})"),
                ),
                Learned::of_value(&v.snippet),
            )]
        }
        K::ParameterDataType
        | K::ParameterEmptyValue
        | K::ParameterRepeated
        | K::ParameterLocation
        | K::ParameterValueLength
            if !name.is_empty() =>
        {
            match cx.policy.parameter_owner(&cx.owners.path, &name) {
                Some(o) if !o.wildcard && !spec_detail(v) => vec![parameter_change(cx, v, &o)],
                _ => vec![relax_violation(v)],
            }
        }
        K::Url if v.detail == "disallowed URL" => match url_entity(cx) {
            Some((e, label)) => vec![fix(
                Kind::AllowUrl,
                "url",
                e,
                json!({"isAllowed": true}),
                "",
                format!("Allow {label}"),
            )],
            None => vec![relax_violation(v)],
        },
        K::Url => vec![add_url(cx, &path, &r.method)],
        K::Method if v.detail.contains("OpenAPI") => vec![add_url(cx, &path, &r.method)],
        K::Method => {
            let m = if v.snippet.is_empty() {
                r.method.clone()
            } else {
                v.snippet.clone()
            };
            vec![fix(
                Kind::AddMethod,
                "method",
                obj(json!({"name": m})),
                json!({}),
                "",
                format!("Allow method {m}"),
            )]
        }
        K::Filetype => {
            let ext = if v.snippet.is_empty() {
                "no_ext".to_string()
            } else {
                v.snippet.clone()
            };
            vec![fix(
                Kind::AddFiletype,
                "filetype",
                obj(json!({"name": ext, "type": "explicit"})),
                json!({"allowed": true}),
                "",
                format!("Allow file type {ext}"),
            )]
        }
        K::UrlLength | K::QueryStringLength | K::RequestLength | K::PostDataLength => {
            let (field, check, label) = match v.kind {
                K::UrlLength => ("urlLength", "checkUrlLength", "URL length"),
                K::QueryStringLength => (
                    "queryStringLength",
                    "checkQueryStringLength",
                    "query string length",
                ),
                K::RequestLength => ("requestLength", "checkRequestLength", "request length"),
                _ => ("postDataLength", "checkPostDataLength", "POST data length"),
            };
            match (&cx.owners.filetype, number_in(&v.detail)) {
                (Some(ft), Some(n)) => vec![learned(
                    fix(
                        Kind::RelaxLength,
                        "filetype",
                        obj(json!({"name": ft})),
                        json!({check: true}),
                        field,
                        format!("Raise the {label} of file type {ft}"),
                    ),
                    Learned::Longest {
                        field: field.into(),
                        value: n,
                    },
                )],
                _ => vec![relax_violation(v)],
            }
        }
        K::HeaderLength | K::CookieLength => {
            let (section, field, label) = if v.kind == K::HeaderLength {
                (
                    "header-settings",
                    "maximumHttpHeaderLength",
                    "header length",
                )
            } else {
                (
                    "cookie-settings",
                    "maximumCookieHeaderLength",
                    "cookie header length",
                )
            };
            match number_in(&v.detail) {
                Some(n) => vec![broad(learned(
                    fix(
                        Kind::RelaxLength,
                        "policy",
                        Map::new(),
                        json!({}),
                        section,
                        format!("Raise the maximum {label} of the policy"),
                    ),
                    Learned::Longest {
                        field: format!("{section}.{field}"),
                        value: n,
                    },
                ))],
                None => vec![relax_violation(v)],
            }
        }
        K::JsonFormat => json_limits(cx, v).unwrap_or_else(|| vec![relax_violation(v)]),
        K::Evasion | K::HttpProtocol if !v.detail.is_empty() => {
            let (ty, label) = if v.kind == K::Evasion {
                ("evasion", "evasion technique")
            } else {
                ("http-protocol", "HTTP protocol check")
            };
            vec![broad(fix(
                Kind::DisableSubCheck,
                ty,
                obj(json!({"description": v.detail})),
                json!({"enabled": false}),
                "",
                format!("Disable the {label} \"{}\"", v.detail),
            ))]
        }
        _ => vec![relax_violation(v)],
    }
}
