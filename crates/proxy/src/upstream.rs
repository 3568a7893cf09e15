//! Upstreams: pool members and their round-robin selection with passive health (a member that
//! refuses connections is skipped for a while), and the connector (TCP, TLS with rustls/ring,
//! connect timeout). The connections themselves are pooled per host in [`super::conns`].

use std::io;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::Uri;
use http::uri::Authority;
use http_body_util::combinators::UnsyncBoxBody;
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

pub use super::conns::Clients;
use super::conns::HostConns;
use super::plain_or_tls::PlainOrTls;

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
    /// The connections of this member's host, bound on first use.
    pub(super) conns: OnceLock<Arc<HostConns>>,
}

/// Why an upstream URL cannot be a pool member; the text names the URL.
#[derive(Debug, thiserror::Error)]
pub enum MemberError {
    #[error("upstream {url:?}: {source}")]
    Invalid {
        url: String,
        source: http::uri::InvalidUri,
    },
    #[error("upstream {url:?}: scheme must be http, https or h2c")]
    Scheme { url: String },
    #[error("upstream {url:?}: no host")]
    NoHost { url: String },
    #[error("upstream {url:?}: a path is not supported")]
    Path { url: String },
}

impl Member {
    /// Parses an upstream URL; the error says what is wrong with it.
    pub fn parse(url: &str, healthy: bool) -> Result<Member, MemberError> {
        let uri: Uri = url.parse().map_err(|source| MemberError::Invalid {
            url: url.to_string(),
            source,
        })?;
        let protocol = match uri.scheme_str() {
            Some("http") => Protocol::Http1,
            Some("https") => Protocol::Https,
            Some("h2c") => Protocol::H2c,
            _ => {
                return Err(MemberError::Scheme {
                    url: url.to_string(),
                });
            }
        };
        let authority = uri
            .authority()
            .cloned()
            .ok_or_else(|| MemberError::NoHost {
                url: url.to_string(),
            })?;
        if !matches!(uri.path(), "" | "/") {
            return Err(MemberError::Path {
                url: url.to_string(),
            });
        }
        Ok(Member {
            url: url.to_string(),
            protocol,
            authority,
            healthy,
            down_until_ms: AtomicU64::new(0),
            conns: OnceLock::new(),
        })
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
        // The clock is read only when a member was marked down.
        let mut now = None;
        let mut fallback = None;
        for i in 0..n {
            let m = &self.members[(start + i) % n];
            if !m.healthy {
                continue;
            }
            let until = m.down_until_ms.load(Ordering::Relaxed);
            if until == 0 || until <= *now.get_or_insert_with(|| self.now_ms()) {
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
pub type UpStream = PlainOrTls<TcpStream, TlsStream<TcpStream>>;

/// Connects to a host, with TLS when asked, within the connect timeout.
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

    /// TCP (no Nagle) to `authority`, then TLS when `tls` (server name = the host).
    pub async fn connect(&self, tls: bool, authority: &Authority) -> io::Result<UpStream> {
        let host = authority
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']');
        let port = authority.port_u16().unwrap_or(if tls { 443 } else { 80 });
        let work = async {
            let tcp = TcpStream::connect((host, port)).await?;
            let _ = tcp.set_nodelay(true);
            if !tls {
                return Ok(UpStream::Plain(tcp));
            }
            let name = rustls_pki_types::ServerName::try_from(host.to_string())
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
            let s = self.tls.connect(name, tcp).await?;
            Ok(UpStream::Tls(Box::new(s)))
        };
        match tokio::time::timeout(self.timeout, work).await {
            Ok(r) => r,
            Err(_) => Err(io::Error::new(io::ErrorKind::TimedOut, "connect timed out")),
        }
    }
}

/// A gRPC call: `application/grpc[+proto|...]` (gRPC-Web excluded: it works over HTTP/1.1).
pub fn is_grpc(head: &portcullis_engine::RequestHead) -> bool {
    head.headers
        .get(http::header::CONTENT_TYPE)
        .map(|v| v.as_bytes())
        .is_some_and(|ct| {
            ct.len() >= 16
                && ct[..16].eq_ignore_ascii_case(b"application/grpc")
                && !(ct.len() >= 20 && ct[16..20].eq_ignore_ascii_case(b"-web"))
        })
}

#[cfg(test)]
mod tests {
    #[test]
    fn grpc_calls_are_recognised_by_content_type() {
        use super::is_grpc;
        let head = |ct: &str| {
            let r = http::Request::builder().header("content-type", ct);
            portcullis_engine::RequestHead::from(r.body(()).unwrap_or_default().into_parts().0)
        };
        assert!(is_grpc(&head("application/grpc")));
        assert!(is_grpc(&head("application/grpc+proto")));
        assert!(is_grpc(&head("Application/GRPC+json")));
        assert!(!is_grpc(&head("application/grpc-web")));
        assert!(!is_grpc(&head("application/grpc-web+proto")));
        assert!(!is_grpc(&head("application/json")));
        assert!(!is_grpc(&head("application/grp")));
    }

    use super::*;

    #[test]
    fn member_urls_are_checked() {
        assert_eq!(
            Member::parse("h2c://127.0.0.1:50051", true)
                .map(|m| m.protocol)
                .ok(),
            Some(Protocol::H2c)
        );
        assert!(matches!(
            Member::parse("ftp://x", true),
            Err(MemberError::Scheme { url }) if url == "ftp://x"
        ));
        let path = Member::parse("http://x/path", true)
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            path.as_deref(),
            Some("upstream \"http://x/path\": a path is not supported")
        );
        assert!(matches!(
            Member::parse("not a url", true),
            Err(MemberError::Invalid { .. })
        ));
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
