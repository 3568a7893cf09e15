//! Phase 4 for members spoken to over HTTP/2 (h2c members, gRPC calls, TLS members that pick
//! `h2`), through hyper's client: the request rebuilt as an `http::Request` (hop-by-hop fields
//! removed, `X-Forwarded-For` appended), its body either pulled by hyper from a stream the
//! front-end hands over (HTTP/2 clients: inspected by a pump of its own, which keeps feeding the
//! engine while a gRPC stream runs) or pushed here, piece by piece as the engine releases it
//! (HTTP/1.1 clients), while the response is awaited. The upstream request starts only once the
//! engine released some bytes (or the body ended), so a body blocked during inspection never
//! reaches the member. A gRPC call waits no longer than its own `grpc-timeout`.

use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;
use http::header::HeaderValue;
use http_body::Frame;
use http_body_util::BodyExt;
use hyper::client::conn::http2;

use super::answer::Failure;
use super::forward::{Halt, UpResponse};
use super::inspect::{Inspection, Stop};
use super::{Env, Front, Tx};
use crate::body::{self, BodySender, Capped, Signal};
use crate::conns::{HostConns, SendError, send_on_h2};
use crate::deadline;
use crate::response::strip_hop_by_hop;
use crate::upstream::{Member, ProxyBody};

/// What goes to the member.
pub(super) struct Request<'a> {
    pub head: http::request::Parts,
    pub body: Option<Inspection>,
    pub grpc: bool,
    pub member: &'a Member,
    pub host: &'a Arc<HostConns>,
}

/// Sends the request on `sender` and waits for the response head.
pub(super) async fn send<F: Front>(
    front: &mut F,
    req: Request<'_>,
    sender: http2::SendRequest<ProxyBody>,
    env: &Env<'_>,
    tx: &mut Tx,
) -> Result<UpResponse, Halt> {
    let Request {
        mut head,
        body,
        grpc,
        member,
        host,
    } = req;
    let lim = &env.shared.limits;
    strip_hop_by_hop(&mut head.headers, true);
    if env.site.x_forwarded_for {
        append_xff(&mut head.headers, env.client.peer_ip);
    }
    let client_deadline = grpc
        .then(|| deadline::grpc_timeout(&head.headers))
        .flatten()
        .filter(|d| *d < lim.upstream_response_timeout);
    let timed = Timed {
        wait: client_deadline.unwrap_or(lim.upstream_response_timeout),
        deadline: client_deadline.is_some(),
        url: &member.url,
    };
    let Some(mut insp) = body else {
        let req = build(head, None);
        let res = timed.on(send_on_h2(host, sender, req)).await;
        return res.map(UpResponse::Hyper).map_err(Halt::Upstream);
    };
    if let Some(stream) = front.take_stream() {
        return pulled(
            front,
            head,
            stream,
            insp.inspecting(),
            (host, sender),
            env,
            tx,
            timed,
        )
        .await;
    }
    // An HTTP/1.1 client: the body is read here and pushed to hyper through a channel.
    prefetch(front, &mut insp, tx).await?;
    let (chan, up_body) = body::channel();
    let req = build(head, Some(up_body));
    let mut sent = pin!(timed.on(send_on_h2(host, sender, req)));
    let mut pushing = Some(chan);
    loop {
        tokio::select! {
            biased;
            r = &mut sent => return r.map(UpResponse::Hyper).map_err(Halt::Upstream),
            r = push(front, &mut insp, tx, pushing.as_ref()), if pushing.is_some() => {
                match r? {
                    Pushed::More => {}
                    Pushed::Done => pushing = None,
                }
            }
        }
    }
}

/// A body hyper pulls from the stream the front-end handed over: inspected by a pump when the
/// engine reads it, else counted against the body limit.
#[allow(clippy::too_many_arguments)]
async fn pulled<F: Front>(
    front: &mut F,
    head: http::request::Parts,
    stream: ProxyBody,
    inspect: bool,
    (host, sender): (&Arc<HostConns>, http2::SendRequest<ProxyBody>),
    env: &Env<'_>,
    tx: &mut Tx,
    timed: Timed<'_>,
) -> Result<UpResponse, Halt> {
    let lim = &env.shared.limits;
    if !inspect {
        let over = Arc::new(AtomicBool::new(false));
        let capped = Capped::new(stream, lim.max_body_bytes, over.clone());
        let req = build(head, Some(capped.boxed_unsync()));
        return match timed.on(send_on_h2(host, sender, req)).await {
            Ok(res) => Ok(UpResponse::Hyper(res)),
            Err(_) if over.load(Ordering::Relaxed) => Err(Halt::Body(Stop::TooLarge)),
            Err(f) => Err(front.stream_error().map_or(Halt::Upstream(f), Halt::Client)),
        };
    }
    let (up_body, mut signal) =
        body::inspect(stream, tx.share(), lim.max_body_bytes, lim.inspection_bytes);
    let outcome = signal.wait_for(|s| *s != Signal::Pending).await.map(|s| *s);
    match outcome {
        Ok(Signal::Go) => {}
        Ok(Signal::Blocked) => return Err(Halt::Body(Stop::Blocked)),
        Ok(Signal::TooLarge) => return Err(Halt::Body(Stop::TooLarge)),
        _ => {
            let e = front.stream_error().unwrap_or(super::BodyError::Gone);
            return Err(Halt::Client(e));
        }
    }
    let req = build(head, Some(up_body));
    let sent = timed.on(send_on_h2(host, sender, req));
    // A late block or an oversize body stops the request; the pump finishing (its sender
    // dropped) is not a stop.
    let stopped = async {
        if signal
            .wait_for(|s| matches!(s, Signal::Blocked | Signal::TooLarge))
            .await
            .is_err()
        {
            std::future::pending::<()>().await;
        }
    };
    let result = tokio::select! {
        r = sent => r,
        _ = stopped => Err(Failure::Stopped),
    };
    let late = *signal.borrow();
    match result {
        Ok(res) => Ok(UpResponse::Hyper(res)),
        Err(_) if late == Signal::Blocked => Err(Halt::Body(Stop::Blocked)),
        Err(_) if late == Signal::TooLarge => Err(Halt::Body(Stop::TooLarge)),
        Err(f) => Err(front.stream_error().map_or(Halt::Upstream(f), Halt::Client)),
    }
}

