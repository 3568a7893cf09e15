//! Upstream response heads of the fast path, parsed with httparse: status, version, the fields as
//! [`Fields`] (names, and values as ranges of the head, split off the connection's read buffer, no
//! copy; in the order a `HeaderMap` would list them, with no map built: the response head is only
//! re-encoded for the client), how the body is delimited and whether the connection can be reused.
//! Malformed heads (bad status, invalid names or values, differing `Content-Length`s, too large) are
//! errors the exchange answers with 502.
//!
//! Imports: httparse, `http`, `super::wire::has_token`.

use std::mem::MaybeUninit;

use bytes::{Bytes, BytesMut};
use http::header::{HeaderName, HeaderValue};
use http::{HeaderMap, Method, StatusCode, Version};

use super::wire::has_token;
use crate::support::InlineVec;

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

/// The fields of a response head: grouped like a `HeaderMap` iterates them (names in the order
/// they first appear, each followed by all of its values in order).
pub struct Fields {
    head: Bytes,
    /// (name, value start, value end in `head`)
    list: Vec<(HeaderName, u32, u32)>,
}

impl Fields {
    /// (name, value) pairs in `HeaderMap` order.
    pub fn iter(&self) -> impl Iterator<Item = (&HeaderName, &[u8])> + Clone {
        self.list
            .iter()
            .map(|(n, a, b)| (n, &self.head[*a as usize..*b as usize]))
    }

    /// The (name, value range) list and the bytes the ranges index.
    pub fn raw(&self) -> (&[(HeaderName, u32, u32)], &[u8]) {
        (&self.list, &self.head)
    }

    pub fn contains(&self, name: &HeaderName) -> bool {
        self.list.iter().any(|(n, _, _)| n == name)
    }

    /// The fields as a `HeaderMap` (values share the head's bytes).
    pub fn to_map(&self) -> HeaderMap {
        let mut map = HeaderMap::with_capacity(self.list.len());
        for (n, a, b) in &self.list {
            let v = self.head.slice(*a as usize..*b as usize);
            if let Ok(v) = HeaderValue::from_maybe_shared(v) {
                map.append(n.clone(), v);
            }
        }
        map
    }

    /// Adds a field after the values of its name, if it already has some (the `HeaderMap` order).
    fn push(&mut self, name: HeaderName, v0: u32, v1: u32) {
        let at = match self.list.iter().rposition(|(n, _, _)| *n == name) {
            Some(i) => i + 1,
            None => self.list.len(),
        };
        self.list.insert(at, (name, v0, v1));
    }
}

/// An upstream response head.
pub struct ResponseHead {
    pub status: StatusCode,
    pub version: Version,
    pub headers: Fields,
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
    let mut at: InlineVec<(u32, u32, u32, u32), 24> = InlineVec::new();
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
        for h in res.headers.iter() {
            let n = off(h.name.as_ptr());
            let v = off(h.value.as_ptr());
            at.push((n, n + h.name.len() as u32, v, v + h.value.len() as u32));
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
    let mut headers = Fields {
        list: Vec::with_capacity(count),
        head: Bytes::new(),
    };
    let (mut length, mut chunked, mut te, mut close, mut keep_alive) =
        (None::<u64>, false, false, false, false);
    for &(n0, n1, v0, v1) in at.iter() {
        let name = HeaderName::from_bytes(&head[n0 as usize..n1 as usize])
            .map_err(|_| "invalid header name")?;
        // httparse accepts in a value exactly what `HeaderValue` does (tab, space, visible ASCII,
        // obs-text), so the value needs no second check.
        let raw = &head[v0 as usize..v1 as usize];
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
        headers.push(name, v0, v1);
    }
    headers.head = head;
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
            head.map(|h| h.to_map()["content-length"].clone()),
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

    #[test]
    fn fields_keep_the_header_map_order() {
        let raw = "HTTP/1.1 200 OK\r\nServer: x\r\nX-A: 1\r\nDate: d\r\nx-a: 2\r\nSet-Cookie: a\r\nX-A: 3\r\nset-cookie: b\r\n\r\n";
        let head = parse_response(&mut BytesMut::from(raw), &Method::GET)
            .ok()
            .flatten()
            .map(|h| h.headers);
        let Some(fields) = head else {
            panic!("no head");
        };
        let ours: Vec<(String, Vec<u8>)> = fields
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_vec()))
            .collect();
        let map = fields.to_map();
        let theirs: Vec<(String, Vec<u8>)> = map
            .iter()
            .map(|(n, v)| (n.to_string(), v.as_bytes().to_vec()))
            .collect();
        assert_eq!(ours, theirs);
        assert_eq!(ours.len(), 7);
        assert!(fields.contains(&http::header::DATE));
        for bad in ["x: a\x7fb", "x: a\x01b", "x y: 1"] {
            let raw = format!("HTTP/1.1 200 OK\r\n{bad}\r\n\r\n");
            assert!(parse_response(&mut BytesMut::from(&raw[..]), &Method::GET).is_err());
        }
    }
}
