//! The typed AS3 request and declaration: the `AS3` wrapper (or a bare `ADC`), tenants,
//! applications and their items, parsed and validated in one pass that collects every error
//! (see `classes.rs` for the item classes). `use` pointers are resolved here, so the plan only
//! sees full paths. Pure: no IO, no store (the fuzz target calls [`parse`]).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::classes::{self, Item};
use super::props::{Errors, Props, valid_name};

/// The schema versions we accept (external WAF policies need 3.18 or later).
pub const SCHEMA_MINIMUM: &str = "3.0.0";
pub const SCHEMA_CURRENT: &str = "3.50.0";

/// What the request asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Deploy,
    DryRun,
    Retrieve,
    Remove,
}

/// The whole request (`{"class": "AS3", ...}` or a bare ADC declaration).
#[derive(Debug)]
pub struct Request {
    pub action: Action,
    /// Keep the result across restarts (default true).
    pub persist: bool,
    pub adc: Adc,
}

/// The ADC declaration.
#[derive(Debug)]
pub struct Adc {
    /// The declaration as sent (returned by GET and in the answer).
    pub raw: Map<String, Value>,
    /// `complete` removes tenants the declaration does not name.
    pub complete: bool,
    pub tenants: Vec<Tenant>,
}

/// One tenant (a partition).
#[derive(Debug)]
pub struct Tenant {
    pub name: String,
    /// The tenant's JSON as declared (what "no change" compares).
    pub raw: Value,
    /// Added to addresses that name no route domain (`%N`).
    pub route_domain: u16,
    /// `enable: false` disables every virtual of the tenant.
    pub enabled: bool,
    pub apps: Vec<App>,
}

/// One application (a folder `/Tenant/App/` of the partition).
#[derive(Debug)]
pub struct App {
    pub name: String,
    /// `enable: false` disables every virtual of the application.
    pub enabled: bool,
    pub items: Vec<Named>,
}

/// An item of an application with its full path `/Tenant/App/name`.
#[derive(Debug)]
pub struct Named {
    pub name: String,
    pub full_path: String,
    pub item: Item,
}

const ADC_KEYS: &[&str] = &[
    "class",
    "schemaVersion",
    "id",
    "label",
    "remark",
    "updateMode",
    "controls",
];

/// Parses and validates a request body. The error list is AS3's `errors` array.
pub fn parse(body: &[u8]) -> Result<Request, Vec<String>> {
    let v: Value = serde_json::from_slice(body).map_err(|e| vec![format!("invalid JSON: {e}")])?;
    parse_value(&v)
}

/// Like [`parse`], from an already parsed JSON value.
pub fn parse_value(v: &Value) -> Result<Request, Vec<String>> {
    let mut errs = Errors::default();
    let Value::Object(root) = v else {
        return Err(vec!["/: should be object".into()]);
    };
    let (action, persist, decl) = match root.get("class").and_then(Value::as_str) {
        Some("AS3") => {
            let p = Props::new("", root);
            p.only(
                &[
                    "action",
                    "persist",
                    "declaration",
                    "logLevel",
                    "trace",
                    "historyLimit",
                ],
                &mut errs,
            );
            let action = match p.choice(
                "action",
                "deploy",
                &["deploy", "dry-run", "retrieve", "remove"],
                &mut errs,
            ) {
                "dry-run" => Action::DryRun,
                "retrieve" => Action::Retrieve,
                "remove" => Action::Remove,
                _ => Action::Deploy,
            };
            let persist = p.bool("persist", true, &mut errs);
            let decl = match root.get("declaration") {
                Some(Value::Object(d)) => Some(d),
                None if matches!(action, Action::Retrieve | Action::Remove) => None,
                _ => {
                    errs.push("/declaration", "should be object");
                    None
                }
            };
            (action, persist, decl)
        }
        Some("ADC") => (Action::Deploy, true, Some(root)),
        _ => {
            errs.push(
                "/class",
                "should be equal to one of the allowed values [\"AS3\", \"ADC\"]",
            );
            (Action::Deploy, true, None)
        }
    };
    let adc = match decl {
        Some(d) => parse_adc(d, &mut errs),
        None => Adc {
            raw: Map::new(),
            complete: false,
            tenants: Vec::new(),
        },
    };
    if errs.is_empty() {
        Ok(Request {
            action,
            persist,
            adc,
        })
    } else {
        Err(errs.0)
    }
}

