//! Reference resolution on the raw document: `xxxReference: {"link": ...}` sections, `{"$ref": ...}`
//! objects, `modificationsReference`, and the `link`s of validation and OpenAPI files, all read through
//! the injected [`Resolver`] (the engine does no IO).

use serde_json::{Map, Value};

use crate::PolicyError;
use crate::Resolver;

/// Sections whose `$ref`/links point at non-JSON files (protobuf IDL): checked for presence only,
/// the gRPC support reads them itself.
const RAW_SECTIONS: &[&str] = &["grpc-profiles", "idl-files"];

/// Most references one document may make (a bound against reference loops and fan-out).
const MAX_REFS: usize = 64;

pub struct RefCtx<'a> {
    pub base: &'a str,
    pub resolver: &'a dyn Resolver,
    pub fetched: usize,
    pub warnings: Vec<String>,
}

impl RefCtx<'_> {
    pub fn fetch(&mut self, path: &str, link: &str) -> Result<Vec<u8>, PolicyError> {
        self.fetched += 1;
        if self.fetched > MAX_REFS {
            return Err(PolicyError::invalid(
                path,
                format!("too many references (more than {MAX_REFS})"),
            ));
        }
        self.resolver
            .fetch(self.base, link)
            .map_err(|source| PolicyError::Link {
                path: path.to_string(),
                source,
            })
    }

    /// Fetches a link and parses it as JSON or YAML.
    pub fn fetch_doc(&mut self, path: &str, link: &str) -> Result<Value, PolicyError> {
        let bytes = self.fetch(path, link)?;
        crate::parse_document(&bytes, link)
            .map_err(|e| PolicyError::invalid(path, format!("{link}: {e}")))
    }
}

/// `filetypeReference` → `filetypes`, `responsePageReference` → `response-pages`,
/// `generalReference` → `general`, …: camelCase singular to the kebab-case section name.
pub fn section_for_reference(key: &str) -> Option<&'static str> {
    let stem = key.strip_suffix("Reference")?;
    let mut kebab = String::new();
    for c in stem.chars() {
        if c.is_ascii_uppercase() {
            kebab.push('-');
            kebab.push(c.to_ascii_lowercase());
        } else {
            kebab.push(c);
        }
    }
    let plural_y = kebab
        .strip_suffix('y')
        .map(|s| format!("{s}ies"))
        .unwrap_or_default();
    let candidates = [format!("{kebab}s"), plural_y, kebab];
    candidates
        .iter()
        .find_map(|c| crate::sections::all().find(|s| *s == c.as_str()))
}

/// Resolves every reference inside the `policy` object in place.
pub fn resolve_policy(policy: &mut Map<String, Value>, cx: &mut RefCtx) -> Result<(), PolicyError> {
    let keys: Vec<String> = policy.keys().cloned().collect();
    for key in keys {
        let path = format!("policy.{key}");
        if key.ends_with("Reference") && key != "templateReference" {
            let Some(section) = section_for_reference(&key) else {
                continue; // reported as an unknown field by the declaration pass
            };
            let link = policy
                .get(&key)
                .and_then(|r| r.get("link"))
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    PolicyError::invalid(format!("{path}.link"), "missing or not a string")
                })?
                .to_string();
            let content = cx.fetch_doc(&format!("{path}.link"), &link)?;
            policy.remove(&key);
            policy.insert(section.to_string(), content);
            continue;
        }
        if key == "open-api-files" {
            continue; // read and compiled by `checks::api::load_api`
        }
        if let Some(v) = policy.get_mut(&key) {
            let raw = RAW_SECTIONS.contains(&key.as_str());
            resolve_value(v, &path, raw, cx)?;
        }
    }
    Ok(())
}

fn resolve_value(v: &mut Value, path: &str, raw: bool, cx: &mut RefCtx) -> Result<(), PolicyError> {
    match v {
        Value::Object(map) => {
            if let Some(link) = map.get("$ref").and_then(Value::as_str).map(str::to_string) {
                let p = format!("{path}.$ref");
                if raw {
                    cx.fetch(&p, &link)?;
                    return Ok(());
                }
                let fetched = cx.fetch_doc(&p, &link)?;
                map.remove("$ref");
                match fetched {
                    Value::Object(obj) => {
                        for (k, val) in obj {
                            map.entry(k).or_insert(val);
                        }
                    }
                    other if map.is_empty() => *v = other,
                    _ => {
                        return Err(PolicyError::invalid(
                            p,
                            format!("{link} must contain a JSON object here"),
                        ));
                    }
                }
                return Ok(());
            }
            if let Some(link) = map.get("link").and_then(Value::as_str).map(str::to_string)
                && path.contains("json-validation-files")
            {
                let bytes = cx.fetch(&format!("{path}.link"), &link)?;
                if path.contains("json-validation-files") && !map.contains_key("contents") {
                    map.insert(
                        "contents".into(),
                        Value::String(String::from_utf8_lossy(&bytes).into_owned()),
                    );
                }
            }
            for (k, child) in map.iter_mut() {
                resolve_value(child, &format!("{path}.{k}"), raw, cx)?;
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter_mut().enumerate() {
                resolve_value(child, &format!("{path}[{i}]"), raw, cx)?;
            }
        }
        _ => {}
    }
    Ok(())
}
