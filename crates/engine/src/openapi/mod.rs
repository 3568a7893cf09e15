//! OpenAPI positive security: a spec (Swagger 2.0, OpenAPI 3.0.x or 3.1, JSON or YAML) becomes the
//! list of URLs, methods, parameters and request bodies a policy allows; everything else raises a
//! violation. See `docs/openapi.md` for the mapping and the API the compiled policy calls.
//!
//! Flow: [`load`] (bytes + [`Resolver`] for external `$ref`s → [`ApiSpec`]) →
//! [`CompiledApi::compile`] (paths into a per-segment trie, schemas into one arena, validators once
//! per operation) → per request [`CompiledApi::find`] then [`Operation::validate_head`] and
//! [`Operation::validate_body`].
//!
//! Pure: no IO (files come through the injected [`Resolver`]).

mod compile;
mod formats;
mod json;
mod json_read;
mod json_schema;
mod keywords;
mod load;
mod op_compile;
mod operation;
mod param;
mod router;
mod schema;
mod table;
mod validate;

pub use compile::CompiledApi;
pub(crate) use compile::Located;
pub(crate) use json::{Arena, Json, JsonBody};
pub use json_schema::{JsonSchema, SchemaViolation};
pub use load::{ApiSpec, SpecVersion, join_link, load, load_with};
pub use operation::{BodyKind, Content, Head, Operation};
pub use param::{Location, Param};
pub(crate) use router::Caps;
pub use router::{ApiMatch, OpMatch, Undocumented};
pub use table::{UrlRow, UrlTable};

/// Why a spec cannot be used: the file (link), the JSON pointer inside it and the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}#{pointer}: {reason}")]
pub struct OpenApiError {
    pub file: String,
    pub pointer: String,
    pub reason: String,
}

impl OpenApiError {
    pub(crate) fn new(file: &str, pointer: &str, reason: impl Into<String>) -> Self {
        OpenApiError {
            file: file.to_string(),
            pointer: pointer.to_string(),
            reason: reason.into(),
        }
    }
}

/// Budgets for loading and compiling a spec, and for validating one request against it.
#[derive(Debug, Clone)]
pub struct OpenApiLimits {
    /// Largest spec document (each file), in bytes.
    pub max_spec_bytes: usize,
    /// Most documents (the spec plus the files its `$ref`s pull in).
    pub max_documents: usize,
    /// Most compiled schema nodes for the whole spec.
    pub max_schema_nodes: usize,
    /// Compiled size limit for each `pattern` regex (bytes).
    pub max_regex_bytes: usize,
    /// Most violations one request body or head can produce (the rest are dropped).
    pub max_violations: usize,
    /// Deepest JSON nesting a schema validation walks into.
    pub max_depth: usize,
}

impl Default for OpenApiLimits {
    fn default() -> Self {
        OpenApiLimits {
            max_spec_bytes: 64 << 20,
            max_documents: 64,
            max_schema_nodes: 2_000_000,
            max_regex_bytes: 256 << 10,
            max_violations: 20,
            max_depth: 64,
        }
    }
}

/// Loads and compiles a self-contained spec (no external `$ref`s) with default limits: the entry
/// point of the `openapi_swagger2` and `openapi_v3` fuzz targets.
#[cfg(any(test, fuzzing))]
pub fn load_and_compile(bytes: &[u8], link: &str) -> Result<CompiledApi, OpenApiError> {
    let spec = load(bytes, link, &crate::resolver::NoResolver)?;
    CompiledApi::compile(&spec, &OpenApiLimits::default())
}

/// Why [`validate_json_value`] validated nothing: the schema or the body does not parse.
#[cfg(any(test, fuzzing))]
#[derive(Debug, thiserror::Error)]
pub enum ValidateError {
    #[error(transparent)]
    Schema(#[from] OpenApiError),
    #[error(transparent)]
    Body(#[from] serde_json::Error),
}

/// Public entry for fuzzing and tests: validates `body` (JSON) against `schema` (a JSON schema
/// written as OpenAPI 3.1 JSON), returns the error messages. Never panics.
#[cfg(any(test, fuzzing))]
pub fn validate_json_value(schema: &[u8], body: &[u8]) -> Result<Vec<String>, ValidateError> {
    let schema = JsonSchema::compile(schema, "schema.json", &crate::resolver::NoResolver)?;
    let arena = json::Arena::new();
    let body = json::Json::parse(body, &arena)?;
    Ok(schema
        .validate_doc(&body, OpenApiLimits::default().max_violations)
        .into_iter()
        .map(|e| {
            let at = if e.pointer.is_empty() {
                "/"
            } else {
                &e.pointer
            };
            format!("{at}: {}", e.detail)
        })
        .collect())
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod validate_tests;
