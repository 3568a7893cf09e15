//! The HTTPS client the central manager uses to call a controller's `/mgmt` REST API.
//!
//! Every call is one exchange of the one outbound client (`support::outbound`: one TLS
//! connection, so the certificate is re-checked every time, bounded by a per-attempt timeout
//! covering connect, handshake, request and the whole response body); this layer adds the pin,
//! the credentials and the retries. A call is retried a bounded number of times with
//! exponential back-off when the controller could not be reached. A call is never retried after the
//! controller answered (any HTTP status), and a POST/PATCH is retried only when the request cannot
//! have reached the controller (connect or handshake failure), so a task never runs twice.
//!
//! Trust is a pinned SHA-256 fingerprint of the controller's certificate: with a pin, a handshake
//! presenting any other certificate fails with [`ClientError::CertificateChanged`]; without one
//! (the trust task's first contact), the fingerprint seen is reported by [`ControllerClient::fingerprint`].
//! Handshake signatures are always verified (`support::pin`).

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use bytes::Bytes;
use http::{Method, StatusCode};
use serde_json::Value;

use portcullis_support::Guard;
use portcullis_support::pin::{self, Pinned};
use portcullis_support::{Bounds, Call, Outbound, OutboundError};

/// Largest response body read from a controller.
pub const MAX_RESPONSE_BYTES: usize = 64 * 1024 * 1024;

/// How a client authenticates to the controller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Auth {
    /// HTTP Basic on every request (controllers accept it on every endpoint).
    Basic { user: String, password: String },
    /// `X-F5-Auth-Token`, from `POST /mgmt/shared/authn/login`.
    Token(String),
    /// No credentials (only to read the certificate).
    None,
}

/// Timeouts and retries of outbound calls (the `central` section of the config file).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallLimits {
    /// One attempt: connect + TLS + request + the whole response.
    pub timeout: Duration,
    /// Extra attempts after the first when the controller could not be reached.
    pub retries: u32,
    /// Back-off before the first retry; doubled for each further one.
    pub backoff: Duration,
}

impl Default for CallLimits {
    fn default() -> Self {
        CallLimits {
            timeout: Duration::from_secs(10),
            retries: 2,
            backoff: Duration::from_millis(250),
        }
    }
}

/// Why a call to a controller failed; `Display` is the message tasks show as `errorMessage`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ClientError {
    #[error("device {addr} is unreachable: {detail}")]
    Unreachable { addr: String, detail: String },
    #[error("device {addr} did not answer within {secs} s ({attempts} attempts)")]
    Timeout {
        addr: String,
        secs: u64,
        attempts: u32,
    },
    #[error("TLS handshake with device {addr} failed: {detail}")]
    Tls { addr: String, detail: String },
    #[error(
        "the certificate of device {addr} changed: trusted fingerprint {expected}, presented {presented}; re-establish trust if the change is expected"
    )]
    CertificateChanged {
        addr: String,
        expected: String,
        presented: String,
    },
    #[error("device {addr} refused the credentials: {message}")]
    Unauthorized { addr: String, message: String },
    #[error("device {addr} answered {status} to {method} {path}: {message}")]
    Status {
        addr: String,
        status: u16,
        method: String,
        path: String,
        message: String,
    },
    #[error("device {addr} sent an unreadable answer to {path}: {detail}")]
    BadResponse {
        addr: String,
        path: String,
        detail: String,
    },
}

impl ClientError {
    /// The HTTP status the controller answered, if it answered.
    pub fn status(&self) -> Option<u16> {
        match self {
            ClientError::Status { status, .. } => Some(*status),
            ClientError::Unauthorized { .. } => Some(401),
            _ => None,
        }
    }
}

/// A client for one controller: `host:port`, credentials, an optional pinned fingerprint, limits.
#[derive(Clone, Debug)]
pub struct ControllerClient {
    host: String,
    port: u16,
    auth: Auth,
    pin: Option<String>,
    limits: CallLimits,
}

/// One outbound operation, repeated by the retry loop.
enum Op {
    Fingerprint,
    Request {
        method: Method,
        path: String,
        body: Option<Bytes>,
    },
}

enum Answer {
    Fingerprint(String),
    Response(StatusCode, Value),
}

