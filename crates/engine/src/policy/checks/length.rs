//! VIOL_REQUEST_MAX_LENGTH: a request longer than the maximum request length (10 MiB, fixed as in
//! the systems we stand in for, which reject any request over 10 MB; rated 5, alarm and block in
//! every shipped template), or whose body is longer than what the engine or the proxy can hold for
//! inspection (`check_inspection_overflow`).
//!
//! The length is the request head (path, query and header bytes, as the file-type request-length
//! check counts them) plus the body. A declared `Content-Length` is judged in the headers phase,
//! before anything is forwarded. A body of unknown length (chunked, or HTTP/2 without
//! `content-length`) is counted by the transaction as it is fed, past the inspection limit too: the
//! transaction then keeps asking for the body (`Step::Release`) instead of letting it pass
//! uninspected, and blocks as soon as the count goes over. A gRPC call is judged per message
//! instead: a message over the 10 MiB inspection cap raises this violation together with
//! VIOL_GRPC_MALFORMED (`grpc::stream`), and a long-lived stream of small messages is legitimate.

use crate::policy::compile::compiled::{CompiledPolicy, Scratch};
use crate::violation::{Context, Violation, ViolationKind as K};

/// The maximum request length (head + body), bytes.
pub const REQUEST_MAX_LENGTH: u64 = 10 * 1024 * 1024;

impl CompiledPolicy {
    fn max_length_violation(&self, len: u64) -> Violation {
        Violation::new(K::RequestMaxLength, Context::Request).detail(format!(
            "request length {len} bytes exceeds the maximum of {} bytes",
            self.request_max_len
        ))
    }

    /// Headers phase: a declared `Content-Length` that makes the request too long.
    pub(in crate::policy) fn check_declared_length(&self, s: &Scratch, out: &mut Vec<Violation>) {
        if let Some(cl) = s.content_length
            && s.grpc_profile.is_none()
        {
            let len = s.request_len.saturating_add(cl);
            if len > self.request_max_len {
                self.push(out, self.max_length_violation(len));
            }
        }
    }

    /// Whether the transaction must count this request's body itself: it may have a body of
    /// unknown length (chunked, or HTTP/2 without `content-length`; an HTTP/1 request with
    /// neither has no body), it is not a gRPC call, and the violation is on.
    pub fn counts_body_length(&self, head: &crate::RequestHead, s: &Scratch) -> bool {
        let st = self.settings[K::RequestMaxLength as usize];
        // Without a Content-Length, `expects_body` is the chunked transfer coding (the body plan).
        let unknown =
            s.content_length.is_none() && (s.expects_body || head.version == http::Version::HTTP_2);
        (st.alarm || st.block) && unknown && s.grpc_profile.is_none()
    }

    /// Body phase: the body went past the inspection limit (`limit` bytes), so what follows cannot
    /// be inspected. The systems we stand in for raise this violation for a request they cannot
    /// inspect whole; blocking it (the default of every template) keeps an attack from hiding
    /// behind padding. Raised once per request.
    pub fn check_inspection_overflow(&self, limit: u64, out: &mut Vec<Violation>) {
        if out.iter().any(|v| v.kind == K::RequestMaxLength) {
            return;
        }
        self.push(
            out,
            Violation::new(K::RequestMaxLength, Context::Body).detail(format!(
                "request body longer than the inspection limit of {limit} bytes"
            )),
        );
    }

    /// Body phase of a counted body: `body` bytes so far. Raises the violation once, when the
    /// request goes over the maximum; returns true then.
    pub fn check_body_length(&self, s: &Scratch, body: u64, out: &mut Vec<Violation>) -> bool {
        let len = s.request_len.saturating_add(body);
        if len <= self.request_max_len || out.iter().any(|v| v.kind == K::RequestMaxLength) {
            return false;
        }
        self.push(out, self.max_length_violation(len));
        true
    }
}
