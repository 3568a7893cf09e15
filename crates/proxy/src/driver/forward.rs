//! Phase 4, upstream selection and the request sent: round robin over the members (a member that
//! refuses connections is marked down and the next one tried, nothing of the request having gone
//! out), a connection from the host's pool or a fresh one, and the exchange. HTTP/1.1 members are
//! driven here, on a connection the proxy owns (plain or TLS), in the request's own task: the
//! head and the first released body bytes in one write, the rest of the body streamed as the
//! engine releases it, the response head read back. Members spoken to over HTTP/2 (h2c, gRPC, TLS
//! members that pick `h2`) go through hyper's client ([`super::forward_h2`]).
//!
//! A pooled connection the upstream closed before any byte of a response is replaced by a fresh
//! one once, when what was sent can be sent again (the request is idempotent or did not go out
//! whole, and no body byte beyond the first write was consumed).
//!
//! Opening a connection (DNS, TCP, TLS, the HTTP/2 handshake) and the HTTP/2 exchange are awaited
//! boxed: most requests take a pooled connection, and their room would otherwise be part of every
//! connection's future (see [`super`]).

use std::future::poll_fn;
use std::pin::pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Instant;

use http::{Method, StatusCode};

use super::answer::Failure;
use super::inspect::{Inspection, Stop};
use super::{BodyError, Env, Facts, Front, Tx};
use crate::conns::{Connected, HostConns};
use crate::h1::chunked::encode_chunk;
use crate::h1::response::{self, ResponseHead};
use crate::h1::timer::Timer;
use crate::h1::upconn::UpConn;
use crate::h1::wire;
use crate::metrics::TunnelSlot;
use crate::upstream::{Member, Protocol, ProxyBody, is_grpc};

/// Body bytes sent in the same write as the request head, at most.
const FIRST_WRITE: usize = 64 * 1024;
/// Bytes the first write starts with for the upstream request head.
const HEAD_ROOM: usize = 1024;
/// Body bytes fed so far that the first write makes room for at once (more grow it as before).
const SMALL_BODY: usize = 8 * 1024;
/// A chunk's size line and line ends, and the last chunk, when the body goes chunked.
const CHUNK_FRAMING: usize = 32;

/// An upstream response whose head has arrived.
pub enum UpResponse {
    /// From an HTTP/1.1 connection the proxy drives: the body is still on the connection.
    H1 {
        head: ResponseHead,
        conn: UpConn,
        host: Arc<HostConns>,
        /// When the request started (the connection counts as idle from then, if pooled).
        started: Instant,
        /// The request went out whole, so the connection may serve another one.
        complete: bool,
    },
    /// From hyper's HTTP/2 client.
    Hyper(http::Response<ProxyBody>),
}

impl UpResponse {
    pub fn status(&self) -> StatusCode {
        match self {
            UpResponse::H1 { head, .. } => head.status,
            UpResponse::Hyper(r) => r.status(),
        }
    }
}

/// Why the driver stopped a request before an upstream response.
#[derive(Debug)]
pub enum Halt {
    Upstream(Failure),
    Body(Stop),
    Client(BodyError),
}

/// How one exchange on an HTTP/1.1 connection went wrong.
enum Trip {
    /// The connection ended (or was reset) before any byte of a response.
    Closed,
    Failed(String),
    Timeout,
    Halt(Halt),
}

