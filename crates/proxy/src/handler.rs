//! The hyper front-end of the phase driver: HTTP/2 (TLS with ALPN `h2`, and cleartext with prior
//! knowledge, h2c), gRPC included. hyper hands over each request; its body is read through the pace
//! limits ([`super::pace`]) and, for a stream that goes to an HTTP/2 member, handed to hyper's
//! client whole; the driver's answer or the upstream's response goes back to hyper as a response.
//! A request answered before its body was read has the rest of it read and discarded, so that
//! the stream ends with the client's own END_STREAM.
//!
//! Also what every listener shares ([`Shared`]) and serves ([`Site`]), and the pieces of the
//! phases that are about the request's head: the HTTP/2 head checks, `Host`, the access gate, the
//! logging phase.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;
use http::header::{CONTENT_LENGTH, HOST, HeaderValue};
use http::{Request, Response, StatusCode};
use http_body::Body;
use http_body_util::BodyExt;
use hyper::body::Incoming;

use super::body::{self, SharedTx};
use super::driver::answer::Answer;
use super::driver::forward::UpResponse;
use super::driver::{self, BodyError, Client, Env, Facts, Front};
use super::events::EventSink;
use super::h1::response::ResponseHead;
use super::h1::timer::Timer;
use super::h1::upbody::UpConnBody;
use super::h1::upconn::UpConn;
use super::h1::wire::HopByHopFields;
use super::head::valid_authority;
use super::limits::Limits;
use super::metrics::{ListenerCounters, Metrics, TunnelSlot};
use super::pace::Paced;
use super::response::strip_hop_by_hop;
use super::upstream::{Clients, Pool, ProxyBody};
use portcullis_engine::{Action, Engine, Transaction};

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

/// Why the default shared state of a data plane cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum SharedError {
    #[error(transparent)]
    Tls(#[from] super::tls::TlsConfigError),
    #[error("event log: {0}")]
    EventLog(#[source] std::io::Error),
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
    pub fn with_defaults(event_log: Option<&std::path::Path>) -> Result<Arc<Shared>, SharedError> {
        let limits = Limits::default();
        let metrics = Arc::new(Metrics::default());
        Ok(Arc::new(Shared {
            limits,
            clients: Clients::new(
                super::tls::client_config(None)?,
                limits.upstream_connect_timeout,
            ),
            events: EventSink::open_counted(event_log, Some(metrics.clone()))
                .map_err(SharedError::EventLog)?,
            metrics,
        }))
    }
}

/// The connection a request came on.
#[derive(Clone)]
pub struct Conn {
    pub peer: SocketAddr,
    pub tls: bool,
    /// `peer`'s address as text, for `X-Forwarded-For`.
    pub peer_ip: Arc<str>,
}

impl Conn {
    pub fn of(peer: SocketAddr, tls: bool) -> Conn {
        Conn {
            peer,
            tls,
            peer_ip: peer.ip().to_string().into(),
        }
    }
}

/// Handles one request; never fails (every failure is an HTTP answer).
pub async fn handle(
    req: Request<Incoming>,
    site: Arc<Site>,
    shared: Arc<Shared>,
    conn: Conn,
) -> Response<ProxyBody> {
    let (mut head, body) = req.into_parts();
    // HTTP/2 carries the authority as `:authority`, not `Host`. Adding it to the map before the
    // conversion spares `set_host` a copy of every value once the fields are built; a request
    // that has a `Host` keeps it for `check_head`'s comparison.
    if let Some(a) = head.uri.authority()
        && !head.headers.contains_key(HOST)
        && let Ok(v) = HeaderValue::from_str(a.as_str())
    {
        head.headers.insert(HOST, v);
    }
    // The one conversion of the HTTP/2 front-end: the engine and the driver read the fields as
    // the HTTP/1 path builds them.
    let head = portcullis_engine::RequestHead::from(head);
    let lim = shared.limits;
    let body_len = head
        .headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let slow = Arc::new(AtomicBool::new(false));
    let mut front = HyperFront {
        has_body: !body.is_end_stream(),
        body: Some(Paced::new(body, &lim, slow.clone())),
        body_len,
        slow,
    };
    let env = Env {
        site: &site,
        shared: &shared,
        client: Client {
            peer: conn.peer,
            tls: conn.tls,
            peer_ip: &conn.peer_ip,
        },
    };
    let facts = Facts {
        seen: HopByHopFields::of(&head.headers),
        upgrade: false,
    };
    let now = tokio::time::Instant::now();
    let mut timer = Timer::new(now + lim.upstream_response_timeout);
    let res = driver::serve(&mut front, head, facts, &env, &mut timer).await;
    if let Some(b) = front.body.take().filter(|b| !b.is_end_stream()) {
        // Answered before its body was read: the stream must still end cleanly.
        body::discard(b, &lim);
    }
    res
}

/// One request from hyper, as the driver drives it.
struct HyperFront {
    /// The request body while it is not handed over.
    body: Option<Paced<Incoming>>,
    has_body: bool,
    body_len: Option<u64>,
    /// Set when the body is cut for its pace.
    slow: Arc<AtomicBool>,
}

impl Front for HyperFront {
    type Done = Response<ProxyBody>;

    fn h2(&self) -> bool {
        true
    }

    fn has_body(&self) -> bool {
        self.has_body
    }

    fn body_len(&self) -> Option<u64> {
        self.body_len
    }

    async fn body_chunk(&mut self) -> Result<Option<Bytes>, BodyError> {
        let Some(body) = self.body.as_mut() else {
            return Ok(None);
        };
        loop {
            match body.frame().await {
                None => return Ok(None),
                Some(Ok(f)) => match f.into_data() {
                    Ok(d) if d.is_empty() => {}
                    Ok(d) => return Ok(Some(d)),
                    // Request trailers are not forwarded to an HTTP/1.1 member.
                    Err(_) => {}
                },
                Some(Err(_)) => return Err(self.stream_error().unwrap_or(BodyError::Gone)),
            }
        }
    }

    fn take_stream(&mut self) -> Option<ProxyBody> {
        self.body.take().map(|b| b.boxed_unsync())
    }

    fn stream_error(&self) -> Option<BodyError> {
        self.slow
            .load(Ordering::Relaxed)
            .then_some(BodyError::TooSlow)
    }

    async fn answer(&mut self, a: Answer) -> Response<ProxyBody> {
        a.into_response()
    }

    async fn relay(&mut self, r: UpResponse) -> Response<ProxyBody> {
        match r {
            UpResponse::Hyper(mut res) => {
                strip_hop_by_hop(res.headers_mut(), false);
                res
            }
            UpResponse::H1 {
                head,
                conn,
                host,
                started,
                complete,
            } => {
                let headers = head.headers.to_relay_map();
                let reusable = head.reusable && complete;
                let body = UpConnBody::new(conn, head.framing, host, reusable, started);
                let mut res = Response::new(body.boxed_unsync());
                *res.status_mut() = head.status;
                *res.headers_mut() = headers;
                res
            }
        }
    }

    async fn tunnel(&mut self, _: ResponseHead, _: UpConn, _: TunnelSlot) -> Response<ProxyBody> {
        // HTTP/2 has no `Upgrade`: the driver never asks.
        Answer::text(StatusCode::BAD_GATEWAY, "upgrade not possible\n", true).into_response()
    }
}

/// Runs the listener's access gate. The future is boxed so the request future stays `Send` for
/// every lifetime of the borrowed site (a borrow of the gate across the await would not be).
pub(super) fn check_access<'a>(
    gate: Arc<super::access::Gate>,
    head: &'a mut portcullis_engine::RequestHead,
    client: std::net::IpAddr,
    policy: Arc<portcullis_engine::CompiledPolicy>,
) -> std::pin::Pin<
    Box<dyn Future<Output = Result<(), portcullis_engine::access::Denial>> + Send + 'a>,
