//! One compiled operation (method + path template): its parameters and request bodies, and the
//! per-request checks the compiled policy calls after [`super::CompiledApi::find`].

use super::OpenApiLimits;
use super::json::{Arena, JsonBody};
use super::param::{Location, Param, Style};
use super::schema::{SchemaId, Schemas};
use super::validate::validate;
use crate::{Context, Violation, ViolationKind};
use portcullis_support::InlineVec;
use std::sync::Arc;

/// How a declared request body content type is checked.
#[derive(Debug, Clone)]
pub enum BodyKind {
    /// JSON (`application/json`, `*+json`): parsed, then validated against the schema if any.
    Json(Option<u32>),
    /// `application/x-www-form-urlencoded`: fields validated like parameters.
    Form {
        fields: Vec<Param>,
        allow_unknown: bool,
    },
    /// Any other type (multipart, XML, binary): accepted, left to the other policy layers.
    Opaque,
}

/// One declared content type of a request body.
#[derive(Debug, Clone)]
pub struct Content {
    /// Lower-case media range: `application/json`, `image/*`, `*/*`.
    pub media: String,
    pub kind: BodyKind,
}

/// The request parts `validate_head` looks at. Query pairs, headers and cookies are decoded
/// (percent-decoding done by the caller); path parameters come from [`super::OpMatch`].
#[derive(Debug, Default, Clone, Copy)]
pub struct Head<'a> {
    pub query: &'a [(&'a str, &'a str)],
    pub headers: &'a [(&'a str, &'a str)],
    pub cookies: &'a [(&'a str, &'a str)],
}

/// A compiled operation.
pub struct Operation {
    pub method: String,
    /// The template with the server prefix, e.g. `/v2/pets/{petId}`.
    pub url: String,
    pub operation_id: Option<String>,
    /// Path parameter names in capture order, then every other parameter.
    pub params: Vec<Param>,
    pub(crate) path_names: Vec<String>,
    pub body_required: bool,
    pub contents: Vec<Content>,
    pub(crate) schemas: Arc<Schemas>,
    pub(crate) limits: OpenApiLimits,
    /// Query parameter names → index in `params`, sorted for binary search.
    pub(crate) query_index: Vec<(Box<str>, usize)>,
}

impl std::fmt::Debug for Operation {
    /// Leaves out the schema arena (shared by the whole spec, possibly megabytes).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Operation")
            .field("method", &self.method)
            .field("url", &self.url)
            .field("operation_id", &self.operation_id)
            .field("params", &self.params)
            .field("body_required", &self.body_required)
            .field("contents", &self.contents)
            .finish_non_exhaustive()
    }
}

impl Operation {
    /// Builds the sorted query-name index (call once after `params` is final).
    pub(crate) fn index_query(params: &[Param]) -> Vec<(Box<str>, usize)> {
        let mut index: Vec<(Box<str>, usize)> = params
            .iter()
            .enumerate()
            .filter(|(_, p)| p.location == Location::Query)
            .map(|(i, p)| (p.name.as_str().into(), i))
            .collect();
        index.sort();
        index.dedup_by(|a, b| a.0 == b.0);
        index
    }

    /// Whether a parameter of the operation lives at `loc` (the caller need not gather the
    /// request's headers or cookies for [`Self::validate_head`] otherwise).
    pub fn reads(&self, loc: Location) -> bool {
        self.params.iter().any(|p| p.location == loc)
    }

    /// Whether the spec requires a request body.
    pub fn body_required(&self) -> bool {
        self.body_required
    }

