//! Loading a spec: bytes (JSON or YAML) → `serde_json::Value` documents, the version detected, and
//! every external `$ref` fetched through the [`Resolver`] (relative to the document holding it).
//! Also resolves `$ref`s (`file#/json/pointer`) for the compiler.

use super::{OpenApiError, OpenApiLimits};
use crate::Resolver;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

/// The dialect of a loaded spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpecVersion {
    /// Swagger / OpenAPI 2.0.
    Swagger2,
    /// OpenAPI 3.0.x.
    OpenApi30,
    /// OpenAPI 3.1.x.
    OpenApi31,
}

/// One parsed document: its link (as resolved relative to its parent) and its content.
#[derive(Debug, Clone)]
pub(crate) struct Document {
    pub link: String,
    pub value: Value,
}

/// A loaded spec: the root document and every document its `$ref`s reach.
#[derive(Debug, Clone)]
pub struct ApiSpec {
    pub version: SpecVersion,
    pub(crate) docs: Vec<Document>,
    index: HashMap<String, usize>,
}

/// Loads a spec from `bytes`; `link` names it (errors and relative `$ref`s use it). External
/// `$ref`s are fetched with `resolver.fetch(containing_document_link, written_link)`.
pub fn load(bytes: &[u8], link: &str, resolver: &dyn Resolver) -> Result<ApiSpec, OpenApiError> {
    load_with(bytes, link, resolver, &OpenApiLimits::default())
}

/// [`load`] with explicit [`OpenApiLimits`].
pub fn load_with(
    bytes: &[u8],
    link: &str,
    resolver: &dyn Resolver,
    limits: &OpenApiLimits,
) -> Result<ApiSpec, OpenApiError> {
    let root = parse_document(bytes, link, limits)?;
    let version = detect_version(&root, link)?;
    let paths = match version {
        SpecVersion::OpenApi31 => root.get("paths").unwrap_or(&Value::Null),
        _ => root
            .get("paths")
            .ok_or_else(|| OpenApiError::new(link, "", "missing required field \"paths\""))?,
    };
    if !paths.is_object() && !paths.is_null() {
        return Err(OpenApiError::new(link, "/paths", "must be an object"));
    }
    let mut spec = ApiSpec {
        version,
        docs: vec![Document {
            link: link.to_string(),
            value: root,
        }],
        index: HashMap::from([(link.to_string(), 0)]),
    };
    let mut next = 0;
    while next < spec.docs.len() {
        let mut external = Vec::new();
        let mut seen = HashSet::new();
        let value = &spec.docs[next].value;
        collect_external_refs(value, &mut String::new(), &mut seen, &mut external);
        let base = spec.docs[next].link.clone();
        for (pointer, target) in external {
            let joined = join_link(&base, &target);
            if spec.index.contains_key(&joined) {
                continue;
            }
            if spec.docs.len() >= limits.max_documents {
                return Err(OpenApiError::new(
                    &base,
                    &pointer,
                    "too many referenced documents",
                ));
            }
            let bytes = resolver.fetch(&base, &target).map_err(|e| {
                OpenApiError::new(
                    &base,
                    &pointer,
                    format!("cannot fetch {target}: {}", e.reason),
                )
            })?;
            let value = parse_document(&bytes, &joined, limits)?;
            spec.index.insert(joined.clone(), spec.docs.len());
            spec.docs.push(Document {
                link: joined,
                value,
            });
        }
        next += 1;
    }
    Ok(spec)
}

impl ApiSpec {
    /// The root document.
    pub fn root(&self) -> &Value {
        &self.docs[0].value
    }

    /// The link the spec was loaded from.
    pub fn link(&self) -> &str {
        &self.docs[0].link
    }

    /// Resolves `reference` written in document `doc` → (document index, pointer, target).
    pub(crate) fn resolve<'s>(
        &'s self,
        doc: usize,
        at: &str,
        reference: &str,
    ) -> Result<(usize, String, &'s Value), OpenApiError> {
        let here = &self.docs[doc].link;
        let (file, fragment) = reference.split_once('#').unwrap_or((reference, ""));
        let target_doc = if file.is_empty() {
            doc
        } else {
            let joined = join_link(here, file);
            *self.index.get(&joined).ok_or_else(|| {
                OpenApiError::new(here, at, format!("$ref {reference}: document not loaded"))
            })?
        };
        let pointer = percent_encoding::percent_decode_str(fragment)
            .decode_utf8_lossy()
            .into_owned();
        if !pointer.is_empty() && !pointer.starts_with('/') {
            return Err(OpenApiError::new(
                here,
                at,
                format!("$ref {reference}: not a JSON pointer"),
            ));
        }
        let value = self.docs[target_doc]
            .value
            .pointer(&pointer)
            .ok_or_else(|| {
                OpenApiError::new(here, at, format!("$ref {reference}: target not found"))
            })?;
        Ok((target_doc, pointer, value))
    }

    /// Follows `$ref` chains from `value` (at `doc`/`at`) until a non-reference object.
    pub(crate) fn deref<'s>(
        &'s self,
        mut doc: usize,
        at: &str,
        mut value: &'s Value,
    ) -> Result<(usize, String, &'s Value), OpenApiError> {
        let mut pointer = at.to_string();
        for _ in 0..32 {
            match value.get("$ref").and_then(Value::as_str) {
                Some(r) => {
                    let (d, p, v) = self.resolve(doc, &pointer, r)?;
                    (doc, pointer, value) = (d, p, v);
                }
                None => return Ok((doc, pointer, value)),
            }
        }
        Err(OpenApiError::new(
            &self.docs[doc].link,
            &pointer,
            "$ref chain too long or circular",
        ))
    }

    pub(crate) fn doc_link(&self, doc: usize) -> &str {
        &self.docs[doc].link
    }
}

