//! Upstream response heads of the fast path, parsed with httparse: status, version, fields into a
//! `HeaderMap` whose values share the head's bytes (split off the connection's read buffer, no copy),
//! how the body is delimited and whether the connection can be reused. Malformed heads (bad status,
//! differing `Content-Length`s, too large) are errors the exchange answers with 502.
//!
//! Imports: httparse, `http`, `super::wire::has_token`.

use std::mem::MaybeUninit;

use bytes::BytesMut;
use http::header::{HeaderName, HeaderValue};
use http::{HeaderMap, Method, StatusCode, Version};

use super::wire::has_token;

/// How an upstream response body is delimited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyFraming {
    /// No body (HEAD, 204, 304, `Content-Length: 0`).
    Empty,
    Length(u64),
    Chunked,
    /// Until the upstream closes the connection.
    Eof,
}

/// An upstream response head.
pub struct ResponseHead {
    pub status: StatusCode,
    pub version: Version,
    pub headers: HeaderMap,
    pub framing: BodyFraming,
    /// The connection can serve another request after this response's body.
    pub reusable: bool,
}

/// Most fields in an upstream response head, and its largest size (hyper's client defaults).
const MAX_RESPONSE_HEADERS: usize = 100;
pub const MAX_RESPONSE_HEAD: usize = 8192 + 4096 * 100;

