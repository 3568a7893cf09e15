//! The fast path's connection loop: reads each request head of an HTTP/1.1 keep-alive connection
//! (idle timeout between requests, header timeout from a head's first byte and for a new
//! connection's first head), validates it with the
//! guard's own checks, and serves it with [`super::exchange`], all in the connection's task.
//!
//! The first head the fast path does not serve (a body, an upgrade, HTTP/1.0, anything the head
//! validator refuses, the HTTP/2 preface, a listener with access control, an HTTPS redirect or an
//! upstream that is not `http://`) hands the connection over, with every byte read so far, to the
//! general path (guard + hyper), which serves the rest of it exactly as before.
//!
//! Imports: tokio IO, `super::{wire, exchange, timer}`, `crate::proxy::{head, handler, listener, drain}`.

use std::future::poll_fn;
use std::net::SocketAddr;
use std::pin::{Pin, pin};
use std::task::Poll;
use std::time::Duration;

use bytes::BytesMut;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::time::Instant;

use super::exchange::{self, Client};
use super::timer::Timer;
use super::wire::{self, Handover};
use crate::proxy::drain::Watch;
use crate::proxy::handler::{Shared, Site};
use crate::proxy::head::find_head_end;
use crate::proxy::listener::Swappable;
use crate::proxy::upstream::Protocol;

const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// A connection the fast path hands to the general path.
pub struct Rest<S> {
    pub io: S,
    /// Bytes read and not served: they start at a head boundary.
    pub buffered: BytesMut,
    /// Still undecided between HTTP/1 and the HTTP/2 preface.
    pub sniff: bool,
}

/// What a connection is served with.
pub struct Ctx<'a> {
    pub state: &'a Swappable,
    pub shared: &'a Shared,
    pub peer: SocketAddr,
    pub tls: bool,
}

/// True when every request of `site` can take the fast path (see the module documentation).
fn fast_site(site: &Site) -> bool {
    site.access.is_none()
        && !site.redirect_to_https
        && site
            .pool
            .members
            .iter()
            .all(|m| m.protocol == Protocol::Http1)
}

enum Wait {
    Head(usize),
    Handover,
    Close,
}

/// Serves the connection until it ends (`None`) or goes to the general path (`Some`).
pub async fn serve<S>(mut io: S, ctx: &Ctx<'_>, watch: Watch, sniff: bool) -> Option<Rest<S>>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let lim = ctx.shared.limits;
    let head_lim = lim.head();
    let peer_ip = ctx.peer.ip().to_string();
    let now = Instant::now();
    let mut client = Client {
        peer: ctx.peer,
        tls: ctx.tls,
        peer_ip: &peer_ip,
        upstream_timer: Timer::new(now + lim.upstream_response_timeout),
    };
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
        let end = match wait {
            Wait::Head(end) => {
                idle = lim.idle_timeout;
                end
            }
            Wait::Handover => {
                return Some(Rest {
                    io,
                    buffered: buf,
                    sniff,
                });
            }
            Wait::Close => return None,
        };
        let site = ctx.state.site.load_full();
        if !fast_site(&site) {
            return Some(Rest {
                io,
                buffered: buf,
                sniff: false,
            });
        }
        let head = buf.split_to(end).freeze();
        let req = match wire::parse_request(&head, &head_lim) {
            Ok(r) => r,
            Err(Handover) => {
                let mut all = BytesMut::from(&head[..]);
                all.extend_from_slice(&buf);
                return Some(Rest {
                    io,
                    buffered: all,
                    sniff: false,
                });
            }
        };
        drop(head);
        let draining = watch.draining();
        let served = exchange::serve(
            &mut io,
            &mut out,
            req,
            &site,
            ctx.shared,
            &mut client,
            draining,
        );
        match served.await {
            Ok(true) if !watch.draining() => {}
            _ => {
                let _ = io.shutdown().await;
                return None;
            }
        }
        if out.capacity() > 64 * 1024 {
            out = Vec::with_capacity(8192);
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

/// Reads until `buf` holds a complete head (`Head(end)`), the connection should go to the general
/// path, or it ends (end of stream, error, idle or header timeout, drain while idle).
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
                    return Wait::Handover;
                }
            }
            if !*sniff {
                match find_head_end(buf) {
                    Err(_) => return Wait::Handover,
                    Ok(Some(end)) => return Wait::Head(end),
                    Ok(None) if buf.len() > max_head => return Wait::Handover,
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