    /// Checks path parameters, query, headers and cookies: unknown query parameters
    /// (VIOL_PARAMETER), missing mandatory ones, repeats, empty values, types and ranges.
    pub fn validate_head(
        &self,
        path_params: &[(&str, &str)],
        head: &Head<'_>,
        out: &mut Vec<Violation>,
    ) {
        let start = out.len();
        // One pass over the query: each pair goes to its parameter or is undeclared.
        let mut hits: InlineVec<(usize, &str), 8> = InlineVec::new();
        for (name, value) in head.query {
            match self.query_index.binary_search_by(|(k, _)| (**k).cmp(name)) {
                Ok(i) => hits.push((self.query_index[i].1, value)),
                Err(_) if known(&self.params, Location::Query, name) => {}
                Err(_) => out.push(unknown(name, value, "query")),
            }
        }
        let mut values: InlineVec<&str, 4> = InlineVec::new();
        for (i, p) in self.params.iter().enumerate() {
            values.clear();
            match p.location {
                Location::Path => {
                    for (name, raw) in path_params {
                        if *name == p.name {
                            values.push(raw);
                        }
                    }
                }
                Location::Query => {
                    for h in hits.iter().filter(|h| h.0 == i) {
                        values.push(h.1);
                    }
                }
                Location::Header => collect(head.headers, &p.name, true, &mut values),
                Location::Cookie => collect(head.cookies, &p.name, false, &mut values),
                Location::Form => continue,
            }
            self.check_param(p, &values, out);
        }
        out.truncate(start + self.limits.max_violations.max(1));
    }

    fn check_param(&self, p: &Param, values: &[&str], out: &mut Vec<Violation>) {
        if values.is_empty() {
            if p.required {
                let detail = format!("mandatory {} parameter is missing", p.location.name());
                out.push(p.violation(ViolationKind::MandatoryParameter, b"", detail));
            }
            return;
        }
        if p.location == Location::Path && values.iter().any(|v| v.contains('%')) {
            let decoded: Vec<String> = values
                .iter()
                .map(|v| {
                    percent_encoding::percent_decode_str(v)
                        .decode_utf8_lossy()
                        .into_owned()
                })
                .collect();
            let refs: Vec<&str> = decoded.iter().map(String::as_str).collect();
            return p.check(&self.schemas, &refs, &self.limits, out);
        }
        p.check(&self.schemas, values, &self.limits, out);
    }

    /// Checks the request body: declared content type (VIOL_URL_CONTENT_TYPE), mandatory body,
    /// malformed JSON, JSON schema, form fields. Call it for every request, even without a body;
    /// `content_type` is the raw header value.
    pub fn validate_body(&self, content_type: Option<&str>, body: &[u8], out: &mut Vec<Violation>) {
        let arena = Arena::new();
        self.validate_json_body(content_type, &JsonBody::new(body, &arena), out);
    }

    /// [`Self::validate_body`] over a body whose JSON parse the caller shares with its other checks.
    pub(crate) fn validate_json_body(
        &self,
        content_type: Option<&str>,
        json: &JsonBody<'_>,
        out: &mut Vec<Violation>,
    ) {
        let start = out.len();
        let body = json.bytes();
        if body.is_empty() {
            if self.body_required {
                let v = Violation::new(ViolationKind::MandatoryRequestBody, Context::Body).detail(
                    format!("{} {} requires a request body", self.method, self.url),
                );
                out.push(v);
            }
            return;
        }
        if self.contents.is_empty() {
            return;
        }
        // Clients send the media type in lower case: it is copied only when it is not.
        let media = content_type.map_or("", |c| before(c, b';').trim());
        let media: std::borrow::Cow<str> = if media.bytes().any(|b| b.is_ascii_uppercase()) {
            media.to_ascii_lowercase().into()
        } else {
            media.into()
        };
        let Some(content) = self.content_for(&media) else {
            let allowed: Vec<&str> = self.contents.iter().map(|c| c.media.as_str()).collect();
            let shown = if media.is_empty() {
                "no Content-Type"
            } else {
                &media
            };
            let v = Violation::new(ViolationKind::UrlContentType, Context::Body)
                .named(media.to_string())
                .snippet(media.as_bytes())
                .detail(format!(
                    "{shown} is not declared for {} {} (allowed: {})",
                    self.method,
                    self.url,
                    allowed.join(", ")
                ));
            out.push(v);
            return;
        };
        match &content.kind {
            BodyKind::Json(schema) => self.check_json(*schema, json, out),
            BodyKind::Form {
                fields,
                allow_unknown,
            } => self.check_form(fields, *allow_unknown, body, out),
            BodyKind::Opaque => {}
        }
        out.truncate(start + self.limits.max_violations.max(1));
    }

