//! Every limit and timeout of the data plane, in one place. The reasons for each default are in
//! `docs/limits.md`; keep the two in step.

use std::time::Duration;

use super::head::{HEADER_CAP, HeadLimits};

/// The data plane's limits. `Limits::default()` is what `portcullis proxy` runs with.
/// A `--limit NAME=VALUE` that names no limit, or whose value is of the wrong kind.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitError {
    #[error("limit {assignment:?}: expected NAME=VALUE")]
    NotAnAssignment { assignment: String },
    #[error("limit {name}: invalid value {value:?}")]
    Value { name: String, value: String },
    #[error("unknown limit {name:?}; known: {}", Limits::NAMES.join(", "))]
    Unknown { name: String },
}

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
    /// Most request-body bytes buffered for inspection; a body longer than that is
    /// VIOL_REQUEST_MAX_LENGTH (blocking in every template).
    pub inspection_bytes: usize,
    /// Longest wait for the next bytes of a request body, and the grace period of the minimum rate
    /// → 408, connection closed.
    pub body_read_timeout: Duration,
    /// Slowest request body accepted, in bytes per second of waiting for the client, once the
    /// grace period has passed (0: no minimum) → 408, connection closed.
    pub min_body_rate: u64,
    /// A member that refused a connection is skipped for this long (passive health).
    pub upstream_down_for: Duration,
    /// In-flight requests get this long to finish on shutdown before connections are closed.
    pub drain_timeout: Duration,
    /// The TLS handshake of a client must finish within this time.
    pub tls_handshake_timeout: Duration,
    /// An upgraded connection (WebSocket tunnel) with no byte in either direction for this long is closed.
    pub tunnel_idle_timeout: Duration,
    /// Most upgraded connections open at once; an upgrade request beyond it gets 503.
    pub max_tunnels: usize,
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
            body_read_timeout: Duration::from_secs(20),
            min_body_rate: 500,
            upstream_down_for: Duration::from_secs(10),
            drain_timeout: Duration::from_secs(10),
            tls_handshake_timeout: Duration::from_secs(10),
            tunnel_idle_timeout: Duration::from_secs(60),
            max_tunnels: 10_000,
        }
    }
}

/// Parses `10s`, `500ms`, `2m` or a bare number of seconds.
fn duration(v: &str) -> Option<Duration> {
    let (num, unit) = match v.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => v.split_at(i),
        None => (v, "s"),
    };
    let n: u64 = num.parse().ok()?;
    match unit {
        "ms" => Some(Duration::from_millis(n)),
        "s" => Some(Duration::from_secs(n)),
        "m" => Some(Duration::from_secs(n * 60)),
        _ => None,
    }
}

impl Limits {
    /// The names [`Limits::set`] accepts, as in `docs/limits.md`.
    pub const NAMES: [&'static str; 16] = [
        "header_read_timeout",
        "idle_timeout",
        "upstream_connect_timeout",
        "upstream_response_timeout",
        "max_headers",
        "max_head_bytes",
        "max_url_bytes",
        "max_body_bytes",
        "inspection_bytes",
        "body_read_timeout",
        "min_body_rate",
        "upstream_down_for",
        "drain_timeout",
        "tls_handshake_timeout",
        "tunnel_idle_timeout",
        "max_tunnels",
    ];

    /// Sets one limit from `NAME=VALUE` (durations as `10s`, `500ms`, `2m`; sizes in bytes).
    pub fn set(&mut self, assignment: &str) -> Result<(), LimitError> {
        let (name, value) =
            assignment
                .split_once('=')
                .ok_or_else(|| LimitError::NotAnAssignment {
                    assignment: assignment.to_string(),
                })?;
        let bad = || LimitError::Value {
            name: name.to_string(),
            value: value.to_string(),
        };
        let dur = || duration(value).ok_or_else(bad);
        let num = || value.parse::<u64>().map_err(|_| bad());
        match name {
            "header_read_timeout" => self.header_read_timeout = dur()?,
            "idle_timeout" => self.idle_timeout = dur()?,
            "upstream_connect_timeout" => self.upstream_connect_timeout = dur()?,
            "upstream_response_timeout" => self.upstream_response_timeout = dur()?,
            "upstream_down_for" => self.upstream_down_for = dur()?,
            "drain_timeout" => self.drain_timeout = dur()?,
            "tls_handshake_timeout" => self.tls_handshake_timeout = dur()?,
            "tunnel_idle_timeout" => self.tunnel_idle_timeout = dur()?,
            "max_tunnels" => self.max_tunnels = num()? as usize,
            "max_headers" => self.max_headers = num()?.clamp(1, HEADER_CAP as u64) as usize,
            "max_head_bytes" => self.max_head_bytes = num()?.max(256) as usize,
            "max_url_bytes" => self.max_url_bytes = num()?.max(1) as usize,
            "max_body_bytes" => self.max_body_bytes = num()?,
            "inspection_bytes" => self.inspection_bytes = num()? as usize,
            "body_read_timeout" => self.body_read_timeout = dur()?,
            "min_body_rate" => self.min_body_rate = num()?,
            _ => {
                return Err(LimitError::Unknown {
                    name: name.to_string(),
                });
            }
        }
        Ok(())
    }

    /// The part the HTTP/1 head validator needs.
    pub fn head(&self) -> HeadLimits {
        HeadLimits {
            max_head_bytes: self.max_head_bytes,
            max_headers: self.max_headers.min(HEADER_CAP),
            max_url_bytes: self.max_url_bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_set_by_name() {
        let mut l = Limits::default();
        l.set("header_read_timeout=2s").expect("dur");
        l.set("idle_timeout=1500ms").expect("ms");
        l.set("max_body_bytes=1048576").expect("num");
        assert_eq!(l.header_read_timeout, Duration::from_secs(2));
        assert_eq!(l.idle_timeout, Duration::from_millis(1500));
        assert_eq!(l.max_body_bytes, 1 << 20);
        assert_eq!(
            l.set("max_body_bytes=lots"),
            Err(LimitError::Value {
                name: "max_body_bytes".into(),
                value: "lots".into()
            })
        );
        assert!(matches!(l.set("nope=1"), Err(LimitError::Unknown { name }) if name == "nope"));
        assert_eq!(
            l.set("max_headers").map_err(|e| e.to_string()),
            Err("limit \"max_headers\": expected NAME=VALUE".to_string())
        );
        for name in Limits::NAMES {
            let v = if name.contains("timeout") || name.ends_with("_for") {
                "1s"
            } else {
                "4096"
            };
            assert!(l.set(&format!("{name}={v}")).is_ok(), "{name}");
        }
    }
}
