//! The start of one call on a gRPC URL: what the policy's headers phase runs once it has matched a
//! URL bound to a gRPC profile. Checks the request line and headers against the profile and, when
//! the body must be inspected, hands back the [`GrpcStream`] for the body phase.
//!
//! - not POST → `VIOL_METHOD` (even when the method is allowed elsewhere in the policy);
//! - `:path` not a method of the IDL → `VIOL_GRPC_METHOD`. A URL bound to the profile through its
//!   content profiles need not be the service's own (`/api/grpc/*`): a path outside the IDL's
//!   services names its method by its last two segments (`/api/grpc/demo.v1.Greeter/SayHello`);
//! - a content type that is not gRPC (`application/grpc`, `application/grpc+proto`, or gRPC-Web's
//!   binary `application/grpc-web[+proto]`, which frames requests the same way) → `VIOL_GRPC_MALFORMED`.

use super::compile::{CompiledGrpcProfile, GrpcMethod};
use super::stream::{Encoding, GrpcStream};
use crate::violation::{Context, Violation, ViolationKind};

/// What the headers phase learned about a call on a gRPC URL.
#[derive(Debug)]
pub struct CallStart {
    /// Violations of the request line and headers.
    pub violations: Vec<Violation>,
    /// The body inspector, when the call can be inspected (`None` after a method or content-type
    /// violation: nothing in the body could be matched to the IDL).
    pub stream: Option<GrpcStream>,
}

/// True for the content types whose request body is length-prefixed protobuf messages.
pub fn is_grpc_content_type(value: &str) -> bool {
    let base = value
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    matches!(
        base.as_str(),
        "application/grpc"
            | "application/grpc+proto"
            | "application/grpc-web"
            | "application/grpc-web+proto"
    )
}

/// Checks a call's head against `profile`. `path` is the request path without the query string.
pub fn start_call(profile: &CompiledGrpcProfile, head: &crate::RequestHead) -> CallStart {
    let path = head.uri.path();
    let mut violations = Vec::new();
    if head.method != http::Method::POST {
        violations.push(
            Violation::new(ViolationKind::Method, Context::Request)
                .named(head.method.as_str())
                .detail(format!(
                    "gRPC calls are POST; {path} was called with {}",
                    head.method
                )),
        );
    }
    let content_type = head
        .headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let grpc_body = is_grpc_content_type(content_type);
    if !grpc_body {
        violations.push(
            Violation::new(ViolationKind::GrpcMalformed, Context::Grpc)
                .named(path)
                .detail(format!("content-type {content_type:?} is not gRPC")),
        );
    }
    let Some(method) = profile
        .method(path)
        .or_else(|| mounted_method(profile, path))
    else {
        violations.push(
            Violation::new(ViolationKind::GrpcMethod, Context::Grpc)
                .named(path)
                .detail(format!(
                    "no such method in the IDL of gRPC profile {:?}",
                    profile.name()
                )),
        );
        return CallStart {
            violations,
            stream: None,
        };
    };
    let encoding = Encoding::from_header(
        head.headers
            .get("grpc-encoding")
            .and_then(|v| v.to_str().ok()),
    );
    let stream = grpc_body.then(|| profile.stream(method, encoding));
    CallStart { violations, stream }
}

/// The method of a service mounted under a prefix: `/<prefix>/<package>.<service>/<method>` names
/// `/<package>.<service>/<method>`. Paths under one of the profile's own services are looked up
/// exactly (an unknown method there stays unknown).
fn mounted_method<'a>(profile: &'a CompiledGrpcProfile, path: &str) -> Option<&'a GrpcMethod> {
    if profile.covers(path) {
        return None;
    }
    let last = path.rfind('/')?;
    let cut = path[..last].rfind('/')?;
    (cut > 0).then(|| profile.method(&path[cut..])).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grpc::tests::profile;

    fn head(method: &str, path: &str, content_type: &str) -> crate::RequestHead {
        let req = http::Request::builder()
            .method(method)
            .uri(path)
            .header("content-type", content_type)
            .header("grpc-encoding", "gzip")
            .body(())
            .expect("request");
        req.into_parts().0.into()
    }

    fn kinds(c: &CallStart) -> Vec<ViolationKind> {
        c.violations.iter().map(|v| v.kind).collect()
    }

    #[test]
    fn a_known_method_gets_a_stream() {
        let p = profile(serde_json::json!({}));
        let c = start_call(&p, &head("POST", "/test.v1.Users/Get", "application/grpc"));
        assert!(c.violations.is_empty());
        assert_eq!(
            c.stream.map(|s| s.method().path().to_string()).as_deref(),
            Some("/test.v1.Users/Get")
        );
        let web = start_call(
            &p,
            &head("POST", "/test.v1.Users/Get", "application/grpc-web+proto"),
        );
        assert!(web.violations.is_empty() && web.stream.is_some());
    }

    #[test]
    fn unknown_method_wrong_verb_and_wrong_content_type() {
        let p = profile(serde_json::json!({}));
        let c = start_call(&p, &head("POST", "/test.v1.Users/Nope", "application/grpc"));
        assert_eq!(kinds(&c), vec![ViolationKind::GrpcMethod]);
        assert_eq!(c.violations[0].name.as_deref(), Some("/test.v1.Users/Nope"));
        assert!(c.stream.is_none());
        let c = start_call(&p, &head("GET", "/test.v1.Users/Get", "application/grpc"));
        assert_eq!(kinds(&c), vec![ViolationKind::Method]);
        let c = start_call(&p, &head("POST", "/test.v1.Users/Get", "application/json"));
        assert_eq!(kinds(&c), vec![ViolationKind::GrpcMalformed]);
        assert!(c.stream.is_none());
        assert!(!is_grpc_content_type("application/grpc-web-text"));
        // A service mounted under a prefix is found by the path's last two segments; under the
        // service's own path the lookup stays exact.
        let c = start_call(
            &p,
            &head("POST", "/api/rpc/test.v1.Users/Get", "application/grpc"),
        );
        assert!(c.violations.is_empty(), "{:?}", c.violations);
        assert!(c.stream.is_some());
        let c = start_call(
            &p,
            &head(
                "POST",
                "/test.v1.Users/x/test.v1.Users/Get",
                "application/grpc",
            ),
        );
        assert_eq!(kinds(&c), vec![ViolationKind::GrpcMethod]);
        assert!(is_grpc_content_type("Application/GRPC; charset=utf-8"));
    }
}
