//! OpenAPI enforcement inside the compiled policy: compiles the policy's single `open-api-files`
//! item into a [`CompiledApi`] (through the injected resolver) and runs it per request. URL
//! resolution: explicit policy URLs → OpenAPI operations → policy wildcards. Head checks run in
//! phase 1, the body schema at body end.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::known_fields::Known;
use crate::Resolver;
use crate::openapi::{
    self, ApiMatch, Caps, CompiledApi, Head, JsonBody, Located, Location, OpenApiLimits,
};
use crate::parse::{cookie, query};
use crate::policy::PolicyError;
use crate::policy::compile::compiled::{CompiledPolicy, MAX_ITEMS, Scratch};
use crate::violation::{Context, Violation, ViolationKind as K};
use portcullis_support::InlineVec;

/// The operation phase 1 matched (kept in [`Scratch`]): looked up once per request, no allocation.
#[derive(Debug, Default, Clone)]
pub struct ApiRequest {
    /// Index in `CompiledApi::operations`.
    pub op: usize,
    /// The captured path values, as byte ranges of the request's path.
    caps: InlineVec<(u32, u32), 8>,
    /// The request's `Content-Type` (shares the head's bytes), for the body phase.
    pub content_type: Option<bytes::Bytes>,
}

impl ApiRequest {
    fn content_type(&self) -> Option<std::borrow::Cow<'_, str>> {
        self.content_type
            .as_ref()
            .map(|v| String::from_utf8_lossy(v))
    }
}

/// Compiles the spec linked from `policy.open-api-files` (one item, `link` or `$ref`), if any.
/// Errors name the policy field, or the spec file, JSON pointer and reason.
pub fn load_api(
    body: &Map<String, Value>,
    base: &str,
    resolver: &dyn Resolver,
) -> Result<Option<Arc<CompiledApi>>, PolicyError> {
    let Some(files) = body.get("open-api-files") else {
        return Ok(None);
    };
    let items = files
        .as_array()
        .ok_or_else(|| PolicyError::invalid("policy.open-api-files", "expected an array"))?;
    let item = match items.as_slice() {
        [] => return Ok(None),
        [one] => one,
        _ => {
            return Err(PolicyError::invalid(
                "policy.open-api-files",
                format!("{} files given, one is supported", items.len()),
            ));
        }
    };
    let link = ["link", "$ref"]
        .iter()
        .find_map(|k| item.get(*k).and_then(Value::as_str))
        .ok_or_else(|| {
            PolicyError::invalid(
                "policy.open-api-files[0]",
                "expected {\"link\": \"...\"} or {\"$ref\": \"...\"}",
            )
        })?;
    let bytes = resolver
        .fetch(base, link)
        .map_err(|source| PolicyError::Link {
            path: "policy.open-api-files[0].link".into(),
            source,
        })?;
    let limits = OpenApiLimits::default();
    let spec_link = openapi::join_link(base, link);
    let compiled = openapi::load_with(&bytes, &spec_link, resolver, &limits)
        .and_then(|spec| CompiledApi::compile(&spec, &limits))
        .map_err(|e| PolicyError::invalid("policy.open-api-files[0]", e.to_string()))?;
    Ok(Some(Arc::new(compiled)))
}

impl CompiledPolicy {
    /// The compiled OpenAPI spec of this policy, if it links one.
    pub fn api(&self) -> Option<&CompiledApi> {
        self.api.as_deref()
    }

    /// Phase 1, URL resolution when no explicit policy URL matched. `wildcard` says whether a policy
    /// wildcard URL matched (it allows what the spec does not know). Returns true when the spec
    /// decided the URL (an operation or a wrong method), so the caller skips its own VIOL_URL.
    pub(in crate::policy) fn api_url(
        &self,
        method: &str,
        raw_path: &str,
        wildcard: bool,
        s: &mut Scratch,
        out: &mut Vec<Violation>,
    ) -> bool {
        let Some(api) = self.api() else {
            return false;
        };
        let mut caps = Caps::new();
        let at = api.locate(method, raw_path, &mut caps);
        if let Located::Operation(op) = at {
            let mut req = ApiRequest {
                op,
                ..ApiRequest::default()
            };
            let base = raw_path.as_ptr() as usize;
            for c in caps.iter() {
                let from = (c.as_ptr() as usize - base) as u32;
                req.caps.push((from, from + c.len() as u32));
            }
            s.api = Some(req);
            return true;
        }
        match api.miss(method, raw_path, at) {
            ApiMatch::Operation(_) => true,
            ApiMatch::WrongMethod {
                allowed,
                undocumented,
            } => {
                let detail = format!(
                    "{} {} is not in the OpenAPI spec (allowed: {})",
                    undocumented.method,
                    undocumented.template,
                    allowed.join(", ")
                );
                self.push(
                    out,
                    Violation::new(K::Method, Context::Request)
                        .snippet(method.as_bytes())
                        .detail(detail),
                );
                true
            }
            ApiMatch::NoUrl(u) if !wildcard => {
                // Recorded as an undocumented endpoint (alarm in transparent mode, block otherwise).
                self.push(
                    out,
                    Violation::new(K::Url, Context::Url)
                        .snippet(raw_path.as_bytes())
                        .detail(format!(
                            "undocumented endpoint {} {} (not in the OpenAPI spec)",
                            u.method, u.template
                        )),
                );
                true
            }
            ApiMatch::NoUrl(_) => false,
        }
    }

