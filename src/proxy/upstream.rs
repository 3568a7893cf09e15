//! Upstreams: the connector (TCP, TLS with rustls/ring, connect timeout), the pooled hyper
//! clients (HTTP/1.1 and HTTP/2 prior knowledge), and round-robin member selection with passive
//! health (a member that refuses connections is skipped for a while).
//!
//! Imports: hyper, hyper-util, rustls, `super::tls`.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::Uri;
use http::uri::{Authority, Scheme};
use http_body_util::combinators::UnsyncBoxBody;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::{Connected, Connection};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

/// Errors of bodies the proxy builds.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
/// The body type of everything the proxy sends, upstream and downstream.
pub type ProxyBody = UnsyncBoxBody<Bytes, BoxError>;

/// How a member is spoken to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    Http1,
    Https,
    H2c,
}

/// One pool member, parsed from `http://`, `https://` or `h2c://host:port`.
#[derive(Debug)]
pub struct Member {
    pub url: String,
    pub protocol: Protocol,
    pub authority: Authority,
    /// Taken out of rotation by the management plane's monitors.
    pub healthy: bool,
    /// Skipped until this many milliseconds after `epoch` (passive health).
    down_until_ms: AtomicU64,
}

impl Member {
    /// Parses an upstream URL; the error says what is wrong with it.
    pub fn parse(url: &str, healthy: bool) -> Result<Member, String> {
        let uri: Uri = url.parse().map_err(|e| format!("upstream {url:?}: {e}"))?;
        let protocol = match uri.scheme_str() {
            Some("http") => Protocol::Http1,
            Some("https") => Protocol::Https,
            Some("h2c") => Protocol::H2c,
            _ => {
                return Err(format!(
                    "upstream {url:?}: scheme must be http, https or h2c"
                ));
            }
        };
        let authority = uri
            .authority()
            .cloned()
            .ok_or_else(|| format!("upstream {url:?}: no host"))?;
        if !matches!(uri.path(), "" | "/") {
            return Err(format!("upstream {url:?}: a path is not supported"));
        }
        Ok(Member {
            url: url.to_string(),
            protocol,
            authority,
            healthy,
            down_until_ms: AtomicU64::new(0),
        })
    }

    /// The URI to send `path_and_query` to this member.
    pub fn uri(&self, path_and_query: http::uri::PathAndQuery) -> Result<Uri, http::Error> {
        let scheme = if self.protocol == Protocol::Https {
            Scheme::HTTPS
        } else {
            Scheme::HTTP
        };
        Uri::builder()
            .scheme(scheme)
            .authority(self.authority.clone())
            .path_and_query(path_and_query)
            .build()
    }
}

/// The members of one listener, balanced round-robin.
pub struct Pool {
    pub members: Vec<Member>,
    next: AtomicUsize,
    epoch: Instant,
    down_for: Duration,
}

impl Pool {
    pub fn new(members: Vec<Member>, down_for: Duration) -> Pool {
        Pool {
            members,
            next: AtomicUsize::new(0),
            epoch: Instant::now(),
            down_for,
        }
    }

    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    /// The next member in rotation that is healthy and not marked down; when every member is
    /// marked down, the next healthy one anyway (better a try than a certain 502).
    pub fn pick(&self) -> Option<&Member> {
        let n = self.members.len();
        if n == 0 {
            return None;
        }
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        let now = self.now_ms();
        let mut fallback = None;
        for i in 0..n {
            let m = &self.members[(start + i) % n];
            if !m.healthy {
                continue;
            }
            if m.down_until_ms.load(Ordering::Relaxed) <= now {
                return Some(m);
            }
            fallback.get_or_insert(m);
        }
        fallback
    }

    /// Passive health: `m` refused a connection.
    pub fn mark_down(&self, m: &Member) {
        let until = self.now_ms() + self.down_for.as_millis() as u64;
        m.down_until_ms.store(until, Ordering::Relaxed);
        tracing::warn!(upstream = %m.url, "upstream refused a connection; skipped for {:?}", self.down_for);
    }
}

/// A connection to an upstream: plain TCP or TLS.
pub enum UpStream {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

impl Connection for UpStream {
    fn connected(&self) -> Connected {
        Connected::new()
    }
}

impl AsyncRead for UpStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            UpStream::Plain(s) => Pin::new(s).poll_read(cx, buf),
            UpStream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for UpStream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, b: &[u8]) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            UpStream::Plain(s) => Pin::new(s).poll_write(cx, b),
            UpStream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, b),
        }
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            UpStream::Plain(s) => Pin::new(s).poll_flush(cx),
            UpStream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            UpStream::Plain(s) => Pin::new(s).poll_shutdown(cx),
            UpStream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

/// Connects to the URI's authority, with TLS for `https`, within the connect timeout.
#[derive(Clone)]
pub struct Connector {
    tls: tokio_rustls::TlsConnector,
    timeout: Duration,
}

impl Connector {
    pub fn new(tls: Arc<rustls::ClientConfig>, timeout: Duration) -> Self {
        Connector {
            tls: tokio_rustls::TlsConnector::from(tls),
            timeout,
        }
    }

