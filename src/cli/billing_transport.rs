//! The billing tool's HTTPS: GETs against the central manager's admin API with Basic credentials,
//! and the POST of the report to the billing endpoint. Every call has a deadline and bounded
//! retries (connection failures only: a request the server answered is never repeated).
//! Blocking API over a private current-thread runtime (the tool is a short-lived CLI).

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use serde_json::Value;

use crate::central::{Auth, CallLimits, ClientError, ControllerClient};
use crate::proxy::{TlsConfigError, tls_client_config};
use crate::support::Guard;
use crate::support::{Bounds, Call, Outbound, OutboundError};

/// Deadline of one request (connect, TLS, answer and body).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Attempts per request when the connection itself fails.
pub const ATTEMPTS: u32 = 3;
/// Largest answer read.
pub const MAX_ANSWER_BYTES: usize = 64 << 20;

/// Why the central manager or the billing endpoint cannot be reached, or refused; `Display` is
/// what `billing-report` prints before it exits.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    #[error("runtime: {0}")]
    Runtime(#[source] std::io::Error),
    #[error("{}: {source}", .path.display())]
    CaRead {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The CA file given with the option `option` is not usable.
    #[error("{option} ({}): {source}", .path.display())]
    Ca {
        option: &'static str,
        path: PathBuf,
        source: TlsConfigError,
    },
    #[error(transparent)]
    Tls(TlsConfigError),
    #[error("--central {url}: {source}")]
    CentralUrl {
        url: String,
        source: http::uri::InvalidUri,
    },
    #[error("--central must be an https://host[:port] URL (got {url})")]
    CentralNotHttps { url: String },
    #[error(
        "{url} is not a loopback address: give the central manager's certificate fingerprint with --central-fingerprint"
    )]
    NotLoopback { url: String },
    #[error("the central manager at {base} refused the credentials of user {user}")]
    Credentials { base: String, user: String },
    /// A call to the central manager failed (the client's message names it "device").
    #[error("central manager at {base}: {}", .source.to_string().replacen("device ", "", 1))]
    Central {
        base: String,
        source: Box<ClientError>,
    },
    #[error("billing endpoint {url}: {source}")]
    EndpointUrl {
        url: String,
        source: http::uri::InvalidUri,
    },
    #[error("the billing endpoint must be an https:// URL (got {url})")]
    EndpointNotHttps { url: String },
    #[error("{target}: no answer within {}s", REQUEST_TIMEOUT.as_secs())]
    Timeout { target: String },
    #[error("{target}: {source}")]
    Send {
        target: String,
        source: Box<OutboundError>,
    },
    /// Every attempt failed before anything was sent; `last` is the last attempt's reason.
    #[error("{target}: cannot connect ({last}) after {ATTEMPTS} attempts")]
    Connect { target: String, last: String },
    #[error("{target} refused the report: HTTP {status} {answer}")]
    Refused {
        target: String,
        status: u16,
        /// The start of the endpoint's answer, trimmed.
        answer: String,
    },
}

fn runtime() -> Result<tokio::runtime::Runtime, TransportError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(TransportError::Runtime)
}

fn tls_from(
    ca: Option<&Path>,
    option: &'static str,
) -> Result<Arc<rustls::ClientConfig>, TransportError> {
    match ca {
        Some(p) => {
            let pem = std::fs::read(p).map_err(|source| TransportError::CaRead {
                path: p.to_path_buf(),
                source,
            })?;
            tls_client_config(Some(&pem)).map_err(|source| TransportError::Ca {
                option,
                path: p.to_path_buf(),
                source,
            })
        }
        None => tls_client_config(None).map_err(TransportError::Tls),
    }
}

/// One POST with retries when nothing was sent (the connection could not be made); returns the
/// status and the body.
async fn post_with_retries(
    outbound: &Outbound,
    url: &str,
    body: Bytes,
    target: &str,
) -> Result<(u16, Bytes), TransportError> {
    let mut last = String::new();
    let headers = [("content-type", "application/json".to_string())];
    for attempt in 0..ATTEMPTS {
        if attempt > 0 {
            tokio::time::sleep(Duration::from_millis(300 * u64::from(attempt))).await;
        }
        let call = Call {
            method: http::Method::POST,
            url,
            headers: &headers,
            body: Some(body.clone()),
        };
        match outbound.send(call).await {
            Ok(answer) => return Ok((answer.status.as_u16(), answer.body)),
            Err(OutboundError::Timeout(_)) => {
                return Err(TransportError::Timeout {
                    target: target.to_string(),
                });
            }
            Err(e) if e.nothing_sent() => last = e.to_string(),
            Err(source) => {
                return Err(TransportError::Send {
                    target: target.to_string(),
                    source: Box::new(source),
                });
            }
        }
    }
    Err(TransportError::Connect {
        target: target.to_string(),
        last,
    })
}

/// The central manager's admin API as the billing tool uses it: `central::ControllerClient`
/// (the central manager speaks the same `/mgmt` API as a controller) driven from a private runtime.
pub struct CentralApi {
    rt: tokio::runtime::Runtime,
    client: ControllerClient,
    base: String,
    user: String,
}

fn is_loopback_url(uri: &http::Uri) -> bool {
    match uri
        .host()
        .map(|h| h.trim_start_matches('[').trim_end_matches(']'))
    {
        Some("localhost") => true,
        Some(h) => h.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback()),
        None => false,
    }
}

