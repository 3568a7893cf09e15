//! Response heads to the client, written exactly as hyper's HTTP/1.1 server writes them (status
//! line, lowercase names in the map's order, `content-length` / `transfer-encoding: chunked` added
//! the way hyper adds them, `connection: close` when the connection ends after the response), so a
//! response reads the same on the wire whichever path served it. The test at the bottom compares
//! the bytes with hyper's own server for each kind of response.

use http::header::HeaderName;
use http::{HeaderMap, Method, StatusCode, Version};
use portcullis_engine::response::BlockField;

use super::wire::{Special, connection_named_in, has_token, put_header, skipped};

/// What the body of a response is known to be when its head is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyLen {
    /// No body at all.
    Empty,
    Known(u64),
    /// Streamed: chunked to an HTTP/1.1 client.
    Unknown,
}

/// How the body follows the head, and whether the connection ends after it.
#[derive(Debug, PartialEq, Eq)]
pub struct Encoded {
    pub body: BodyOut,
    /// The connection closes after this response.
    pub last: bool,
    /// Trailer fields the client may receive (chunked bodies; `None`: no trailers).
    pub trailers: Option<Vec<HeaderName>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyOut {
    Length(u64),
    Chunked,
    /// Until the connection closes.
    Close,
}

/// The fields of a response head: a map (the proxy's own responses) or an upstream head's
/// [`super::response::Fields`] (no map built for a relayed response).
#[derive(Clone, Copy)]
pub enum Fields<'a> {
    Map(&'a HeaderMap),
    Raw(&'a super::response::Fields),
    /// Lower-case names, each once, with valid values, in the order to write them (a block
    /// response that needs no map: `response::block_fields_plain`).
    Plain(&'a [BlockField]),
}

/// One response head to encode.
pub struct Head<'a> {
    pub status: StatusCode,
    pub version: Version,
    pub headers: Fields<'a>,
    /// Leave out hop-by-hop fields (a response from an upstream).
    pub strip: bool,
}

/// The request the response answers.
#[derive(Clone, Copy)]
pub struct Answering<'a> {
    pub method: &'a Method,
    /// The connection will not be kept alive (client's `Connection: close`, HTTP/1.0 without
    /// `keep-alive`, draining).
    pub close: bool,
    /// The client speaks HTTP/1.0: the response is HTTP/1.0, never chunked, and kept alive only
    /// with `connection: keep-alive` (as hyper's server answers such a client).
    pub http10: bool,
}

fn can_chunked(method: &Method, status: StatusCode) -> bool {
    !(*method == Method::HEAD
        || status.is_informational()
        || matches!(status, StatusCode::NO_CONTENT | StatusCode::NOT_MODIFIED))
}

fn can_have_content_length(status: StatusCode) -> bool {
    !(status.is_informational()
        || matches!(status, StatusCode::NO_CONTENT | StatusCode::NOT_MODIFIED))
}

/// Writes the head into `out` and says how the body goes.
pub fn encode(out: &mut Vec<u8>, h: &Head<'_>, body: BodyLen, req: Answering<'_>) -> Encoded {
    match h.headers {
        Fields::Map(m) => {
            let fields = || {
                m.iter().map(|(n, v)| {
                    let name = n.as_str().as_bytes();
                    (name, Special::of(name), v.as_bytes())
                })
            };
            encode_fields(out, h, fields, body, req)
        }
        Fields::Raw(f) => encode_fields(out, h, || f.iter(), body, req),
        Fields::Plain(pairs) => {
            let fields = || {
                pairs.iter().map(|(n, v)| {
                    let name = n.as_bytes();
                    (name, Special::of(name), v.as_bytes())
                })
            };
            encode_fields(out, h, fields, body, req)
        }
    }
}

/// The status line, as hyper writes it.
fn status_line(out: &mut Vec<u8>, version: Version, status: StatusCode) {
    if version != Version::HTTP_10 && status == StatusCode::OK {
        out.extend_from_slice(b"HTTP/1.1 200 OK\r\n");
    } else {
        out.extend_from_slice(if version == Version::HTTP_10 {
            b"HTTP/1.0 "
        } else {
            b"HTTP/1.1 "
        });
        out.extend_from_slice(status.as_str().as_bytes());
        out.push(b' ');
        out.extend_from_slice(status.canonical_reason().unwrap_or("<none>").as_bytes());
        out.extend_from_slice(b"\r\n");
    }
}

/// [`encode`] of an HTTP/1.1 response with `Fields::Plain` fields and a body of `len` (> 0)
/// bytes, when the fields already say all [`encode`] would add: their own `content-length` and
/// `connection: close`, no framing or trailer field. That is the shipped block pages, answered
/// to a client that is not HTTP/1.0 and did not send HEAD; the fields then go out as they are.
/// `None`, with nothing written, for any other response (the caller uses [`encode`]).
pub fn encode_as_is(
    out: &mut Vec<u8>,
    status: StatusCode,
    pairs: &[BlockField],
    len: u64,
    req: Answering<'_>,
) -> Option<Encoded> {
    if req.http10
        || *req.method == Method::HEAD
        || len == 0
        || !can_chunked(req.method, status)
        || !can_have_content_length(status)
    {
        return None;
    }
    let start = out.len();
    status_line(out, Version::HTTP_11, status);
    let (mut close, mut length) = (false, false);
    for (name, value) in pairs {
        let (name, value) = (name.as_bytes(), value.as_bytes());
        match Special::of(name) {
            Special::Connection if value == b"close" => close = true,
            Special::ContentLength => length = true,
            Special::Connection | Special::TransferEncoding | Special::Trailer => {
                out.truncate(start);
                return None;
            }
            _ => {}
        }
        put_header(out, name, value);
    }
    if !(close && length) {
        out.truncate(start);
        return None;
    }
    out.extend_from_slice(b"\r\n");
    Some(Encoded {
        body: BodyOut::Length(len),
        last: true,
        trailers: None,
    })
}

/// [`encode`] for the fields as (lower-case name, kind, value) triples in `HeaderMap` order,
/// iterated by `fields()`.
fn encode_fields<'a, I>(
    out: &mut Vec<u8>,
    h: &Head<'_>,
    fields: impl Fn() -> I,
    body: BodyLen,
    req: Answering<'_>,
) -> Encoded
where
    I: Iterator<Item = (&'a [u8], Special, &'a [u8])>,
{
    let connection = || fields().filter_map(|(_, s, v)| (s == Special::Connection).then_some(v));
    let version = if req.http10 {
        Version::HTTP_10
    } else {
        h.version
    };
    status_line(out, version, h.status);
    let named = if h.strip && connection().next().is_some() {
        connection_named_in(connection)
    } else {
        Vec::new()
    };
    // What hyper adds to the connection field: `close` for an HTTP/1.1 client whose connection
    // ends; `keep-alive` for an HTTP/1.0 client that asked for it, unless the response is
    // HTTP/1.0 (then the connection ends instead).
    let adds: Option<&[u8]> = match (req.http10, req.close) {
        (false, true) => Some(b"close"),
        (true, false) if h.version != Version::HTTP_10 => Some(b"keep-alive"),
        _ => None,
    };
    let mut last = req.close || (req.http10 && h.version == Version::HTTP_10);
    let mut wrote_len = false;
    let mut trailers: Option<Vec<HeaderName>> = None;
    let chunkable = version != Version::HTTP_10 && can_chunked(req.method, h.status);
    let mut connection_seen = false;
    // One pass over the fields; values of one name come together, so a name's group starts when
    // the name changes. `open` is a joined line (connection, trailer) not yet ended.
    let mut prev: Option<&[u8]> = None;
    let mut open: Option<Special> = None;
    let mut line = Joined::default();
    for (name, special, value) in fields() {
        let first = prev != Some(name);
        prev = Some(name);
        if first && let Some(o) = open.take() {
            end_joined(out, o, adds, line, &mut last);
        }
        if h.strip && skipped(name, special, &named) {
            continue;
        }
        if special == Special::ContentLength {
            match body {
                BodyLen::Known(_) => {
                    if first {
                        put_header(out, name, value);
                        wrote_len = true;
                    }
                    continue;
                }
                BodyLen::Empty if *req.method != Method::HEAD => continue,
                BodyLen::Unknown => continue,
                BodyLen::Empty => wrote_len = true,
            }
        } else if special == Special::TransferEncoding
            || (special == Special::Trailer && !chunkable)
        {
            continue;
        } else if special == Special::Connection || special == Special::Trailer {
            if first {
                out.extend_from_slice(name);
                out.extend_from_slice(b": ");
                open = Some(special);
                line = Joined::default();
            } else {
                out.extend_from_slice(b", ");
            }
            out.extend_from_slice(value);
            if special == Special::Connection {
                connection_seen = true;
                line.close |= has_token(value, b"close");
                line.keep_alive |= has_token(value, b"keep-alive");
            } else if let Some(s) = visible_str(value) {
                let t = trailers.get_or_insert_with(Vec::new);
                t.extend(
                    s.split(',')
                        .filter_map(|n| HeaderName::from_bytes(n.trim().as_bytes()).ok()),
                );
            }
            continue;
        }
        put_header(out, name, value);
    }
    if let Some(o) = open.take() {
        end_joined(out, o, adds, line, &mut last);
    }
    if let (false, Some(token)) = (connection_seen, adds) {
        out.extend_from_slice(b"connection: ");
        out.extend_from_slice(token);
        out.extend_from_slice(b"\r\n");
    }
    let mut body_out = BodyOut::Length(0);
    if !wrote_len {
        match body {
            BodyLen::Unknown if chunkable => {
                out.extend_from_slice(b"transfer-encoding: chunked\r\n");
                body_out = BodyOut::Chunked;
            }
            BodyLen::Unknown => body_out = BodyOut::Close,
            BodyLen::Empty | BodyLen::Known(0) => {
                if can_have_content_length(h.status) && *req.method != Method::HEAD {
                    out.extend_from_slice(b"content-length: 0\r\n");
                }
            }
            BodyLen::Known(n) => {
                if can_have_content_length(h.status) {
                    out.extend_from_slice(b"content-length: ");
                    out.extend_from_slice(itoa(n).as_bytes());
                    out.extend_from_slice(b"\r\n");
                    body_out = BodyOut::Length(n);
                }
            }
        }
    } else if let BodyLen::Known(n) = body {
        body_out = BodyOut::Length(n);
    }
    if !can_chunked(req.method, h.status) {
        body_out = BodyOut::Length(0);
    }
    out.extend_from_slice(b"\r\n");
    if body_out == BodyOut::Close {
        last = true;
    }
    Encoded {
        body: body_out,
        last,
        trailers: if body_out == BodyOut::Chunked {
            trailers
        } else {
            None
        },
    }
}

