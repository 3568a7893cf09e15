//! The phase driver: one request from head to response head. Takes one policy snapshot, runs the
//! WAF phases in order (request headers, request body, response headers, logging), forwards to a
//! pool member, and answers blocks with the engine's block response converted byte for byte.
//! The lifecycle is drawn in `docs/lifecycle.md`.
//!
//! Imports: `waf`, `super::{body, upstream, limits, metrics, events, head, response}`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use bytes::Bytes;
use http::header::{CONNECTION, CONTENT_LENGTH, HOST, HeaderName, HeaderValue, UPGRADE};
use http::{HeaderMap, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Empty};
use hyper::body::Incoming;
use parking_lot::Mutex;

use super::body::{self, Capped, SharedTx, Signal};
use super::conns::SendError;
use super::deadline;
use super::events::EventSink;
use super::guard::UpgradeLatch;
use super::head::{REJECT_HEADER, valid_authority};
use super::pace::Paced;
use super::refuse::Refusal;

/// [`REJECT_HEADER`] and `X-Forwarded-For` as names, parsed once.
const REJECT: HeaderName = HeaderName::from_static(REJECT_HEADER);
const XFF: HeaderName = HeaderName::from_static("x-forwarded-for");
use super::limits::Limits;
use super::metrics::{ListenerCounters, Metrics};
use super::response::{block_reply, simple, strip_hop_by_hop};
use super::upgrade;
use super::upstream::{Clients, Pool, ProxyBody, is_grpc};
use crate::waf::{Action, ConnInfo, Engine, Step, Transaction};

/// What one listener serves: swapped as a whole when the management plane changes it.
pub struct Site {
    pub name: String,
    pub engine: Arc<Engine>,
    pub pool: Pool,
    pub x_forwarded_for: bool,
    pub redirect_to_https: bool,
    pub counters: ListenerCounters,
    /// The listener's access gate, if it has an access profile.
    pub access: Option<Arc<super::access::Gate>>,
}

/// What every listener of a data plane shares.
pub struct Shared {
    pub limits: Limits,
    pub clients: Clients,
    pub metrics: Arc<Metrics>,
    pub events: EventSink,
}

impl Shared {
    /// The shared state with default limits, upstream TLS from the built-in roots, fresh metrics,
    /// and the event log at `event_log` (stderr when `None`).
    pub fn with_defaults(event_log: Option<&std::path::Path>) -> Result<Arc<Shared>, String> {
        let limits = Limits::default();
        let metrics = Arc::new(Metrics::default());
        Ok(Arc::new(Shared {
            limits,
            clients: Clients::new(
                super::tls::client_config(None)?,
                limits.upstream_connect_timeout,
            ),
            events: EventSink::open_counted(event_log, Some(metrics.clone()))
                .map_err(|e| format!("event log: {e}"))?,
            metrics,
        }))
    }
}

/// The connection a request came on.
#[derive(Clone)]
pub struct Conn {
    pub peer: SocketAddr,
    pub tls: bool,
    /// Shared with the connection's guard on HTTP/1 connections that may switch protocols.
    pub upgrade: Option<Arc<UpgradeLatch>>,
}

/// Handles one request; never fails (every failure is an HTTP answer).
pub async fn handle(
    req: Request<Incoming>,
    site: Arc<Site>,
    shared: Arc<Shared>,
    conn: Conn,
) -> Response<ProxyBody> {
    let started = Instant::now();
    let upgrading = upgrade::requested(&req, &conn);
    let h2 = req.version() == http::Version::HTTP_2;
    let (head, body) = req.into_parts();
    let mut unread = Some(body);
    let mut res = run(head, &mut unread, &site, &shared, &conn, upgrading).await;
    if upgrading && res.status() != StatusCode::SWITCHING_PROTOCOLS {
        // The guard holds what the client sent after its upgrade head: never read it as HTTP/1.
        res.headers_mut()
            .insert(CONNECTION, HeaderValue::from_static("close"));
    }
    site.counters
        .request(res.status().as_u16(), started.elapsed().as_secs_f64());
    if let Some(b) = unread.filter(|b| h2 && !http_body::Body::is_end_stream(b)) {
        // Answered before its body was read: the stream must still end cleanly. (An HTTP/1
        // answer closes the connection instead.)
        body::discard(b, &shared.limits);
    }
    res
}

