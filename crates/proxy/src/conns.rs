//! Upstream connections, pooled per host: a stack of idle HTTP/1.1 senders (`hyper::client::conn::
//! http1::SendRequest`, most recently used first) and one shared HTTP/2 sender, per `(tls, host:port)`.
//! This replaces hyper-util's generic client: no per-request pool key hashing, no spawned task per
//! response to wait for the connection to become idle, and the connection goes back to its host the
//! moment the response body ends.
//!
//! `https://` members are offered ALPN `h2` and `http/1.1`; whichever the member picks is used (and
//! remembered for the host), so gRPC works to TLS upstreams. gRPC calls require HTTP/2: over TLS a
//! member that only speaks HTTP/1.1 fails the call (502) instead of mangling it.
//!
//! The HTTP/1.1 fast path (`super::h1`) keeps its own idle connections per host here too (plain
//! TCP streams it drives itself, in the client connection's task).

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{CONTENT_LENGTH, HeaderValue, TRANSFER_ENCODING};
use http::uri::{Authority, Scheme};
use http::{Request, Response, Uri, Version};
use http_body::{Body, SizeHint};
use hyper::body::Incoming;
use hyper::client::conn::{http1, http2};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use parking_lot::Mutex;
use portcullis_support::task;

use super::body::{FramePoll, poll_inner};
use super::h1::upconn::UpConn;
use super::upstream::{BoxError, Connector, Member, Protocol, ProxyBody, UpStream};

/// Idle HTTP/1.1 connections kept per host.
const MAX_IDLE_PER_HOST: usize = 256;
/// An idle connection unused for this long is closed.
const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// Why no response came from a member.
#[derive(Debug)]
pub enum SendError {
    /// TCP or TLS connect failed (or timed out): the member is marked down.
    Connect(std::io::Error),
    /// The exchange failed after the connection was up.
    Http(hyper::Error),
    /// A gRPC call to a TLS member that did not negotiate HTTP/2.
    NoH2,
}

impl std::fmt::Display for SendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SendError::Connect(e) => write!(f, "connect: {e}"),
            SendError::Http(e) => {
                write!(f, "{e}")?;
                let mut src = std::error::Error::source(e);
                while let Some(s) = src {
                    write!(f, ": {s}")?;
                    src = s.source();
                }
                Ok(())
            }
            SendError::NoH2 => f.write_str("the member did not negotiate HTTP/2 (ALPN h2)"),
        }
    }
}

/// The connections of one upstream host.
pub struct HostConns {
    tls: bool,
    authority: Authority,
    idle: Mutex<Vec<(http1::SendRequest<ProxyBody>, Instant)>>,
    h2: Mutex<Option<http2::SendRequest<ProxyBody>>>,
    /// The (TLS) host answered ALPN with `h2`: new exchanges go over HTTP/2.
    speaks_h2: AtomicBool,
    /// Idle connections of the HTTP/1.1 fast path (`super::h1`), most recently used last.
    raw: Mutex<Vec<(UpConn, Instant)>>,
}

impl std::fmt::Debug for HostConns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostConns")
            .field("tls", &self.tls)
            .field("authority", &self.authority)
            .finish_non_exhaustive()
    }
}

impl HostConns {
    /// The most recently used idle connection that is still open and ready.
    fn checkout(&self) -> Option<http1::SendRequest<ProxyBody>> {
        let mut idle = self.idle.lock();
        while let Some((tx, since)) = idle.pop() {
            if tx.is_ready() && since.elapsed() < IDLE_TIMEOUT {
                return Some(tx);
            }
        }
        None
    }

    /// Returns a connection whose exchange finished; waits for it off the request path when
    /// hyper has not marked it ready yet.
    fn checkin(self: &Arc<Self>, mut tx: http1::SendRequest<ProxyBody>) {
        if tx.is_ready() {
            return self.push(tx);
        }
        if tx.is_closed() {
            return;
        }
        let host = self.clone();
        task::spawn(async move {
            if tx.ready().await.is_ok() {
                host.push(tx);
            }
        });
    }

    fn push(&self, tx: http1::SendRequest<ProxyBody>) {
        let mut idle = self.idle.lock();
        if idle.len() < MAX_IDLE_PER_HOST {
            idle.push((tx, Instant::now()));
        }
    }

