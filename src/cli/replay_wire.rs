//! One recorded request through the engine the way `portcullis proxy` takes it, without sockets:
//! the same head validator and limits (a head the proxy refuses is refused here with the same
//! status, or blocked where the proxy answers with the blocking page), the same `http` types hyper
//! builds, the same framing of the body, and the same phase order on a [`Transaction`] (headers;
//! the body only when one was framed; the response phase with the `200` of an upstream that
//! answers everything). `tests/it/proxy/replay.rs` holds the two to the
//! same verdict, request by request.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::time::Instant;

use http::header::{CONTENT_LENGTH, HOST, HeaderName, HeaderValue};
use http::{HeaderMap, Method, Uri, Version};

use crate::proxy::Limits;
use crate::proxy::{BodyFraming, HeadRefusal};
use crate::waf::{CompiledPolicy, ConnInfo, Context, Step, Transaction, Violation, ViolationKind};

const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n";
/// The body is fed in pieces of this size, as a connection delivers it (the engine must not depend
/// on where the pieces are cut, only on the inspection limit).
const CHUNK: usize = 16 * 1024;

/// What the client of the proxy would have seen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The engine blocked the request (its block response).
    Blocked,
    /// The request reached the upstream (with or without violations to log).
    Passed,
    /// The proxy refused the request before the engine decided (status and reason).
    Rejected(u16, &'static str),
    /// The proxy would wait for bytes the record does not hold (then time out).
    Incomplete(&'static str),
}

/// One request's result: the outcome, the violations the engine recorded, and how long the
/// proxy's part (head parsing, framing, every engine phase) took.
pub struct Replayed {
    pub outcome: Outcome,
    pub violations: Vec<Violation>,
    pub micros: f64,
}

/// Replays the exact bytes of one request (`raw`) against `policy` under the proxy's `limits`.
pub fn replay(policy: &Arc<CompiledPolicy>, limits: &Limits, raw: &[u8]) -> Replayed {
    let started = Instant::now();
    let (outcome, violations) = run(policy, limits, raw);
    Replayed {
        outcome,
        violations,
        micros: started.elapsed().as_secs_f64() * 1e6,
    }
}

/// A head the proxy refuses: over a size limit, the status as the client sees it; otherwise
/// (not valid HTTP) blocked, as the proxy answers it with the policy's blocking page.
fn refused(r: HeadRefusal) -> (Outcome, Vec<Violation>) {
    if r.is_limit() {
        return (Outcome::Rejected(r.status, r.reason), Vec::new());
    }
    (Outcome::Blocked, vec![protocol_violation(r.reason)])
}

/// The violation the proxy logs a request it refuses as invalid HTTP with.
fn protocol_violation(reason: &str) -> Violation {
    Violation::new(ViolationKind::HttpProtocol, Context::Request).detail(reason.to_string())
}

fn run(policy: &Arc<CompiledPolicy>, limits: &Limits, raw: &[u8]) -> (Outcome, Vec<Violation>) {
    if raw.starts_with(H2_PREFACE) {
        return (Outcome::Incomplete("HTTP/2 connection preface"), Vec::new());
    }
    let lim = limits.head();
    let end = match crate::proxy::find_head_end(raw) {
        Err(r) => return refused(r),
        Ok(Some(end)) => end,
        Ok(None) if raw.len() > lim.max_head_bytes => {
            return refused(HeadRefusal {
                status: 431,
                reason: "request head too large",
            });
        }
        Ok(None) => return (Outcome::Incomplete("request head"), Vec::new()),
    };
    let (framing, parts) = match crate::proxy::parse_scanned_head(
        &raw[..end],
        &lim,
        |t| Uri::try_from(t).ok(),
        build_parts,
    ) {
        Err(r) => return refused(r),
        Ok((f, Some(parts))) => (f, parts),
        // What hyper refuses after the validator: a target or field `http` cannot represent.
        Ok((_, None)) => {
            return refused(HeadRefusal {
                status: 400,
                reason: "request head not representable",
            });
        }
    };
    let mut parts = parts;
    if !parts.headers.contains_key(HOST)
        && let Some(a) = parts.uri.authority()
        && let Ok(v) = HeaderValue::from_str(a.as_str())
    {
        parts.headers.insert(HOST, v);
    }
    let declared = parts
        .headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limits.max_body_bytes) {
        return refused(HeadRefusal {
            status: 413,
            reason: "request body too large",
        });
    }
    let conn = ConnInfo {
        peer: IpAddr::V4(Ipv4Addr::LOCALHOST),
        tls: false,
    };
    let mut tx = Transaction::new(policy.clone(), conn);
    let parts = crate::waf::RequestHead::from(parts);
    let step = tx.on_request_headers(&parts);
    if step == Step::Block {
        return (Outcome::Blocked, tx.verdict().violations);
    }
    let rest = &raw[end..];
    // A body the framing says is empty never reaches the body phase (hyper's body is at its end).
    let body = match framing {
        BodyFraming::None | BodyFraming::Upgrade | BodyFraming::Length(0) => None,
        BodyFraming::Length(n) => match rest.get(..n as usize) {
            Some(b) => Some(b.to_vec()),
            None => return (Outcome::Incomplete("request body"), tx.verdict().violations),
        },
        BodyFraming::Chunked => match dechunk(rest) {
            Ok(b) => Some(b),
            Err(Dechunk::Malformed) => {
                let mut v = tx.verdict().violations;
                v.push(protocol_violation("malformed chunked body"));
                return (Outcome::Blocked, v);
            }
            Err(Dechunk::Short) => {
                return (Outcome::Incomplete("chunked body"), tx.verdict().violations);
            }
        },
    };
    if let Some(body) = body
        && step == Step::InspectBody
        && feed(&mut tx, &body, limits) == Step::Block
    {
        return (Outcome::Blocked, tx.verdict().violations);
    }
    if tx.on_response_headers(200, &HeaderMap::new()) == Step::Block {
        return (Outcome::Blocked, tx.verdict().violations);
    }
    (Outcome::Passed, tx.verdict().violations)
}