/// Runs the phases for one request; takes the body out of `unread` when it reads it.
async fn run(
    mut head: http::request::Parts,
    unread: &mut Option<Incoming>,
    site: &Site,
    shared: &Shared,
    conn: &Conn,
    upgrading: bool,
) -> Response<ProxyBody> {
    if let Some(v) = head.headers.get(REJECT) {
        return Refusal::carried(v).answer(site, shared, conn);
    }
    if let Err((status, reason)) = check_head(&head, &shared.limits) {
        let refusal = Refusal {
            status,
            reason: reason.to_string(),
            method: head.method.to_string(),
            target: head.uri.to_string(),
        };
        return refusal.answer(site, shared, conn);
    }
    if site.redirect_to_https {
        return redirect(&head);
    }
    let lim = shared.limits;
    if let Some(a) = head.uri.authority() {
        // An absolute-form target's (or HTTP/2's `:authority`) authority wins over `Host`.
        set_host(&mut head.headers, a);
    }
    let declared = head
        .headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > lim.max_body_bytes) {
        return simple(
            StatusCode::PAYLOAD_TOO_LARGE,
            "request body too large\n",
            true,
        );
    }

    let mut tx = Transaction::new(
        site.engine.snapshot(),
        ConnInfo {
            peer: conn.peer.ip(),
            tls: conn.tls,
        },
    );
    let step = tx.on_request_headers(&head);
    if step != Step::Block
        && let Some(gate) = site.access.clone()
        && let Err(d) = check_access(gate, &mut head, tx.client(), site.engine.snapshot()).await
    {
        let grpc = super::upstream::is_grpc(&head);
        tx.deny(d.violation(), d.reply(grpc));
        shared.metrics.access_denied(&site.name, d.status);
        let tx: SharedTx = Arc::new(Mutex::new(Some(tx)));
        return blocked(&tx, site, shared);
    }
    let tx: SharedTx = Arc::new(Mutex::new(Some(tx)));
    if head.method == Method::CONNECT {
        return refuse_connect(step, &tx, site, shared);
    }
    if step == Step::Block {
        return blocked(&tx, site, shared);
    }

    let protocol = head.headers.get(UPGRADE).cloned();
    strip_hop_by_hop(&mut head.headers, true);
    if site.x_forwarded_for {
        append_xff(&mut head.headers, conn.peer);
    }
    if let (true, Some(p), Some(latch)) = (upgrading, protocol, conn.upgrade.as_deref()) {
        return upgrade::forward(site, shared, head, p, &tx, latch).await;
    }
    // Set by an uninspected body that went over the limit, and by a body cut for its pace
    // (allocated only for a request with a body).
    let mut over: Option<Arc<AtomicBool>> = None;
    let mut slow: Option<Arc<AtomicBool>> = None;
    let incoming = unread
        .take()
        .filter(|b| !http_body::Body::is_end_stream(b))
        .map(|b| {
            let flag = slow.insert(Arc::new(AtomicBool::new(false))).clone();
            Paced::new(b, &lim, flag)
        });
    let (upbody, mut signal) = match incoming {
        None => (None, None),
        Some(b) if step == Step::InspectBody => {
            let (b, s) = body::inspect(b, tx.clone(), lim.max_body_bytes, lim.inspection_bytes);
            (Some(b), Some(s))
        }
        Some(b) => {
            let flag = over.insert(Arc::new(AtomicBool::new(false))).clone();
            let capped = Capped::new(b, lim.max_body_bytes, flag);
            (Some(capped.boxed_unsync()), None)
        }
    };
    let too_slow = || slow.as_ref().is_some_and(|s| s.load(Ordering::Relaxed));
    if let Some(s) = signal.as_mut() {
        let outcome = s.wait_for(|s| *s != Signal::Pending).await.map(|s| *s);
        match outcome {
            Ok(Signal::Go) => {}
            Ok(Signal::Blocked) => return blocked(&tx, site, shared),
            Ok(Signal::TooLarge) => return too_large(&tx, site, shared),
            _ => return client_gone(&tx, site, shared, too_slow()),
        }
    }

    let sent = send(site, shared, head, upbody);
    let result = match signal.as_mut() {
        None => sent.await,
        Some(s) => {
            // A late block or an oversize body stops the request; the pump finishing (its
            // sender dropped) is not a stop.
            let stopped = async {
                if s.wait_for(|s| matches!(s, Signal::Blocked | Signal::TooLarge))
                    .await
                    .is_err()
                {
                    std::future::pending::<()>().await;
                }
            };
            tokio::select! {
                r = sent => r,
                _ = stopped => Err(Failure::Stopped),
            }
        }
    };
    let late = signal.as_ref().map(|s| *s.borrow());
    let res = match result {
        Ok(res) => res,
        Err(f) => {
            if late == Some(Signal::Blocked) {
                return blocked(&tx, site, shared);
            }
            if late == Some(Signal::TooLarge) || over.is_some_and(|o| o.load(Ordering::Relaxed)) {
                return too_large(&tx, site, shared);
            }
            if too_slow() {
                return client_gone(&tx, site, shared, true);
            }
            return upstream_failed(f, &tx, site, shared);
        }
    };

    if res.status() == StatusCode::SWITCHING_PROTOCOLS {
        // Never join a tunnel the request did not ask for (its `Upgrade` was not forwarded).
        let why = "101 Switching Protocols to a request without an upgrade".to_string();
        return upstream_failed(Failure::Other(why), &tx, site, shared);
    }
    let (mut parts, rbody) = res.into_parts();
    let step = match tx.lock().as_mut() {
        Some(t) => t.on_response_headers(parts.status.as_u16(), &parts.headers),
        None => Step::Forward,
    };
    if step == Step::Block {
        return blocked(&tx, site, shared);
    }
    strip_hop_by_hop(&mut parts.headers, false);
    log_phase(&tx, site, shared, parts.status);
    Response::from_parts(parts, rbody)
}