/// What the values of a joined `connection` line said.
#[derive(Clone, Copy, Default)]
struct Joined {
    close: bool,
    keep_alive: bool,
}

/// Ends a joined `connection` / `trailer` line; a `connection` line gets hyper's token `adds`
/// appended when it does not hold it. A `close` among the values ends the connection; for an
/// HTTP/1.0 client the line's own `keep-alive` keeps it.
fn end_joined(
    out: &mut Vec<u8>,
    line: Special,
    adds: Option<&[u8]>,
    seen: Joined,
    last: &mut bool,
) {
    if line == Special::Connection {
        let holds = match adds {
            Some(b"close") => seen.close,
            Some(_) => seen.keep_alive,
            None => true,
        };
        if let (false, Some(token)) = (holds, adds) {
            out.extend_from_slice(b", ");
            out.extend_from_slice(token);
        }
        *last |= seen.close;
    }
    out.extend_from_slice(b"\r\n");
}

/// `value` as text when `HeaderValue::to_str` would give it (visible ASCII and tab only).
fn visible_str(value: &[u8]) -> Option<&str> {
    if value.iter().all(|&b| b == b'\t' || (32..127).contains(&b)) {
        std::str::from_utf8(value).ok()
    } else {
        None
    }
}

fn itoa(n: u64) -> String {
    n.to_string()
}

#[cfg(test)]
#[path = "encode_tests.rs"]
mod tests;