/// `3.x.y` as a comparable triple.
fn version(s: &str) -> Option<(u32, u32, u32)> {
    let mut it = s.split('.').map(|p| p.parse::<u32>().ok());
    let v = (it.next()??, it.next()??, it.next().unwrap_or(Some(0))?);
    it.next().is_none().then_some(v)
}

fn parse_adc(d: &Map<String, Value>, errs: &mut Errors) -> Adc {
    if d.get("class").and_then(Value::as_str) != Some("ADC") {
        errs.push("/declaration/class", "should be equal to \"ADC\"");
    }
    let p = Props::new("", d);
    match p.str("schemaVersion", errs).map(|s| (s, version(s))) {
        None => errs.push(
            "/schemaVersion",
            "should have required property 'schemaVersion'",
        ),
        Some((s, v)) => {
            let (min, cur) = (version(SCHEMA_MINIMUM), version(SCHEMA_CURRENT));
            if v.is_none() || v < min || v > cur {
                errs.push(
                    "/schemaVersion",
                    format!(
                        "schemaVersion {s} is not supported (from {SCHEMA_MINIMUM} to {SCHEMA_CURRENT})"
                    ),
                );
            }
        }
    }
    p.str("id", errs);
    let complete =
        p.choice("updateMode", "selective", &["selective", "complete"], errs) == "complete";
    if let Some(c) = d.get("controls")
        && !c.is_object()
    {
        errs.push("/controls", "should be object");
    }
    let mut tenants = Vec::new();
    for (k, v) in d {
        if ADC_KEYS.contains(&k.as_str()) {
            continue;
        }
        let path = format!("/{k}");
        match v.get("class").and_then(Value::as_str) {
            Some("Tenant") => {}
            Some(other) => {
                errs.push(
                    &path,
                    format!("a declaration holds tenants, not class {other}"),
                );
                continue;
            }
            None => {
                errs.push(
                    &path,
                    "property is not supported (a tenant needs \"class\": \"Tenant\")",
                );
                continue;
            }
        }
        if !valid_name(k) {
            errs.push(&path, "tenant name should match ^[A-Za-z][0-9A-Za-z_.-]*$");
            continue;
        }
        if let Some(t) = parse_tenant(k, v, errs) {
            tenants.push(t);
        }
    }
    resolve_all(&mut tenants, errs);
    Adc {
        raw: d.clone(),
        complete,
        tenants,
    }
}

fn parse_tenant(name: &str, v: &Value, errs: &mut Errors) -> Option<Tenant> {
    let m = v.as_object()?;
    let p = Props::new(format!("/{name}"), m);
    let route_domain = p.int("defaultRouteDomain", 0, 0, 65534, errs) as u16;
    let enabled = p.bool("enable", true, errs);
    p.str("optimisticLockKey", errs);
    let mut apps = Vec::new();
    for (k, av) in m {
        if matches!(
            k.as_str(),
            "class" | "label" | "remark" | "defaultRouteDomain" | "enable" | "optimisticLockKey"
        ) {
            continue;
        }
        let path = format!("/{name}/{k}");
        if av.get("class").and_then(Value::as_str) != Some("Application") {
            errs.push(
                &path,
                "property is not supported (an application needs \"class\": \"Application\")",
            );
            continue;
        }
        if !valid_name(k) {
            errs.push(
                &path,
                "application name should match ^[A-Za-z][0-9A-Za-z_.-]*$",
            );
            continue;
        }
        if name == "Common" && k != "Shared" {
            errs.push(&path, "the Common tenant holds only the application Shared");
            continue;
        }
        if let Some(Value::Object(am)) = Some(av) {
            apps.push(parse_app(name, k, am, errs));
        }
    }
    Some(Tenant {
        name: name.to_string(),
        raw: v.clone(),
        route_domain,
        enabled,
        apps,
    })
}