    fn content_for(&self, media: &str) -> Option<&Content> {
        let exact = self.contents.iter().find(|c| c.media == media);
        exact
            .or_else(|| {
                let major = before(media, b'/');
                self.contents
                    .iter()
                    .find(|c| c.media.strip_suffix("/*").is_some_and(|m| m == major))
            })
            .or_else(|| self.contents.iter().find(|c| c.media == "*/*"))
            .filter(|_| !media.is_empty())
    }

    fn check_json(&self, schema: Option<SchemaId>, json: &JsonBody<'_>, out: &mut Vec<Violation>) {
        let value = match json.document() {
            Ok(v) => v,
            Err(e) => {
                let v = Violation::new(ViolationKind::JsonMalformed, Context::Json)
                    .snippet(json.bytes())
                    .detail(format!(
                        "malformed JSON at line {} column {}: {e}",
                        e.line(),
                        e.column()
                    ));
                out.push(v);
                return;
            }
        };
        let Some(id) = schema else { return };
        for e in validate(
            &self.schemas,
            id,
            value,
            self.limits.max_violations,
            self.limits.max_depth,
        ) {
            let snippet = e.value.render();
            let name = if e.pointer.is_empty() {
                "/".to_string()
            } else {
                e.pointer
            };
            let v = Violation::new(ViolationKind::JsonSchema, Context::Json)
                .named(name)
                .snippet(snippet.as_bytes())
                .detail(e.detail);
            out.push(v);
        }
    }

    fn check_form(
        &self,
        fields: &[Param],
        allow_unknown: bool,
        body: &[u8],
        out: &mut Vec<Violation>,
    ) {
        let pairs: Vec<(String, String)> = form_urlencoded::parse(body).into_owned().collect();
        let mut values: Vec<&str> = Vec::new();
        for f in fields {
            values.clear();
            values.extend(
                pairs
                    .iter()
                    .filter(|(k, _)| *k == f.name)
                    .map(|(_, v)| v.as_str()),
            );
            self.check_param(f, &values, out);
        }
        if !allow_unknown {
            for (name, value) in &pairs {
                if !known(fields, Location::Form, name) {
                    out.push(unknown(name, value, "form"));
                }
            }
        }
    }

    /// The positional path parameter names, in capture order.
    pub fn path_param_names(&self) -> &[String] {
        &self.path_names
    }
}

fn collect<'a>(
    pairs: &[(&'a str, &'a str)],
    name: &str,
    fold: bool,
    out: &mut InlineVec<&'a str, 4>,
) {
    for (k, v) in pairs {
        if if fold {
            k.eq_ignore_ascii_case(name)
        } else {
            *k == name
        } {
            out.push(v);
        }
    }
}

/// Whether `name` is a declared parameter at `loc`, including `deepObject` keys (`filter[x]`).
fn known(params: &[Param], loc: Location, name: &str) -> bool {
    params.iter().any(|p| {
        p.location == loc
            && (p.name == name
                || (p.style == Style::Object
                    && name
                        .strip_prefix(p.name.as_str())
                        .is_some_and(|r| r.starts_with('['))))
    })
}

fn unknown(name: &str, value: &str, loc: &str) -> Violation {
    Violation::new(ViolationKind::Parameter, Context::Parameter)
        .named(name)
        .snippet(value.as_bytes())
        .detail(format!("{loc} parameter \"{name}\" is not declared"))
}

/// `text` up to its first `sep` (all of it without one): a media type's few bytes read one by one,
/// where `str::split`'s searcher costs more to set up than the search.
fn before(text: &str, sep: u8) -> &str {
    let end = text.bytes().position(|b| b == sep).unwrap_or(text.len());
    // `sep` is ASCII: the cut is a character boundary.
    text.get(..end).unwrap_or(text)
}