> {
    Box::pin(async move { gate.check(head, client, Some(&policy)).await })
}

/// The logging phase: publishes the event (if any) with the listener's name and the status
/// answered, and counts blocks; `fields`: the request's header fields as the driver holds them
/// (`Transaction::finish`).
pub(super) fn log_phase(
    tx: &SharedTx,
    site: &Site,
    shared: &Shared,
    status: StatusCode,
    fields: &portcullis_engine::Fields,
) {
    let Some(mut t) = tx.lock().take() else {
        return;
    };
    log_transaction(&mut t, site, shared, status, fields);
}

/// [`log_phase`] for a transaction that was never shared (the HTTP/1 fast path).
pub(super) fn log_transaction(
    t: &mut Transaction,
    site: &Site,
    shared: &Shared,
    status: StatusCode,
    fields: &portcullis_engine::Fields,
) {
    // The event log alone: the line is written from the transaction, no event is built. An
    // access profile may mask the URI and excerpts, which it does on the event.
    if site.access.is_none() && !shared.events.wants_records() {
        // Empty: `finish_into` gives it room only when there is an event, and most requests
        // have none.
        let mut line = Vec::new();
        if let Some((action, violations)) =
            t.finish_into(fields, &site.name, status.as_u16(), &mut line)
        {
            if action == Action::Block {
                for v in &violations {
                    shared.metrics.block(v.kind);
                }
            }
            shared.events.write_line(line);
        }
        return;
    }
    if let Some(mut ev) = t.finish(fields) {
        if ev.action == Action::Block {
            for v in &ev.violations {
                shared.metrics.block(v.kind);
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

/// Sets `Host` to `authority` (the target's authority wins over the field, RFC 9112 3.2.2).
pub(super) fn set_host(h: &mut portcullis_engine::Fields, authority: &http::uri::Authority) {
    let already = {
        let mut hosts = h.get_all(HOST);
        matches!((hosts.next(), hosts.next()),
            (Some(host), None) if host.as_bytes() == authority.as_str().as_bytes())
    };
    if already {
        // Already so: an insert would copy every value of the head.
        return;
    }
    if let Ok(v) = HeaderValue::from_str(authority.as_str()) {
        h.insert(HOST.as_str(), v.as_bytes());
    }
}

/// The checks of a head that did not come through the HTTP/1 guard (HTTP/2): the limits, and a
/// `host` field that must name the same authority as `:authority` (RFC 9113 8.3.1), once.
pub(super) fn check_head(
    head: &portcullis_engine::RequestHead,
    lim: &Limits,
) -> Result<(), (StatusCode, &'static str)> {
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
    let mut hosts = head.headers.get_all(HOST);
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
