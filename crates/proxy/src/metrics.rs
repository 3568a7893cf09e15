//! Prometheus metrics of the data plane (prometheus-client): requests by listener and status
//! class, blocks by violation, upstream errors, security events dropped by a full subscriber
//! queue, and a latency histogram; served as text on
//! `--metrics-listen`.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use http_body_util::Full;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use portcullis_engine::ViolationKind;

type Labels = Vec<(&'static str, String)>;

/// The data plane's metrics; cheap to update from any task.
pub struct Metrics {
    registry: Registry,
    requests: Family<Labels, Counter>,
    blocks: Family<Labels, Counter>,
    /// Each violation kind's counter of `blocks`, looked up in the family the first time only:
    /// a blocked request counts every violation it has, and the family's look-up builds, hashes
    /// and compares the label each time.
    blocks_by_kind: Box<[OnceLock<Counter>]>,
    upstream_errors: Family<Labels, Counter>,
    events_dropped: Family<Labels, Counter>,
    access_denials: Family<Labels, Counter>,
    shared_store_up: Family<Labels, Gauge>,
    shared_store_fallbacks: Family<Labels, Counter>,
    shared_store_seconds: Family<Labels, Histogram, fn() -> Histogram>,
    revocations: Family<Labels, Gauge>,
    latency: Histogram,
    tunnels: Gauge,
}

/// The metrics of one shared store (Redis), resolved once.
#[derive(Clone)]
pub struct StoreCounters {
    /// 1 while the store answers, 0 while requests are decided without it.
    pub up: Gauge,
    /// Rate-limited requests decided without the store (unavailable, late, or an error).
    pub fallbacks: Counter,
    /// How long each call to the store took (what it adds to a limited request).
    pub seconds: Histogram,
}

/// Buckets of `portcullis_shared_store_seconds`, growing by half each: the first is below a
/// loopback round trip to the store, the last above any store timeout worth configuring, so both a
/// healthy store and one running into its timeout are resolved.
fn store_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.000_02, 1.5, 21))
}

/// One open upgraded connection, counted in `portcullis_tunnels_open` until dropped.
pub struct TunnelSlot(Gauge);

impl Drop for TunnelSlot {
    fn drop(&mut self) {
        self.0.dec();
    }
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("portcullis");
        let requests = Family::<Labels, Counter>::default();
        let blocks = Family::<Labels, Counter>::default();
        let upstream_errors = Family::<Labels, Counter>::default();
        let events_dropped = Family::<Labels, Counter>::default();
        let access_denials = Family::<Labels, Counter>::default();
        let shared_store_up = Family::<Labels, Gauge>::default();
        let shared_store_fallbacks = Family::<Labels, Counter>::default();
        let shared_store_seconds =
            Family::<Labels, Histogram, fn() -> Histogram>::new_with_constructor(store_histogram);
        let revocations = Family::<Labels, Gauge>::default();
        let latency = Histogram::new(exponential_buckets(0.0001, 2.0, 18));
        let tunnels = Gauge::default();
        registry.register(
            "access_denials",
            "Requests refused by access control (401, 403, 429), by listener and status",
            access_denials.clone(),
        );
        registry.register(
            "shared_store_up",
            "Whether a shared store (Redis) answers: 1, or 0 while requests are decided without it",
            shared_store_up.clone(),
        );
        registry.register(
            "shared_store_fallbacks",
            "Rate-limited requests decided without their shared store (down, late or failing)",
            shared_store_fallbacks.clone(),
        );
        registry.register(
            "shared_store_seconds",
            "Time of each rate-limit call to a shared store (Redis), answered or not",
            shared_store_seconds.clone(),
        );
        registry.register(
            "revocations",
            "Fleet-wide revocations of API keys and token ids in force, by store",
            revocations.clone(),
        );
        registry.register(
            "requests",
            "Requests answered, by listener and status class",
            requests.clone(),
        );
        registry.register(
            "blocks",
            "Requests blocked by the WAF, by violation",
            blocks.clone(),
        );
        registry.register(
            "upstream_errors",
            "Upstream failures (connect, timeout, reset), by kind",
            upstream_errors.clone(),
        );
        registry.register(
            "events_dropped",
            "Security events dropped because a subscriber's queue was full, by subscriber",
            events_dropped.clone(),
        );
        registry.register(
            "request_duration_seconds",
            "Time from request head to response head",
            latency.clone(),
        );
        registry.register(
            "tunnels_open",
            "Upgraded connections (WebSocket tunnels) open now",
            tunnels.clone(),
        );
        Metrics {
            registry,
            requests,
            blocks,
            blocks_by_kind: ViolationKind::ALL.iter().map(|_| OnceLock::new()).collect(),
            upstream_errors,
            events_dropped,
            access_denials,
            shared_store_up,
            shared_store_fallbacks,
            shared_store_seconds,
            revocations,
            latency,
            tunnels,
        }
    }
}

/// The request counters of one listener, resolved once so the hot path does not allocate.
#[derive(Clone)]
pub struct ListenerCounters {
    by_class: [Counter; 5],
    latency: Histogram,
}

impl ListenerCounters {
    /// Counts one answered request.
    pub fn request(&self, status: u16, seconds: f64) {
        let i = (status / 100).clamp(1, 5) as usize - 1;
        self.by_class[i].inc();
        self.latency.observe(seconds);
    }

