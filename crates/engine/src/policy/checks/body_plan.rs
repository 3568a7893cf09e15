//! The body plan, decided at the end of the head phase: whether a body is expected and inspected,
//! and how (the URL's content profiles by header, multipart boundaries, gRPC messages, content
//! coding, JSON lines), with the violations the head alone shows about it (a body on GET, a
//! disallowed content type, a missing mandatory body).

use super::known_fields::Known;
use crate::policy::compile::compiled::{BodyKind, CompiledPolicy, Scratch};
use crate::violation::{Context, Violation, ViolationKind as K};

impl CompiledPolicy {
    /// Decides whether and how the body is inspected.
    pub(super) fn plan_body(
        &self,
        head: &crate::RequestHead,
        known: &Known<'_>,
        s: &mut Scratch,
        out: &mut Vec<Violation>,
    ) -> bool {
        let cl = known
            .content_length
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        let chunked = known.transfer_encoding;
        let h = &head.headers;
        s.content_length = cl;
        let has_body = chunked || cl.is_some_and(|n| n > 0);
        let m = &head.method;
        let bodied_get = has_body && (m == http::Method::GET || m == http::Method::HEAD);
        if m == http::Method::POST && cl == Some(0) {
            self.protocol(out, "POST request with Content-Length: 0");
        }
        let ct = known
            .content_type
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        s.grpc_content = ct.starts_with("application/grpc");
        s.grpc = s.grpc_content && s.url.is_some();
        if s.grpc_profile.is_some() {
            return self.grpc_start(head, s, out);
        }
        let url = s.url.and_then(|i| self.urls.get(i));
        if let Some(u) = url
            && u.mandatory_body
            && !has_body
        {
            self.push(out, Violation::new(K::MandatoryRequestBody, Context::Body));
        }
        let mut kind = BodyKind::Signatures;
        if let Some(u) = url {
            for rule in &u.content {
                let value = if rule.header == "*" {
                    Some(ct)
                } else {
                    h.get(rule.header.as_str()).and_then(|v| v.to_str().ok())
                };
                if let Some(v) = value
                    && rule.value.is_match(v.as_bytes())
                {
                    kind = rule.kind;
                    break;
                }
            }
            s.grpc &= u
                .content
                .iter()
                .any(|c| c.header != "*" && c.value.is_match(b"application/grpc"));
        }
        if kind == BodyKind::Signatures
            && url.is_some()
            && head.version == http::Version::HTTP_2
            && crate::grpc::is_grpc_content_type(ct)
        {
            // A gRPC call the policy allows by URL but has no profile for: inspected message by
            // message so that streams flow (grpc::opaque_chunk); a block is a gRPC one.
            s.grpc = true;
            let encoding = h.get("grpc-encoding").and_then(|v| v.to_str().ok());
            let encoding = crate::grpc::Encoding::from_header(encoding);
            s.grpc_opaque = Some(crate::grpc::OpaqueCall::new(encoding));
            s.body_kind = Some(kind);
            s.expects_body = has_body;
            return true;
        }
        if ct.to_ascii_lowercase().starts_with("multipart/form-data")
            && matches!(kind, BodyKind::Form | BodyKind::Signatures)
        {
            s.boundary = crate::parse::multipart::boundary(ct).map(str::to_string);
            if s.boundary.is_none() && has_body {
                self.protocol(out, "Bad multipart/form-data request parsing");
            }
            kind = BodyKind::Form;
        }
        // A `multipart/related` body's root document is read by the profile its `type` chose,
        // once the framing around it is taken off (`related.rs`).
        if matches!(kind, BodyKind::Xml(_) | BodyKind::Json(_))
            && ct
                .get(..17)
                .is_some_and(|m| m.eq_ignore_ascii_case("multipart/related"))
        {
            s.boundary = crate::parse::multipart::boundary(ct).map(str::to_string);
        }
        if bodied_get && !self.document_body(kind) {
            self.protocol(out, "Body in GET or HEAD requests");
        }
        if kind == BodyKind::Disallow && has_body {
            self.push(
                out,
                Violation::new(K::UrlContentType, Context::Body).snippet(ct.as_bytes()),
            );
        }
        if has_body {
            s.body_coding = h
                .get(http::header::CONTENT_ENCODING)
                .and_then(|v| crate::parse::coding::Coding::of(v.as_bytes()));
            s.json_lines = matches!(kind, BodyKind::Json(_)) && json_lines(ct);
        }
        s.body_kind = Some(kind);
        s.expects_body = has_body;
        // An HTTP/2 request announces no body length: a body may follow the head (an empty one
        // never reaches the body phase), and it must be inspected like any other.
        let h2_body = cl.is_none() && head.version == http::Version::HTTP_2;
        (has_body || h2_body) && !matches!(kind, BodyKind::Ignore | BodyKind::Disallow)
    }
}

/// Media types whose body is a sequence of JSON documents, one a line (`application/x-ndjson`,
/// `application/jsonl`, `application/json-seq`, `application/x-json-stream`).
fn json_lines(ct: &str) -> bool {
    let media = ct
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    ["ndjson", "jsonl", "json-seq", "json-stream", "jsonlines"]
        .iter()
        .any(|m| media.ends_with(m))
}