    /// Closes idle connections past the idle timeout (they are oldest first).
    fn prune(&self) {
        let mut idle = self.idle.lock();
        let fresh = idle
            .iter()
            .position(|(tx, since)| !tx.is_closed() && since.elapsed() < IDLE_TIMEOUT)
            .unwrap_or(idle.len());
        idle.drain(..fresh);
        drop(idle);
        let mut raw = self.raw.lock();
        let fresh = raw
            .iter()
            .position(|(_, since)| since.elapsed() < IDLE_TIMEOUT)
            .unwrap_or(raw.len());
        raw.drain(..fresh);
    }

    /// The most recently used idle fast-path connection that is still open; `now` is a recent
    /// reading of the clock (the request's start: the fast path reads it once per request).
    pub(super) fn raw_checkout(&self, now: Instant) -> Option<UpConn> {
        let mut raw = self.raw.lock();
        while let Some((mut c, since)) = raw.pop() {
            if now.saturating_duration_since(since) < IDLE_TIMEOUT && c.idle_and_open() {
                c.pooled = true;
                return Some(c);
            }
        }
        None
    }

    /// Returns a fast-path connection whose exchange finished cleanly; idle since `since` (the
    /// request's start will do: the connection then counts as idle a little too long, never too
    /// short).
    pub(super) fn raw_checkin(&self, c: UpConn, since: Instant) {
        let mut raw = self.raw.lock();
        if raw.len() < MAX_IDLE_PER_HOST {
            raw.push((c, since));
        }
    }

    /// A connection for a request of the proxy: the shared HTTP/2 one when `h2` is asked (h2c
    /// members, gRPC) or the host is known to pick it, else a fresh HTTP/1.1 one (see
    /// [`Clients::connect`] for what `h2` and `need_h2` mean).
    pub(super) async fn connect_for(
        self: &Arc<Self>,
        clients: &Clients,
        h2: bool,
        need_h2: bool,
    ) -> Result<Connected, SendError> {
        if (h2 || self.speaks_h2.load(Ordering::Relaxed))
            && let Some(tx) = self.shared_h2()
        {
            return Ok(Connected::H2(tx));
        }
        clients.connect(self, h2, need_h2).await
    }

    /// Opens a fresh HTTP/1.1 connection for a protocol upgrade (TLS offers `http/1.1` only).
    pub(super) async fn connect_upgrade(&self, clients: &Clients) -> std::io::Result<UpConn> {
        let io = clients.inner.h1.connect(self.tls, &self.authority).await?;
        Ok(UpConn::fresh(io))
    }

    /// Whether a TLS host answered ALPN with `h2` last time.
    pub(super) fn speaks_h2(&self) -> bool {
        self.speaks_h2.load(Ordering::Relaxed)
    }

    fn shared_h2(&self) -> Option<http2::SendRequest<ProxyBody>> {
        let slot = self.h2.lock();
        slot.as_ref().filter(|tx| !tx.is_closed()).cloned()
    }
}

/// A connection, by the protocol it ended up speaking.
pub(super) enum Connected {
    /// HTTP/1.1, driven by the proxy itself.
    H1(UpConn),
    H2(http2::SendRequest<ProxyBody>),
}

struct Inner {
    /// Plain TCP, and TLS offering only `http/1.1` (upgrades need HTTP/1.1).
    h1: Connector,
    /// TLS offering `h2` and `http/1.1`.
    alpn: Connector,
    h2: http2::Builder<TokioExecutor>,
    hosts: Mutex<HashMap<(bool, Authority), Arc<HostConns>>>,
}

/// The upstream connections shared by every listener of a data plane; cloning shares them.
#[derive(Clone)]
pub struct Clients {
    inner: Arc<Inner>,
}

impl Clients {
    /// `tls` verifies `https://` members (its ALPN list is replaced); `connect_timeout` bounds
    /// TCP + TLS connect.
    pub fn new(tls: Arc<rustls::ClientConfig>, connect_timeout: Duration) -> Clients {
        let with_alpn = |protocols: &[&[u8]]| {
            let mut cfg = (*tls).clone();
            cfg.alpn_protocols = protocols.iter().map(|p| p.to_vec()).collect();
            Connector::new(Arc::new(cfg), connect_timeout)
        };
        let mut h2 = http2::Builder::new(TokioExecutor::new());
        h2.timer(TokioTimer::new());
        Clients {
            inner: Arc::new(Inner {
                h1: with_alpn(&[b"http/1.1"]),
                alpn: with_alpn(&[b"h2", b"http/1.1"]),
                h2,
                hosts: Mutex::new(HashMap::new()),
            }),
        }
    }

