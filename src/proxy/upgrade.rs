//! Protocol upgrades over HTTP/1.1, WebSocket only (the head validator lets no other protocol
//! through as an upgrade, and a member's `101` to anything else is refused with 502): the upgrade
//! request is inspected like any other (head checks, the WAF's request-header phase), sent to a
//! member on a fresh HTTP/1.1 connection, and when the member answers `101 Switching Protocols`
//! the two connections are joined into a tunnel whose bytes are not inspected. The tunnel is
//! closed after `tunnel_idle_timeout` without a byte in either direction; at most `max_tunnels`
//! are open (503 beyond).
//!
//! The guard ([`super::guard::UpgradeLatch`]) holds the client's bytes after the upgrade head until
//! this module opens the latch; an upgrade that does not happen closes the client connection.
//!
//! Imports: hyper upgrades, tokio IO, `super::{handler, guard, conns, response, metrics}`.

use std::time::Duration;

use bytes::Bytes;
use http::header::{CONNECTION, HeaderValue, UPGRADE};
use http::{HeaderMap, Request, Response, StatusCode, Version};
use http_body_util::{BodyExt, Empty};
use hyper::body::Incoming;
use hyper::upgrade::{OnUpgrade, Upgraded};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::body::SharedTx;
use super::conns::SendError;
use super::guard::UpgradeLatch;
use super::handler::{Conn, Failure, Shared, Site, blocked, build, log_phase, upstream_failed};
use super::response::{simple, strip_hop_by_hop};
use super::upstream::ProxyBody;
use crate::waf::Step;

/// True when `req` asks to switch protocols and the guard let it through as such: HTTP/1.1,
/// `Connection: upgrade`, an `Upgrade` header, no body.
pub fn requested(req: &Request<Incoming>, conn: &Conn) -> bool {
    req.version() == Version::HTTP_11
        && conn.upgrade.as_ref().is_some_and(|l| l.armed())
        && req.headers().contains_key(UPGRADE)
        && has_upgrade_token(req.headers())
        && http_body::Body::is_end_stream(req.body())
}

fn has_upgrade_token(h: &HeaderMap) -> bool {
    h.get_all(CONNECTION).iter().any(|v| {
        v.as_bytes()
            .split(|b| *b == b',')
            .any(|t| t.trim_ascii().eq_ignore_ascii_case(b"upgrade"))
    })
}

/// Forwards an upgrade request whose headers passed the WAF; `protocol` is the client's `Upgrade`
/// value and `head` already lost its hop-by-hop headers.
pub async fn forward(
    site: &Site,
    shared: &Shared,
    mut head: http::request::Parts,
    protocol: HeaderValue,
    tx: &SharedTx,
    latch: &UpgradeLatch,
) -> Response<ProxyBody> {
    let Some(down) = head.extensions.remove::<OnUpgrade>() else {
        log_phase(tx, site, shared, StatusCode::BAD_REQUEST);
        return simple(StatusCode::BAD_REQUEST, "upgrade not possible\n", true);
    };
    let Some(slot) = shared.metrics.tunnel_slot(shared.limits.max_tunnels) else {
        log_phase(tx, site, shared, StatusCode::SERVICE_UNAVAILABLE);
        return simple(
            StatusCode::SERVICE_UNAVAILABLE,
            "too many upgraded connections\n",
            true,
        );
    };
    let Some(member) = site.pool.pick() else {
        return upstream_failed(Failure::NoMember, tx, site, shared);
    };
    let pq = head
        .uri
        .path_and_query()
        .cloned()
        .unwrap_or_else(|| http::uri::PathAndQuery::from_static("/"));
    let mut headers = std::mem::take(&mut head.headers);
    headers.insert(CONNECTION, HeaderValue::from_static("upgrade"));
    headers.insert(UPGRADE, protocol);
    let req = build(&head, headers, pq, None);
    let sent = shared.clients.send_upgrade(member, req);
    let mut res = match tokio::time::timeout(shared.limits.upstream_response_timeout, sent).await {
        Err(_) => return upstream_failed(Failure::Timeout, tx, site, shared),
        Ok(Ok(res)) => res,
        Ok(Err(SendError::Connect(e))) => {
            site.pool.mark_down(member);
            let why = format!("{}: {e}", member.url);
            return upstream_failed(Failure::Connect(why), tx, site, shared);
        }
        Ok(Err(e)) => {
            let why = format!("{}: {e}", member.url);
            return upstream_failed(Failure::Other(why), tx, site, shared);
        }
    };
    let step = match tx.lock().as_mut() {
        Some(t) => t.on_response_headers(res.status().as_u16(), res.headers()),
        None => Step::Forward,
    };
    if step == Step::Block {
        return blocked(tx, site, shared);
    }
    log_phase(tx, site, shared, res.status());
    let switched = res.status() == StatusCode::SWITCHING_PROTOCOLS;
    let their_protocol = res.headers().get(UPGRADE).cloned();
    let websocket = their_protocol
        .as_ref()
        .is_some_and(|p| p.as_bytes().trim_ascii().eq_ignore_ascii_case(b"websocket"));
    if switched && !websocket {
        // Only a WebSocket tunnel is ever joined, whatever the member switched to.
        let why = format!("{}: 101 to a protocol other than websocket", member.url);
        return upstream_failed(Failure::Other(why), tx, site, shared);
    }
    let up = hyper::upgrade::on(&mut res);
    let (mut parts, body) = res.into_parts();
    strip_hop_by_hop(&mut parts.headers, false);
    if !switched {
        // The member declined; the client connection closes after this answer (see `handle`).
        return Response::from_parts(parts, body.map_err(Into::into).boxed_unsync());
    }
    parts
        .headers
        .insert(CONNECTION, HeaderValue::from_static("upgrade"));
    if let Some(p) = their_protocol {
        parts.headers.insert(UPGRADE, p);
    }
    let idle = shared.limits.tunnel_idle_timeout;
    tokio::spawn(async move {
        let _slot = slot;
        match tokio::try_join!(down, up) {
            Ok((down, up)) => tunnel(io(down), io(up), idle).await,
            Err(e) => tracing::debug!("upgrade failed: {e}"),
        }
    });
    latch.open();
    let empty = Empty::<Bytes>::new().map_err(|e| match e {}).boxed_unsync();
    Response::from_parts(parts, empty)
}

