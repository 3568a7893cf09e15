//! The one outbound HTTP client: every request the process makes on its own (policy pulls, the
//! billing upload, a central manager's calls to controllers, `portcullis proxy`'s policy links)
//! goes through [`Outbound`], which owns the bounds (the whole exchange within `timeout`, at
//! most `max_bytes` of answer) and the destination guard ([`Guard`], chosen by the caller).
//!
//! Names are resolved here and the connection goes to the address the guard checked, so a name
//! that resolves to a refused address is refused too. One connection per request: these
//! requests are rare, and a fresh TLS handshake re-checks the certificate each time. The data
//! plane's access control keeps its pooled connections (`proxy::fetch`) but uses the same
//! bounds ([`within`], [`collect_bounded`]) and error type.
//!
//! Built on hyper's client connection API rather than reqwest: we resolve names ourselves and
//! connect to the checked address, which a higher-level client hides. TLS is the caller's
//! `rustls::ClientConfig` (webpki roots, an operator's CA, or a pinned certificate).

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http::{Method, StatusCode, Uri};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use super::guard::Guard;

/// How much one exchange may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// Largest answer body, in bytes.
    pub max_bytes: usize,
    /// The whole exchange: name resolution, connect, TLS, request and answer body.
    pub timeout: Duration,
}

/// Why an outbound exchange gave no answer. `Display` is the reason users see (after the link
/// or the endpoint the caller names).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OutboundError {
    /// The URL cannot be requested (not absolute http(s), no host, a bad header).
    #[error("{0}")]
    BadUrl(String),
    /// Every address of the destination is refused by the guard (the guard's reason).
    #[error("{0}")]
    Refused(String),
    #[error("cannot resolve {host}: {detail}")]
    Resolve { host: String, detail: String },
    /// The TCP connection could not be made: nothing was sent.
    #[error("connect to {addr}: {detail}")]
    Connect { addr: String, detail: String },
    /// The TLS handshake failed: nothing was sent. `certificate` when the peer's certificate
    /// was refused (retrying will not help).
    #[error("TLS with {host}: {detail}")]
    Tls {
        host: String,
        detail: String,
        certificate: bool,
    },
    /// The exchange failed once the connection was up: the request may have been delivered.
    #[error("{0}")]
    Exchange(String),
    #[error("larger than the limit of {0} bytes")]
    TooLarge(usize),
    #[error("reading the body: {0}")]
    Body(String),
    #[error("timed out after {}", seconds(*.0))]
    Timeout(Duration),
}

/// Why a GET following redirects ([`Outbound::get_following`]) gave no file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PullError {
    #[error(transparent)]
    Outbound(#[from] OutboundError),
    #[error("HTTP {0} without a Location")]
    NoLocation(StatusCode),
    #[error("redirect to an unsupported scheme ({0})")]
    RedirectScheme(String),
    #[error("HTTP status {status} from {url}")]
    Status { status: StatusCode, url: String },
    #[error("too many redirects (more than {0})")]
    TooManyRedirects(u32),
    /// The thread a synchronous caller's pull runs on could not run it.
    #[error("{0}")]
    Worker(String),
}

impl OutboundError {
    /// Nothing was sent: the request may be repeated whatever its method.
    pub fn nothing_sent(&self) -> bool {
        matches!(
            self,
            OutboundError::Resolve { .. }
                | OutboundError::Connect { .. }
                | OutboundError::Tls { .. }
                | OutboundError::Refused(_)
        )
    }
}

fn seconds(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}

/// `work` within `timeout`: the one time bound of outbound exchanges.
pub async fn within<T>(
    timeout: Duration,
    work: impl Future<Output = Result<T, OutboundError>>,
) -> Result<T, OutboundError> {
    tokio::time::timeout(timeout, work)
        .await
        .unwrap_or(Err(OutboundError::Timeout(timeout)))
}

/// Reads `body` whole, refusing more than `limit` bytes: the one size bound of outbound answers.
/// Collected frame by frame rather than with `Limited`, which over a boxed body trips a
/// higher-ranked `Send` check when awaited inside a request handler.
pub async fn collect_bounded<B>(mut body: B, limit: usize) -> Result<Bytes, OutboundError>
where
    B: hyper::body::Body<Data = Bytes> + Unpin,
    B::Error: std::fmt::Display,
{
    let mut answer = BytesMut::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| OutboundError::Body(e.to_string()))?;
        if let Ok(data) = frame.into_data() {
            if answer.len() + data.len() > limit {
                return Err(OutboundError::TooLarge(limit));
            }
            answer.extend_from_slice(&data);
        }
    }
    Ok(answer.freeze())
}

/// An answer: the status, the response headers and the body (at most `max_bytes`).
#[derive(Debug)]
pub struct Answer {
    pub status: StatusCode,
    pub headers: http::HeaderMap,
    pub body: Bytes,
}

/// A client: its bounds, its destination guard and its TLS configuration.
#[derive(Clone)]
pub struct Outbound {
    pub bounds: Bounds,
    pub guard: Guard,
    pub tls: Arc<rustls::ClientConfig>,
}

