//! A stored request event read back for the tuning loop: its violations as the engine's own
//! [`Violation`]s, and its request head rebuilt so the engine can say which entities judged it.

use serde_json::Value;

use crate::events::index::signature_ids;
use portcullis_engine::{Context, Violation, ViolationKind};

/// One stored request event, as the learning and the accept path read it.
#[derive(Clone, Debug)]
pub struct Request {
    pub support_id: String,
    pub time_micros: u64,
    pub client: String,
    pub method: String,
    pub uri: String,
    /// Header fields as stored (credentials masked).
    pub headers: Vec<(String, String)>,
    pub violations: Vec<Violation>,
    /// The fullPath of the policy that decided.
    pub policy: String,
}

fn context_of(s: &str) -> Option<Context> {
    Some(match s {
        "request" => Context::Request,
        "url" => Context::Url,
        "query" => Context::Query,
        "parameter" => Context::Parameter,
        "header" => Context::Header,
        "cookie" => Context::Cookie,
        "body" => Context::Body,
        "json" => Context::Json,
        "xml" => Context::Xml,
        "grpc" => Context::Grpc,
        _ => return None,
    })
}

/// A stored violation (`{kind, context, name?, snippet?, detail?, signature_ids?, staged?}`) as
/// the engine's type; None for a kind this engine does not know.
pub fn violation_of(v: &Value) -> Option<Violation> {
    let s = |k: &str| v.get(k).and_then(Value::as_str);
    let kind = ViolationKind::from_name(s("kind")?)?;
    let mut out = Violation::new(kind, context_of(s("context")?).unwrap_or(Context::Request));
    out.name = s("name").map(str::to_string);
    out.snippet = s("snippet").unwrap_or_default().to_string();
    out.detail = s("detail").unwrap_or_default().to_string();
    out.signature_ids = signature_ids(v)
        .filter_map(|id| u32::try_from(id).ok())
        .collect();
    out.staged = v.get("staged").and_then(Value::as_bool).unwrap_or(false);
    Some(out)
}

impl Request {
    /// Reads a stored event (the JSON the event store keeps).
    pub fn from_stored(e: &Value) -> Request {
        let s = |k: &str| {
            e.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let headers = e
            .get("headers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|p| {
                let p = p.as_array()?;
                Some((
                    p.first()?.as_str()?.to_string(),
                    p.get(1)?.as_str()?.to_string(),
                ))
            })
            .collect();
        Request {
            support_id: s("supportId"),
            time_micros: e.get("timeMicros").and_then(Value::as_u64).unwrap_or(0),
            client: s("clientIp"),
            method: s("method"),
            uri: s("uri"),
            headers,
            violations: e
                .get("violations")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(violation_of)
                .collect(),
            policy: s("policyFullPath"),
        }
    }

    /// The violations the policy found, without the rating violations it derived from them
    /// (`CompiledPolicy::judge` derives those again).
    pub fn found(&self) -> Vec<Violation> {
        self.violations
            .iter()
            .filter(|v| {
                !matches!(
                    v.kind,
                    ViolationKind::RatingThreat | ViolationKind::RatingNeedExamination
                )
            })
            .cloned()
            .collect()
    }

    /// The value of header `name` (lower case), if the event kept it.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The request head as the engine reads it (method, target, header fields as kept).
    pub fn head(&self) -> http::request::Parts {
        let uri: http::Uri = self
            .uri
            .parse()
            .unwrap_or_else(|_| http::Uri::from_static("/"));
        let mut b = http::Request::builder()
            .method(http::Method::from_bytes(self.method.as_bytes()).unwrap_or(http::Method::GET))
            .uri(uri);
        for (n, v) in &self.headers {
            if let (Ok(n), Ok(v)) = (
                http::HeaderName::from_bytes(n.as_bytes()),
                http::HeaderValue::from_str(v),
            ) {
                b = b.header(n, v);
            }
        }
        b.body(())
            .unwrap_or_else(|_| http::Request::new(()))
            .into_parts()
            .0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn stored_events_read_back() {
        let e = json!({"supportId": "42", "timeMicros": 7, "clientIp": "192.0.2.1", "method": "POST",
            "uri": "/a?b=1", "policyFullPath": "/Common/p", "action": "block",
            "headers": [["content-type", "application/json"], ["user-agent", "Mozilla/5.0"]],
            "violations": [
                {"kind": "VIOL_ATTACK_SIGNATURE", "context": "parameter", "name": "b", "snippet": "1",
                 "signature_ids": [200001]},
                {"kind": "VIOL_PARAMETER_VALUE_METACHAR", "context": "query", "detail": "metacharacter 0x27",
                 "signatureIds": [], "staged": true},
                {"kind": "VIOL_NOT_KNOWN_HERE", "context": "url"}]});
        let r = Request::from_stored(&e);
        assert_eq!(r.violations.len(), 2);
        assert_eq!(r.violations[0].signature_ids, [200001]);
        assert_eq!(r.violations[0].context, Context::Parameter);
        assert!(r.violations[1].staged);
        assert_eq!(r.header("user-agent"), Some("Mozilla/5.0"));
        let h = r.head();
        assert_eq!(h.method, http::Method::POST);
        assert_eq!(h.uri.query(), Some("b=1"));
        assert_eq!(h.headers["content-type"], "application/json");
    }
}
