//! The phase driver: one request from its parsed head to its answer, written once and driven by
//! both protocol front-ends, the HTTP/1.1 connection code ([`crate::h1`]) and hyper for
//! HTTP/2, h2c and gRPC ([`crate::handler`]). The phases, in order:
//!
//! 1. admission and limits (a refused HTTP/2 head, the HTTPS redirect, a declared body over the
//!    limit);
//! 2. the request-header phase of the WAF, then access control;
//! 3. the body, inspected as it streams ([`inspect`]);
//! 4. upstream selection, connection and retry, the request sent ([`forward`]);
//! 5. the response-header phase;
//! 6. logging and counting, then the answer or the upstream's response handed to the front-end.
//!
//! A front-end implements [`Front`]: how the body is read, and how an [`answer::Answer`], an
//! upstream response or a WebSocket tunnel reaches the client in its protocol.
//!
//! The paths few requests take (a WebSocket upgrade and its tunnel, an HTTP/2 member, opening an
//! upstream connection) are awaited boxed. A future is as large as its largest state, and an
//! HTTP/1.1 connection's future, with this driver inside, is copied whole into the task spawned
//! for the connection: unboxed, those paths would make every connection pay for their room.

pub(crate) mod answer;
pub(crate) mod forward;
mod forward_h2;
pub(crate) mod inspect;
mod tx;

use std::net::SocketAddr;
use std::time::Instant;

use bytes::Bytes;
use http::header::{HOST, HeaderValue};
use http::{Method, StatusCode};

use self::answer::{Answer, Failure};
use self::forward::{Halt, UpResponse, Upgrade};
use self::inspect::Stop;
pub use self::tx::Tx;
use super::h1::response::ResponseHead;
use super::h1::timer::Timer;
use super::h1::upconn::UpConn;
use super::h1::wire::HopByHopFields;
use super::handler::{Shared, Site};
use super::metrics::TunnelSlot;
use super::refuse::Refusal;
use super::upstream::ProxyBody;
use portcullis_engine::{ConnInfo, Step};

/// Why a request body could not be read to its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyError {
    /// The client closed the connection (or it failed) before the end of the body.
    Gone,
    /// The client sent too slowly (pace limits).
    TooSlow,
    /// The chunked framing is malformed.
    Malformed(&'static str),
}

/// A protocol front-end, as the driver sees it.
pub trait Front: Send {
    /// What serving a request yields (hyper: the response; HTTP/1.1: how the connection goes on).
    type Done: Send;

    /// The request came over HTTP/2.
    fn h2(&self) -> bool;

    /// The request has a body, read or not.
    fn has_body(&self) -> bool;

    /// The length the request declares for its body, if it does.
    fn body_len(&self) -> Option<u64>;

    /// The next piece of the request body; `Ok(None)` at its end. The pace limits apply.
    fn body_chunk(&mut self) -> impl Future<Output = Result<Option<Bytes>, BodyError>> + Send;

    /// The rest of the body as a stream hyper's HTTP/2 client can pull itself, for a front-end
    /// whose body is such a stream; `None` when the driver reads the body through
    /// [`Front::body_chunk`].
    fn take_stream(&mut self) -> Option<ProxyBody>;

    /// Why the stream handed over by [`Front::take_stream`] failed, when the front-end knows.
    fn stream_error(&self) -> Option<BodyError>;

    /// Sends the proxy's own answer.
    fn answer(&mut self, a: Answer) -> impl Future<Output = Self::Done> + Send;

    /// Sends the upstream's response (its head passed the response phase).
    fn relay(&mut self, r: UpResponse) -> impl Future<Output = Self::Done> + Send;

    /// Answers a WebSocket upgrade with the member's `101` and joins the connections.
    fn tunnel(
        &mut self,
        head: ResponseHead,
        up: UpConn,
        slot: TunnelSlot,
    ) -> impl Future<Output = Self::Done> + Send;
}

/// The client connection a request came on.
#[derive(Clone, Copy, Debug)]
pub struct Client<'a> {
    pub peer: SocketAddr,
    pub tls: bool,
    /// `peer`'s address as text, for `X-Forwarded-For` (formatted once per connection).
    pub peer_ip: &'a str,
}

/// What a request is served with.
#[derive(Clone, Copy)]
pub struct Env<'a> {
    pub site: &'a Site,
    pub shared: &'a Shared,
    pub client: Client<'a>,
}