    /// Phase 1 for a spec operation: path, query, header and cookie parameters; a missing body is
    /// checked here (no body phase follows). Returns true when the body must be inspected.
    pub(in crate::policy) fn api_head(
        &self,
        head: &crate::RequestHead,
        known: &Known<'_>,
        has_body: bool,
        s: &mut Scratch,
        out: &mut Vec<Violation>,
    ) -> bool {
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        let (Some(api), Some(req)) = (self.api(), s.api.as_mut()) else {
            return false;
        };
        req.content_type = known
            .content_type
            .map(|v| head.headers.shared(v.as_bytes()));
        let req = &*req;
        let Some(op) = api.operations.get(req.op) else {
            return false;
        };
        let raw_path = head.uri.path();
        let mut path_params: InlineVec<(&str, &str), 8> = InlineVec::new();
        for (name, &(from, to)) in op.path_param_names().iter().zip(req.caps.iter()) {
            path_params.push((name, raw_path.get(from as usize..to as usize).unwrap_or("")));
        }
        // Only what the operation reads is gathered (and decoded).
        let raw_query = head.uri.query().unwrap_or("").as_bytes();
        let decoded: Vec<(Cow<str>, Cow<str>)>;
        let mut q: InlineVec<(&str, &str), 8> = InlineVec::new();
        if !plain_pairs(raw_query, &mut q) {
            // A pair to decode: each one decoded, as the plain ones are read as they are.
            decoded = query::pairs(raw_query, MAX_ITEMS)
                .map(|(n, v, _)| (decode(n), decode(v)))
                .collect();
            q.clear();
            for (n, v) in &decoded {
                q.push((n.as_ref(), v.as_ref()));
            }
        }
        let headers: Vec<(String, String)> = if op.reads(Location::Header) {
            head.headers
                .iter()
                .take(MAX_ITEMS)
                .map(|(n, v)| (n.to_string(), text(v.as_bytes())))
                .collect()
        } else {
            Vec::new()
        };
        let cookies: Vec<(String, String)> = if op.reads(Location::Cookie) {
            head.headers
                .get_all(http::header::COOKIE)
                .flat_map(|v| cookie::pairs(v.as_bytes()).filter_map(Result::ok))
                .take(MAX_ITEMS)
                .map(|(n, v)| (text(n), text(v)))
                .collect()
        } else {
            Vec::new()
        };
        let (h, c) = (pairs(&headers), pairs(&cookies));
        let mut found = Vec::new();
        op.validate_head(
            &path_params,
            &Head {
                query: &q,
                headers: &h,
                cookies: &c,
            },
            &mut found,
        );
        if !has_body {
            op.validate_body(req.content_type().as_deref(), b"", &mut found);
        }
        self.push_all(out, found);
        has_body
    }

    /// Body end for a spec operation: content type, JSON schema or form fields. A body cut at the
    /// inspection limit is not schema-checked (it would read as malformed).
    pub(in crate::policy) fn api_body(
        &self,
        body: &JsonBody<'_>,
        s: &Scratch,
        out: &mut Vec<Violation>,
    ) {
        let (Some(api), Some(req)) = (self.api(), s.api.as_ref()) else {
            return;
        };
        if s.body_truncated {
            return;
        }
        if let Some(op) = api.operations.get(req.op) {
            let mut found = Vec::new();
            op.validate_json_body(req.content_type().as_deref(), body, &mut found);
            self.push_all(out, found);
        }
    }
}

/// The query's pairs pushed onto `q` as they are written, when none has anything to decode (what
/// [`decode`] then borrows, for most queries): no list of decoded pairs is built. False, with
/// `q` partly filled, at the first that has.
fn plain_pairs<'q>(raw_query: &'q [u8], q: &mut InlineVec<(&'q str, &'q str), 8>) -> bool {
    for (n, v, _) in query::pairs(raw_query, MAX_ITEMS) {
        match (plain(n), plain(v)) {
            (Some(n), Some(v)) => q.push((n, v)),
            _ => return false,
        }
    }
    true
}

/// `raw` as text when one decoding pass leaves it as it is: nothing [`escaped`], valid UTF-8.
fn plain(raw: &[u8]) -> Option<&str> {
    if escaped(raw) {
        return None;
    }
    std::str::from_utf8(raw).ok()
}

/// Whether one decoding pass of a query's name or value changes its bytes: a `%` escape or a `+`
/// for a blank.
fn escaped(raw: &[u8]) -> bool {
    raw.iter().any(|b| matches!(b, b'%' | b'+'))
}

/// One decoding pass of a query parameter's name or value, borrowed when it has nothing to decode
/// (no `%`, no `+`, valid UTF-8), as most do.
fn decode(raw: &[u8]) -> Cow<'_, str> {
    if !escaped(raw) {
        return String::from_utf8_lossy(raw);
    }
    let mut out = Vec::with_capacity(raw.len());
    let mut flags = query::DecodeFlags::default();
    query::decode_once(raw, true, &mut out, &mut flags);
    // The decoded bytes become the string themselves when they are text, as nearly all are.
    Cow::Owned(
        String::from_utf8(out)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
    )
}

fn pairs<S: AsRef<str>>(l: &[(S, S)]) -> Vec<(&str, &str)> {
    l.iter().map(|(n, v)| (n.as_ref(), v.as_ref())).collect()
}