    pub(super) fn host(&self, m: &Member) -> Arc<HostConns> {
        m.conns
            .get_or_init(|| {
                let tls = m.protocol == Protocol::Https;
                let key = (tls, m.authority.clone());
                let mut hosts = self.inner.hosts.lock();
                hosts
                    .entry(key)
                    .or_insert_with(|| {
                        let h = Arc::new(HostConns {
                            tls,
                            authority: m.authority.clone(),
                            idle: Mutex::new(Vec::new()),
                            h2: Mutex::new(None),
                            speaks_h2: AtomicBool::new(false),
                            raw: Mutex::new(Vec::new()),
                        });
                        task::spawn(reap(Arc::downgrade(&h)));
                        h
                    })
                    .clone()
            })
            .clone()
    }

    /// Sends `req` (origin-form URI, `Host` as the client sent it) to `member`. `grpc` calls go
    /// over HTTP/2: h2c to `http://` members when the client spoke HTTP/2, ALPN h2 over TLS.
    pub async fn send(
        &self,
        member: &Member,
        grpc: bool,
        req: Request<ProxyBody>,
    ) -> Result<Response<ProxyBody>, SendError> {
        let host = self.host(member);
        let h2 = match member.protocol {
            Protocol::H2c => true,
            Protocol::Http1 => grpc && req.version() == Version::HTTP_2,
            Protocol::Https => grpc || host.speaks_h2.load(Ordering::Relaxed),
        };
        if h2 {
            self.send_h2(&host, grpc, req).await
        } else {
            self.send_h1(&host, req).await
        }
    }

    async fn send_h1(
        &self,
        host: &Arc<HostConns>,
        mut req: Request<ProxyBody>,
    ) -> Result<Response<ProxyBody>, SendError> {
        *req.version_mut() = Version::HTTP_11;
        if !req.headers().contains_key(CONTENT_LENGTH) && !req.body().is_end_stream() {
            // hyper's client sends a GET or HEAD body of unknown length only when the request says
            // it is chunked (it assumes those methods have none); other methods get it anyway.
            req.headers_mut()
                .insert(TRANSFER_ENCODING, HeaderValue::from_static("chunked"));
        }
        loop {
            let (mut tx, pooled) = match host.checkout() {
                Some(tx) => (tx, true),
                None => match self.connect(host, false, false).await? {
                    Connected::H1(up) => (handshake_h1(up).await?, false),
                    Connected::H2(tx) => return send_on_h2(host, tx, req).await,
                },
            };
            match tx.try_send_request(req).await {
                Ok(res) => return Ok(wrap(res, Some((host.clone(), tx)))),
                Err(mut e) => match e.take_message() {
                    // The pooled connection closed before the request went out: try another.
                    Some(r) if pooled => req = r,
                    _ => return Err(SendError::Http(e.into_error())),
                },
            }
        }
    }

    async fn send_h2(
        &self,
        host: &Arc<HostConns>,
        grpc: bool,
        req: Request<ProxyBody>,
    ) -> Result<Response<ProxyBody>, SendError> {
        if let Some(tx) = host.shared_h2() {
            return send_on_h2(host, tx, req).await;
        }
        match self.connect(host, true, grpc).await? {
            Connected::H2(tx) => send_on_h2(host, tx, req).await,
            Connected::H1(up) => {
                let mut tx = handshake_h1(up).await?;
                let res = tx.send_request(req).await.map_err(SendError::Http)?;
                Ok(wrap(res, Some((host.clone(), tx))))
            }
        }
    }