/// Sends the request to a member and reads the response head. `inspect`: the engine reads the
/// body (`Step::InspectBody`).
pub(super) async fn exchange<F: Front>(
    front: &mut F,
    head: &mut portcullis_engine::RequestHead,
    facts: &Facts,
    inspect: bool,
    env: &Env<'_>,
    timer: &mut Timer,
    tx: &mut Tx,
) -> Result<UpResponse, Halt> {
    let (site, shared) = (env.site, env.shared);
    let lim = &shared.limits;
    let started = Instant::now();
    let grpc = is_grpc(head);
    let mut body = front
        .has_body()
        .then(|| Inspection::new(inspect, lim.max_body_bytes, lim.inspection_bytes));
    let attempts = site.pool.members.len().max(1);
    let mut last = Failure::NoMember;
    let mut encoded: Option<Vec<u8>> = None;
    timer.set((started + lim.upstream_response_timeout).into());
    for _ in 0..attempts {
        let Some(member) = site.pool.pick() else {
            return Err(Halt::Upstream(Failure::NoMember));
        };
        let host = shared.clients.host(member);
        // gRPC needs HTTP/2 all the way (h2c to a cleartext member when the client spoke
        // HTTP/2); a TLS member is offered both and picks.
        let h2 = match member.protocol {
            Protocol::H2c => true,
            Protocol::Http1 => grpc && front.h2(),
            Protocol::Https => grpc,
        };
        if encoded.is_none() && !h2 && !host.speaks_h2() {
            // Read (and inspect) the start of the body before taking a connection: a body
            // blocked early costs the upstream nothing, and a slow client holds no connection.
            encoded = Some(prefetch(front, head, facts, &mut body, env, tx).await?);
            if body.is_some() {
                timer.set(tokio::time::Instant::now() + lim.upstream_response_timeout);
            }
        }
        let pooled = if h2 || host.speaks_h2() {
            None
        } else {
            host.raw_checkout(started)
        };
        let conn = match pooled {
            Some(c) => Connected::H1(c),
            None => match bounded(timer, Box::pin(host.connect_for(&shared.clients, h2, h2))).await
            {
                None => return Err(Halt::Upstream(Failure::Timeout)),
                Some(Ok(c)) => c,
                Some(Err(crate::conns::SendError::Connect(e))) => {
                    site.pool.mark_down(member);
                    last = Failure::Connect(format!("{}: {e}", member.url));
                    continue;
                }
                Some(Err(e)) => {
                    let why = format!("{}: {e}", member.url);
                    return Err(Halt::Upstream(Failure::Other(why)));
                }
            },
        };
        let up = match conn {
            Connected::H2(sender) => {
                // hyper's client takes the head, and the body phase goes on in a task of its own.
                tx.with(|t| t.keep_fields(&head.headers));
                // hyper's client takes a `HeaderMap`: the one conversion back.
                let req = super::forward_h2::Request {
                    head: std::mem::take(head).into_parts(),
                    body,
                    grpc,
                    member,
                    host: &host,
                };
                return Box::pin(super::forward_h2::send(front, req, sender, env, tx)).await;
            }
            Connected::H1(up) => up,
        };
        let first = match &mut encoded {
            Some(b) => b,
            None => {
                let e = prefetch(front, head, facts, &mut body, env, tx).await?;
                encoded.insert(e)
            }
        };
        let response = owned(
            front,
            first,
            &mut body,
            &head.method,
            up,
            &host,
            member,
            env,
            timer,
            tx,
        );
        return response.await.map(|(head, conn, complete)| UpResponse::H1 {
            head,
            conn,
            host,
            started,
            complete,
        });
    }
    Err(Halt::Upstream(last))
}

/// Reads the body until the engine lets the request start (at least its first piece), then
/// writes the upstream request head followed by the body bytes released so far (up to
/// [`FIRST_WRITE`]): what goes out in the first write.
async fn prefetch<F: Front>(
    front: &mut F,
    head: &portcullis_engine::RequestHead,
    facts: &Facts,
    body: &mut Option<Inspection>,
    env: &Env<'_>,
    tx: &mut Tx,
) -> Result<Vec<u8>, Halt> {
    let xff = env.site.x_forwarded_for.then_some(env.client.peer_ip);
    let Some(b) = body.as_mut() else {
        let mut first = Vec::with_capacity(HEAD_ROOM);
        wire::encode_request(&mut first, head, facts.seen, xff, &[]);
        return Ok(first);
    };
    let mut ended = false;
    while !b.go() || (b.total() == 0 && !ended) {
        match front.body_chunk().await.map_err(Halt::Client)? {
            Some(chunk) => b.feed(tx, chunk).map_err(Halt::Body)?,
            None => {
                b.end(tx).map_err(Halt::Body)?;
                ended = true;
            }
        }
    }
    // A body of known length keeps its `Content-Length`; any other goes chunked.
    let chunked = front.body_len().is_none();
    let extra: &[(&[u8], &[u8])] = if chunked {
        &[(b"transfer-encoding", b"chunked")]
    } else {
        &[]
    };
    // Room for the head and a small body's bytes at once (most API bodies): one allocation
    // instead of a second one, and a copy, when the body outgrows the head's room.
    let small_body = usize::try_from(b.total()).map_or(0, |n| n.min(SMALL_BODY));
    let mut first = Vec::with_capacity(HEAD_ROOM + small_body + CHUNK_FRAMING);
    wire::encode_request(&mut first, head, facts.seen, xff, extra);
    while first.len() < FIRST_WRITE
        && let Some(chunk) = b.release()
    {
        put_body(&mut first, &chunk, chunked);
    }
    if ended && !b.has_held() && chunked {
        first.extend_from_slice(b"0\r\n\r\n");
    }
    Ok(first)
}