fn parse_document(bytes: &[u8], link: &str, limits: &OpenApiLimits) -> Result<Value, OpenApiError> {
    if bytes.len() > limits.max_spec_bytes {
        let reason = format!("document larger than {} bytes", limits.max_spec_bytes);
        return Err(OpenApiError::new(link, "", reason));
    }
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    let value = if first == Some(&b'{') {
        serde_json::from_slice(bytes).map_err(|e| {
            let at = format!("line {} column {}", e.line(), e.column());
            OpenApiError::new(link, "", format!("invalid JSON at {at}: {e}"))
        })?
    } else {
        let yaml: serde_yaml_ng::Value = serde_yaml_ng::from_slice(bytes)
            .map_err(|e| OpenApiError::new(link, "", format!("invalid YAML: {e}")))?;
        yaml_to_json(yaml).map_err(|r| OpenApiError::new(link, "", r))?
    };
    if !value.is_object() {
        return Err(OpenApiError::new(link, "", "document is not an object"));
    }
    Ok(value)
}

/// YAML → JSON value; map keys become strings (`200:` → `"200"`), tags are dropped.
fn yaml_to_json(y: serde_yaml_ng::Value) -> Result<Value, String> {
    use serde_yaml_ng::Value as Y;
    Ok(match y {
        Y::Null => Value::Null,
        Y::Bool(b) => Value::Bool(b),
        Y::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::from(i)
            } else if let Some(u) = n.as_u64() {
                Value::from(u)
            } else {
                let f = n.as_f64().unwrap_or(f64::NAN);
                serde_json::Number::from_f64(f)
                    .map(Value::Number)
                    .ok_or_else(|| format!("number {f} cannot be represented in JSON"))?
            }
        }
        Y::String(s) => Value::String(s),
        Y::Sequence(items) => Value::Array(
            items
                .into_iter()
                .map(yaml_to_json)
                .collect::<Result<_, _>>()?,
        ),
        Y::Mapping(map) => {
            let mut out = serde_json::Map::with_capacity(map.len());
            for (k, v) in map {
                let key = match k {
                    Y::String(s) => s,
                    Y::Number(n) => n.to_string(),
                    Y::Bool(b) => b.to_string(),
                    Y::Null => "null".to_string(),
                    _ => return Err("mapping key is not a scalar".into()),
                };
                out.insert(key, yaml_to_json(v)?);
            }
            Value::Object(out)
        }
        Y::Tagged(t) => yaml_to_json(t.value)?,
    })
}

fn detect_version(root: &Value, link: &str) -> Result<SpecVersion, OpenApiError> {
    if let Some(v) = root.get("swagger") {
        return match v.as_str() {
            Some("2.0") => Ok(SpecVersion::Swagger2),
            _ => Err(OpenApiError::new(
                link,
                "/swagger",
                format!("unsupported version {v}"),
            )),
        };
    }
    let Some(v) = root.get("openapi") else {
        return Err(OpenApiError::new(
            link,
            "",
            "neither \"openapi\" nor \"swagger\" version field",
        ));
    };
    match v.as_str() {
        Some(s) if s.starts_with("3.0") => Ok(SpecVersion::OpenApi30),
        Some(s) if s.starts_with("3.1") => Ok(SpecVersion::OpenApi31),
        _ => Err(OpenApiError::new(
            link,
            "/openapi",
            format!("unsupported version {v}"),
        )),
    }
}

/// Every `$ref` whose target is another document: (pointer of the `$ref`, link as written).
fn collect_external_refs<'v>(
    v: &'v Value,
    at: &mut String,
    seen: &mut HashSet<&'v str>,
    out: &mut Vec<(String, String)>,
) {
    match v {
        Value::Object(map) => {
            if let Some(Value::String(r)) = map.get("$ref") {
                let file = r.split('#').next().unwrap_or("");
                if !file.is_empty() && seen.insert(file) {
                    out.push((at.clone(), file.to_string()));
                }
            }
            for (k, child) in map {
                let len = at.len();
                at.push('/');
                push_escaped(at, k);
                collect_external_refs(child, at, seen, out);
                at.truncate(len);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                let len = at.len();
                let _ = write!(at, "/{i}");
                collect_external_refs(child, at, seen, out);
                at.truncate(len);
            }
        }
        _ => {}
    }
}

/// Resolves `link` relative to `base` (RFC 3986 style for paths; absolute links kept).
pub fn join_link(base: &str, link: &str) -> String {
    if link.contains("://") || base.is_empty() {
        return link.to_string();
    }
    let (prefix, base_path) = match base.find("://") {
        Some(i) => {
            let rest = &base[i + 3..];
            let cut = rest.find('/').map_or(base.len(), |j| i + 3 + j);
            base.split_at(cut)
        }
        None => ("", base),
    };
    let dir = if link.starts_with('/') {
        ""
    } else {
        base_path.rfind('/').map_or("", |i| &base_path[..=i])
    };
    let mut parts: Vec<&str> = Vec::new();
    let absolute = dir.starts_with('/') || link.starts_with('/');
    for seg in dir.split('/').chain(link.split('/')) {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    let lead = if absolute { "/" } else { "" };
    format!("{prefix}{lead}{}", parts.join("/"))
}

/// Appends `key` to a JSON pointer, escaped (`~` → `~0`, `/` → `~1`) without allocating.
pub(crate) fn push_escaped(pointer: &mut String, key: &str) {
    // Most keys need no escape: copied whole, not character by character.
    if !key.bytes().any(|b| b == b'~' || b == b'/') {
        pointer.push_str(key);
        return;
    }
    for c in key.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}