fn io(u: Upgraded) -> TokioIo<Upgraded> {
    TokioIo::new(u)
}

/// Copies bytes both ways until both sides have ended (a side's EOF is passed on as a shutdown of
/// the other's write half), an error, or `idle` without a byte in either direction.
pub async fn tunnel<A, B>(a: A, b: B, idle: Duration)
where
    A: AsyncRead + AsyncWrite + Unpin,
    B: AsyncRead + AsyncWrite + Unpin,
{
    let (mut ar, mut aw) = tokio::io::split(a);
    let (mut br, mut bw) = tokio::io::split(b);
    let (mut abuf, mut bbuf) = (vec![0u8; 16 * 1024], vec![0u8; 16 * 1024]);
    let (mut a_open, mut b_open) = (true, true);
    while a_open || b_open {
        let step = async {
            tokio::select! {
                r = ar.read(&mut abuf), if a_open => match r {
                    Ok(0) => { a_open = false; bw.shutdown().await }
                    Ok(n) => bw.write_all(&abuf[..n]).await,
                    Err(e) => Err(e),
                },
                r = br.read(&mut bbuf), if b_open => match r {
                    Ok(0) => { b_open = false; aw.shutdown().await }
                    Ok(n) => aw.write_all(&bbuf[..n]).await,
                    Err(e) => Err(e),
                },
            }
        };
        match tokio::time::timeout(idle, step).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return tracing::debug!("tunnel ended: {e}"),
            Err(_) => return tracing::debug!("tunnel idle for {idle:?}: closed"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_tunnel_copies_both_ways_and_closes_when_idle() {
        let (mut client, a) = tokio::io::duplex(64);
        let (b, mut server) = tokio::io::duplex(64);
        let t = tokio::spawn(tunnel(a, b, Duration::from_millis(200)));
        client.write_all(b"ping").await.expect("write");
        let mut got = [0u8; 4];
        server.read_exact(&mut got).await.expect("read");
        assert_eq!(&got, b"ping");
        server.write_all(b"pong").await.expect("write");
        client.read_exact(&mut got).await.expect("read");
        assert_eq!(&got, b"pong");
        // No byte for the idle timeout: the tunnel ends and both sides see EOF.
        tokio::time::timeout(Duration::from_secs(2), t)
            .await
            .expect("closed when idle")
            .expect("task");
        let mut rest = Vec::new();
        assert_eq!(client.read_to_end(&mut rest).await.expect("eof"), 0);
    }
}