/// Appends body bytes as they go on the wire.
fn put_body(out: &mut Vec<u8>, data: &[u8], chunked: bool) {
    if chunked {
        encode_chunk(out, data);
    } else {
        out.extend_from_slice(data);
    }
}

/// The exchange on an HTTP/1.1 connection, with one retry on a fresh connection when a pooled
/// one turns out closed (see the module documentation).
#[allow(clippy::too_many_arguments)]
async fn owned<F: Front>(
    front: &mut F,
    first: &[u8],
    body: &mut Option<Inspection>,
    method: &Method,
    mut up: UpConn,
    host: &Arc<HostConns>,
    member: &Member,
    env: &Env<'_>,
    timer: &mut Timer,
    tx: &mut Tx,
) -> Result<(ResponseHead, UpConn, bool), Halt> {
    let chunked = front.body_len().is_none() && body.is_some();
    loop {
        let trip = round_trip(front, &mut up, first, body, chunked, method, env, timer, tx).await;
        match trip {
            Ok((head, complete)) => return Ok((head, up, complete)),
            // Once the request went out, only an idempotent one is sent again: the upstream may
            // have acted on it before closing.
            Err((Trip::Closed, replayable))
                if up.pooled && replayable && (method.is_idempotent() || !up.sent) =>
            {
                up = match bounded(timer, Box::pin(host.connect_upgrade(&env.shared.clients))).await
                {
                    Some(Ok(c)) => c,
                    Some(Err(e)) => {
                        env.site.pool.mark_down(member);
                        let why = format!("{}: {e}", member.url);
                        return Err(Halt::Upstream(Failure::Connect(why)));
                    }
                    None => return Err(Halt::Upstream(Failure::Timeout)),
                };
            }
            Err((Trip::Closed, _)) => {
                let why = format!("{}: connection closed before a response", member.url);
                return Err(Halt::Upstream(Failure::Other(why)));
            }
            Err((Trip::Failed(why), _)) => {
                let why = format!("{}: {why}", member.url);
                return Err(Halt::Upstream(Failure::Other(why)));
            }
            Err((Trip::Timeout, _)) => return Err(Halt::Upstream(Failure::Timeout)),
            Err((Trip::Halt(h), _)) => return Err(h),
        }
    }
}

