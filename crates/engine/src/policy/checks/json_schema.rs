//! JSON schema validation of JSON profiles (`json-profiles[].validationFiles`, VIOL_JSON_SCHEMA).
//!
//! The schemas are `json-validation-files[] {fileName, contents | link | $ref, isBase64}` (a `link`
//! is fetched into `contents` by `refs`); a profile lists the ones it uses as
//! `validationFiles[{jsonValidationFile: {fileName}, isPrimary}]`: the primary file is the schema
//! and the others are what its `$ref`s (`"address.json#/definitions/a"`) reach, by `fileName`.
//! They are compiled by `openapi::JsonSchema` (the OpenAPI layer's validator) when the policy loads;
//! a missing file, a schema that is not JSON, or a `$ref` that reaches nothing is a policy error
//! naming `policy.json-profiles[i]`. At request time a JSON body the profile parsed (not malformed,
//! not cut by the inspection limit), and a json-valued parameter, is validated: each breach is one
//! VIOL_JSON_SCHEMA named by its JSON pointer (at most 10 per request). Only profiles with a schema
//! cost anything (the body is parsed a second time, into a borrowed document).

use std::collections::HashMap;
use std::sync::Arc;

use base64::Engine as _;
use serde_json::Value;

use crate::openapi::JsonSchema;
use crate::policy::PolicyError;
use crate::policy::compile::compiled::{CompiledPolicy, Scratch};
use crate::policy::decl;
use crate::resolver::MemResolver;
use crate::violation::{Context, Violation, ViolationKind as K};

/// Most VIOL_JSON_SCHEMA violations one document raises.
pub const MAX_SCHEMA_VIOLATIONS: usize = 10;

/// The policy's validation files by `fileName`.
fn files(d: &decl::Policy) -> Result<HashMap<String, Vec<u8>>, PolicyError> {
    let mut out = HashMap::new();
    for (i, f) in d.json_validation_files.iter().flatten().enumerate() {
        let path = format!("policy.json-validation-files[{i}]");
        let Some(name) = f.get("fileName").and_then(Value::as_str) else {
            return Err(PolicyError::invalid(format!("{path}.fileName"), "missing"));
        };
        let bytes = match f.get("contents") {
            Some(Value::String(text))
                if f.get("isBase64").and_then(Value::as_bool) == Some(true) =>
            {
                base64::engine::general_purpose::STANDARD
                    .decode(text.trim())
                    .map_err(|e| {
                        PolicyError::invalid(format!("{path}.contents"), format!("not base64: {e}"))
                    })?
            }
            Some(Value::String(text)) => text.clone().into_bytes(),
            Some(other) => serde_json::to_vec(other).unwrap_or_default(),
            None => {
                // `$ref` merged the fetched schema into the entry itself.
                let mut schema = f.as_object().cloned().unwrap_or_default();
                for k in ["fileName", "isBase64", "link", "importUrl", "description"] {
                    schema.remove(k);
                }
                if schema.is_empty() {
                    return Err(PolicyError::invalid(
                        path,
                        "no contents (expected contents, link or $ref)",
                    ));
                }
                serde_json::to_vec(&Value::Object(schema)).unwrap_or_default()
            }
        };
        out.insert(name.to_string(), bytes);
    }
    Ok(out)
}

/// Compiles the schema of every JSON profile that lists validation files, in profile order
/// (`None` for a profile without).
pub fn compile(d: &decl::Policy) -> Result<Vec<Option<Arc<JsonSchema>>>, PolicyError> {
    let profiles = d.json_profiles.as_deref().unwrap_or_default();
    if profiles
        .iter()
        .all(|p| p.validation_files.as_ref().is_none_or(Vec::is_empty))
    {
        return Ok(vec![None; profiles.len()]);
    }
    let files = files(d)?;
    let mut out = Vec::with_capacity(profiles.len());
    for (i, p) in profiles.iter().enumerate() {
        let list = p.validation_files.as_deref().unwrap_or_default();
        if list.is_empty() {
            out.push(None);
            continue;
        }
        let path = format!("policy.json-profiles[{i}].validationFiles");
        let name_of = |v: &Value| {
            v.get("jsonValidationFile")
                .and_then(|f| f.get("fileName"))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let mut names = Vec::new();
        for (j, v) in list.iter().enumerate() {
            let Some(n) = name_of(v) else {
                return Err(PolicyError::invalid(
                    format!("{path}[{j}].jsonValidationFile.fileName"),
                    "missing",
                ));
            };
            if !files.contains_key(&n) {
                return Err(PolicyError::invalid(
                    format!("{path}[{j}].jsonValidationFile.fileName"),
                    format!("\"{n}\" is not in json-validation-files"),
                ));
            }
            names.push(n);
        }
        let primary = match list
            .iter()
            .position(|v| v.get("isPrimary").and_then(Value::as_bool) == Some(true))
        {
            Some(j) => j,
            None if list.len() == 1 => 0,
            None => {
                return Err(PolicyError::invalid(
                    path,
                    "several files and none has isPrimary: true",
                ));
            }
        };
        let name = &names[primary];
        let others: HashMap<String, Vec<u8>> = names
            .iter()
            .filter_map(|n| Some((n.clone(), files.get(n)?.clone())))
            .collect();
        let schema = JsonSchema::compile(&files[name], name, &MemResolver(others))
            .map_err(|e| PolicyError::invalid(format!("{path}[{primary}]"), e.to_string()))?;
        out.push(Some(Arc::new(schema)));
    }
    Ok(out)
}

impl CompiledPolicy {
    /// Installs the JSON profiles' schemas (`policy::load`), in profile order.
    pub fn set_json_schemas(&mut self, schemas: Vec<Option<Arc<JsonSchema>>>) {
        self.json_schemas = schemas;
    }

    /// VIOL_JSON_SCHEMA for a JSON document of profile `i`; `name` prefixes the pointers (a
    /// json-valued parameter's name, empty for a body).
    pub(in crate::policy) fn check_json_schema(
        &self,
        i: usize,
        doc: &[u8],
        name: &str,
        s: &Scratch,
        out: &mut Vec<Violation>,
    ) {
        let Some(schema) = self.json_schemas.get(i).and_then(Option::as_ref) else {
            return;
        };
        if s.body_truncated && name.is_empty() {
            return;
        }
        let ctx = if name.is_empty() {
            Context::Json
        } else {
            Context::Parameter
        };
        // A document that is not JSON yields nothing: it is already VIOL_JSON_MALFORMED.
        for e in schema.validate(doc, MAX_SCHEMA_VIOLATIONS) {
            let at = if e.pointer.is_empty() && name.is_empty() {
                "/".to_string()
            } else {
                format!("{name}{}", e.pointer)
            };
            self.push(
                out,
                Violation::new(K::JsonSchema, ctx)
                    .named(at)
                    .snippet(e.snippet.as_bytes())
                    .detail(e.detail),
            );
        }
    }
}