/// What went wrong in one attempt, and whether the request may have reached the controller.
struct Attempt {
    err: ClientError,
    /// The request was possibly delivered (only idempotent methods are retried then).
    delivered: bool,
    /// Worth retrying at all (unreachable, timeout), as opposed to a definitive answer.
    transient: bool,
}

impl ControllerClient {
    /// A client for `address` (`host`, `host:port`, `[v6]:port`; port 443 by default).
    pub fn new(address: &str, auth: Auth, pin: Option<String>, limits: CallLimits) -> Self {
        let (host, port) = split_address(address);
        ControllerClient {
            host,
            port,
            auth,
            pin,
            limits,
        }
    }

    /// `host:port` as called.
    pub fn address(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    pub fn host(&self) -> &str {
        &self.host
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The same client with other credentials.
    pub fn with_auth(mut self, auth: Auth) -> Self {
        self.auth = auth;
        self
    }

    /// Connects (with retries) and returns the SHA-256 fingerprint of the certificate presented;
    /// fails with `CertificateChanged` when a pin is set and differs.
    pub async fn fingerprint(&self) -> Result<String, ClientError> {
        match self.with_retries(&Op::Fingerprint).await? {
            Answer::Fingerprint(fingerprint) => Ok(fingerprint),
            Answer::Response(..) => Err(ClientError::BadResponse {
                addr: self.address(),
                path: String::new(),
                detail: "no certificate was seen".into(),
            }),
        }
    }

    /// GET returning the parsed JSON body; any status outside 2xx is an error.
    pub async fn get_json(&self, path: &str) -> Result<Value, ClientError> {
        self.call(Method::GET, path, None).await
    }

    pub async fn post_json(&self, path: &str, body: &Value) -> Result<Value, ClientError> {
        self.call(Method::POST, path, Some(body)).await
    }

    pub async fn put_json(&self, path: &str, body: &Value) -> Result<Value, ClientError> {
        self.call(Method::PUT, path, Some(body)).await
    }

    pub async fn patch_json(&self, path: &str, body: &Value) -> Result<Value, ClientError> {
        self.call(Method::PATCH, path, Some(body)).await
    }

    /// DELETE; a 2xx answer (with or without a body) is success.
    pub async fn delete(&self, path: &str) -> Result<(), ClientError> {
        self.call(Method::DELETE, path, None).await.map(|_| ())
    }

    /// One request returning the status and the JSON body (`Null` when empty) without judging the
    /// status: for callers that treat 404 as "absent". Transport failures are still errors.
    pub async fn request(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(StatusCode, Value), ClientError> {
        let op = Op::Request {
            method,
            path: path.to_string(),
            body: body.map(|b| Bytes::from(b.to_string())),
        };
        match self.with_retries(&op).await? {
            Answer::Response(status, v) => Ok((status, v)),
            Answer::Fingerprint(_) => Ok((StatusCode::OK, Value::Null)),
        }
    }

    async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, ClientError> {
        let (status, v) = self.request(method.clone(), path, body).await?;
        if status.is_success() {
            return Ok(v);
        }
        let message = v
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| {
                v.get(0)
                    .and_then(|e| e.get("message"))
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .unwrap_or_else(|| {
                status
                    .canonical_reason()
                    .unwrap_or("no message")
                    .to_string()
            });
        if status == StatusCode::UNAUTHORIZED {
            return Err(ClientError::Unauthorized {
                addr: self.address(),
                message,
            });
        }
        Err(ClientError::Status {
            addr: self.address(),
            status: status.as_u16(),
            method: method.to_string(),
            path: path.to_string(),
            message,
        })
    }

    /// Runs `f` up to `1 + retries` times while it fails transiently and may be repeated.
    async fn with_retries(&self, op: &Op) -> Result<Answer, ClientError> {
        let idempotent = match op {
            Op::Fingerprint => true,
            Op::Request { method, .. } => {
                matches!(*method, Method::GET | Method::PUT | Method::DELETE)
            }
        };
        let attempts = self.limits.retries + 1;
        let mut delay = self.limits.backoff;
        let mut n = 0;
        loop {
            n += 1;
            match self.attempt(op).await {
                Ok(v) => return Ok(v),
                Err(a) if a.transient && n < attempts && (idempotent || !a.delivered) => {
                    tracing::debug!(device = %self.address(), error = %a.err, attempt = n, "retrying");
                    tokio::time::sleep(delay).await;
                    delay = delay.saturating_mul(2);
                }
                Err(a) => {
                    return Err(match a.err {
                        ClientError::Timeout { addr, secs, .. } => ClientError::Timeout {
                            addr,
                            secs,
                            attempts: n,
                        },
                        e => e,
                    });
                }
            }
        }
    }

    async fn attempt(&self, op: &Op) -> Result<Answer, Attempt> {
        match op {
            Op::Fingerprint => Ok(Answer::Fingerprint(self.handshake().await?)),
            Op::Request { method, path, body } => {
                let (s, v) = self.once(method.clone(), path, body.clone()).await?;
                Ok(Answer::Response(s, v))
            }
        }
    }

    /// The one outbound client over a TLS configuration pinned to `self.pin` (the verifier
    /// records the fingerprint seen). Controllers are operator-configured, often on private
    /// addresses: no destination guard.
    fn outbound(&self) -> Result<(Outbound, Arc<Pinned>), Attempt> {
        let (mut cfg, verifier) = pin::client_config(self.pin.clone()).map_err(|e| Attempt {
            err: ClientError::Tls {
                addr: self.address(),
                detail: e.to_string(),
            },
            delivered: false,
            transient: false,
        })?;
        cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
        let outbound = Outbound {
            bounds: Bounds {
                max_bytes: MAX_RESPONSE_BYTES,
                timeout: self.limits.timeout,
            },
            guard: Guard::open(),
            tls: Arc::new(cfg),
        };
        Ok((outbound, verifier))
    }

    fn url(&self, path: &str) -> String {
        format!("https://{}{path}", self.address())
    }

    /// What a failed exchange means for the retry loop.
    fn failed(&self, e: OutboundError, verifier: &Pinned, path: &str) -> Attempt {
        let addr = self.address();
        let (err, delivered, transient) = match e {
            OutboundError::Resolve { detail, .. } | OutboundError::Connect { detail, .. } => {
                (ClientError::Unreachable { addr, detail }, false, true)
            }
            OutboundError::Refused(detail) => {
                (ClientError::Unreachable { addr, detail }, false, true)
            }
            OutboundError::Tls {
                detail,
                certificate,
                ..
            } => match (&self.pin, verifier.seen()) {
                (Some(p), Some(s)) if !p.eq_ignore_ascii_case(&s) => (
                    ClientError::CertificateChanged {
                        addr,
                        expected: p.clone(),
                        presented: s,
                    },
                    false,
                    false,
                ),
                _ => (ClientError::Tls { addr, detail }, false, !certificate),
            },
            OutboundError::Exchange(detail) => {
                (ClientError::Unreachable { addr, detail }, true, true)
            }
            OutboundError::Timeout(_) => (
                ClientError::Timeout {
                    addr,
                    secs: self.limits.timeout.as_secs().max(1),
                    attempts: 1,
                },
                true,
                true,
            ),
            e @ (OutboundError::TooLarge(_) | OutboundError::Body(_)) => (
                ClientError::BadResponse {
                    addr,
                    path: path.to_string(),
                    detail: e.to_string(),
                },
                true,
                false,
            ),
            OutboundError::BadUrl(detail) => (
                ClientError::BadResponse {
                    addr,
                    path: path.to_string(),
                    detail: format!("cannot build the request: {detail}"),
                },
                false,
                false,
            ),
        };
        Attempt {
            err,
            delivered,
            transient,
        }
    }

    /// Connects and returns the fingerprint of the certificate presented.
    async fn handshake(&self) -> Result<String, Attempt> {
        let (outbound, verifier) = self.outbound()?;
        outbound
            .handshake(&self.url("/"))
            .await
            .map_err(|e| self.failed(e, &verifier, ""))?;
        Ok(verifier.seen().unwrap_or_default())
    }

    async fn once(
        &self,
        method: Method,
        path: &str,
        body: Option<Bytes>,
    ) -> Result<(StatusCode, Value), Attempt> {
        let (outbound, verifier) = self.outbound()?;
        let mut headers = vec![
            ("accept", "application/json".to_string()),
            ("user-agent", "portcullis-central".to_string()),
        ];
        if body.is_some() {
            headers.push(("content-type", "application/json".to_string()));
        }
        match &self.auth {
            Auth::Basic { user, password } => {
                let b64 = base64::engine::general_purpose::STANDARD
                    .encode(format!("{user}:{password}").as_bytes());
                headers.push(("authorization", format!("Basic {b64}")));
            }
            Auth::Token(t) => headers.push(("x-f5-auth-token", t.clone())),
            Auth::None => {}
        }
        let url = self.url(path);
        let call = Call {
            method,
            url: &url,
            headers: &headers,
            body,
        };
        let answer = outbound
            .send(call)
            .await
            .map_err(|e| self.failed(e, &verifier, path))?;
        let (status, bytes) = (answer.status, answer.body);
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok((status, Value::Null));
        }
        match serde_json::from_slice(&bytes) {
            Ok(v) => Ok((status, v)),
            Err(_) if !status.is_success() => Ok((
                status,
                Value::String(String::from_utf8_lossy(&bytes).chars().take(200).collect()),
            )),
            Err(e) => Err(Attempt {
                err: ClientError::BadResponse {
                    addr: self.address(),
                    path: path.to_string(),
                    detail: format!("not JSON: {e}"),
                },
                delivered: true,
                transient: false,
            }),
        }
    }
}

/// Splits `host`, `host:port`, `[v6]:port`, `v6` into host and port (443 by default).
pub fn split_address(address: &str) -> (String, u16) {
    let a = address
        .trim()
        .trim_start_matches("https://")
        .trim_end_matches('/');
    if let Some(rest) = a.strip_prefix('[')
        && let Some((h, p)) = rest.split_once(']')
    {
        let port = p
            .strip_prefix(':')
            .and_then(|p| p.parse().ok())
            .unwrap_or(443);
        return (h.to_string(), port);
    }
    match a.rsplit_once(':') {
        Some((h, p)) if !h.contains(':') => match p.parse() {
            Ok(port) => (h.to_string(), port),
            Err(_) => (a.to_string(), 443),
        },
        _ => (a.to_string(), 443),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_split_with_default_port() {
        assert_eq!(split_address("10.0.0.1"), ("10.0.0.1".into(), 443));
        assert_eq!(split_address("10.0.0.1:8443"), ("10.0.0.1".into(), 8443));
        assert_eq!(split_address("[::1]:9443"), ("::1".into(), 9443));
        assert_eq!(split_address("::1"), ("::1".into(), 443));
        assert_eq!(
            split_address("https://bigip.example/"),
            ("bigip.example".into(), 443)
        );
    }

    #[tokio::test]
    async fn closed_port_is_unreachable_after_bounded_retries() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        drop(l);
        let limits = CallLimits {
            timeout: Duration::from_secs(2),
            retries: 2,
            backoff: Duration::from_millis(10),
        };
        let c = ControllerClient::new(&format!("127.0.0.1:{port}"), Auth::None, None, limits);
        let t = std::time::Instant::now();
        let e = c.get_json("/mgmt/tm/sys").await.unwrap_err();
        assert!(matches!(e, ClientError::Unreachable { .. }), "{e}");
        assert!(e.to_string().contains(&format!("127.0.0.1:{port}")), "{e}");
        assert!(t.elapsed() < Duration::from_secs(2));
    }

    #[tokio::test]
    async fn silent_server_times_out_within_the_limit() {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = l.local_addr().unwrap().port();
        let keep = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((s, _)) = l.accept().await {
                held.push(s);
            }
        });
        let limits = CallLimits {
            timeout: Duration::from_millis(300),
            retries: 1,
            backoff: Duration::from_millis(10),
        };
        let c = ControllerClient::new(&format!("127.0.0.1:{port}"), Auth::None, None, limits);
        let t = std::time::Instant::now();
        let e = c.get_json("/mgmt/tm/sys").await.unwrap_err();
        assert!(
            matches!(e, ClientError::Timeout { attempts: 2, .. }),
            "{e:?}"
        );
        assert!(t.elapsed() < Duration::from_secs(2));
        keep.abort();
    }
}