/// Writes `first`, streams the rest of the body as the engine releases it, and reads the response
/// head (skipping `100 Continue` and other 1xx). On success, whether the request went out whole;
/// on failure, whether it could be sent again (nothing beyond `first` was consumed).
#[allow(clippy::too_many_arguments)]
async fn round_trip<F: Front>(
    front: &mut F,
    up: &mut UpConn,
    first: &[u8],
    body: &mut Option<Inspection>,
    chunked: bool,
    method: &Method,
    env: &Env<'_>,
    timer: &mut Timer,
    tx: &mut Tx,
) -> Result<(ResponseHead, bool), (Trip, bool)> {
    let wait = env.shared.limits.upstream_response_timeout;
    up.sent = false;
    match bounded(timer, up.send(first)).await {
        None => return Err((Trip::Timeout, false)),
        Some(Err(e)) => return Err((gone(e), true)),
        Some(Ok(())) => {}
    }
    let mut replayable = true;
    let mut complete = true;
    let mut early = None;
    if let Some(b) = body.as_mut()
        && (!b.ended() || b.has_held())
    {
        replayable = false;
        let mut out = Vec::new();
        loop {
            out.clear();
            while out.len() < FIRST_WRITE
                && let Some(chunk) = b.release()
            {
                put_body(&mut out, &chunk, chunked);
            }
            if b.ended() && !b.has_held() && chunked {
                out.extend_from_slice(b"0\r\n\r\n");
            }
            if !out.is_empty() {
                timer.set(tokio::time::Instant::now() + wait);
                match bounded(timer, up.send(&out)).await {
                    None => return Err((Trip::Timeout, false)),
                    // The upstream may have answered early and closed: look for its answer.
                    Some(Err(_)) => {
                        complete = false;
                        break;
                    }
                    Some(Ok(())) => {}
                }
            }
            if b.ended() && !b.has_held() {
                break;
            }
            if b.has_held() && b.releasable() {
                continue;
            }
            // Wait for the client's next piece, watching the upstream: an answer before the end
            // of the body stops sending it (an interim 1xx answer is skipped).
            let next = if up.buf.is_empty() {
                tokio::select! {
                    biased;
                    r = up.read_more() => Err(r),
                    c = front.body_chunk() => Ok(c),
                }
            } else {
                Err(Ok(up.buf.len()))
            };
            match next {
                Err(Ok(n)) if n > 0 => match interim(up, method) {
                    Early::Interim => continue,
                    Early::Final(h) => {
                        early = Some(h);
                        complete = false;
                        break;
                    }
                    Early::Partial => {
                        complete = false;
                        break;
                    }
                    Early::Bad(why) => return Err((Trip::Failed(why.into()), false)),
                },
                Err(_) => {
                    complete = false;
                    break;
                }
                Ok(Ok(Some(chunk))) => {
                    if let Err(s) = b.feed(tx, chunk) {
                        return Err((Trip::Halt(Halt::Body(s)), false));
                    }
                }
                Ok(Ok(None)) => {
                    if let Err(s) = b.end(tx) {
                        return Err((Trip::Halt(Halt::Body(s)), false));
                    }
                }
                Ok(Err(e)) => return Err((Trip::Halt(Halt::Client(e)), false)),
            }
        }
    }
    up.sent = complete;
    if let Some(head) = early {
        return Ok((head, complete));
    }
    if !replayable || body.is_some() {
        timer.set(tokio::time::Instant::now() + wait);
    }
    match bounded(timer, read_head(up, method, false)).await {
        None => Err((Trip::Timeout, false)),
        Some(Ok(head)) => Ok((head, complete)),
        Some(Err(t)) => Err((t, replayable)),
    }
}

