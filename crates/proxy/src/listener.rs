//! One listener: the accept loop, TLS termination, and the two front-ends of the phase driver:
//! every HTTP/1.x connection is served by the HTTP/1.1 connection code ([`super::h1`]); HTTP/2
//! (TLS with ALPN `h2`, or a cleartext connection that opens with the preface) by hyper's HTTP/2
//! server ([`super::handler`]). Graceful draining when the listener is stopped. The listener reads
//! its [`Site`] and TLS configuration through `ArcSwap`s, so an apply changes them for new
//! requests (and new connections, for TLS) without touching requests in flight.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use arc_swap::{ArcSwap, ArcSwapOption};
use hyper::server::conn::http2;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::sync::watch;

use super::client_tcp::ClientTcp;
use super::drain::{Drain, Watch};
use super::guard::Guard;
use super::h1;
use super::handler::{Conn, Shared, Site, handle};
use super::limits::Limits;
use super::nodelay::LateNoDelay;
use super::plain_or_tls::PlainOrTls;

/// A client connection as the connection code serves it.
type ClientIo = PlainOrTls<LateNoDelay, tokio_rustls::server::TlsStream<LateNoDelay>>;

/// The parts of a running listener an apply may swap.
pub struct Swappable {
    pub site: ArcSwap<Site>,
    pub tls: ArcSwapOption<rustls::ServerConfig>,
}

/// The HTTP/2 server configuration for `lim`.
pub fn server_builder(lim: &Limits) -> http2::Builder<TokioExecutor> {
    let mut b = http2::Builder::new(TokioExecutor::new());
    b.timer(TokioTimer::new())
        .auto_date_header(false)
        .max_concurrent_streams(256)
        .max_header_list_size(lim.max_head_bytes as u32)
        .keep_alive_interval(Some(Duration::from_secs(30)))
        .keep_alive_timeout(Duration::from_secs(20));
    b
}

/// A listening socket. Its connections are accepted non-blocking and left out of the reactor
/// until they wait ([`ClientTcp`]): tokio's `TcpListener` registers every connection it accepts.
pub struct Acceptor(AsyncFd<socket2::Socket>);

impl Acceptor {
    /// Wraps a bound, non-blocking listener; must be called within the runtime.
    pub fn new(listener: std::net::TcpListener) -> std::io::Result<Acceptor> {
        let socket = socket2::Socket::from(listener);
        // Deprecated because it takes any `AsRawFd`, whose descriptor the caller could close (or
        // reuse) while it is registered; this `Socket` is owned by the `AsyncFd` alone, which
        // deregisters it before dropping it, and nothing replaces its descriptor. The safe
        // replacement is an `unsafe fn`, which this workspace forbids.
        #[allow(deprecated)]
        let fd = AsyncFd::with_interest(socket, Interest::READABLE)?;
        Ok(Acceptor(fd))
    }

    /// The next connection, non-blocking, and its peer's address.
    async fn accept(&self) -> std::io::Result<(std::net::TcpStream, SocketAddr)> {
        loop {
            let mut ready = self.0.readable().await?;
            // `try_io` clears the readiness when the queue is empty, as tokio's listener does.
            let accepted = ready.try_io(|s| {
                s.get_ref()
                    .accept4(libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC)
            });
            if let Ok(r) = accepted {
                let (socket, addr) = r?;
                let peer = addr.as_socket().ok_or_else(|| {
                    std::io::Error::new(std::io::ErrorKind::InvalidData, "not an IP peer")
                })?;
                return Ok((socket.into(), peer));
            }
        }
    }
}

