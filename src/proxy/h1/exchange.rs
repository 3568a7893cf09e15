//! One bodiless HTTP/1.1 request on the fast path, from its parsed head to the end of its response:
//! the WAF phases (request headers, response headers, logging) as `handler` runs them, the upstream
//! exchange on a pooled connection driven right here (no task, no channel), and the response
//! relayed to the client. Blocks and failures are answered with the same responses the general path
//! gives, encoded by [`super::encode`].
//!
//! Imports: `waf::Transaction`, `super::{wire, response, encode, relay, upconn, timer}`, `crate::proxy::{handler,
//! conns, upstream}`.

use std::future::poll_fn;
use std::net::SocketAddr;
use std::pin::pin;
use std::task::Poll;
use std::time::Instant;

use http::{Method, Response, StatusCode};
use http_body_util::BodyExt;
use tokio::io::{AsyncWrite, AsyncWriteExt};

use super::encode::{self, Answering, BodyLen, Fields, Head};
use super::relay::{self, Relayed};
use super::response::{self, BodyFraming, ResponseHead};
use super::timer::Timer;
use super::upconn::UpConn;
use super::wire::{self, RequestHead};
use crate::proxy::conns::HostConns;
use crate::proxy::handler::{
    Failure, Shared, Site, block_or_reject, failure_reply, log_transaction, set_host,
};
use crate::proxy::upstream::ProxyBody;
use crate::waf::{ConnInfo, Step, Transaction};

/// The client connection, as an exchange needs it.
pub struct Client<'a> {
    pub peer: SocketAddr,
    pub tls: bool,
    /// `peer`'s address as text, for `X-Forwarded-For` (formatted once per connection).
    pub peer_ip: &'a str,
    /// The upstream response timeout of the connection's requests.
    pub upstream_timer: Timer,
}

/// Serves one request; `Ok(true)` when the connection may carry another one. `out` is the
/// connection's scratch buffer.
pub async fn serve<W: AsyncWrite + Unpin>(
    io: &mut W,
    out: &mut Vec<u8>,
    req: RequestHead,
    site: &Site,
    shared: &Shared,
    client: &mut Client<'_>,
    draining: bool,
) -> std::io::Result<bool> {
    let started = Instant::now();
    let RequestHead {
        mut parts,
        close,
        seen,
    } = req;
    let close = close || draining;
    if let Some(a) = parts.uri.authority() {
        // An absolute-form target's authority wins over `Host` (RFC 9112 3.2.2).
        set_host(&mut parts.headers, a);
    }
    let mut tx = Transaction::new(
        site.engine.snapshot(),
        ConnInfo {
            peer: client.peer.ip(),
            tls: client.tls,
        },
    );
    let answering = Answering {
        method: &parts.method,
        close,
    };
    if tx.on_request_headers(&parts) == Step::Block {
        let res = block_or_reject(Some(tx.block_response()));
        return finish(io, out, res, answering, &mut tx, site, shared, started).await;
    }
    out.clear();
    let xff = site.x_forwarded_for.then_some(client.peer_ip);
    wire::encode_request(out, &parts, seen, xff);
    let timer = &mut client.upstream_timer;
    let upstream = exchange(site, shared, out, &parts.method, started, timer);
    let (mut up, host, res) = match upstream.await {
        Ok(x) => x,
        Err(f) => {
            let res = failure_reply(f, shared);
            return finish(io, out, res, answering, &mut tx, site, shared, started).await;
        }
    };
    // The engine reads a response's fields only when the policy needs them: no map otherwise.
    let status = res.status.as_u16();
    let step = if tx.needs_response_headers() {
        tx.on_response_headers(status, &res.headers.to_map())
    } else {
        tx.on_response_headers(status, &http::HeaderMap::new())
    };
    if step == Step::Block {
        let reply = block_or_reject(Some(tx.block_response()));
        return finish(io, out, reply, answering, &mut tx, site, shared, started).await;
    }
    log_transaction(&mut tx, site, shared, res.status);
    site.counters
        .request(res.status.as_u16(), started.elapsed().as_secs_f64());
    out.clear();
    let len = match res.framing {
        BodyFraming::Empty => BodyLen::Empty,
        BodyFraming::Length(n) => BodyLen::Known(n),
        BodyFraming::Chunked | BodyFraming::Eof => BodyLen::Unknown,
    };
    let head = Head {
        status: res.status,
        version: res.version,
        headers: Fields::Raw(&res.headers),
        strip: true,
    };
    let enc = encode::encode(out, &head, len, answering);
    match relay::body(io, out, &mut up, res.framing, &enc, seen.te_trailers).await? {
        Relayed::Reusable if res.reusable => host.raw_checkin(up, started),
        Relayed::Broken => return Ok(false),
        Relayed::Reusable | Relayed::Done => {}
    }
    Ok(!enc.last)
}

/// Writes a response the proxy produced (block, failure), logs the transaction and counts it.
#[allow(clippy::too_many_arguments)]
async fn finish<W: AsyncWrite + Unpin>(
    io: &mut W,
    out: &mut Vec<u8>,
    res: Response<ProxyBody>,
    answering: Answering<'_>,
    tx: &mut Transaction,
    site: &Site,
    shared: &Shared,
    started: Instant,
) -> std::io::Result<bool> {
    let status = res.status();
    log_transaction(tx, site, shared, status);
    site.counters
        .request(status.as_u16(), started.elapsed().as_secs_f64());
    write_reply(io, out, res, answering).await
}

