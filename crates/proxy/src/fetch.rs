//! One bounded HTTP exchange with an absolute `http(s)://` URL over the data plane's pooled
//! upstream connections (`Clients`), for access control (JWKS, token introspection): token
//! introspection can run for requests in flight, so it reuses connections rather than opening
//! one per call as `support::outbound` does. The bounds (the whole exchange within a timeout,
//! the answer's size) and the error type are `support::outbound`'s; the endpoints are the
//! operator's (no destination guard, as `Guard::open`).

use std::time::Duration;

use bytes::Bytes;
use http::header::{HOST, HeaderValue};
use http::{Request, Uri};
use http_body_util::{BodyExt, Full};

use super::conns::SendError;
use super::upstream::{BoxError, Clients, Member, ProxyBody};
use portcullis_support::{OutboundError, collect_bounded, within};

/// Sends `method` `url` with `headers` and `body`; returns the status and at most `limit` bytes
/// of answer (a longer answer is an error).
pub async fn exchange(
    clients: &Clients,
    method: http::Method,
    url: &str,
    headers: &[(&'static str, String)],
    body: Option<Bytes>,
    timeout: Duration,
    limit: usize,
) -> Result<(u16, Bytes), OutboundError> {
    let uri: Uri = url
        .parse()
        .map_err(|e| OutboundError::BadUrl(format!("not a valid URL ({url}): {e}")))?;
    let (Some(scheme), Some(authority)) = (uri.scheme_str(), uri.authority()) else {
        return Err(OutboundError::BadUrl("not an absolute http(s) URL".into()));
    };
    let member = Member::parse(&format!("{scheme}://{authority}"), true)
        .map_err(|e| OutboundError::BadUrl(e.to_string()))?;
    let payload: ProxyBody = Full::new(body.unwrap_or_default())
        .map_err(|e: std::convert::Infallible| -> BoxError { match e {} })
        .boxed_unsync();
    let pq = uri
        .path_and_query()
        .cloned()
        .unwrap_or_else(|| http::uri::PathAndQuery::from_static("/"));
    let mut req = Request::new(payload);
    *req.method_mut() = method;
    *req.uri_mut() = Uri::from(pq);
    let h = req.headers_mut();
    if let Ok(v) = HeaderValue::from_str(authority.as_str()) {
        h.insert(HOST, v);
    }
    for (k, v) in headers {
        if let Ok(v) = HeaderValue::from_str(v) {
            h.insert(*k, v);
        }
    }
    within(timeout, async {
        let res = clients
            .send(&member, false, req)
            .await
            .map_err(|e| match e {
                SendError::Connect(e) => OutboundError::Connect {
                    addr: authority.to_string(),
                    detail: e.to_string(),
                },
                other => OutboundError::Exchange(other.to_string()),
            })?;
        let status = res.status().as_u16();
        Ok((status, collect_bounded(res.into_body(), limit).await?))
    })
    .await
}
