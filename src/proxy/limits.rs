//! Every limit and timeout of the data plane, in one place. The reasons for each default are in
//! `docs/limits.md`; keep the two in step. Imports: `super::head`.

use std::time::Duration;

use super::head::{HEADER_CAP, HeadLimits};

/// The data plane's limits. `Limits::default()` is what `portcullis proxy` runs with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// A request head must arrive within this time from its first byte (slowloris).
    pub header_read_timeout: Duration,
    /// An idle keep-alive connection (no request under way) is closed after this time.
    pub idle_timeout: Duration,
    /// Connecting to an upstream (TCP + TLS) must finish within this time → 502.
    pub upstream_connect_timeout: Duration,
    /// The upstream's response head must arrive within this time after the request → 504.
    pub upstream_response_timeout: Duration,
    /// Most header fields in a request (hard cap [`HEADER_CAP`]) → 431.
    pub max_headers: usize,
    /// Largest request head (request line + headers) in bytes → 431.
    pub max_head_bytes: usize,
    /// Longest request target (path + query) in bytes → 414.
    pub max_url_bytes: usize,
    /// Largest request body in bytes → 413.
    pub max_body_bytes: u64,
    /// Most request-body bytes buffered for inspection; beyond it the rest streams uninspected.
    pub inspection_bytes: usize,
    /// A member that refused a connection is skipped for this long (passive health).
    pub upstream_down_for: Duration,
    /// In-flight requests get this long to finish on shutdown before connections are closed.
    pub drain_timeout: Duration,
    /// The TLS handshake of a client must finish within this time.
    pub tls_handshake_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            header_read_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            upstream_connect_timeout: Duration::from_secs(5),
            upstream_response_timeout: Duration::from_secs(60),
            max_headers: 100,
            max_head_bytes: 32 * 1024,
            max_url_bytes: 8 * 1024,
            max_body_bytes: 100 * 1024 * 1024,
            inspection_bytes: 1024 * 1024,
            upstream_down_for: Duration::from_secs(10),
            drain_timeout: Duration::from_secs(10),
            tls_handshake_timeout: Duration::from_secs(10),
        }
    }
}

impl Limits {
    /// The part the HTTP/1 head validator needs.
    pub fn head(&self) -> HeadLimits {
        HeadLimits {
            max_head_bytes: self.max_head_bytes,
            max_headers: self.max_headers.min(HEADER_CAP),
            max_url_bytes: self.max_url_bytes,
        }
    }
}
