//! A standalone JSON Schema (the `json-validation-files` of a policy's JSON profile), compiled with
//! the same schema compiler and validator as OpenAPI operations, so a JSON profile's schema and an
//! operation's request-body schema accept and refuse the same documents.
//!
//! The primary file is loaded as the root document of a spec (with the version field added, so the
//! loader's `$ref` resolution, document limits and external-file fetching apply unchanged); `$ref`s
//! to other files (`"address.json#/definitions/a"`) are fetched through the resolver, which serves
//! the policy's other validation files by `fileName`. Draft-04 schemas (boolean
//! `exclusiveMinimum`/`exclusiveMaximum`) use the OpenAPI 3.0 dialect, every other draft the 3.1
//! (JSON Schema 2020-12) one.

use serde_json::Value;

use super::json::{Arena, Json};
use super::load::load_with;
use super::schema::{SchemaCompiler, SchemaId, Schemas};
use super::validate::validate;
use super::{OpenApiError, OpenApiLimits};
use crate::resolver::Resolver;

/// A compiled JSON Schema: immutable, `Send + Sync`.
#[derive(Debug)]
pub struct JsonSchema {
    schemas: Schemas,
    root: SchemaId,
    limits: OpenApiLimits,
}

/// One way a document breaks the schema: the JSON pointer of the offending value, the value (as
/// compact JSON) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaViolation {
    pub pointer: String,
    pub detail: String,
    pub snippet: String,
}

fn draft4(v: &Value) -> bool {
    v.get("$schema")
        .and_then(Value::as_str)
        .is_some_and(|s| s.contains("draft-04"))
}

impl JsonSchema {
    /// Compiles the schema document `bytes`, named `link`; other files come through `resolver`.
    pub fn compile(
        bytes: &[u8],
        link: &str,
        resolver: &dyn Resolver,
    ) -> Result<JsonSchema, OpenApiError> {
        let mut root: Value = serde_json::from_slice(bytes).map_err(|e| {
            OpenApiError::new(
                link,
                "",
                format!("not JSON (line {} column {}): {e}", e.line(), e.column()),
            )
        })?;
        let version = if draft4(&root) { "3.0.3" } else { "3.1.0" };
        // Boolean schemas: `true` accepts everything, `false` nothing.
        match root {
            Value::Bool(true) => root = serde_json::json!({}),
            Value::Bool(false) => root = serde_json::json!({"not": {}}),
            _ => {}
        }
        let Value::Object(map) = &mut root else {
            return Err(OpenApiError::new(
                link,
                "",
                "a JSON schema must be an object",
            ));
        };
        map.insert("openapi".into(), Value::String(version.into()));
        map.entry("paths")
            .or_insert_with(|| Value::Object(Default::default()));
        let wrapped = serde_json::to_vec(&root).unwrap_or_default();
        let limits = OpenApiLimits::default();
        let spec = load_with(&wrapped, link, resolver, &limits)?;
        let mut c = SchemaCompiler::new(&spec, &limits);
        let id = c.compile(0, "", spec.root())?;
        Ok(JsonSchema {
            schemas: c.out,
            root: id,
            limits,
        })
    }

    /// Validates the JSON document `doc`; at most `max` violations, in document order. A document
    /// that is not JSON has none (whoever parsed it first reported it malformed).
    pub fn validate(&self, doc: &[u8], max: usize) -> Vec<SchemaViolation> {
        let arena = Arena::new();
        let Ok(value) = Json::parse(doc, &arena) else {
            return Vec::new();
        };
        self.validate_doc(&value, max)
    }

    pub(crate) fn validate_doc(&self, value: &Json<'_>, max: usize) -> Vec<SchemaViolation> {
        validate(&self.schemas, self.root, value, max, self.limits.max_depth)
            .into_iter()
            .map(|e| SchemaViolation {
                snippet: e.value.render(),
                pointer: e.pointer,
                detail: e.detail,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::resolver::MemResolver;

    const PERSON: &str = r#"{"$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object", "additionalProperties": false, "required": ["firstName"],
        "properties": {"firstName": {"type": "string"}, "age": {"type": "integer", "minimum": 0},
                       "home": {"$ref": "address.json#/definitions/address"}}}"#;
    const ADDRESS: &str = r#"{"definitions": {"address": {"type": "object",
        "properties": {"zip": {"type": "string", "pattern": "^[0-9]{5}$"}}}}}"#;

    fn person() -> JsonSchema {
        let r = MemResolver(HashMap::from([(
            "address.json".to_string(),
            ADDRESS.as_bytes().to_vec(),
        )]));
        JsonSchema::compile(PERSON.as_bytes(), "person.json", &r).expect("compiles")
    }

    fn errors(s: &JsonSchema, doc: &str) -> Vec<String> {
        s.validate(doc.as_bytes(), 10)
            .into_iter()
            .map(|e| e.pointer)
            .collect()
    }

    #[test]
    fn validates_documents_across_files() {
        let s = person();
        assert!(
            errors(
                &s,
                r#"{"firstName": "Ann", "age": 3, "home": {"zip": "12345"}}"#
            )
            .is_empty()
        );
        assert_eq!(
            errors(&s, r#"{"firstName": "Ann", "age": -1}"#),
            vec!["/age"]
        );
        assert_eq!(
            errors(&s, r#"{"firstName": "Ann", "home": {"zip": "x"}}"#),
            vec!["/home/zip"]
        );
        assert_eq!(errors(&s, r#"{"age": 1}"#), vec![""]);
        assert!(!errors(&s, r#"{"firstName": "Ann", "extra": 1}"#).is_empty());
    }

    #[test]
    fn draft4_exclusive_bounds_and_errors() {
        let d4 = br#"{"$schema": "http://json-schema.org/draft-04/schema#", "type": "number",
            "minimum": 0, "exclusiveMinimum": true}"#;
        let s = JsonSchema::compile(d4, "n.json", &crate::resolver::NoResolver).expect("compiles");
        assert_eq!(errors(&s, "0"), vec![""]);
        assert!(errors(&s, "0.5").is_empty());
        let e = JsonSchema::compile(b"{\"type\": ", "bad.json", &crate::resolver::NoResolver);
        assert!(e.is_err());
        let e = JsonSchema::compile(
            br#"{"$ref": "missing.json"}"#,
            "m.json",
            &crate::resolver::NoResolver,
        )
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
        assert!(e.contains("missing.json"), "{e}");
    }
}
