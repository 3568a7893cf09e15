//! The Splunk HTTP Event Collector sender: events (already HEC envelopes, `super::siem::hec_event`)
//! wait in a drop-oldest queue (`super::sender`) and are posted in batches of up to `batchEvents`,
//! or what has come within `flushMs`, as one `POST /services/collector/event` with
//! `Authorization: Splunk <token>` on a kept-alive HTTP/1.1 connection (HTTPS with the entry's TLS
//! settings). A batch the collector did not take (no connection, 5xx, 429) goes back to the front
//! of the queue and is posted again with backoff; one it refuses for good (4xx: a wrong token, a
//! bad index) is dropped and counted, so a misconfiguration cannot hold the queue.

use std::net::SocketAddr;

use bytes::{Bytes, BytesMut};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use portcullis_support::task;
use tokio::net::TcpStream;
use tokio::runtime::Handle;

use super::config::Hec;
use super::sender::{Framing, IO_TIMEOUT, MAX_BACKOFF, MIN_BACKOFF, Output, output};

/// Most of a HEC answer read (it is a short JSON status).
const MAX_ANSWER: usize = 64 << 10;

/// How one post went.
enum Posted {
    Accepted,
    /// Not accepted now; the batch is posted again.
    Retry(String),
    /// Refused for good; the batch is dropped.
    Refused(String),
}

struct Target {
    uri: http::Uri,
    host: String,
    port: u16,
    tls: Option<tokio_rustls::TlsConnector>,
    hec: Hec,
}

impl Target {
    async fn connect(&self) -> Result<SendRequest<Full<Bytes>>, String> {
        let addrs: Vec<SocketAddr> = tokio::net::lookup_host((self.host.as_str(), self.port))
            .await
            .map_err(|e| format!("cannot resolve {}: {e}", self.host))?
            .collect();
        let addr = addrs
            .first()
            .ok_or_else(|| format!("{} has no address", self.host))?;
        let tcp = tokio::time::timeout(IO_TIMEOUT, TcpStream::connect(addr))
            .await
            .map_err(|_| "connect timed out".to_string())?
            .map_err(|e| format!("connect failed: {e}"))?;
        let _ = tcp.set_nodelay(true);
        macro_rules! handshake {
            ($io:expr) => {{
                let (send, conn) = hyper::client::conn::http1::handshake(TokioIo::new($io))
                    .await
                    .map_err(|e| format!("HTTP handshake failed: {e}"))?;
                task::spawn(async move {
                    let _ = conn.await;
                });
                Ok(send)
            }};
        }
        match &self.tls {
            None => handshake!(tcp),
            Some(c) => {
                let name = super::tls::server_name(&self.hec.tls, &self.host)
                    .map_err(|e| e.to_string())?;
                let tls = tokio::time::timeout(IO_TIMEOUT, c.connect(name, tcp))
                    .await
                    .map_err(|_| "TLS handshake timed out".to_string())?
                    .map_err(|e| format!("TLS handshake failed: {e}"))?;
                handshake!(tls)
            }
        }
    }

    async fn post(&self, send: &mut SendRequest<Full<Bytes>>, body: Bytes) -> Posted {
        let req = http::Request::post(self.uri.clone())
            .header(
                http::header::HOST,
                self.uri.authority().map_or("", |a| a.as_str()),
            )
            .header(
                http::header::AUTHORIZATION,
                format!("Splunk {}", self.hec.token),
            )
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(Full::new(body));
        let Ok(req) = req else {
            return Posted::Refused("the request cannot be built".into());
        };
        let answer = tokio::time::timeout(IO_TIMEOUT, async {
            let res = send.send_request(req).await.map_err(|e| e.to_string())?;
            let status = res.status();
            let body = http_body_util::Limited::new(res.into_body(), MAX_ANSWER)
                .collect()
                .await
                .map_err(|e| e.to_string())?
                .to_bytes();
            Ok::<_, String>((status, body))
        })
        .await;
        match answer {
            Err(_) => Posted::Retry("no answer in time".into()),
            Ok(Err(e)) => Posted::Retry(e),
            Ok(Ok((s, _))) if s.is_success() => Posted::Accepted,
            Ok(Ok((s, body))) => {
                let why = format!("HTTP {s}: {}", String::from_utf8_lossy(&body).trim());
                if s.is_server_error() || s == http::StatusCode::TOO_MANY_REQUESTS {
                    Posted::Retry(why)
                } else {
                    Posted::Refused(why)
                }
            }
        }
    }
}

/// Why a HEC endpoint cannot be used; the event router logs it.
#[derive(Debug, thiserror::Error)]
pub enum HecError {
    #[error("'{url}' is not a URL")]
    NotAUrl { url: String },
    #[error(transparent)]
    Tls(#[from] super::tls::CollectorTlsError),
}

/// A HEC sender for `hec`; the error says why the endpoint cannot be used.
pub fn sender(rt: &Handle, hec: &Hec, queue: usize) -> Result<Output, HecError> {
    let uri: http::Uri = hec.url.parse().map_err(|_| HecError::NotAUrl {
        url: hec.url.clone(),
    })?;
    let https = uri.scheme_str() == Some("https");
    let host = uri.host().unwrap_or_default().to_string();
    let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
    let tls = https
        .then(|| super::tls::connector(&hec.tls, &[b"http/1.1"]))
        .transpose()?;
    let (out, q) = output(format!("hec:{}", hec.url), Framing::Raw, queue);
    let target = Target {
        host: host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string(),
        uri,
        port,
        tls,
        hec: hec.clone(),
    };
    task::spawn_on(rt, async move {
        let mut conn: Option<SendRequest<Full<Bytes>>> = None;
        let mut backoff = MIN_BACKOFF;
        let mut failures = 0u64;
        loop {
            q.fill(
                target.hec.batch,
                tokio::time::Instant::now() + target.hec.flush,
            )
            .await;
            let batch = q.next(target.hec.batch).await;
            if batch.is_empty() {
                return;
            }
            if conn.as_ref().is_none_or(|c| c.is_closed()) {
                conn = target
                    .connect()
                    .await
                    .inspect_err(|e| retry_later(&target.hec.url, &mut failures, e))
                    .ok();
            }
            let posted = match conn.as_mut() {
                Some(c) => {
                    let mut body = BytesMut::with_capacity(batch.iter().map(Bytes::len).sum());
                    for e in &batch {
                        body.extend_from_slice(e);
                    }
                    target.post(c, body.freeze()).await
                }
                None => Posted::Retry(String::new()),
            };
            match posted {
                Posted::Accepted => {
                    q.delivered(batch.len());
                    backoff = MIN_BACKOFF;
                    failures = 0;
                }
                Posted::Refused(why) => {
                    q.discarded(batch.len());
                    tracing::warn!(url = %target.hec.url, events = batch.len(), "security log: HEC refused a batch, dropped: {why}");
                }
                Posted::Retry(_) if q.is_closed() => return,
                Posted::Retry(why) => {
                    if !why.is_empty() {
                        conn = None;
                        retry_later(&target.hec.url, &mut failures, &why);
                    }
                    q.requeue(batch);
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                }
            }
        }
    });
    Ok(out)
}

/// Counts a failure, logged at powers of two.
fn retry_later(url: &str, failures: &mut u64, why: &str) {
    *failures += 1;
    if failures.is_power_of_two() {
        tracing::warn!(%url, failures, "security log: HEC did not take a batch, retrying: {why}");
    }
}