/// One request as a caller describes it.
pub struct Call<'a> {
    pub method: Method,
    pub url: &'a str,
    /// Sent after the defaults (`Host`, `User-Agent: portcullis`, `Accept: */*`), replacing them.
    pub headers: &'a [(&'static str, String)],
    pub body: Option<Bytes>,
}

impl<'a> Call<'a> {
    /// A GET with no headers of its own.
    pub fn get(url: &'a str) -> Call<'a> {
        Call {
            method: Method::GET,
            url,
            headers: &[],
            body: None,
        }
    }
}

impl Outbound {
    /// Sends `call` and reads the whole answer, within the bounds. Redirects are not followed.
    pub async fn send(&self, call: Call<'_>) -> Result<Answer, OutboundError> {
        within(self.bounds.timeout, self.send_unbounded_in_time(call)).await
    }

    /// Connects (TCP and TLS) to the host of an `https://` URL and closes again: for callers
    /// that only want to see the certificate (through their verifier).
    pub async fn handshake(&self, url: &str) -> Result<(), OutboundError> {
        within(self.bounds.timeout, async {
            let target = Target::of(url)?;
            let tcp = self.connect(&target).await?;
            self.tls_over(&target, tcp).await.map(drop)
        })
        .await
    }

    /// GETs `url` following at most `max_redirects` redirects (each target checked by the guard
    /// again), all within the time bound; the body of the first 2xx answer.
    pub async fn get_following(&self, url: &str, max_redirects: u32) -> Result<Vec<u8>, PullError> {
        let pull = async {
            let mut url = url.to_string();
            for _ in 0..=max_redirects {
                let answer = self.send_unbounded_in_time(Call::get(&url)).await?;
                let status = answer.status;
                if status.is_redirection() {
                    let loc = answer
                        .headers
                        .get(http::header::LOCATION)
                        .and_then(|v| v.to_str().ok())
                        .ok_or(PullError::NoLocation(status))?;
                    url = redirect_target(&Target::of(&url)?.uri, loc)?;
                    continue;
                }
                if !status.is_success() {
                    return Err(PullError::Status { status, url });
                }
                return Ok(answer.body.to_vec());
            }
            Err(PullError::TooManyRedirects(max_redirects))
        };
        within(self.bounds.timeout, async { Ok(pull.await) }).await?
    }