    async fn connect(self, uri: Uri) -> io::Result<TokioIo<UpStream>> {
        let host = uri
            .host()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no host"))?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let tls = uri.scheme() == Some(&Scheme::HTTPS);
        let port = uri.port_u16().unwrap_or(if tls { 443 } else { 80 });
        let work = async {
            let tcp = TcpStream::connect((host.as_str(), port)).await?;
            let _ = tcp.set_nodelay(true);
            if !tls {
                return Ok(UpStream::Plain(tcp));
            }
            let name = rustls_pki_types::ServerName::try_from(host.clone())
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
            let s = self.tls.connect(name, tcp).await?;
            Ok(UpStream::Tls(Box::new(s)))
        };
        match tokio::time::timeout(self.timeout, work).await {
            Ok(r) => r.map(TokioIo::new),
            Err(_) => Err(io::Error::new(io::ErrorKind::TimedOut, "connect timed out")),
        }
    }
}

impl tower::Service<Uri> for Connector {
    type Response = TokioIo<UpStream>;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<TokioIo<UpStream>>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        Box::pin(self.clone().connect(uri))
    }
}

/// The pooled clients shared by every listener.
#[derive(Clone)]
pub struct Clients {
    pub http1: Client<Connector, ProxyBody>,
    pub h2c: Client<Connector, ProxyBody>,
}

impl Clients {
    pub fn new(tls: Arc<rustls::ClientConfig>, connect_timeout: Duration) -> Clients {
        let connector = Connector::new(tls, connect_timeout);
        let mut b = Client::builder(TokioExecutor::new());
        b.timer(TokioTimer::new())
            .pool_timer(TokioTimer::new())
            .pool_idle_timeout(Duration::from_secs(30))
            .pool_max_idle_per_host(256)
            .set_host(false);
        let http1 = b.build(connector.clone());
        b.http2_only(true);
        let h2c = b.build(connector);
        Clients { http1, h2c }
    }

    pub fn for_protocol(&self, p: Protocol) -> &Client<Connector, ProxyBody> {
        match p {
            Protocol::H2c => &self.h2c,
            Protocol::Http1 | Protocol::Https => &self.http1,
        }
    }
}

/// Whether the request is a gRPC call (`application/grpc`, not gRPC-Web).
pub fn is_grpc(head: &http::request::Parts) -> bool {
    head.headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| {
            let ct = ct.to_ascii_lowercase();
            ct.starts_with("application/grpc") && !ct.starts_with("application/grpc-web")
        })
}

/// The protocol spoken to the member: a gRPC call (HTTP/2, `application/grpc`) to an `http://`
/// member goes over h2c (prior knowledge), since gRPC needs HTTP/2 end to end (trailers).
pub fn protocol_for(p: Protocol, head: &http::request::Parts) -> Protocol {
    if p == Protocol::Http1 && is_grpc(head) && head.version == http::Version::HTTP_2 {
        Protocol::H2c
    } else {
        p
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn http2_grpc_calls_to_http_members_go_over_h2c() {
        use super::{Protocol, protocol_for};
        let head = |v: http::Version, ct: &str| {
            let r = http::Request::builder()
                .version(v)
                .header("content-type", ct);
            r.body(()).unwrap_or_default().into_parts().0
        };
        let h2 = http::Version::HTTP_2;
        let grpc = head(h2, "application/grpc+proto");
        assert_eq!(protocol_for(Protocol::Http1, &grpc), Protocol::H2c);
        assert_eq!(protocol_for(Protocol::H2c, &grpc), Protocol::H2c);
        assert_eq!(protocol_for(Protocol::Https, &grpc), Protocol::Https);
        let web = head(h2, "application/grpc-web");
        assert_eq!(protocol_for(Protocol::Http1, &web), Protocol::Http1);
        let h1 = head(http::Version::HTTP_11, "application/grpc");
        assert_eq!(protocol_for(Protocol::Http1, &h1), Protocol::Http1);
        let json = head(h2, "application/json");
        assert_eq!(protocol_for(Protocol::Http1, &json), Protocol::Http1);
    }

    use super::*;

    #[test]
    fn member_urls_are_checked() {
        assert_eq!(
            Member::parse("h2c://127.0.0.1:50051", true).map(|m| m.protocol),
            Ok(Protocol::H2c)
        );
        assert!(Member::parse("ftp://x", true).is_err());
        assert!(Member::parse("http://x/path", true).is_err());
        assert!(Member::parse("not a url", true).is_err());
    }

    #[test]
    fn round_robin_skips_members_marked_down() {
        let ms = ["http://a:1", "http://b:1", "http://c:1"]
            .iter()
            .map(|u| Member::parse(u, true).expect("url"))
            .collect();
        let pool = Pool::new(ms, Duration::from_secs(60));
        let first: Vec<_> = (0..3)
            .map(|_| pool.pick().expect("m").url.clone())
            .collect();
        assert_eq!(first, ["http://a:1", "http://b:1", "http://c:1"]);
        pool.mark_down(&pool.members[1]);
        let after: Vec<_> = (0..4)
            .map(|_| pool.pick().expect("m").url.clone())
            .collect();
        assert!(!after.contains(&"http://b:1".to_string()), "{after:?}");
    }
}