/// What an upstream sent before the end of the request body.
enum Early {
    /// Only interim (1xx) answers, now consumed: the body goes on.
    Interim,
    /// The response head.
    Final(ResponseHead),
    /// The start of a response head.
    Partial,
    Bad(&'static str),
}

/// Looks at what the upstream sent while the body was still going out.
fn interim(up: &mut UpConn, method: &Method) -> Early {
    loop {
        if up.buf.is_empty() {
            return Early::Interim;
        }
        match response::parse_response(&mut up.buf, method) {
            Err(why) => return Early::Bad(why),
            Ok(None) => return Early::Partial,
            Ok(Some(h)) if h.status == StatusCode::SWITCHING_PROTOCOLS => {
                return Early::Bad("unexpected 101");
            }
            Ok(Some(h)) if h.status.is_informational() => {}
            Ok(Some(h)) => return Early::Final(h),
        }
    }
}

/// Reads a response head off `up`, skipping 1xx answers (`101` ends the wait only when
/// `upgrade`).
async fn read_head(up: &mut UpConn, method: &Method, upgrade: bool) -> Result<ResponseHead, Trip> {
    let mut seen = false;
    loop {
        if !up.buf.is_empty() {
            seen = true;
            match response::parse_response(&mut up.buf, method) {
                Err(why) => return Err(Trip::Failed(why.to_string())),
                Ok(Some(head)) => {
                    if head.status == StatusCode::SWITCHING_PROTOCOLS && upgrade {
                        return Ok(head);
                    }
                    if head.status.is_informational() {
                        if head.status == StatusCode::SWITCHING_PROTOCOLS {
                            return Err(Trip::Failed("unexpected 101".into()));
                        }
                        continue;
                    }
                    return Ok(head);
                }
                Ok(None) => {}
            }
        }
        match up.read_more().await {
            Ok(0) if !seen => return Err(Trip::Closed),
            Ok(0) => return Err(Trip::Failed("connection closed mid-head".into())),
            Ok(_) => {}
            Err(e) if !seen => return Err(gone(e)),
            Err(e) => return Err(Trip::Failed(e.to_string())),
        }
    }
}

fn gone(e: std::io::Error) -> Trip {
    match e.kind() {
        std::io::ErrorKind::ConnectionReset
        | std::io::ErrorKind::BrokenPipe
        | std::io::ErrorKind::ConnectionAborted => Trip::Closed,
        _ => Trip::Failed(e.to_string()),
    }
}

/// Runs `fut` until the deadline on `timer`; `None` when the deadline came first.
pub(super) async fn bounded<T>(timer: &mut Timer, fut: impl Future<Output = T>) -> Option<T> {
    let mut fut = pin!(fut);
    poll_fn(|cx| match fut.as_mut().poll(cx) {
        Poll::Ready(r) => Poll::Ready(Some(r)),
        Poll::Pending => timer.poll_expired(cx).map(|()| None),
    })
    .await
}

/// How a WebSocket upgrade ended up.
pub(super) enum Upgrade {
    /// The member switched: answer `101` and join the connections.
    Switched(ResponseHead, UpConn, TunnelSlot),
    /// The member answered something else (the client connection closes after it).
    Declined(UpResponse),
    /// No upstream answer.
    Answer(super::answer::Answer),
}

/// Sends a WebSocket upgrade request whose headers passed the WAF on a fresh connection (never
/// pooled) and reads the member's answer.
pub(super) async fn upgrade(
    head: &portcullis_engine::RequestHead,
    facts: &Facts,
    env: &Env<'_>,
    timer: &mut Timer,
) -> Result<Upgrade, Halt> {
    let (site, shared) = (env.site, env.shared);
    let started = Instant::now();
    let Some(slot) = shared.metrics.tunnel_slot(shared.limits.max_tunnels) else {
        return Ok(Upgrade::Answer(super::answer::Answer::text(
            StatusCode::SERVICE_UNAVAILABLE,
            "too many upgraded connections\n",
            true,
        )));
    };
    let Some(member) = site.pool.pick() else {
        return Err(Halt::Upstream(Failure::NoMember));
    };
    let host = shared.clients.host(member);
    timer.set((started + shared.limits.upstream_response_timeout).into());
    let mut up = match bounded(timer, host.connect_upgrade(&shared.clients)).await {
        None => return Err(Halt::Upstream(Failure::Timeout)),
        Some(Ok(c)) => c,
        Some(Err(e)) => {
            site.pool.mark_down(member);
            let why = format!("{}: {e}", member.url);
            return Err(Halt::Upstream(Failure::Connect(why)));
        }
    };
    let protocol = head
        .headers
        .get(http::header::UPGRADE)
        .map_or(&b"websocket"[..], |v| v.as_bytes());
    let mut out = Vec::with_capacity(1024);
    let xff = site.x_forwarded_for.then_some(env.client.peer_ip);
    let extra: [(&[u8], &[u8]); 2] = [(b"connection", b"upgrade"), (b"upgrade", protocol)];
    wire::encode_request(&mut out, head, facts.seen, xff, &extra);
    let trip = async {
        up.send(&out).await.map_err(gone)?;
        read_head(&mut up, &head.method, true).await
    };
    let res = match bounded(timer, trip).await {
        None => return Err(Halt::Upstream(Failure::Timeout)),
        Some(Ok(h)) => h,
        Some(Err(Trip::Closed)) => {
            let why = format!("{}: connection closed before a response", member.url);
            return Err(Halt::Upstream(Failure::Other(why)));
        }
        Some(Err(Trip::Failed(why))) => {
            return Err(Halt::Upstream(Failure::Other(format!(
                "{}: {why}",
                member.url
            ))));
        }
        Some(Err(Trip::Timeout)) => return Err(Halt::Upstream(Failure::Timeout)),
        Some(Err(Trip::Halt(h))) => return Err(h),
    };
    if res.status != StatusCode::SWITCHING_PROTOCOLS {
        return Ok(Upgrade::Declined(UpResponse::H1 {
            head: res,
            conn: up,
            host,
            started,
            complete: true,
        }));
    }
    let websocket = res
        .headers
        .iter()
        .any(|(n, _, v)| n == b"upgrade" && v.trim_ascii().eq_ignore_ascii_case(b"websocket"));
    if !websocket {
        // Only a WebSocket tunnel is ever joined, whatever the member switched to.
        let why = format!("{}: 101 to a protocol other than websocket", member.url);
        return Err(Halt::Upstream(Failure::Other(why)));
    }
    Ok(Upgrade::Switched(res, up, slot))
}