/// The request head as hyper hands it to the service; `None` where hyper answers 400.
fn build_parts(req: &httparse::Request<'_, '_>, uri: Uri) -> Option<http::request::Parts> {
    let method = Method::from_bytes(req.method?.as_bytes()).ok()?;
    let mut headers = HeaderMap::with_capacity(req.headers.len());
    for h in req.headers.iter() {
        let name = HeaderName::from_bytes(h.name.as_bytes()).ok()?;
        let value = HeaderValue::from_bytes(h.value).ok()?;
        headers.append(name, value);
    }
    let (mut parts, ()) = http::Request::new(()).into_parts();
    parts.method = method;
    parts.uri = uri;
    parts.version = if req.version == Some(0) {
        Version::HTTP_10
    } else {
        Version::HTTP_11
    };
    parts.headers = headers;
    Some(parts)
}

/// Feeds the body the way the proxy's body pump does: piece by piece, and once more than the
/// inspection limit is held unreleased, the end of the inspected part.
fn feed(tx: &mut Transaction, body: &[u8], limits: &Limits) -> Step {
    let mut allowed = 0u64;
    let mut fed = 0u64;
    for piece in body.chunks(CHUNK) {
        fed += piece.len() as u64;
        match tx.on_request_body(piece) {
            Step::Block => return Step::Block,
            Step::Release(n) => allowed = allowed.max(n),
            Step::PassRest => return Step::Forward,
            Step::Forward | Step::InspectBody => {}
        }
        if fed.saturating_sub(allowed) > limits.inspection_bytes as u64 {
            return tx.on_request_end();
        }
    }
    tx.on_request_end()
}

enum Dechunk {
    /// The guard refuses the body (bad size line, missing CRLF after the data).
    Malformed,
    /// The record ends before the last chunk.
    Short,
}

/// Decodes a chunked body as the proxy's guard frames it (sizes read by httparse, data followed
/// by CRLF, trailers up to the empty line).
fn dechunk(mut rest: &[u8]) -> Result<Vec<u8>, Dechunk> {
    let mut out = Vec::new();
    loop {
        let nl = memchr::memchr(b'\n', rest).ok_or(Dechunk::Short)?;
        let size = match httparse::parse_chunk_size(&rest[..=nl]) {
            Ok(httparse::Status::Complete((_, n))) => n,
            _ => return Err(Dechunk::Malformed),
        };
        rest = &rest[nl + 1..];
        if size == 0 {
            break;
        }
        let n = usize::try_from(size).map_err(|_| Dechunk::Malformed)?;
        let data = rest.get(..n).ok_or(Dechunk::Short)?;
        out.extend_from_slice(data);
        match rest.get(n..n + 2) {
            Some(b"\r\n") => rest = &rest[n + 2..],
            Some(_) => return Err(Dechunk::Malformed),
            None => return Err(Dechunk::Short),
        }
    }
    // Trailer lines up to the empty one.
    loop {
        let nl = memchr::memchr(b'\n', rest).ok_or(Dechunk::Short)?;
        if &rest[..=nl] == b"\r\n" {
            return Ok(out);
        }
        rest = &rest[nl + 1..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunked_bodies_are_framed_like_the_guard() {
        let ok = dechunk(b"3\r\nHi \r\n3;x=y\r\nCRS\r\n0\r\nTrailer: a\r\n\r\n");
        assert_eq!(ok.ok().as_deref(), Some(&b"Hi CRS"[..]));
        assert!(matches!(dechunk(b"3\r\nHi \r\n"), Err(Dechunk::Short)));
        assert!(matches!(dechunk(b"zz\r\n"), Err(Dechunk::Malformed)));
        assert!(matches!(dechunk(b"2\r\nabc\r\n"), Err(Dechunk::Malformed)));
    }
}
