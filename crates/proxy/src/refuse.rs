//! Requests the proxy refuses before the policy judges them: a head the validator rejects (bad
//! framing, a limit, an invalid target or `Host`), an HTTP/2 request whose `host` contradicts its
//! `:authority`. Like the systems we stand in for log illegal requests, each one gets a security
//! event with a support ID (VIOL_HTTP_PROTOCOL, or the length violation that fits). A request
//! that is not valid HTTP is answered with the policy's blocking page (the support ID in it)
//! under the refusal's status, as a blocked request is; one over a size limit with the status,
//! its reason and the support ID as text (`head::is_limit_status` says why).
//!
//! The HTTP/1.1 connection code answers a refused head in order, after the requests pipelined
//! before it, and reads nothing after it.

use http::StatusCode;

use super::driver::Env;
use super::driver::answer::Answer;
use super::head::Reject;
use portcullis_engine::{ConnInfo, Transaction};
use portcullis_engine::{Context, Violation, ViolationKind};

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

impl Refusal {
    /// The refusal of `head` (the bytes read of it): its method and target from the printable
    /// part of its request line.
    pub fn of_head(r: Reject, head: &[u8]) -> Refusal {
        let end = memchr::memchr2(b'\r', b'\n', head).unwrap_or(head.len());
        let mut line = String::with_capacity(end.min(LINE_MAX));
        for &b in &head[..end.min(LINE_MAX)] {
            if (0x20..0x7f).contains(&b) {
                line.push(char::from(b));
            } else {
                line.push_str(&format!("%{b:02X}"));
            }
        }
        let mut parts = line.splitn(3, ' ');
        Refusal {
            status: StatusCode::from_u16(r.status).unwrap_or(StatusCode::BAD_REQUEST),
            reason: r.reason.to_string(),
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

    /// The refusal judged: a transaction blocked with the violation (to be logged, the reason in
    /// its detail), and the answer (the blocking page, or the reason for a size limit, under
    /// the refusal's status; `Connection: close`: nothing after a refused head is read).
    pub fn judge(self, env: &Env<'_>) -> (Transaction, Answer) {
        let mut tx = Transaction::new(
            env.site.engine.snapshot(),
            ConnInfo {
                peer: env.client.peer.ip(),
                tls: env.client.tls,
            },
        );
        tx.refuse(&self.method, &self.target, self.violation());
        tracing::info!(
            status = self.status.as_u16(),
            reason = self.reason,
            support_id = %tx.support_id(),
            "request refused before forwarding"
        );
        let status = self.status.as_u16();
        let answer = if super::head::is_limit_status(status) {
            let text = format!("{}\nYour support ID is: {}\n", self.reason, tx.support_id());
            Answer::text(self.status, text, true)
        } else {
            Answer::Block(tx.refusal_response(status))
        };
        (tx, answer)
    }
}

/// A request whose chunked body turned out malformed half-way: recorded on its transaction as a
/// protocol violation (blocked), answered 400 with the policy's page and `Connection: close`.
pub fn malformed_body(tx: &mut Transaction, why: &'static str) -> Answer {
    let v = Violation::new(ViolationKind::HttpProtocol, Context::Request).detail(why.to_string());
    tx.deny(v, portcullis_engine::BlockReply::DefaultPage);
    Answer::Block(tx.refusal_response(StatusCode::BAD_REQUEST.as_u16()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_head_keeps_its_printable_request_line() {
        let r = Reject {
            status: 501,
            reason: "unsupported transfer coding",
        };
        let head = b"GET /a?q=<script>\x01\xff HTTP/1.1\r\nHost: a\r\n\r\n";
        assert_eq!(
            Refusal::of_head(r, head),
            Refusal {
                status: StatusCode::NOT_IMPLEMENTED,
                reason: "unsupported transfer coding".into(),
                method: "GET".into(),
                target: "/a?q=<script>%01%FF".into(),
            }
        );
    }
}