impl Env<'_> {
    fn conn_info(&self) -> ConnInfo {
        ConnInfo {
            peer: self.client.peer.ip(),
            tls: self.client.tls,
        }
    }
}

/// What the front-end knows about a request besides its head.
#[derive(Clone, Copy, Debug, Default)]
pub struct Facts {
    /// Fields seen while parsing the head.
    pub seen: HopByHopFields,
    /// A WebSocket upgrade (HTTP/1.1 only).
    pub upgrade: bool,
}

/// What the driver hands the front-end at the end.
enum Next {
    Answer(Answer),
    Relay(UpResponse),
    Tunnel(ResponseHead, UpConn, TunnelSlot),
}

impl Next {
    fn status(&self) -> StatusCode {
        match self {
            Next::Answer(a) => a.status(),
            Next::Relay(r) => r.status(),
            Next::Tunnel(h, _, _) => h.status,
        }
    }
}

/// Serves one request whose head the front-end parsed (and, for HTTP/1, validated); `timer` is
/// the upstream response timeout of the connection.
pub async fn serve<F: Front>(
    front: &mut F,
    head: portcullis_engine::RequestHead,
    facts: Facts,
    env: &Env<'_>,
    timer: &mut Timer,
) -> F::Done {
    let started = Instant::now();
    let mut tx = Tx::None;
    let mut head = head;
    let next = phases(front, &mut head, facts, env, timer, &mut tx).await;
    let status = next.status();
    tx.log(env, status, &head.headers);
    env.site
        .counters
        .request(status.as_u16(), started.elapsed().as_secs_f64());
    match next {
        Next::Answer(a) => front.answer(a).await,
        Next::Relay(r) => front.relay(r).await,
        // Boxed: see the module documentation.
        Next::Tunnel(h, up, slot) => Box::pin(front.tunnel(h, up, slot)).await,
    }
}

/// Answers a request the front-end refused before the policy could see it (a head the validator
/// rejects): logged as a blocked request with a support ID.
pub async fn refuse<F: Front>(front: &mut F, refusal: Refusal, env: &Env<'_>) -> F::Done {
    let started = Instant::now();
    let (mut t, answer) = refusal.judge(env);
    let status = answer.status();
    super::handler::log_transaction(
        &mut t,
        env.site,
        env.shared,
        status,
        &portcullis_engine::Fields::default(),
    );
    env.site
        .counters
        .request(status.as_u16(), started.elapsed().as_secs_f64());
    front.answer(answer).await
}

/// Phases 1 to 5; the transaction ends up in `tx` for the logging phase.
async fn phases<F: Front>(
    front: &mut F,
    head: &mut portcullis_engine::RequestHead,
    facts: Facts,
    env: &Env<'_>,
    timer: &mut Timer,
    tx: &mut Tx,
) -> Next {
    let (site, shared) = (env.site, env.shared);
    let lim = &shared.limits;
    if front.h2()
        && let Err((status, reason)) = super::handler::check_head(head, lim)
    {
        let refusal = Refusal {
            status,
            reason: reason.to_string(),
            method: head.method.to_string(),
            target: head.uri.to_string(),
        };
        let (t, answer) = refusal.judge(env);
        *tx = Tx::Own(t);
        return Next::Answer(answer);
    }
    if site.redirect_to_https {
        return Next::Answer(redirect(head));
    }
    if let Some(a) = head.uri.authority() {
        // An absolute-form target's (or HTTP/2's `:authority`) authority wins over `Host`.
        let a = a.clone();
        super::handler::set_host(&mut head.headers, &a);
    }
    if front.body_len().is_some_and(|n| n > lim.max_body_bytes) {
        return Next::Answer(answer::too_large());
    }

    let t = tx.start(site.engine.snapshot(), env.conn_info());
    let step = t.on_request_headers(head);
    if step != Step::Block
        && let Some(gate) = site.access.clone()
    {
        // The gate takes credentials and identity fields off the head; the event shows the
        // fields the policy judged.
        t.keep_fields(&head.headers);
        if let Err(d) =
            super::handler::check_access(gate, head, t.client(), site.engine.snapshot()).await
        {
            let grpc = super::upstream::is_grpc(head);
            t.deny(d.violation(), d.reply(grpc));
            shared.metrics.access_denied(&site.name, d.status);
            return Next::Answer(Answer::Block(t.block_response()));
        }
    }
    if head.method == Method::CONNECT {
        return Next::Answer(refuse_connect(step, tx));
    }
    if step == Step::Block {
        return Next::Answer(answer::blocked(tx.block_response()));
    }
    if facts.upgrade {
        // Boxed: see the module documentation.
        return match Box::pin(forward::upgrade(head, &facts, env, timer)).await {
            Ok(Upgrade::Switched(h, up, slot)) => {
                let step =
                    tx.with(|t| t.on_response_headers(h.status.as_u16(), &h.headers.to_map()));
                if step == Some(Step::Block) {
                    return Next::Answer(answer::blocked(tx.block_response()));
                }
                Next::Tunnel(h, up, slot)
            }
            Ok(Upgrade::Declined(r)) => respond(r, tx, shared),
            Ok(Upgrade::Answer(a)) => Next::Answer(a),
            Err(h) => Next::Answer(halted(h, tx, shared)),
        };
    }
    let inspect = step == Step::InspectBody;
    match forward::exchange(front, head, &facts, inspect, env, timer, tx).await {
        Ok(r) => respond(r, tx, shared),
        Err(h) => Next::Answer(halted(h, tx, shared)),
    }
}