/// Runs the listener's access gate. The future is boxed so the request future stays `Send` for
/// every lifetime of the borrowed site (a borrow of the gate across the await would not be).
fn check_access<'a>(
    gate: Arc<super::access::Gate>,
    head: &'a mut http::request::Parts,
    client: std::net::IpAddr,
    policy: Arc<crate::waf::CompiledPolicy>,
) -> std::pin::Pin<Box<dyn Future<Output = Result<(), crate::waf::access::Denial>> + Send + 'a>> {
    Box::pin(async move { gate.check(head, client, Some(&policy)).await })
}

/// Why no upstream response came.
pub(super) enum Failure {
    NoMember,
    Connect(String),
    Timeout,
    /// The gRPC call's own deadline (`grpc-timeout`) passed first.
    Deadline,
    Other(String),
    Stopped,
}

async fn send(
    site: &Site,
    shared: &Shared,
    mut head: http::request::Parts,
    body: Option<ProxyBody>,
) -> Result<Response<ProxyBody>, Failure> {
    let pq = head
        .uri
        .path_and_query()
        .cloned()
        .unwrap_or_else(|| http::uri::PathAndQuery::from_static("/"));
    let grpc = is_grpc(&head);
    let client_deadline = grpc
        .then(|| deadline::grpc_timeout(&head.headers))
        .flatten()
        .filter(|d| *d < shared.limits.upstream_response_timeout);
    let wait = client_deadline.unwrap_or(shared.limits.upstream_response_timeout);
    // A request without a body can be retried on the next member when a connection is refused.
    let attempts = if body.is_none() {
        site.pool.members.len().max(1)
    } else {
        1
    };
    let mut body = body;
    let mut last = Failure::NoMember;
    for attempt in 1..=attempts {
        let Some(member) = site.pool.pick() else {
            return Err(Failure::NoMember);
        };
        // Only a request that may be retried pays for a copy of its headers.
        let headers = if attempt == attempts {
            std::mem::take(&mut head.headers)
        } else {
            head.headers.clone()
        };
        let req = build(&head, headers, pq.clone(), body.take());
        let sent = shared.clients.send(member, grpc, req);
        match tokio::time::timeout(wait, sent).await {
            Err(_) if client_deadline.is_some() => return Err(Failure::Deadline),
            Err(_) => return Err(Failure::Timeout),
            Ok(Ok(res)) => return Ok(res),
            Ok(Err(SendError::Connect(e))) => {
                site.pool.mark_down(member);
                last = Failure::Connect(format!("{}: {e}", member.url));
            }
            Ok(Err(e)) => return Err(Failure::Other(format!("{}: {e}", member.url))),
        }
    }
    Err(last)
}