    /// Requests answered so far, every status class.
    pub fn total(&self) -> u64 {
        self.by_class.iter().map(Counter::get).sum()
    }
}

impl Metrics {
    /// The counters of listener `name`.
    pub fn listener(&self, name: &str) -> ListenerCounters {
        let c = |class: &str| {
            self.requests
                .get_or_create(&vec![
                    ("listener", name.to_string()),
                    ("status", class.to_string()),
                ])
                .clone()
        };
        ListenerCounters {
            by_class: [c("1xx"), c("2xx"), c("3xx"), c("4xx"), c("5xx")],
            latency: self.latency.clone(),
        }
    }

    pub fn request(&self, listener: &str, status: u16, seconds: f64) {
        self.listener(listener).request(status, seconds);
    }

    /// Counts one blocked request's violation of `kind`.
    pub fn block(&self, kind: ViolationKind) {
        let family = || {
            self.blocks
                .get_or_create(&vec![("violation", kind.name().to_string())])
                .clone()
        };
        match self.blocks_by_kind.get(kind as usize) {
            Some(slot) => slot.get_or_init(family).inc(),
            None => family().inc(),
        };
    }

    pub fn upstream_error(&self, kind: &'static str) {
        self.upstream_errors
            .get_or_create(&vec![("kind", kind.to_string())])
            .inc();
    }

    /// The drop counter of event subscriber `subscriber` (see `proxy::events`).
    pub fn events_dropped(&self, subscriber: &str) -> Counter {
        self.events_dropped
            .get_or_create(&vec![("subscriber", subscriber.to_string())])
            .clone()
    }

    /// Counts one request refused by access control.
    pub fn access_denied(&self, listener: &str, status: u16) {
        self.access_denials
            .get_or_create(&vec![
                ("listener", listener.to_string()),
                ("status", status.to_string()),
            ])
            .inc();
    }

    /// The metrics of the shared store `store` (a URL without its password).
    pub fn store(&self, store: &str) -> StoreCounters {
        let l = vec![("store", store.to_string())];
        StoreCounters {
            up: self.shared_store_up.get_or_create(&l).clone(),
            fallbacks: self.shared_store_fallbacks.get_or_create(&l).clone(),
            seconds: self.shared_store_seconds.get_or_create(&l).clone(),
        }
    }

    /// How many revocations under `prefix` in `store` this node holds.
    pub fn revocations(&self, store: &str, prefix: &str) -> Gauge {
        self.revocations
            .get_or_create(&vec![
                ("store", store.to_string()),
                ("prefix", prefix.to_string()),
            ])
            .clone()
    }

    /// A slot for one more upgraded connection, unless `max` are open.
    pub fn tunnel_slot(&self, max: usize) -> Option<TunnelSlot> {
        if self.tunnels.inc() >= max as i64 {
            self.tunnels.dec();
            return None;
        }
        Some(TunnelSlot(self.tunnels.clone()))
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if encode(&mut out, &self.registry).is_err() {
            out.clear();
        }
        out
    }
}

/// Serves `GET /metrics` (any path) on `listener` until the task is dropped. HTTP/1.1 only, as
/// scrapers speak it: the data plane's own connections never go through hyper's HTTP/1 server,
/// so this is its only copy, and an HTTP/2 server here would be another copy of hyper's.
pub async fn serve(listener: tokio::net::TcpListener, metrics: Arc<Metrics>) {
    loop {
        let Ok((tcp, _)) = listener.accept().await else {
            continue;
        };
        let metrics = metrics.clone();
        portcullis_support::task::spawn(async move {
            let svc = service_fn(move |_req| {
                let body = metrics.render();
                async move {
                    let mut r = http::Response::new(Full::new(Bytes::from(body)));
                    r.headers_mut().insert(
                        http::header::CONTENT_TYPE,
                        http::HeaderValue::from_static(
                            "application/openmetrics-text; version=1.0.0; charset=utf-8",
                        ),
                    );
                    Ok::<_, Infallible>(r)
                }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(tcp), svc)
                .await;
        });
    }
}

/// Binds the metrics listener (errors are reported to the caller).
pub async fn bind(addr: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    tokio::net::TcpListener::bind(addr).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_show_in_the_exposition() {
        let m = Metrics::default();
        m.request("vs1", 200, 0.001);
        m.block(ViolationKind::Url);
        m.block(ViolationKind::Url);
        m.block(ViolationKind::RatingThreat);
        m.upstream_error("connect");
        let slot = m.tunnel_slot(1).expect("first tunnel");
        assert!(m.tunnel_slot(1).is_none(), "the limit holds");
        let text = m.render();
        assert!(text.contains("portcullis_tunnels_open 1"), "{text}");
        drop(slot);
        assert!(m.tunnel_slot(1).is_some(), "a closed tunnel frees its slot");
        assert!(
            text.contains("portcullis_requests_total{listener=\"vs1\",status=\"2xx\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("portcullis_blocks_total{violation=\"VIOL_URL\"} 2")
                && text.contains("portcullis_blocks_total{violation=\"VIOL_RATING_THREAT\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("portcullis_upstream_errors_total{kind=\"connect\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("portcullis_request_duration_seconds_count 1"),
            "{text}"
        );
    }
}