/// Writes a response with a complete body (the proxy's own answers); `Ok(true)` keeps the
/// connection.
pub async fn write_reply<W: AsyncWrite + Unpin>(
    io: &mut W,
    out: &mut Vec<u8>,
    res: Response<ProxyBody>,
    answering: Answering<'_>,
) -> std::io::Result<bool> {
    let (parts, body) = res.into_parts();
    let body = body
        .collect()
        .await
        .map(|c| c.to_bytes())
        .unwrap_or_default();
    let len = if body.is_empty() {
        BodyLen::Empty
    } else {
        BodyLen::Known(body.len() as u64)
    };
    out.clear();
    let head = Head {
        status: parts.status,
        version: parts.version,
        headers: Fields::Map(&parts.headers),
        strip: false,
    };
    let enc = encode::encode(out, &head, len, answering);
    if enc.body != encode::BodyOut::Length(0) {
        out.extend_from_slice(&body);
    }
    io.write_all(out).await?;
    Ok(!enc.last)
}

/// Sends the request head in `out` to a member and reads the response head: round robin over the
/// members, a refused member marked down and the next one tried (the request has no body), a pooled
/// connection that turns out closed replaced by a fresh one. All of it ends at the upstream
/// response timeout (on the connection's `timer`), counted from `now`, the request's start.
async fn exchange(
    site: &Site,
    shared: &Shared,
    out: &[u8],
    method: &Method,
    now: Instant,
    timer: &mut Timer,
) -> Result<(UpConn, std::sync::Arc<HostConns>, ResponseHead), Failure> {
    let attempts = site.pool.members.len().max(1);
    let mut last = Failure::NoMember;
    timer.set((now + shared.limits.upstream_response_timeout).into());
    for _ in 0..attempts {
        let Some(member) = site.pool.pick() else {
            return Err(Failure::NoMember);
        };
        let host = shared.clients.host(member);
        let attempt = async {
            let mut retried = false;
            loop {
                let pooled = if retried {
                    None
                } else {
                    host.raw_checkout(now)
                };
                let mut up = match pooled {
                    Some(c) => c,
                    None => host.raw_connect(&shared.clients).await.map_err(Err)?,
                };
                match round_trip(&mut up, out, method).await {
                    Ok(res) => return Ok((up, res)),
                    // A pooled connection the upstream closed before answering: once more on a
                    // fresh one (the request has no body; nothing of a response was seen).
                    // Once the request went out, only an idempotent one is sent again: the
                    // upstream may have acted on it before closing.
                    Err(RoundTrip::Closed)
                        if up.pooled && !retried && (method.is_idempotent() || !up.sent) =>
                    {
                        retried = true
                    }
                    Err(RoundTrip::Closed) => {
                        return Err(Ok("connection closed before a response".to_string()));
                    }
                    Err(RoundTrip::Failed(why)) => return Err(Ok(why)),
                }
            }
        };
        let ended = {
            let mut attempt = pin!(attempt);
            poll_fn(|cx| match attempt.as_mut().poll(cx) {
                Poll::Ready(r) => Poll::Ready(Some(r)),
                Poll::Pending => timer.poll_expired(cx).map(|()| None),
            })
            .await
        };
        match ended {
            None => return Err(Failure::Timeout),
            Some(Ok((up, res))) => return Ok((up, host, res)),
            Some(Err(Err(e))) => {
                site.pool.mark_down(member);
                last = Failure::Connect(format!("{}: {e}", member.url));
            }
            Some(Err(Ok(why))) => return Err(Failure::Other(format!("{}: {why}", member.url))),
        }
    }
    Err(last)
}

enum RoundTrip {
    /// The connection ended (or was reset) before any byte of a response.
    Closed,
    Failed(String),
}

/// Writes the request and reads the response head (skipping `100 Continue` and other 1xx).
async fn round_trip(
    up: &mut UpConn,
    out: &[u8],
    method: &Method,
) -> Result<ResponseHead, RoundTrip> {
    let gone = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::ConnectionReset
        | std::io::ErrorKind::BrokenPipe
        | std::io::ErrorKind::ConnectionAborted => RoundTrip::Closed,
        _ => RoundTrip::Failed(e.to_string()),
    };
    up.sent = false;
    up.send(out).await.map_err(gone)?;
    up.sent = true;
    let mut seen = false;
    loop {
        if !up.buf.is_empty() {
            seen = true;
            match response::parse_response(&mut up.buf, method) {
                Err(why) => return Err(RoundTrip::Failed(why.to_string())),
                Ok(Some(head)) => {
                    if head.status.is_informational() {
                        if head.status == StatusCode::SWITCHING_PROTOCOLS {
                            return Err(RoundTrip::Failed("unexpected 101".into()));
                        }
                        continue;
                    }
                    return Ok(head);
                }
                Ok(None) => {}
            }
        }
        match up.read_more().await {
            Ok(0) if !seen => return Err(RoundTrip::Closed),
            Ok(0) => return Err(RoundTrip::Failed("connection closed mid-head".into())),
            Ok(_) => {}
            Err(e) if !seen => return Err(gone(e)),
            Err(e) => return Err(RoundTrip::Failed(e.to_string())),
        }
    }
}
