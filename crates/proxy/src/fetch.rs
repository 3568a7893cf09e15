//! One bounded HTTP exchange with an absolute `http(s)://` URL over the data plane's upstream
//! connections (`Clients`): a time limit for the whole exchange and a size limit on the answer.
//! Used off the request path by access control (JWKS, token introspection), the policy-link
//! resolver of `portcullis proxy`, and the billing tool's upload.

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http::header::{HOST, HeaderValue};
use http::{Request, Uri};
use http_body_util::{BodyExt, Full};

use super::conns::SendError;
use super::upstream::{BoxError, Clients, Member, ProxyBody};

/// Why an exchange gave no usable answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    #[error("timed out")]
    Timeout,
    /// The TCP or TLS connection could not be made (nothing was sent: safe to retry).
    #[error("cannot connect: {0}")]
    Connect(String),
    #[error("{0}")]
    Failed(String),
}

/// Connections of their own for exchanges made outside the data plane (the billing tool's
/// upload), so that the upstream pools stay the data plane's.
pub struct Outbound(Clients);

impl Outbound {
    /// Pools over `tls`, with `connect_timeout` for each TCP connect and TLS handshake.
    pub fn new(tls: std::sync::Arc<rustls::ClientConfig>, connect_timeout: Duration) -> Self {
        Outbound(Clients::new(tls, connect_timeout))
    }

    /// [`exchange`] over these connections.
    pub async fn exchange(
        &self,
        method: http::Method,
        url: &str,
        headers: &[(&'static str, String)],
        body: Option<Bytes>,
        timeout: Duration,
        limit: usize,
    ) -> Result<(u16, Bytes), FetchError> {
        exchange(&self.0, method, url, headers, body, timeout, limit).await
    }
}

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
) -> Result<(u16, Bytes), FetchError> {
    let uri: Uri = url
        .parse()
        .map_err(|e| FetchError::Failed(format!("bad URL: {e}")))?;
    let (Some(scheme), Some(authority)) = (uri.scheme_str(), uri.authority()) else {
        return Err(FetchError::Failed("not an absolute http(s) URL".into()));
    };
    let member =
        Member::parse(&format!("{scheme}://{authority}"), true).map_err(FetchError::Failed)?;
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
    let work = async {
        let res = clients
            .send(&member, false, req)
            .await
            .map_err(|e| match e {
                SendError::Connect(e) => FetchError::Connect(e.to_string()),
                other => FetchError::Failed(other.to_string()),
            })?;
        let status = res.status().as_u16();
        // Collected by hand: `Limited` over the boxed body trips a higher-ranked `Send` check
        // when this future is awaited inside the request handler.
        let mut body = res.into_body();
        let mut answer = BytesMut::new();
        while let Some(frame) = body.frame().await {
            let frame =
                frame.map_err(|e| FetchError::Failed(format!("reading the answer: {e}")))?;
            if let Ok(data) = frame.into_data() {
                if answer.len() + data.len() > limit {
                    return Err(FetchError::Failed(format!(
                        "the answer is larger than {limit} bytes"
                    )));
                }
                answer.extend_from_slice(&data);
            }
        }
        Ok((status, answer.freeze()))
    };
    match tokio::time::timeout(timeout, work).await {
        Ok(r) => r,
        Err(_) => Err(FetchError::Timeout),
    }
}