/// Runs the accept loop of one listener until `stop` turns true, then drains its connections.
pub async fn run(
    listener: Acceptor,
    state: Arc<Swappable>,
    shared: Arc<Shared>,
    mut stop: watch::Receiver<bool>,
) {
    let builder = Arc::new(server_builder(&shared.limits));
    let drain = Drain::default();
    // One wait for the stop signal for the whole loop: a new one for each accepted connection
    // would register with the channel, and leave it, every time.
    let stopped = stop.changed();
    let mut stopped = std::pin::pin!(stopped);
    loop {
        tokio::select! {
            // Accept first: the stop signal is polled only when no connection is waiting (the
            // accept yields to it then, and at least once per task budget under a flood), rather
            // than for every connection, and without drawing the random branch order.
            biased;
            r = listener.accept() => {
                let (tcp, peer) = match r {
                    Ok(x) => x,
                    Err(e) => {
                        // Out of file descriptors and the like: back off instead of spinning.
                        tracing::warn!("accept failed: {e}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let conn = Connection {
                    state: state.clone(),
                    shared: shared.clone(),
                    builder: builder.clone(),
                    tls: state.tls.load_full(),
                };
                // Boxed: tokio moves a spawned future by value several times (into the task,
                // and over it when it completes), each move a copy of the whole state machine,
                // request path included; a box is moved as one pointer, so a connection costs
                // one copy of it.
                tokio::spawn(Box::pin(conn.serve(tcp, peer, drain.watcher())));
            }
            _ = stopped.as_mut() => break,
        }
    }
    drop(listener);
    if tokio::time::timeout(shared.limits.drain_timeout, drain.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("drain timeout: connections still open were closed");
    }
}

struct Connection {
    state: Arc<Swappable>,
    shared: Arc<Shared>,
    builder: Arc<http2::Builder<TokioExecutor>>,
    tls: Option<Arc<rustls::ServerConfig>>,
}

impl Connection {
    /// The TLS and HTTP/2 paths are boxed: a future is as large as its largest state, and the plain
    /// HTTP/1.1 connections most clients open would otherwise carry, and copy when spawned, room
    /// for a TLS session and hyper's HTTP/2 connection.
    async fn serve(self, tcp: std::net::TcpStream, peer: SocketAddr, watch: Watch) {
        let tcp = LateNoDelay::new(ClientTcp::new(tcp));
        match self.tls.clone() {
            None => {
                let io = ClientIo::Plain(tcp);
                if let Some(rest) = self.http1(io, peer, false, true, &watch).await {
                    let io = Guard::resume(rest.io, rest.buffered);
                    Box::pin(self.http2(io, Conn::of(peer, false), watch)).await;
                }
            }
            Some(cfg) => Box::pin(self.tls(cfg, tcp, peer, watch)).await,
        }
    }

    /// A TLS connection: the handshake, then HTTP/2 by ALPN or HTTP/1.x.
    async fn tls(
        self,
        cfg: Arc<rustls::ServerConfig>,
        tcp: LateNoDelay,
        peer: SocketAddr,
        watch: Watch,
    ) {
        let lim = self.shared.limits;
        let acceptor = tokio_rustls::TlsAcceptor::from(cfg);
        let stream =
            match tokio::time::timeout(lim.tls_handshake_timeout, acceptor.accept(tcp)).await {
                Ok(Ok(s)) => s,
                Ok(Err(e)) => return tracing::debug!(%peer, "TLS handshake failed: {e}"),
                Err(_) => return tracing::debug!(%peer, "TLS handshake timed out"),
            };
        let alpn = stream.get_ref().1.alpn_protocol().map(<[u8]>::to_vec);
        let io = ClientIo::Tls(Box::new(stream));
        if alpn.as_deref() == Some(b"h2") {
            let io = Guard::fresh(io, lim.header_read_timeout);
            return self.http2(io, Conn::of(peer, true), watch).await;
        }
        let sniff = alpn.is_none();
        if let Some(rest) = self.http1(io, peer, true, sniff, &watch).await {
            let io = Guard::resume(rest.io, rest.buffered);
            self.http2(io, Conn::of(peer, true), watch).await;
        }
    }

    /// Serves the connection as HTTP/1.x until it ends, or turns out to be HTTP/2 (`Some`).
    async fn http1(
        &self,
        io: ClientIo,
        peer: SocketAddr,
        tls: bool,
        sniff: bool,
        watch: &Watch,
    ) -> Option<h1::conn::Rest<ClientIo>> {
        let ctx = h1::conn::ConnContext {
            state: &self.state,
            shared: &self.shared,
            peer,
            tls,
        };
        h1::conn::serve(io, &ctx, watch.clone(), sniff).await
    }

    async fn http2(self, io: Guard<ClientIo>, conn: Conn, mut watch: Watch) {
        let state = self.state;
        let shared = self.shared;
        let peer = conn.peer;
        let svc = service_fn(move |req| {
            let site = state.site.load_full();
            let shared = shared.clone();
            let conn = conn.clone();
            // hyper spawns each stream's future as a task: boxed, the task holds a pointer
            // rather than the whole driver, which tokio would copy into the task and again
            // over it when the stream ends (as for the connection futures).
            Box::pin(async move { Ok::<_, Infallible>(handle(req, site, shared, conn).await) })
        });
        let c = self.builder.serve_connection(TokioIo::new(io), svc);
        let mut c = std::pin::pin!(c);
        let ended = tokio::select! {
            r = c.as_mut() => r,
            _ = watch.signaled() => {
                // GOAWAY, then the streams in flight finish.
                c.as_mut().graceful_shutdown();
                c.await
            }
        };
        if let Err(e) = ended {
            tracing::debug!(%peer, "connection ended: {e}");
        }
    }
}