/// Phase 5: the response-header phase on an upstream response.
fn respond(r: UpResponse, tx: &mut Tx, shared: &Shared) -> Next {
    if r.status() == StatusCode::SWITCHING_PROTOCOLS {
        // Never join a tunnel the request did not ask for (its `Upgrade` was not forwarded).
        let why = "101 Switching Protocols to a request without an upgrade".to_string();
        return Next::Answer(answer::failure(Failure::Other(why), shared));
    }
    let status = r.status().as_u16();
    let step = tx.with(|t| match &r {
        UpResponse::H1 { head, .. } if t.needs_response_headers() => {
            t.on_response_headers(status, &head.headers.to_map())
        }
        UpResponse::H1 { .. } => t.on_response_headers(status, &http::HeaderMap::new()),
        UpResponse::Hyper(res) => t.on_response_headers(status, res.headers()),
    });
    if step == Some(Step::Block) {
        return Next::Answer(answer::blocked(tx.block_response()));
    }
    Next::Relay(r)
}

/// The answer to a request the driver stopped.
fn halted(h: Halt, tx: &mut Tx, shared: &Shared) -> Answer {
    match h {
        Halt::Body(Stop::Blocked) => answer::blocked(tx.block_response()),
        Halt::Body(Stop::TooLarge) => answer::too_large(),
        Halt::Client(BodyError::TooSlow) => answer::client_gone(true),
        Halt::Client(BodyError::Gone) => answer::client_gone(false),
        Halt::Client(BodyError::Malformed(why)) => tx
            .with(|t| super::refuse::malformed_body(t, why))
            .unwrap_or_else(|| answer::client_gone(false)),
        Halt::Upstream(f) => answer::failure(f, shared),
    }
}

/// The answer to CONNECT: the proxy opens no tunnels to arbitrary hosts, so it is 501 after the
/// policy had its say; a policy that blocks it gets its page, as 403 when the page is 2xx (any 2xx
/// answer to CONNECT opens a tunnel and carries no body, RFC 9110 9.3.6).
fn refuse_connect(step: Step, tx: &mut Tx) -> Answer {
    if step != Step::Block {
        return Answer::text(
            StatusCode::NOT_IMPLEMENTED,
            "CONNECT is not supported\n",
            true,
        );
    }
    match answer::blocked(tx.block_response()) {
        Answer::Block(mut b) => {
            if (200..300).contains(&b.status) {
                b.status = 403;
            }
            Answer::Block(b)
        }
        other => other,
    }
}

/// `302` to the same host and target over HTTPS.
fn redirect(head: &portcullis_engine::RequestHead) -> Answer {
    let host = head
        .headers
        .get(HOST)
        .and_then(|h| h.to_str().ok())
        .or_else(|| head.uri.authority().map(|a| a.as_str()))
        .unwrap_or("localhost");
    let host = host.split(':').next().unwrap_or(host);
    let pq = head.uri.path_and_query().map_or("/", |p| p.as_str());
    match HeaderValue::from_str(&format!("https://{host}{pq}")) {
        Ok(v) => Answer::Redirect(v),
        Err(_) => Answer::text(StatusCode::FOUND, "", false),
    }
}