    /// [`Outbound::send`] without its time bound, for callers that bound several sends at once
    /// (a pull following redirects).
    async fn send_unbounded_in_time(&self, call: Call<'_>) -> Result<Answer, OutboundError> {
        let target = Target::of(call.url)?;
        let req = request(&target, call)?;
        let tcp = self.connect(&target).await?;
        let res = if target.https {
            exchange(TokioIo::new(self.tls_over(&target, tcp).await?), req).await?
        } else {
            exchange(TokioIo::new(tcp), req).await?
        };
        let (parts, body) = res.into_parts();
        let announced = parts
            .headers
            .get(http::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
        if announced.is_some_and(|n| n > self.bounds.max_bytes as u64) {
            return Err(OutboundError::TooLarge(self.bounds.max_bytes));
        }
        let body = collect_bounded(body, self.bounds.max_bytes).await?;
        Ok(Answer {
            status: parts.status,
            headers: parts.headers,
            body,
        })
    }

    /// A TCP connection to the first address of the target the guard allows.
    async fn connect(&self, target: &Target) -> Result<TcpStream, OutboundError> {
        let (host, port) = (target.host.as_str(), target.port);
        let addrs: Vec<SocketAddr> = match host.parse::<IpAddr>() {
            Ok(ip) => vec![SocketAddr::new(ip, port)],
            Err(_) => tokio::net::lookup_host((host, port))
                .await
                .map_err(|e| OutboundError::Resolve {
                    host: host.to_string(),
                    detail: e.to_string(),
                })?
                .collect(),
        };
        let mut refused = None;
        let mut last_err = None;
        for addr in addrs {
            if let Some(why) = self.guard.refusal(addr.ip()) {
                refused = Some(OutboundError::Refused(why));
                continue;
            }
            match TcpStream::connect(addr).await {
                Ok(tcp) => {
                    let _ = tcp.set_nodelay(true);
                    return Ok(tcp);
                }
                Err(e) => {
                    last_err = Some(OutboundError::Connect {
                        addr: addr.to_string(),
                        detail: e.to_string(),
                    })
                }
            }
        }
        Err(last_err
            .or(refused)
            .unwrap_or_else(|| OutboundError::BadUrl(format!("{host} has no address"))))
    }

    async fn tls_over(
        &self,
        target: &Target,
        tcp: TcpStream,
    ) -> Result<tokio_rustls::client::TlsStream<TcpStream>, OutboundError> {
        let host = &target.host;
        let name = rustls_pki_types::ServerName::try_from(host.clone())
            .map_err(|e| OutboundError::BadUrl(format!("invalid TLS server name {host}: {e}")))?;
        tokio_rustls::TlsConnector::from(self.tls.clone())
            .connect(name, tcp)
            .await
            .map_err(|e| OutboundError::Tls {
                host: host.clone(),
                detail: e.to_string(),
                certificate: e.kind() == std::io::ErrorKind::InvalidData,
            })
    }
}

/// Where a URL points.
struct Target {
    https: bool,
    /// Without IPv6 brackets.
    host: String,
    port: u16,
    uri: Uri,
}

impl Target {
    fn of(url: &str) -> Result<Target, OutboundError> {
        let uri: Uri = url
            .parse()
            .map_err(|e| OutboundError::BadUrl(format!("not a valid URL ({url}): {e}")))?;
        let https = match uri.scheme_str() {
            Some(s) if s.eq_ignore_ascii_case("https") => true,
            Some(s) if s.eq_ignore_ascii_case("http") => false,
            _ => {
                return Err(OutboundError::BadUrl(
                    "only http and https URLs can be pulled".into(),
                ));
            }
        };
        let host = uri
            .host()
            .ok_or_else(|| OutboundError::BadUrl("the URL has no host".into()))?;
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
        Ok(Target {
            https,
            host,
            port,
            uri,
        })
    }
}

fn request(target: &Target, call: Call<'_>) -> Result<http::Request<Full<Bytes>>, OutboundError> {
    let uri = &target.uri;
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    // Host and port only: credentials in the URL (`user:pw@`) are never sent as a Host.
    let shown = uri.host().unwrap_or(&target.host);
    let authority = match uri.port_u16() {
        Some(p) => format!("{shown}:{p}"),
        None => shown.to_string(),
    };
    let mut req = http::Request::builder()
        .method(call.method)
        .uri(path)
        .body(Full::new(call.body.unwrap_or_default()))
        .map_err(|e| OutboundError::BadUrl(e.to_string()))?;
    let h = req.headers_mut();
    let mut set = |name: &str, value: &str| -> Result<(), OutboundError> {
        let name = http::HeaderName::from_bytes(name.as_bytes())
            .map_err(|e| OutboundError::BadUrl(format!("header {name}: {e}")))?;
        let value = http::HeaderValue::from_str(value)
            .map_err(|e| OutboundError::BadUrl(format!("header {name}: {e}")))?;
        h.insert(name, value);
        Ok(())
    };
    set("host", &authority)?;
    set("user-agent", "portcullis")?;
    set("accept", "*/*")?;
    for (name, value) in call.headers {
        set(name, value)?;
    }
    Ok(req)
}

/// A redirect target: absolute (`https://...`), or a path on the same origin.
fn redirect_target(base: &http::Uri, loc: &str) -> Result<String, PullError> {
    let lower = loc.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        return Ok(loc.to_string());
    }
    if loc.contains("://") {
        return Err(PullError::RedirectScheme(loc.to_string()));
    }
    let origin = format!(
        "{}://{}",
        base.scheme_str().unwrap_or("http"),
        base.authority().map(|a| a.as_str()).unwrap_or_default()
    );
    if loc.starts_with('/') {
        return Ok(format!("{origin}{loc}"));
    }
    let dir = base.path().rsplit_once('/').map_or("", |(d, _)| d);
    Ok(format!("{origin}{dir}/{loc}"))
}

type Resp = http::Response<hyper::body::Incoming>;

async fn exchange<T>(io: T, req: http::Request<Full<Bytes>>) -> Result<Resp, OutboundError>
where
    T: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (mut sender, conn) = hyper::client::conn::http1::handshake(io)
        .await
        .map_err(|e| OutboundError::Exchange(format!("HTTP handshake: {e}")))?;
    tokio::spawn(conn);
    sender
        .send_request(req)
        .await
        .map_err(|e| OutboundError::Exchange(format!("request failed: {e}")))
}

/// The TLS configuration of requests verified against the public roots (webpki), shared.
pub fn public_roots() -> Result<Arc<rustls::ClientConfig>, OutboundError> {
    static CFG: std::sync::OnceLock<Arc<rustls::ClientConfig>> = std::sync::OnceLock::new();
    if let Some(c) = CFG.get() {
        return Ok(c.clone());
    }
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let cfg = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| OutboundError::BadUrl(format!("TLS configuration: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(CFG.get_or_init(|| Arc::new(cfg)).clone())
}

/// Runs `work` to completion on a thread of its own with a small current-thread runtime, so a
/// synchronous caller can make outbound requests from inside or outside a runtime.
pub fn block_on_own_thread<T, F>(name: &str, work: F) -> std::io::Result<T>
where
    T: Send + 'static,
    F: Future<Output = T> + Send + 'static,
{
    let worker = std::thread::Builder::new()
        .name(name.to_string())
        .spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map(|rt| rt.block_on(work))
        })?;
    worker
        .join()
        .unwrap_or_else(|_| Err(std::io::Error::other(format!("{name} thread failed"))))
}

#[cfg(test)]
#[path = "outbound_tests.rs"]
mod tests;
