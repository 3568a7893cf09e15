//! Requests the proxy refuses before the policy judges them: a head the validator rejects (bad
//! framing, a limit, an invalid target or `Host`), an HTTP/2 request whose `host` contradicts its
//! `:authority`. Like the systems we stand in for log illegal requests, each one gets a security
//! event with a support ID (VIOL_HTTP_PROTOCOL, or the length violation that fits), and the answer
//! names the ID.
//!
//! The guard hands an HTTP/1 rejection to the service as a synthetic request
//! ([`synthetic_request`], read back by [`Refusal::carried`]), so that the answer comes in order
//! after any pipelined responses.
//!
//! Imports: `waf::{Transaction, Violation}`, `super::{head, handler, response}`.

use http::{HeaderValue, Response, StatusCode};

use super::handler::{Conn, Shared, Site, log_transaction};
use super::head::{REJECT_HEADER, Reject};
use super::response::simple;
use super::upstream::ProxyBody;
use crate::waf::violation::{Context, Violation, ViolationKind};
use crate::waf::{ConnInfo, Transaction};

/// Most bytes of a refused request line kept for the event.
const LINE_MAX: usize = 1024;

/// A refused request: the status to answer, why, and its method and target as far as they could
/// be read.
#[derive(Debug, PartialEq, Eq)]
pub struct Refusal {
    pub status: StatusCode,
    pub reason: String,
    pub method: String,
    pub target: String,
}

/// The synthetic request the guard puts in place of the refused `head`: [`REJECT_HEADER`] carries
/// the status, the reason and the printable part of the request line.
pub fn synthetic_request(r: Reject, head: &[u8]) -> Vec<u8> {
    let end = memchr::memchr2(b'\r', b'\n', head).unwrap_or(head.len());
    let mut line = String::with_capacity(end.min(LINE_MAX));
    for &b in &head[..end.min(LINE_MAX)] {
        if (0x20..0x7f).contains(&b) {
            line.push(char::from(b));
        } else {
            line.push_str(&format!("%{b:02X}"));
        }
    }
    format!(
        "GET / HTTP/1.1\r\nhost: portcullis.invalid\r\n{REJECT_HEADER}: {} {}\t{line}\r\n\r\n",
        r.status, r.reason
    )
    .into_bytes()
}

impl Refusal {
    /// Reads back what [`synthetic_request`] carries.
    pub fn carried(v: &HeaderValue) -> Refusal {
        let text = String::from_utf8_lossy(v.as_bytes());
        let (what, line) = text.split_once('\t').unwrap_or((&text, ""));
        let (code, reason) = what.split_once(' ').unwrap_or(("400", "bad request"));
        let status = code
            .parse::<u16>()
            .ok()
            .and_then(|c| StatusCode::from_u16(c).ok())
            .unwrap_or(StatusCode::BAD_REQUEST);
        let mut parts = line.splitn(3, ' ');
        Refusal {
            status,
            reason: reason.to_string(),
            method: parts.next().unwrap_or("").to_string(),
            target: parts.next().unwrap_or("").to_string(),
        }
    }

    /// The violation the refusal is logged as.
    fn violation(&self) -> Violation {
        let kind = match self.status {
            StatusCode::URI_TOO_LONG => ViolationKind::UrlLength,
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE => ViolationKind::HeaderLength,
            StatusCode::PAYLOAD_TOO_LARGE => ViolationKind::RequestMaxLength,
            _ => ViolationKind::HttpProtocol,
        };
        Violation::new(kind, Context::Request).detail(self.reason.clone())
    }

    /// Logs the refusal as a blocked request of `site` and answers it with the status, the reason
    /// and the support ID (`Connection: close`: nothing after a refused head is read).
    pub fn answer(self, site: &Site, shared: &Shared, conn: &Conn) -> Response<ProxyBody> {
        let mut tx = Transaction::new(
            site.engine.snapshot(),
            ConnInfo {
                peer: conn.peer.ip(),
                tls: conn.tls,
            },
        );
        tx.refuse(&self.method, &self.target, self.violation());
        tracing::info!(
            status = self.status.as_u16(),
            reason = self.reason,
            support_id = %tx.support_id(),
            "request refused before forwarding"
        );
        let text = format!("{}\nYour support ID is: {}\n", self.reason, tx.support_id());
        log_transaction(&mut tx, site, shared, self.status);
        simple(self.status, &text, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rejection_survives_the_synthetic_request() {
        let r = Reject {
            status: 501,
            reason: "unsupported transfer coding",
        };
        let head = b"GET /a?q=<script>\x01\xff HTTP/1.1\r\nHost: a\r\n\r\n";
        let synthetic = synthetic_request(r, head);
        let text = String::from_utf8(synthetic).expect("ascii");
        let value = text
            .lines()
            .find_map(|l| l.strip_prefix("x-portcullis-reject: "))
            .expect("carried");
        let refusal = Refusal::carried(&HeaderValue::from_str(value).expect("header value"));
        assert_eq!(
            refusal,
            Refusal {
                status: StatusCode::NOT_IMPLEMENTED,
                reason: "unsupported transfer coding".into(),
                method: "GET".into(),
                target: "/a?q=<script>%01%FF".into(),
            }
        );
    }
}
