//! The HTTP/1.1 connection loop: reads each request head of a keep-alive connection (idle timeout
//! between requests, header timeout from a head's first byte and for a new connection's first
//! head), validates and parses it once, and has the phase driver serve it through
//! [`super::front::H1Front`], all in the connection's task. Pipelined requests are served in
//! order; a head the validator refuses is answered (after the ones before it) and ends the
//! connection.
//!
//! A connection ends with a lingering close when the client may still be sending (a body left
//! unread, bytes after a refused head): the proxy stops writing and reads and discards for a
//! bounded time, so the client receives the last answer rather than a reset.
//!
//! A cleartext connection that opens with the HTTP/2 preface is handed to hyper (see
//! [`crate::listener`]) with the bytes read so far.

use std::future::poll_fn;
use std::net::SocketAddr;
use std::pin::{Pin, pin};
use std::task::Poll;
use std::time::Duration;

use bytes::BytesMut;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::time::Instant;

use super::front::{After, H1Front};
use super::reqbody::ReqBody;
use super::timer::Timer;
use super::wire;
use crate::drain::Watch;
use crate::driver::{self, Client, Env, Facts};
use crate::handler::Shared;
use crate::head::{Framing, Reject, find_head_end};
use crate::listener::Swappable;
use crate::refuse::Refusal;

const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// A lingering close ends after this long without a byte from the client.
const LINGER_IDLE: Duration = Duration::from_secs(2);
/// ... and after this long in all.
const LINGER_MAX: Duration = Duration::from_secs(10);

/// A connection that turned out to speak HTTP/2 (prior knowledge), for hyper.
pub struct Rest<S> {
    pub io: S,
    /// Bytes read so far: the preface and what followed it.
    pub buffered: BytesMut,
}

/// What a connection is served with.
pub struct ConnContext<'a> {
    pub state: &'a Swappable,
    pub shared: &'a Shared,
    pub peer: SocketAddr,
    pub tls: bool,
}

enum Wait {
    Head(usize),
    Preface,
    Refused(Reject),
    Close,
}

/// Serves the connection until it ends (`None`) or turns out to be HTTP/2 (`Some`). `sniff`: the
/// connection may open with the HTTP/2 preface.
pub async fn serve<S>(
    mut io: S,
    ctx: &ConnContext<'_>,
    watch: Watch,
    sniff: bool,
) -> Option<Rest<S>>
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    let lim = ctx.shared.limits;
    let head_lim = lim.head();
    let peer_ip = portcullis_support::ip_text(ctx.peer.ip());
    let client = Client {
        peer: ctx.peer,
        tls: ctx.tls,
        peer_ip: &peer_ip,
    };
    let now = Instant::now();
    let mut upstream_timer = Timer::new(now + lim.upstream_response_timeout);
    let mut client_timer = Timer::new(now + lim.header_read_timeout);
    // A new connection's first head is due within the header timeout (a client that connects,
    // or completes a TLS handshake, and sends nothing holds a socket); later ones may idle.
    let mut idle = lim.header_read_timeout;
    let mut buf = BytesMut::with_capacity(8192);
    let mut out = Vec::with_capacity(8192);
    let mut sniff = sniff;
    let mut signal = watch.clone();
    let mut drained = Drained {
        signal: pin!(signal.signaled()),
        watch: &watch,
        registered: false,
    };
    loop {
        let wait = read_head(
            &mut io,
            &mut buf,
            &mut sniff,
            (head_lim.max_head_bytes, idle, lim.header_read_timeout),
            &mut client_timer,
            &mut drained,
        )
        .await;
        let site = ctx.state.site.load_full();
        let env = Env {
            site: &site,
            shared: ctx.shared,
            client,
        };
        let parsed = match wait {
            Wait::Head(end) => {
                idle = lim.idle_timeout;
                let head = buf.split_to(end).freeze();
                wire::parse_request(&head, &head_lim).map_err(|r| Refusal::of_head(r, &head))
            }
            Wait::Preface => return Some(Rest { io, buffered: buf }),
            Wait::Close => return None,
            Wait::Refused(r) => Err(Refusal::of_head(r, &buf)),
        };
        let req = match parsed {
            Ok(req) => req,
            Err(refusal) => {
                // Boxed, as the driver's rare paths are (see `crate::driver`): the connection's
                // future is copied whole into its task.
                Box::pin(refuse(
                    &mut io,
                    &mut buf,
                    &mut out,
                    &mut client_timer,
                    refusal,
                    &env,
                ))
                .await;
                return None;
            }
        };
        let upgrade = req.framing == Framing::Upgrade;
        let mut front = H1Front {
            io: &mut io,
            buf: &mut buf,
            out: &mut out,
            timer: &mut client_timer,
            body: ReqBody::new(req.framing, req.expect_continue, &lim),
            body_len: match req.framing {
                Framing::Length(n) => Some(n),
                _ => None,
            },
            has_body: ReqBody::declared(req.framing),
            method: req.parts.method.clone(),
            // What a client sends after an upgrade head is never read as HTTP/1: an upgrade
            // that does not happen ends the connection.
            close: req.close || upgrade || watch.draining(),
            http10: req.parts.version == http::Version::HTTP_10,
            te_trailers: req.seen.te_trailers,
            tunnel_idle: lim.tunnel_idle_timeout,
        };
        let facts = Facts {
            seen: req.seen,
            upgrade,
        };
        let after = driver::serve(&mut front, req.parts, facts, &env, &mut upstream_timer).await;
        match after {
            After::KeepAlive if !watch.draining() => {}
            After::KeepAlive | After::Close => {
                if ctx.tls {
                    // The TLS close alert; plain TCP needs no more than the close itself.
                    let _ = io.shutdown().await;
                }
                return None;
            }
            After::Linger => {
                linger(&mut io, &mut buf).await;
                return None;
            }
        }
        if out.capacity() > 64 * 1024 {
            out = Vec::with_capacity(8192);
        }
    }
}