fn parse_app(tenant: &str, name: &str, m: &Map<String, Value>, errs: &mut Errors) -> App {
    let path = format!("/{tenant}/{name}");
    let p = Props::new(path.clone(), m);
    let template = p.choice(
        "template",
        "generic",
        &["generic", "http", "https", "shared"],
        errs,
    );
    let enabled = p.bool("enable", true, errs);
    let mut items = Vec::new();
    for (k, iv) in m {
        if matches!(
            k.as_str(),
            "class" | "label" | "remark" | "template" | "enable"
        ) {
            continue;
        }
        let ipath = format!("{path}/{k}");
        if !valid_name(k) {
            errs.push(&ipath, "item name should match ^[A-Za-z][0-9A-Za-z_.-]*$");
            continue;
        }
        let Value::Object(im) = iv else {
            errs.push(&ipath, "should be object");
            continue;
        };
        if let Some(item) = classes::parse_item(&ipath, im, errs) {
            items.push(Named {
                name: k.clone(),
                full_path: ipath,
                item,
            });
        }
    }
    let want = match template {
        "http" => Some("Service_HTTP"),
        "https" => Some("Service_HTTPS"),
        _ => None,
    };
    if let Some(class) = want {
        let main = items.iter().find(|i| i.name == "serviceMain");
        if main.is_none_or(|i| i.item.class() != class) {
            errs.push(
                &path,
                format!("template {template} requires an item serviceMain of class {class}"),
            );
        }
    }
    App {
        name: name.to_string(),
        enabled,
        items,
    }
}

/// Resolves every `use` pointer of every item to the full path of a declared item of the right
/// class (relative names are looked up in the same application).
fn resolve_all(tenants: &mut [Tenant], errs: &mut Errors) {
    let index: BTreeMap<String, &'static str> = tenants
        .iter()
        .flat_map(|t| t.apps.iter())
        .flat_map(|a| a.items.iter())
        .map(|i| (i.full_path.clone(), i.item.class()))
        .collect();
    for t in tenants.iter_mut() {
        for a in t.apps.iter_mut() {
            let base = format!("/{}/{}", t.name, a.name);
            for i in a.items.iter_mut() {
                let path = i.full_path.clone();
                i.item.resolve(&mut |r| {
                    let raw = r.path();
                    let target = if raw.starts_with('/') {
                        raw.to_string()
                    } else {
                        format!("{base}/{raw}")
                    };
                    match index.get(&target) {
                        Some(c) if r.classes.contains(c) => Some(target),
                        Some(c) => {
                            errs.push(
                                &format!("{path}/{}", r.prop),
                                format!("{target} is a {c}, expected {}", r.classes.join(" or ")),
                            );
                            None
                        }
                        // Security log profiles are objects of their own module: an absolute
                        // `use` names one that exists outside the declaration.
                        None if r.classes == ["Security_Log_Profile"] && r.path().starts_with('/') => {
                            Some(target)
                        }
                        None => {
                            errs.push(
                                &format!("{path}/{}", r.prop),
                                format!("{target} is not declared (use points to an item of this declaration)"),
                            );
                            None
                        }
                    }
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare() {
        assert!(version("3.18.0") > version("3.9.1"));
        assert_eq!(version("3.18"), Some((3, 18, 0)));
        assert_eq!(version("x"), None);
        assert_eq!(version("3.1.2.3"), None);
    }
}
