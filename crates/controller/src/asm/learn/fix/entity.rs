//! Which entity a change goes to: the parameter, header, cookie or URL entity the engine used,
//! found in the merged policy; a wildcard becomes an explicit entity carrying its settings.

use serde_json::{Map, Value, json};

use super::{Scope, obj};
use portcullis_engine::Context;
use portcullis_engine::policy::{Named, UrlOwner};

/// The entity of `section` in the merged policy whose fields all equal `want`'s.
pub(super) fn find<'m>(
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
pub(super) fn explicit_from(wild: Option<&Map<String, Value>>, name: &str) -> Map<String, Value> {
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
pub(super) fn named_entity(
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

pub(super) fn param_entity(
    cx: &Scope<'_>,
    owner: Option<&Named>,
    name: &str,
) -> Map<String, Value> {
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
pub(super) fn url_entity(cx: &Scope<'_>) -> Option<(Map<String, Value>, String)> {
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