impl CentralApi {
    /// Checks the URL and prepares the client. With `pin` (the SHA-256 fingerprint of the central
    /// manager's certificate, `AA:BB:...`) any other certificate is refused; without it only a
    /// loopback central manager is accepted (its self-signed certificate is not verified, as the
    /// original script's local calls).
    pub fn connect(
        url: &str,
        pin: Option<&str>,
        user: &str,
        password: &str,
    ) -> Result<Self, TransportError> {
        let base = url.trim().trim_end_matches('/').to_string();
        let uri: http::Uri = base.parse().map_err(|source| TransportError::CentralUrl {
            url: url.to_string(),
            source,
        })?;
        let bare = uri.path().is_empty() || uri.path() == "/";
        if uri.scheme_str() != Some("https")
            || uri.host().is_none()
            || !bare
            || uri.query().is_some()
        {
            return Err(TransportError::CentralNotHttps {
                url: url.to_string(),
            });
        }
        if pin.is_none() && !is_loopback_url(&uri) {
            return Err(TransportError::NotLoopback {
                url: url.to_string(),
            });
        }
        let limits = CallLimits {
            timeout: REQUEST_TIMEOUT,
            retries: ATTEMPTS - 1,
            ..CallLimits::default()
        };
        let auth = Auth::Basic {
            user: user.to_string(),
            password: password.to_string(),
        };
        let authority = uri.authority().map(|a| a.as_str()).unwrap_or_default();
        Ok(CentralApi {
            rt: runtime()?,
            client: ControllerClient::new(authority, auth, pin.map(str::to_string), limits),
            base,
            user: user.to_string(),
        })
    }

    /// GET of a `/mgmt` path; failures name the central manager and the reason.
    pub fn get_json(&self, path: &str) -> Result<Value, TransportError> {
        self.rt
            .block_on(self.client.get_json(path))
            .map_err(|e| match e {
                ClientError::Unauthorized { .. } => TransportError::Credentials {
                    base: self.base.clone(),
                    user: self.user.clone(),
                },
                source => TransportError::Central {
                    base: self.base.clone(),
                    source: Box::new(source),
                },
            })
    }
}

/// POSTs the report to the billing endpoint over TLS (certificate verified against `ca`, or the
/// public roots). Returns the endpoint's status line on success.
pub fn upload(url: &str, ca: Option<&Path>, report: Vec<u8>) -> Result<String, TransportError> {
    let uri: http::Uri = url.parse().map_err(|source| TransportError::EndpointUrl {
        url: url.to_string(),
        source,
    })?;
    if uri.scheme_str() != Some("https") || uri.host().is_none() {
        return Err(TransportError::EndpointNotHttps {
            url: url.to_string(),
        });
    }
    let tls = tls_from(ca, "--upload-ca")?;
    let rt = runtime()?;
    // The endpoint is the operator's, and may well be a private address: no destination guard.
    let outbound = Outbound {
        bounds: Bounds {
            max_bytes: MAX_ANSWER_BYTES,
            timeout: REQUEST_TIMEOUT,
        },
        guard: Guard::open(),
        tls,
    };
    let target = format!("billing endpoint {url}");
    let (status, answer) = rt.block_on(post_with_retries(
        &outbound,
        url,
        Bytes::from(report),
        &target,
    ))?;
    if !(200..300).contains(&status) {
        let text = String::from_utf8_lossy(&answer[..answer.len().min(200)]).into_owned();
        return Err(TransportError::Refused {
            target,
            status,
            answer: text.trim().to_string(),
        });
    }
    Ok(format!("HTTP {status}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn central_url_must_be_https_and_loopback_without_a_pin() {
        let _ = rustls::crypto::ring::default_provider().install_default();
        assert!(matches!(
            CentralApi::connect("http://127.0.0.1:8443", None, "admin", "x"),
            Err(TransportError::CentralNotHttps { .. })
        ));
        let e = CentralApi::connect("https://cm.example:8443", None, "admin", "x")
            .err()
            .unwrap();
        assert!(matches!(e, TransportError::NotLoopback { .. }), "{e}");
        assert!(e.to_string().contains("--central-fingerprint"), "{e}");
        assert!(
            CentralApi::connect("https://cm.example:8443", Some("AA:BB"), "admin", "x").is_ok()
        );
        assert!(CentralApi::connect("https://127.0.0.1:8443/mgmt", None, "admin", "x").is_err());
        assert!(CentralApi::connect("https://127.0.0.1:8443/", None, "admin", "x").is_ok());
        assert!(CentralApi::connect("https://[::1]:8443", None, "admin", "x").is_ok());
    }

    #[test]
    fn dead_endpoints_fail_after_bounded_attempts() {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let e = upload(&format!("https://127.0.0.1:{port}/r"), None, b"{}".to_vec()).unwrap_err();
        assert!(matches!(e, TransportError::Connect { .. }), "{e}");
        let e = e.to_string();
        assert!(
            e.contains("cannot connect") && e.contains("3 attempts"),
            "{e}"
        );
        assert!(
            upload("http://127.0.0.1/", None, vec![])
                .unwrap_err()
                .to_string()
                .contains("https://")
        );
    }
}
