//! One bounded HTTP exchange for access control (JWKS download, token introspection) over the
//! data plane's pooled client: a time limit for the whole exchange and a size limit on the body.
//!
//! Imports: `proxy::upstream::{Clients, ProxyBody}`, hyper, http-body-util.

use std::time::Duration;

use bytes::Bytes;
use http::header::{HOST, HeaderValue};
use http::{Request, Uri};
use http_body_util::{BodyExt, Full, Limited};

use crate::proxy::upstream::{Clients, ProxyBody};

/// Largest response body read (JWKS documents, introspection results).
pub const MAX_RESPONSE_BYTES: usize = 256 << 10;

/// Why an exchange gave no usable answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    #[error("timed out")]
    Timeout,
    #[error("{0}")]
    Failed(String),
}

/// Sends `method` `url` with `headers` and `body`; returns the status and the body.
pub async fn exchange(
    clients: &Clients,
    method: http::Method,
    url: &str,
    headers: &[(&'static str, String)],
    body: Option<String>,
    timeout: Duration,
) -> Result<(u16, Bytes), FetchError> {
    let uri: Uri = url
        .parse()
        .map_err(|e| FetchError::Failed(format!("bad URL: {e}")))?;
    let authority = uri
        .authority()
        .ok_or_else(|| FetchError::Failed("URL has no host".into()))?
        .clone();
    let payload: ProxyBody = Full::new(Bytes::from(body.unwrap_or_default()))
        .map_err(|e| match e {})
        .boxed_unsync();
    let mut req = Request::new(payload);
    *req.method_mut() = method;
    *req.uri_mut() = uri;
    let h = req.headers_mut();
    if let Ok(v) = HeaderValue::from_str(authority.as_str()) {
        h.insert(HOST, v);
    }
    for (k, v) in headers {
        if let Ok(v) = HeaderValue::from_str(v) {
            h.insert(*k, v);
        }
    }
    let work = async {
        let res = clients
            .http1
            .request(req)
            .await
            .map_err(|e| FetchError::Failed(e.to_string()))?;
        let status = res.status().as_u16();
        let body = Limited::new(res.into_body(), MAX_RESPONSE_BYTES)
            .collect()
            .await
            .map_err(|e| FetchError::Failed(format!("reading the body: {e}")))?
            .to_bytes();
        Ok((status, body))
    };
    match tokio::time::timeout(timeout, work).await {
        Ok(r) => r,
        Err(_) => Err(FetchError::Timeout),
    }
}