/// The upstream request: origin-form target, the client's version (the connection pool picks
/// the protocol and adapts both).
pub(super) fn build(
    head: &http::request::Parts,
    headers: HeaderMap,
    pq: http::uri::PathAndQuery,
    body: Option<ProxyBody>,
) -> Request<ProxyBody> {
    let body = body.unwrap_or_else(|| Empty::<Bytes>::new().map_err(|e| match e {}).boxed_unsync());
    let mut req = Request::new(body);
    *req.method_mut() = head.method.clone();
    *req.uri_mut() = http::Uri::from(pq);
    *req.version_mut() = head.version;
    *req.headers_mut() = headers;
    req
}

fn append_xff(h: &mut HeaderMap, peer: SocketAddr) {
    use std::fmt::Write as _;
    let mut value = String::with_capacity(48);
    for prior in h.get_all(&XFF).iter().filter_map(|v| v.to_str().ok()) {
        value.push_str(prior);
        value.push_str(", ");
    }
    let _ = write!(value, "{}", peer.ip());
    if let Ok(v) = HeaderValue::from_str(&value) {
        h.insert(XFF, v);
    }
}

/// The logging phase: publishes the event (if any) with the listener's name and the status
/// answered, and counts blocks.
pub(super) fn log_phase(tx: &SharedTx, site: &Site, shared: &Shared, status: StatusCode) {
    let Some(mut t) = tx.lock().take() else {
        return;
    };
    log_transaction(&mut t, site, shared, status);
}

/// [`log_phase`] for a transaction that was never shared (the HTTP/1 fast path).
pub(super) fn log_transaction(
    t: &mut Transaction,
    site: &Site,
    shared: &Shared,
    status: StatusCode,
) {
    if let Some(mut ev) = t.finish() {
        if ev.action == Action::Block {
            for v in &ev.violations {
                shared.metrics.block(v.kind.name());
            }
        }
        ev.virtual_server = site.name.clone();
        ev.response_code = status.as_u16();
        if let Some(gate) = &site.access {
            // API keys sent in the query are never logged: not in the URI, not as the excerpt of
            // a violation found in that parameter.
            let profile = gate.profile();
            if let std::borrow::Cow::Owned(masked) = profile.mask_credentials(&ev.uri) {
                ev.uri = masked;
            }
            for v in &mut ev.violations {
                if v.name
                    .as_deref()
                    .is_some_and(|n| profile.query_credentials().any(|q| q == n))
                {
                    v.snippet = "********".into();
                }
            }
        }
        shared.events.write(ev);
    }
}

pub(super) fn blocked(tx: &SharedTx, site: &Site, shared: &Shared) -> Response<ProxyBody> {
    let reply = tx.lock().as_ref().map(Transaction::block_response);
    let res = block_or_reject(reply);
    log_phase(tx, site, shared, res.status());
    res
}

/// The block response of a transaction (a plain 403 if it has none to give).
pub(super) fn block_or_reject(reply: Option<crate::waf::BlockResponse>) -> Response<ProxyBody> {
    match reply {
        Some(r) => block_reply(r),
        None => simple(StatusCode::FORBIDDEN, "request rejected\n", true),
    }
}

fn too_large(tx: &SharedTx, site: &Site, shared: &Shared) -> Response<ProxyBody> {
    log_phase(tx, site, shared, StatusCode::PAYLOAD_TOO_LARGE);
    simple(
        StatusCode::PAYLOAD_TOO_LARGE,
        "request body too large\n",
        true,
    )
}

/// The answer to CONNECT: the proxy opens no tunnels to arbitrary hosts, so it is 501 after the
/// policy had its say; a policy that blocks it gets its page, as 403 when the page is 2xx (any 2xx
/// answer to CONNECT opens a tunnel and carries no body, RFC 9110 9.3.6).
fn refuse_connect(step: Step, tx: &SharedTx, site: &Site, shared: &Shared) -> Response<ProxyBody> {
    let res = if step == Step::Block {
        let mut res = block_or_reject(tx.lock().as_ref().map(Transaction::block_response));
        if res.status().is_success() {
            *res.status_mut() = StatusCode::FORBIDDEN;
        }
        res
    } else {
        simple(
            StatusCode::NOT_IMPLEMENTED,
            "CONNECT is not supported\n",
            true,
        )
    };
    log_phase(tx, site, shared, res.status());
    res
}

