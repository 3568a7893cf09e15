//! The answers the proxy gives itself, whatever the front-end: the engine's block response, short
//! text answers (limits, refusals, upstream failures), the HTTPS redirect and the gRPC deadline.
//! An [`Answer`] is what the driver decides; each front-end writes it in its protocol (hyper: as a
//! response, [`Answer::into_response`]; the HTTP/1.1 connection code: straight into its output
//! buffer, byte for byte as hyper would).

use std::borrow::Cow;

use bytes::Bytes;
use http::header::{CONNECTION, CONTENT_TYPE, LOCATION};
use http::{HeaderMap, HeaderValue, Response, StatusCode};

use super::super::deadline;
use super::super::handler::Shared;
use super::super::response::{block_fields_plain, block_headers, full};
use super::super::upstream::ProxyBody;
use portcullis_engine::BlockResponse;
use portcullis_engine::response::BlockField;

/// The fields of an answer as [`Answer::into_wire`] gives them.
#[derive(Debug)]
pub enum AnswerFields {
    Map(HeaderMap),
    /// Names and values to write in this order as they are (see [`block_fields_plain`]).
    Plain(Vec<BlockField>),
}

/// An answer from the proxy itself.
#[derive(Debug)]
pub enum Answer {
    /// The transaction's block response, sent without changing a byte.
    Block(BlockResponse),
    /// A short `text/plain` answer; `close` ends the connection after it (HTTP/1).
    Text {
        status: StatusCode,
        text: Cow<'static, str>,
        close: bool,
    },
    /// `302` to the same URL over HTTPS.
    Redirect(HeaderValue),
    /// The gRPC call's own deadline passed before the upstream answered.
    GrpcDeadline,
}

impl Answer {
    pub fn text(status: StatusCode, text: impl Into<Cow<'static, str>>, close: bool) -> Answer {
        Answer::Text {
            status,
            text: text.into(),
            close,
        }
    }

    /// The status the client receives.
    pub fn status(&self) -> StatusCode {
        match self {
            Answer::Block(b) => StatusCode::from_u16(b.status).unwrap_or(StatusCode::FORBIDDEN),
            Answer::Text { status, .. } => *status,
            Answer::Redirect(_) => StatusCode::FOUND,
            Answer::GrpcDeadline => StatusCode::OK,
        }
    }

    /// The answer as a response (status, fields in order, body).
    pub fn into_response(self) -> Response<ProxyBody> {
        if let Answer::GrpcDeadline = self {
            return deadline::deadline_exceeded();
        }
        let (status, headers, body) = self.into_parts();
        let mut res = Response::new(full(body));
        *res.status_mut() = status;
        *res.headers_mut() = headers;
        res
    }

    /// The status, fields and body of the answer, for a front-end that writes them itself: a
    /// block response whose fields need no map ([`block_fields_plain`]) keeps them as they are.
    pub fn into_wire(self) -> (StatusCode, AnswerFields, Bytes) {
        match self {
            Answer::Block(b) if b.plain_fields || block_fields_plain(&b.headers) => {
                let status = StatusCode::from_u16(b.status).unwrap_or(StatusCode::FORBIDDEN);
                (status, AnswerFields::Plain(b.headers), Bytes::from(b.body))
            }
            other => {
                let (status, headers, body) = other.into_parts();
                (status, AnswerFields::Map(headers), body)
            }
        }
    }

    /// The status, fields and body of the answer.
    fn into_parts(self) -> (StatusCode, HeaderMap, Bytes) {
        match self {
            Answer::Block(b) => {
                let status = StatusCode::from_u16(b.status).unwrap_or(StatusCode::FORBIDDEN);
                (status, block_headers(&b), Bytes::from(b.body))
            }
            Answer::Text {
                status,
                text,
                close,
            } => {
                let mut h = HeaderMap::with_capacity(2);
                if !text.is_empty() {
                    h.insert(
                        CONTENT_TYPE,
                        HeaderValue::from_static("text/plain; charset=utf-8"),
                    );
                }
                if close {
                    h.insert(CONNECTION, HeaderValue::from_static("close"));
                }
                let body = match text {
                    Cow::Borrowed(s) => Bytes::from_static(s.as_bytes()),
                    Cow::Owned(s) => Bytes::from(s),
                };
                (status, h, body)
            }
            Answer::Redirect(location) => {
                let mut h = HeaderMap::with_capacity(1);
                h.insert(LOCATION, location);
                (StatusCode::FOUND, h, Bytes::new())
            }
            Answer::GrpcDeadline => {
                let (parts, _) = deadline::deadline_exceeded().into_parts();
                (parts.status, parts.headers, Bytes::new())
            }
        }
    }
}

/// `413` for a body over `max_body_bytes`.
pub fn too_large() -> Answer {
    Answer::text(
        StatusCode::PAYLOAD_TOO_LARGE,
        "request body too large\n",
        true,
    )
}

/// The client's body broke off (`400`), was cut for its pace (`slow`: `408`).
pub fn client_gone(slow: bool) -> Answer {
    if slow {
        Answer::text(StatusCode::REQUEST_TIMEOUT, "request body too slow\n", true)
    } else {
        Answer::text(StatusCode::BAD_REQUEST, "request body incomplete\n", true)
    }
}

/// Why no upstream response came.
#[derive(Debug)]
pub enum Failure {
    NoMember,
    Connect(String),
    Timeout,
    /// The gRPC call's own deadline (`grpc-timeout`) passed first.
    Deadline,
    Other(String),
    Stopped,
}

/// The answer to an upstream failure (counted in the metrics; the caller logs the transaction).
pub fn failure(f: Failure, shared: &Shared) -> Answer {
    let (kind, status, text) = match f {
        Failure::Deadline => {
            shared.metrics.upstream_error("deadline");
            return Answer::GrpcDeadline;
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
    Answer::text(status, text, false)
}

/// The block response of a transaction (a plain 403 if it has none to give).
pub fn blocked(reply: Option<BlockResponse>) -> Answer {
    match reply {
        Some(r) => Answer::Block(r),
        None => Answer::text(StatusCode::FORBIDDEN, "request rejected\n", true),
    }
}