/// Answers a refused head (the connection ends after it).
async fn refuse<S>(
    io: &mut S,
    buf: &mut BytesMut,
    out: &mut Vec<u8>,
    timer: &mut Timer,
    refusal: Refusal,
    env: &Env<'_>,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    let lim = env.shared.limits;
    let mut front = H1Front {
        io: &mut *io,
        buf: &mut *buf,
        out,
        timer,
        body: ReqBody::new(Framing::None, false, &lim),
        body_len: None,
        has_body: false,
        method: http::Method::GET,
        close: true,
        http10: false,
        te_trailers: false,
        tunnel_idle: lim.tunnel_idle_timeout,
    };
    driver::refuse(&mut front, refusal, env).await;
    // Whatever follows a refused head is not read, but it may still be on its way.
    linger(io, buf).await;
}

/// A lingering close: stops writing (the client sees the end of the last answer) and reads and
/// discards what the client still sends, until it closes its side, is silent for
/// [`LINGER_IDLE`], or [`LINGER_MAX`] has passed. Closing at once with unread bytes would reset
/// the connection, and a reset can destroy the answer before the client has read it.
async fn linger<S: AsyncRead + AsyncWrite + Unpin>(io: &mut S, buf: &mut BytesMut) {
    if io.shutdown().await.is_err() {
        return;
    }
    let end = Instant::now() + LINGER_MAX;
    loop {
        buf.clear();
        if buf.capacity() < 4096 {
            buf.reserve(4096);
        }
        let wait = LINGER_IDLE.min(end.saturating_duration_since(Instant::now()));
        match tokio::time::timeout(wait, io.read_buf(buf)).await {
            Ok(Ok(n)) if n > 0 => {}
            _ => return,
        }
    }
}

/// The listener's drain signal, as an idle wait sees it. Its future is polled once, which
/// registers the connection's task to be woken by the signal; after that the flag is read instead
/// (each poll of the future takes the channel's lock and checks its waiter list).
struct Drained<'w, F> {
    signal: Pin<&'w mut F>,
    watch: &'w Watch,
    registered: bool,
}

impl<F: Future<Output = ()>> Drained<'_, F> {
    /// True once the listener drains.
    fn poll(&mut self, cx: &mut std::task::Context<'_>) -> bool {
        if self.registered {
            return self.watch.draining();
        }
        self.registered = true;
        self.signal.as_mut().poll(cx).is_ready()
    }
}

/// Reads until `buf` holds a complete head (`Head(end)`), the HTTP/2 preface, a head the
/// validator refuses before its end (bare CR or LF, obs-fold, too large), or the connection ends
/// (end of stream, error, idle or header timeout, drain while idle).
async fn read_head<S: AsyncRead + Unpin>(
    io: &mut S,
    buf: &mut BytesMut,
    sniff: &mut bool,
    (max_head, idle, header): (usize, Duration, Duration),
    timer: &mut Timer,
    drained: &mut Drained<'_, impl Future<Output = ()>>,
) -> Wait {
    let mut head_started: Option<Instant> = None;
    loop {
        if !buf.is_empty() {
            if *sniff {
                let n = buf.len().min(H2_PREFACE.len());
                if buf[..n] != H2_PREFACE[..n] {
                    *sniff = false;
                } else if n == H2_PREFACE.len() {
                    return Wait::Preface;
                }
            }
            if !*sniff {
                match find_head_end(buf) {
                    Err(r) => return Wait::Refused(r),
                    Ok(Some(end)) => return Wait::Head(end),
                    Ok(None) if buf.len() > max_head => {
                        return Wait::Refused(Reject {
                            status: 431,
                            reason: "request head too large",
                        });
                    }
                    Ok(None) => {}
                }
            }
        }
        let idle_now = buf.is_empty();
        if buf.capacity() - buf.len() < 1024 {
            buf.reserve(8192);
        }
        let mut armed = false;
        let read = io.read_buf(buf);
        let mut read = pin!(read);
        let got = poll_fn(|cx| {
            if let Poll::Ready(r) = read.as_mut().poll(cx) {
                return Poll::Ready(Some(r));
            }
            if !armed {
                // Only a read that has to wait needs the clock and the timer: the idle timeout
                // runs from now, the header timeout from the first wait for the rest of a head.
                let now = Instant::now();
                timer.set(if idle_now {
                    now + idle
                } else {
                    *head_started.get_or_insert(now) + header
                });
                armed = true;
            }
            if timer.poll_expired(cx).is_ready() {
                return Poll::Ready(None);
            }
            if idle_now && drained.poll(cx) {
                return Poll::Ready(None);
            }
            Poll::Pending
        })
        .await;
        match got {
            Some(Ok(n)) if n > 0 => {}
            _ => return Wait::Close,
        }
    }
}