/// How long the response head may take: the upstream response timeout, or a gRPC call's own
/// deadline when shorter.
#[derive(Clone, Copy)]
struct Timed<'a> {
    wait: std::time::Duration,
    /// `wait` is the call's deadline (`grpc-timeout`).
    deadline: bool,
    url: &'a str,
}

impl Timed<'_> {
    async fn on(
        self,
        fut: impl Future<Output = Result<http::Response<ProxyBody>, SendError>>,
    ) -> Result<http::Response<ProxyBody>, Failure> {
        match tokio::time::timeout(self.wait, fut).await {
            Err(_) if self.deadline => Err(Failure::Deadline),
            Err(_) => Err(Failure::Timeout),
            Ok(Ok(res)) => Ok(res),
            Ok(Err(e)) => Err(Failure::Other(format!("{}: {e}", self.url))),
        }
    }
}

/// Reads the body until the engine lets the request start.
async fn prefetch<F: Front>(front: &mut F, insp: &mut Inspection, tx: &mut Tx) -> Result<(), Halt> {
    while !insp.go() {
        match front.body_chunk().await.map_err(Halt::Client)? {
            Some(chunk) => insp.feed(tx, chunk).map_err(Halt::Body)?,
            None => insp.end(tx).map_err(Halt::Body)?,
        }
    }
    Ok(())
}

enum Pushed {
    More,
    /// The body was pushed whole and its end said, or hyper dropped it (the stream ended):
    /// nothing more to push.
    Done,
}

/// One step of pushing the body: the released bytes, or the next piece read.
async fn push<F: Front>(
    front: &mut F,
    insp: &mut Inspection,
    tx: &mut Tx,
    chan: Option<&BodySender>,
) -> Result<Pushed, Halt> {
    let Some(chan) = chan else {
        return Ok(Pushed::Done);
    };
    if let Some(chunk) = insp.release() {
        let sent = chan.send(Ok(Frame::data(chunk))).await;
        return Ok(if sent { Pushed::More } else { Pushed::Done });
    }
    if insp.ended() {
        chan.finish().await;
        return Ok(Pushed::Done);
    }
    match front.body_chunk().await.map_err(Halt::Client)? {
        Some(chunk) => insp.feed(tx, chunk).map_err(Halt::Body)?,
        None => insp.end(tx).map_err(Halt::Body)?,
    }
    Ok(Pushed::More)
}

/// The upstream request: origin-form target (the connection makes it absolute), HTTP/2.
fn build(head: http::request::Parts, body: Option<ProxyBody>) -> http::Request<ProxyBody> {
    let pq = head
        .uri
        .path_and_query()
        .cloned()
        .unwrap_or_else(|| http::uri::PathAndQuery::from_static("/"));
    let body = body.unwrap_or_else(|| {
        http_body_util::Empty::<Bytes>::new()
            .map_err(|e| match e {})
            .boxed_unsync()
    });
    let mut req = http::Request::new(body);
    *req.method_mut() = head.method;
    *req.uri_mut() = http::Uri::from(pq);
    *req.version_mut() = http::Version::HTTP_2;
    *req.headers_mut() = head.headers;
    req
}

/// Appends the peer to `X-Forwarded-For` (one field, earlier values first).
fn append_xff(h: &mut http::HeaderMap, peer_ip: &str) {
    const XFF: http::HeaderName = http::HeaderName::from_static("x-forwarded-for");
    let mut value = String::with_capacity(48);
    for prior in h.get_all(&XFF).iter().filter_map(|v| v.to_str().ok()) {
        value.push_str(prior);
        value.push_str(", ");
    }
    value.push_str(peer_ip);
    if let Ok(v) = HeaderValue::from_str(&value) {
        h.insert(XFF, v);
    }
}
