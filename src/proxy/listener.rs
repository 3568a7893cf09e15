//! One listener: the accept loop, TLS termination, the HTTP/1.1 fast path ([`super::h1`]), the
//! head guard and hyper's HTTP/1.1 + HTTP/2 server for everything else, and graceful draining when
//! the listener is stopped. An HTTP/1 connection starts on the fast path and moves to the guard +
//! hyper at the first request the fast path does not serve; HTTP/2 goes to hyper at once. The listener reads its [`Site`]
//! and TLS configuration through `ArcSwap`s, so an apply changes them for new requests (and new
//! connections, for TLS) without touching requests in flight.
//!
//! Imports: hyper-util server, tokio-rustls, `super::{guard, handler, h1, drain}`.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use arc_swap::{ArcSwap, ArcSwapOption};
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use super::drain::{Drain, Watch};
use super::guard::{Guard, UpgradeLatch};
use super::h1;
use super::handler::{Conn, Shared, Site, handle};
use super::limits::Limits;

/// The parts of a running listener an apply may swap.
pub struct Swappable {
    pub site: ArcSwap<Site>,
    pub tls: ArcSwapOption<rustls::ServerConfig>,
}

/// hyper's built-in limit of header fields per HTTP/1 head.
const HYPER_DEFAULT_MAX_HEADERS: usize = 100;

/// The hyper server configuration for `lim`.
pub fn server_builder(lim: &Limits) -> auto::Builder<TokioExecutor> {
    let mut b = auto::Builder::new(TokioExecutor::new());
    let mut h1 = b.http1();
    h1.timer(TokioTimer::new())
        // hyper's timer runs from the moment it waits for a head, so it is the idle timeout;
        // the guard cuts a head that started but did not finish (header_read_timeout).
        .header_read_timeout(lim.idle_timeout)
        .keep_alive(true)
        .auto_date_header(false)
        .max_buf_size((lim.max_head_bytes + 8192).max(8192));
    // The guard already refused heads with more than `max_headers` fields (431). hyper's own
    // default cap is 100 on an uninitialised stack array; setting any value makes it initialise a
    // fresh array for every head (measured ~0.7 % of the proxy's CPU), so only raise it.
    if lim.max_headers > HYPER_DEFAULT_MAX_HEADERS {
        h1.max_headers(lim.max_headers);
    }
    b.http2()
        .timer(TokioTimer::new())
        .auto_date_header(false)
        .max_concurrent_streams(256)
        .max_header_list_size(lim.max_head_bytes as u32)
        .keep_alive_interval(Some(Duration::from_secs(30)))
        .keep_alive_timeout(Duration::from_secs(20));
    b
}

/// Runs the accept loop of one listener until `stop` turns true, then drains its connections.
pub async fn run(
    listener: TcpListener,
    state: Arc<Swappable>,
    shared: Arc<Shared>,
    mut stop: watch::Receiver<bool>,
) {
    let builder = Arc::new(server_builder(&shared.limits));
    let drain = Drain::default();
    loop {
        tokio::select! {
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
                tokio::spawn(conn.serve(tcp, peer, drain.watcher()));
            }
            _ = stop.changed() => break,
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
    builder: Arc<auto::Builder<TokioExecutor>>,
    tls: Option<Arc<rustls::ServerConfig>>,
}

impl Connection {
    async fn serve(self, tcp: TcpStream, peer: SocketAddr, watch: Watch) {
        let _ = tcp.set_nodelay(true);
        let lim = self.shared.limits;
        let latch = Arc::new(UpgradeLatch::default());
        let conn = |tls| Conn {
            peer,
            tls,
            upgrade: Some(latch.clone()),
        };
        match self.tls.clone() {
            None => {
                let Some(rest) = self.fast(tcp, peer, false, true, &watch).await else {
                    return;
                };
                let io = Guard::resume(
                    rest.io,
                    rest.buffered,
                    rest.sniff,
                    lim.head(),
                    lim.header_read_timeout,
                )
                .with_upgrades(latch.clone());
                self.http(io, conn(false), watch).await;
            }
            Some(cfg) => {
                let acceptor = tokio_rustls::TlsAcceptor::from(cfg);
                let stream =
                    match tokio::time::timeout(lim.tls_handshake_timeout, acceptor.accept(tcp))
                        .await
                    {
                        Ok(Ok(s)) => s,
                        Ok(Err(e)) => return tracing::debug!(%peer, "TLS handshake failed: {e}"),
                        Err(_) => return tracing::debug!(%peer, "TLS handshake timed out"),
                    };
                let alpn = stream.get_ref().1.alpn_protocol().map(<[u8]>::to_vec);
                if alpn.as_deref() == Some(b"h2") {
                    let io = Guard::negotiated(
                        stream,
                        alpn.as_deref(),
                        lim.head(),
                        lim.header_read_timeout,
                    )
                    .with_upgrades(latch.clone());
                    return self.http(io, conn(true), watch).await;
                }
                let sniff = alpn.is_none();
                let Some(rest) = self.fast(stream, peer, true, sniff, &watch).await else {
                    return;
                };
                let io = Guard::resume(
                    rest.io,
                    rest.buffered,
                    rest.sniff,
                    lim.head(),
                    lim.header_read_timeout,
                )
                .with_upgrades(latch.clone());
                self.http(io, conn(true), watch).await;
            }
        }
    }

    /// Serves the connection on the HTTP/1.1 fast path until it ends or is handed over.
    async fn fast<I>(
        &self,
        io: I,
        peer: SocketAddr,
        tls: bool,
        sniff: bool,
        watch: &Watch,
    ) -> Option<h1::conn::Rest<I>>
    where
        I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
    {
        let ctx = h1::conn::Ctx {
            state: &self.state,
            shared: &self.shared,
            peer,
            tls,
        };
        h1::conn::serve(io, &ctx, watch.clone(), sniff).await
    }

    async fn http<I>(self, io: I, conn: Conn, mut watch: Watch)
    where
        I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let state = self.state;
        let shared = self.shared;
        let peer = conn.peer;
        let svc = service_fn(move |req| {
            let site = state.site.load_full();
            let shared = shared.clone();
            let conn = conn.clone();
            async move { Ok::<_, Infallible>(handle(req, site, shared, conn).await) }
        });
        let c = self
            .builder
            .serve_connection_with_upgrades(TokioIo::new(io), svc);
        let mut c = std::pin::pin!(c.into_owned());
        let ended = tokio::select! {
            r = c.as_mut() => r,
            _ = watch.signaled() => {
                // HTTP/1: close after the current response; HTTP/2: GOAWAY.
                c.as_mut().graceful_shutdown();
                c.await
            }
        };
        if let Err(e) = ended {
            tracing::debug!(%peer, "connection ended: {e}");
        }
    }
}