/// Parses an upstream response head from the start of `buf` and takes it off: `Ok(None)` needs
/// more bytes (nothing taken), `Err` is a malformed head (502). The header values share the head's
/// bytes, split off `buf` without a copy (the buffer is reused once the head is dropped).
pub fn parse_response(
    buf: &mut BytesMut,
    method: &Method,
) -> Result<Option<ResponseHead>, &'static str> {
    // First pass: where each field is, as offsets (the fields borrow `buf`).
    let mut at = [(0u32, 0u32, 0u32, 0u32); MAX_RESPONSE_HEADERS];
    let (len, code, minor, count) = {
        let mut storage: [MaybeUninit<httparse::Header<'_>>; MAX_RESPONSE_HEADERS] =
            [const { MaybeUninit::uninit() }; MAX_RESPONSE_HEADERS];
        let mut res = httparse::Response::new(&mut []);
        let parsed = httparse::ParserConfig::default().parse_response_with_uninit_headers(
            &mut res,
            buf,
            &mut storage,
        );
        let len = match parsed {
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) if buf.len() > MAX_RESPONSE_HEAD => {
                return Err("response head too large");
            }
            Ok(httparse::Status::Partial) => return Ok(None),
            Err(_) => return Err("malformed response head"),
        };
        let base = buf.as_ptr() as usize;
        let off = |p: *const u8| (p as usize - base) as u32;
        for (slot, h) in at.iter_mut().zip(res.headers.iter()) {
            let n = off(h.name.as_ptr());
            let v = off(h.value.as_ptr());
            *slot = (n, n + h.name.len() as u32, v, v + h.value.len() as u32);
        }
        (len, res.code, res.version, res.headers.len())
    };
    let head = buf.split_to(len).freeze();
    let status = code
        .and_then(|c| StatusCode::from_u16(c).ok())
        .ok_or("invalid status")?;
    let version = if minor == Some(1) {
        Version::HTTP_11
    } else {
        Version::HTTP_10
    };
    let mut headers = HeaderMap::with_capacity(count);
    let (mut length, mut chunked, mut te, mut close, mut keep_alive) =
        (None::<u64>, false, false, false, false);
    for &(n0, n1, v0, v1) in &at[..count] {
        let name = HeaderName::from_bytes(&head[n0 as usize..n1 as usize])
            .map_err(|_| "invalid header name")?;
        let (v0, v1) = (v0 as usize, v1 as usize);
        let value = HeaderValue::from_maybe_shared(head.slice(v0..v1))
            .map_err(|_| "invalid header value")?;
        let raw = &head[v0..v1];
        match name.as_str() {
            "content-length" => {
                for part in raw.split(|b| *b == b',') {
                    let n = std::str::from_utf8(part.trim_ascii())
                        .ok()
                        .filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
                        .and_then(|s| s.parse::<u64>().ok())
                        .ok_or("invalid content-length")?;
                    if length.is_some_and(|l| l != n) {
                        return Err("differing content-length values");
                    }
                    length = Some(n);
                }
            }
            "transfer-encoding" => {
                te = true;
                chunked = raw
                    .rsplit(|b| *b == b',')
                    .next()
                    .is_some_and(|last| last.trim_ascii().eq_ignore_ascii_case(b"chunked"));
            }
            "connection" => {
                close |= has_token(raw, b"close");
                keep_alive |= has_token(raw, b"keep-alive");
            }
            _ => {}
        }
        headers.append(name, value);
    }
    let no_body = *method == Method::HEAD
        || status.is_informational()
        || status == StatusCode::NO_CONTENT
        || status == StatusCode::NOT_MODIFIED;
    let framing = if no_body {
        BodyFraming::Empty
    } else if te && version == Version::HTTP_11 {
        if chunked {
            BodyFraming::Chunked
        } else {
            BodyFraming::Eof
        }
    } else {
        match length {
            Some(0) => BodyFraming::Empty,
            Some(n) => BodyFraming::Length(n),
            None => BodyFraming::Eof,
        }
    };
    let reusable =
        framing != BodyFraming::Eof && !close && (version == Version::HTTP_11 || keep_alive);
    Ok(Some(ResponseHead {
        status,
        version,
        headers,
        framing,
        reusable,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn response_framing() {
        let parse = |h: &str, m: Method| {
            parse_response(&mut BytesMut::from(h), &m).map(|r| r.map(|h| (h.framing, h.reusable)))
        };
        let ok = "HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello";
        // The head is taken off the buffer, the body stays; a partial head takes nothing.
        let mut buf = BytesMut::from(ok);
        let head = parse_response(&mut buf, &Method::GET)
            .ok()
            .flatten()
            .map(|h| h.headers);
        assert_eq!(
            head.map(|h| h["content-length"].clone()),
            Some(HeaderValue::from_static("5"))
        );
        assert_eq!(&buf[..], b"hello");
        let mut part = BytesMut::from("HTTP/1.1 200 OK\r\nx: 1\r\n");
        assert!(matches!(parse_response(&mut part, &Method::GET), Ok(None)));
        assert_eq!(part.len(), 23);
        assert_eq!(
            parse(ok, Method::GET),
            Ok(Some((BodyFraming::Length(5), true)))
        );
        assert_eq!(
            parse(ok, Method::HEAD),
            Ok(Some((BodyFraming::Empty, true)))
        );
        let chunked = "HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, chunked\r\n\r\n";
        assert_eq!(
            parse(chunked, Method::GET),
            Ok(Some((BodyFraming::Chunked, true)))
        );
        let eof = "HTTP/1.1 200 OK\r\n\r\n";
        assert_eq!(parse(eof, Method::GET), Ok(Some((BodyFraming::Eof, false))));
        let old = "HTTP/1.0 200 OK\r\ncontent-length: 1\r\n\r\n";
        assert_eq!(
            parse(old, Method::GET),
            Ok(Some((BodyFraming::Length(1), false)))
        );
        let close = "HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n";
        assert_eq!(
            parse(close, Method::GET),
            Ok(Some((BodyFraming::Empty, false)))
        );
        assert_eq!(parse("HTTP/1.1 200 OK\r\n", Method::GET), Ok(None));
        assert!(
            parse(
                "HTTP/1.1 200 OK\r\ncontent-length: 1, 2\r\n\r\n",
                Method::GET
            )
            .is_err()
        );
        assert!(parse("HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n", Method::GET).is_err());
        assert!(parse("HTTP/1.1 2000 OK\r\n\r\n", Method::GET).is_err());
    }
}
