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
//! Imports: `waf::{policy, signatures, violation}`, `super::request`.

use serde_json::{Map, Value, json};

use super::request::Request;
use crate::waf::policy::CompiledPolicy;
use crate::waf::policy::explain::{BodyOwner, Named, Owners, UrlOwner};
use crate::waf::signatures::SignatureDb;
use crate::waf::{Context, Violation, ViolationKind as K};

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

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// `metacharacter 0x27` → `0x27`.
fn metachar_of(v: &Violation) -> Option<String> {
    let hex = v.detail.strip_prefix("metacharacter ")?;
    (hex.len() == 4 && hex.starts_with("0x")).then(|| hex.to_ascii_lowercase())
}

/// The first number in a detail (`2100 bytes`, `length 300`).
fn number_in(s: &str) -> Option<u64> {
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

/// The entity of `section` in the merged policy whose fields all equal `want`'s.
fn find<'m>(
    merged: &'m Map<String, Value>,
    section: &str,
    want: &[(&str, &str)],
) -> Option<&'m Map<String, Value>> {
    merged
        .get(section)?
        .as_array()?
        .iter()
        .filter_map(Value::as_object)
        .find(|e| {
            want.iter().all(|(k, v)| {
                let got = e.get(*k).and_then(Value::as_str).unwrap_or(match *k {
                    "method" => "*",
                    "protocol" => "http",
                    "level" => "global",
                    _ => "",
                });
                got.eq_ignore_ascii_case(v)
            })
        })
}

/// A new explicit entity named `name`, with the settings of the wildcard entity `wild` (what the
/// engine applied so far), so that only the change that follows differs.
fn explicit_from(wild: Option<&Map<String, Value>>, name: &str) -> Map<String, Value> {
    let mut m = wild.cloned().unwrap_or_default();
    for k in ["wildcardOrder", "$action", "description"] {
        m.remove(k);
    }
    m.insert("name".into(), json!(name));
    m.insert("type".into(), json!("explicit"));
    m
}

/// The entity (type, identity) a change of a named parameter / header / cookie goes to, and its
/// label. `None`: no entity of its own.
fn named_entity(
    cx: &Scope<'_>,
    ctx: Context,
    name: &str,
) -> Option<(&'static str, Map<String, Value>, String)> {
    match ctx {
        Context::Parameter | Context::Query => {
            let owner = cx.policy.parameter_owner(&cx.owners.path, name);
            Some((
                "parameter",
                param_entity(cx, owner.as_ref(), name),
                format!("parameter {name}"),
            ))
        }
        Context::Header => {
            let n = name.to_ascii_lowercase();
            let e = match cx.policy.header_owner(&n) {
                Some(o) if !o.wildcard => obj(json!({"name": o.name})),
                o => explicit_from(
                    o.and_then(|o| find(cx.merged, "headers", &[("name", &o.name)])),
                    &n,
                ),
            };
            Some(("header", e, format!("header {n}")))
        }
        Context::Cookie => {
            let e = match cx.policy.cookie_owner(name) {
                Some(o) if !o.wildcard => obj(json!({"name": o.name})),
                o => explicit_from(
                    o.and_then(|o| find(cx.merged, "cookies", &[("name", &o.name)])),
                    name,
                ),
            };
            Some(("cookie", e, format!("cookie {name}")))
        }
        _ => None,
    }
}

fn param_entity(cx: &Scope<'_>, owner: Option<&Named>, name: &str) -> Map<String, Value> {
    match owner {
        Some(o) if !o.wildcard => {
            let mut want = vec![("name", o.name.as_str())];
            if let Some(u) = &o.url {
                want.push(("level", "url"));
                if let Some(e) = cx
                    .merged
                    .get("parameters")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_object)
                    .find(|e| {
                        e.get("name").and_then(Value::as_str) == Some(o.name.as_str())
                            && e.get("url")
                                .and_then(|x| x.get("name"))
                                .and_then(Value::as_str)
                                == Some(u.as_str())
                    })
                {
                    let mut id = Map::new();
                    for k in ["name", "level", "url"] {
                        if let Some(v) = e.get(k) {
                            id.insert(k.into(), v.clone());
                        }
                    }
                    return id;
                }
            }
            obj(json!({"name": o.name}))
        }
        o => {
            let wild = o.and_then(|o| find(cx.merged, "parameters", &[("name", &o.name)]));
            let mut e = explicit_from(wild, name);
            e.insert("level".into(), json!("global"));
            e.remove("url");
            e
        }
    }
}

/// The URL entity a change of the request's URL goes to (None: an OpenAPI operation or no URL).
fn url_entity(cx: &Scope<'_>) -> Option<(Map<String, Value>, String)> {
    let UrlOwner::Entity {
        name,
        method,
        protocol,
        wildcard,
    } = &cx.owners.url
    else {
        return None;
    };
    let key = [
        ("name", name.as_str()),
        ("method", method),
        ("protocol", protocol),
    ];
    if !wildcard {
        return Some((
            obj(json!({"name": name, "method": method, "protocol": protocol})),
            format!("URL {name}"),
        ));
    }
    let path = String::from_utf8_lossy(&cx.owners.path).into_owned();
    let mut e = explicit_from(find(cx.merged, "urls", &key), &path);
    e.insert("method".into(), json!(method));
    e.insert("protocol".into(), json!(protocol));
    Some((e, format!("URL {path}")))
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

fn fix(
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

fn broad(mut f: Fix) -> Fix {
    f.broad = true;
    f
}

fn learned(mut f: Fix, l: Learned) -> Fix {
    f.learned = Some(l);
    f
}

/// Turning a violation off entirely: the fallback when no entity can be relaxed.
fn relax_violation(v: &Violation) -> Fix {
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

/// A parameter violation raised by the OpenAPI spec rather than a policy entity (its detail
/// names the location: `query parameter: expected integer, got string`).
fn spec_detail(v: &Violation) -> bool {
    v.detail
        .split(' ')
        .nth(1)
        .is_some_and(|w| w.starts_with("parameter"))
}

fn signature_fix(cx: &Scope<'_>, v: &Violation, id: u32) -> Fix {
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

fn metachar_fix(cx: &Scope<'_>, v: &Violation, c: &str) -> Fix {
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

fn charset_fix(c: &str, set: &str) -> Fix {
    broad(fix(
        Kind::AllowMetachar,
        "character-set",
        obj(json!({"characterSetType": set})),
        json!({"characterSet": [{"metachar": c, "isAllowed": true}]}),
        c,
        format!("Allow metacharacter {c} in the {set} character set of the policy"),
    ))
}

fn parameter_change(cx: &Scope<'_>, v: &Violation, o: &Named) -> Fix {
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

fn add_url(cx: &Scope<'_>, path: &str, method: &str) -> Fix {
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
fn json_limits(cx: &Scope<'_>, v: &Violation) -> Option<Vec<Fix>> {
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