/// The client's body broke off, or was cut for its pace (`slow`: 408).
fn client_gone(tx: &SharedTx, site: &Site, shared: &Shared, slow: bool) -> Response<ProxyBody> {
    let (status, text) = if slow {
        (StatusCode::REQUEST_TIMEOUT, "request body too slow\n")
    } else {
        (StatusCode::BAD_REQUEST, "request body incomplete\n")
    };
    log_phase(tx, site, shared, status);
    simple(status, text, true)
}

pub(super) fn upstream_failed(
    f: Failure,
    tx: &SharedTx,
    site: &Site,
    shared: &Shared,
) -> Response<ProxyBody> {
    let res = failure_reply(f, shared);
    log_phase(tx, site, shared, res.status());
    res
}

/// The answer to an upstream failure (counted in the metrics; the caller logs the transaction).
pub(super) fn failure_reply(f: Failure, shared: &Shared) -> Response<ProxyBody> {
    let (kind, status, text) = match f {
        Failure::Deadline => {
            shared.metrics.upstream_error("deadline");
            return deadline::deadline_exceeded();
        }
        Failure::Timeout => (
            "timeout",
            StatusCode::GATEWAY_TIMEOUT,
            "upstream timed out\n",
        ),
        Failure::NoMember => (
            "no_member",
            StatusCode::BAD_GATEWAY,
            "no upstream available\n",
        ),
        Failure::Connect(why) => {
            tracing::warn!("upstream connect failed: {why}");
            ("connect", StatusCode::BAD_GATEWAY, "upstream unavailable\n")
        }
        Failure::Other(why) => {
            tracing::warn!("upstream request failed: {why}");
            ("request", StatusCode::BAD_GATEWAY, "upstream failed\n")
        }
        Failure::Stopped => ("stopped", StatusCode::BAD_GATEWAY, "upstream failed\n"),
    };
    shared.metrics.upstream_error(kind);
    simple(status, text, false)
}

fn redirect(head: &http::request::Parts) -> Response<ProxyBody> {
    let host = head
        .headers
        .get(HOST)
        .and_then(|h| h.to_str().ok())
        .or_else(|| head.uri.authority().map(|a| a.as_str()))
        .unwrap_or("localhost");
    let host = host.split(':').next().unwrap_or(host);
    let pq = head.uri.path_and_query().map_or("/", |p| p.as_str());
    let mut res = simple(StatusCode::FOUND, "", false);
    if let Ok(v) = HeaderValue::from_str(&format!("https://{host}{pq}")) {
        res.headers_mut().insert(http::header::LOCATION, v);
    }
    res
}

/// Sets `Host` to `authority` (the target's authority wins over the field, RFC 9112 3.2.2).
pub(super) fn set_host(h: &mut HeaderMap, authority: &http::uri::Authority) {
    if let Ok(v) = HeaderValue::from_str(authority.as_str()) {
        h.insert(HOST, v);
    }
}

/// The checks of a head that did not come through the HTTP/1 guard (HTTP/2): the limits, and a
/// `host` field that must name the same authority as `:authority` (RFC 9113 8.3.1), once.
fn check_head(head: &http::request::Parts, lim: &Limits) -> Result<(), (StatusCode, &'static str)> {
    let pq_len = head.uri.path_and_query().map_or(1, |p| p.as_str().len());
    if pq_len > lim.max_url_bytes {
        return Err((StatusCode::URI_TOO_LONG, "request target too long"));
    }
    if head.headers.len() > lim.max_headers {
        return Err((
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            "too many header fields",
        ));
    }
    if head.version != http::Version::HTTP_2 {
        return Ok(());
    }
    let mut hosts = head.headers.get_all(HOST).iter();
    let (Some(host), None) = (hosts.next(), hosts.next()) else {
        return match head.headers.contains_key(HOST) {
            true => Err((StatusCode::BAD_REQUEST, "more than one Host field")),
            false => Ok(()),
        };
    };
    match head.uri.authority() {
        Some(a) if !a.as_str().eq_ignore_ascii_case(host.to_str().unwrap_or("")) => {
            Err((StatusCode::BAD_REQUEST, "Host differs from :authority"))
        }
        None if !valid_authority(host.as_bytes(), false) => {
            Err((StatusCode::BAD_REQUEST, "invalid Host field"))
        }
        _ => Ok(()),
    }
}