    /// Opens a connection; `h2` asks for HTTP/2 (prior knowledge in cleartext, ALPN over TLS).
    /// A TLS member that picks HTTP/1.1 gets an HTTP/1.1 connection unless `need_h2`.
    async fn connect(
        &self,
        host: &HostConns,
        h2: bool,
        need_h2: bool,
    ) -> Result<Connected, SendError> {
        let connector = if host.tls {
            &self.inner.alpn
        } else {
            &self.inner.h1
        };
        let io = connector
            .connect(host.tls, &host.authority)
            .await
            .map_err(SendError::Connect)?;
        let negotiated_h2 = match &io {
            UpStream::Tls(s) => s.get_ref().1.alpn_protocol() == Some(b"h2"),
            UpStream::Plain(_) => h2,
        };
        if host.tls {
            host.speaks_h2.store(negotiated_h2, Ordering::Relaxed);
        }
        if negotiated_h2 {
            let (tx, conn) = self
                .inner
                .h2
                .handshake(TokioIo::new(io))
                .await
                .map_err(SendError::Http)?;
            tokio::spawn(async move {
                if let Err(e) = conn.await {
                    tracing::debug!("upstream HTTP/2 connection ended: {e}");
                }
            });
            *host.h2.lock() = Some(tx.clone());
            return Ok(Connected::H2(tx));
        }
        if need_h2 {
            return Err(SendError::NoH2);
        }
        Ok(Connected::H1(UpConn::fresh(io)))
    }
}

/// hyper's HTTP/1.1 client on a fresh connection (the fetches off the request path).
async fn handshake_h1(up: UpConn) -> Result<http1::SendRequest<ProxyBody>, SendError> {
    let (io, _) = up.into_parts();
    let (tx, conn) = http1::handshake(TokioIo::new(io))
        .await
        .map_err(SendError::Http)?;
    task::spawn(async move {
        if let Err(e) = conn.await {
            tracing::debug!("upstream connection ended: {e}");
        }
    });
    Ok(tx)
}

/// Sends on an HTTP/2 connection (absolute URI, as h2 requires), retrying once on a fresh
/// connection when the shared one closed before the request went out.
pub(super) async fn send_on_h2(
    host: &Arc<HostConns>,
    mut tx: http2::SendRequest<ProxyBody>,
    mut req: Request<ProxyBody>,
) -> Result<Response<ProxyBody>, SendError> {
    *req.version_mut() = Version::HTTP_2;
    // Set for an HTTP/1.1 connection that ALPN turned into HTTP/2, where framing is the protocol's.
    req.headers_mut().remove(TRANSFER_ENCODING);
    let scheme = if host.tls {
        Scheme::HTTPS
    } else {
        Scheme::HTTP
    };
    let mut parts = req.uri().clone().into_parts();
    parts.scheme = Some(scheme);
    parts.authority = Some(host.authority.clone());
    if parts.path_and_query.is_none() {
        parts.path_and_query = Some(http::uri::PathAndQuery::from_static("/"));
    }
    if let Ok(uri) = Uri::from_parts(parts) {
        *req.uri_mut() = uri;
    }
    match tx.try_send_request(req).await {
        Ok(res) => Ok(wrap(res, None)),
        Err(e) => {
            if tx.is_closed() {
                let mut slot = host.h2.lock();
                if slot.as_ref().is_some_and(http2::SendRequest::is_closed) {
                    *slot = None;
                }
            }
            Err(SendError::Http(e.into_error()))
        }
    }
}

fn wrap(
    res: Response<Incoming>,
    back: Option<(Arc<HostConns>, http1::SendRequest<ProxyBody>)>,
) -> Response<ProxyBody> {
    use http_body_util::BodyExt;
    res.map(|inner| UpBody { inner, back }.boxed_unsync())
}

/// Closes idle connections of `host` past the idle timeout, while the host exists.
async fn reap(host: Weak<HostConns>) {
    let mut tick = tokio::time::interval(IDLE_TIMEOUT / 2);
    loop {
        tick.tick().await;
        match host.upgrade() {
            Some(h) => h.prune(),
            None => return,
        }
    }
}

/// An upstream response body; at its end an HTTP/1.1 connection goes back to its host. A body
/// dropped before its end takes its connection with it (hyper closes it).
struct UpBody {
    inner: Incoming,
    back: Option<(Arc<HostConns>, http1::SendRequest<ProxyBody>)>,
}

impl UpBody {
    fn release(&mut self) {
        if let Some((host, tx)) = self.back.take() {
            host.checkin(tx);
        }
    }
}

impl Body for UpBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> FramePoll {
        let this = self.get_mut();
        let frame = std::task::ready!(poll_inner(&mut this.inner, cx));
        match &frame {
            // A failed body takes its connection with it (hyper closes it).
            Some(Err(_)) => this.back = None,
            Some(Ok(_)) if !this.inner.is_end_stream() => {}
            // The end, or the frame that ends it: the connection goes back to its host.
            _ => this.release(),
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for UpBody {
    fn drop(&mut self) {
        if self.inner.is_end_stream() {
            self.release();
        }
    }
}
