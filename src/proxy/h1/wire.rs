//! The HTTP/1.1 wire format of the fast path: a validated request head into `http::request::Parts`
//! (one parse: [`super::super::head::parse_scanned`] validates and builds), the upstream request
//! head (hop-by-hop fields left out, `X-Forwarded-For` appended), and the upstream response head
//! parsed with httparse. Header values share the bytes of the head they came in (no copy).
//!
//! Response heads going to the client are encoded in [`super::encode`].
//!
//! Imports: httparse, `http`, `super::super::head`.

use std::mem::MaybeUninit;

use bytes::{Bytes, BytesMut};
use http::header::{CONNECTION, HOST, HeaderName, HeaderValue, TE};
use http::{HeaderMap, Method, StatusCode, Uri, Version};

use crate::proxy::head::{self, Framing, HeadLimits};

/// A client request head the fast path can serve.
pub struct RequestHead {
    pub parts: http::request::Parts,
    /// The client asked to close the connection after this exchange (`Connection: close`).
    pub close: bool,
}

/// Why a head is not served by the fast path: the connection goes to the general path (which
/// answers rejected heads, bodies, upgrades and HTTP/1.0 the way it always has).
#[derive(Debug, PartialEq, Eq)]
pub struct Handover;

/// Validates and parses the complete head `bytes` (as found by `find_head_end`). Only bodiless
/// HTTP/1.1 requests come back; anything else is a [`Handover`].
pub fn parse_request(bytes: &Bytes, lim: &HeadLimits) -> Result<RequestHead, Handover> {
    let built = head::parse_scanned(bytes, lim, |req| build_request(bytes, req));
    match built {
        Ok((Framing::None, Some(head))) => Ok(head),
        _ => Err(Handover),
    }
}

fn build_request(bytes: &Bytes, req: &httparse::Request<'_, '_>) -> Option<RequestHead> {
    if req.version != Some(1) {
        return None;
    }
    let method = Method::from_bytes(req.method?.as_bytes()).ok()?;
    if method == Method::CONNECT {
        return None;
    }
    let uri = Uri::from_maybe_shared(bytes.slice_ref(req.path?.as_bytes())).ok()?;
    let mut headers = HeaderMap::with_capacity(req.headers.len());
    let mut close = false;
    for h in req.headers.iter() {
        let name = HeaderName::from_bytes(h.name.as_bytes()).ok()?;
        let value = HeaderValue::from_maybe_shared(bytes.slice_ref(h.value)).ok()?;
        if name == CONNECTION {
            close |= has_token(h.value, b"close");
        }
        headers.append(name, value);
    }
    let (mut parts, ()) = http::Request::new(()).into_parts();
    parts.method = method;
    parts.uri = uri;
    parts.version = Version::HTTP_11;
    parts.headers = headers;
    Some(RequestHead { parts, close })
}

/// True when the comma-separated list `v` holds `token` (ASCII case-insensitive).
pub fn has_token(v: &[u8], token: &[u8]) -> bool {
    v.split(|b| *b == b',')
        .any(|t| t.trim_ascii().eq_ignore_ascii_case(token))
}

/// The client accepts trailer fields (`TE: trailers`).
pub fn te_trailers(h: &HeaderMap) -> bool {
    h.get_all(TE)
        .iter()
        .any(|v| has_token(v.as_bytes(), b"trailers"))
}

/// Fields never forwarded (RFC 9110 7.6.1), besides those `Connection` names.
fn hop_by_hop(name: &HeaderName) -> bool {
    matches!(
        name.as_str(),
        "connection"
            | "keep-alive"
            | "proxy-connection"
            | "proxy-authenticate"
            | "proxy-authorization"
            | "transfer-encoding"
            | "upgrade"
            | "te"
    )
}

/// The names the `Connection` fields of `h` list (never the ones that identify or frame a request);
/// none for the usual `keep-alive` (no allocation then).
pub fn connection_named(h: &HeaderMap) -> Vec<HeaderName> {
    let plain = h.get_all(CONNECTION).iter().all(|v| {
        v.as_bytes()
            .split(|b| *b == b',')
            .all(|t| t.trim_ascii().eq_ignore_ascii_case(b"keep-alive"))
    });
    if plain {
        // `keep-alive` is hop-by-hop anyway.
        return Vec::new();
    }
    h.get_all(CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|s| s.split(','))
        .filter_map(|n| HeaderName::from_bytes(n.trim().as_bytes()).ok())
        .filter(|n| !matches!(n.as_str(), "host" | "content-length" | "x-forwarded-for"))
        .collect()
}

/// True for a field that does not go on to the next hop.
pub fn skipped(name: &HeaderName, named: &[HeaderName]) -> bool {
    hop_by_hop(name) || named.contains(name)
}

fn put_header(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.extend_from_slice(name);
    out.extend_from_slice(b": ");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

/// Writes the upstream request head for `parts` into `out`: origin-form target, HTTP/1.1, the
/// client's fields in their order without hop-by-hop ones, `Host` from an absolute-form target when
/// the client sent none, `te: trailers` when the client asked for trailers, and `X-Forwarded-For`
/// with `peer` appended when `xff` is set.
pub fn encode_request(out: &mut Vec<u8>, parts: &http::request::Parts, xff: Option<&str>) {
    const XFF: HeaderName = HeaderName::from_static("x-forwarded-for");
    let h = &parts.headers;
    out.extend_from_slice(parts.method.as_str().as_bytes());
    out.push(b' ');
    out.extend_from_slice(
        parts
            .uri
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .as_bytes(),
    );
    out.extend_from_slice(b" HTTP/1.1\r\n");
    let named = if h.contains_key(CONNECTION) {
        connection_named(h)
    } else {
        Vec::new()
    };
    let mut xff_done = xff.is_none();
    for (name, value) in h {
        if skipped(name, &named) {
            continue;
        }
        if *name == XFF
            && let Some(peer) = xff
        {
            if !xff_done {
                xff_done = true;
                out.extend_from_slice(b"x-forwarded-for: ");
                for prior in h.get_all(&XFF).iter().filter_map(|v| v.to_str().ok()) {
                    out.extend_from_slice(prior.as_bytes());
                    out.extend_from_slice(b", ");
                }
                out.extend_from_slice(peer.as_bytes());
                out.extend_from_slice(b"\r\n");
            }
            continue;
        }
        put_header(out, name.as_str().as_bytes(), value.as_bytes());
    }
    if !h.contains_key(HOST)
        && let Some(a) = parts.uri.authority()
    {
        put_header(out, b"host", a.as_str().as_bytes());
    }
    if te_trailers(h) {
        out.extend_from_slice(b"te: trailers\r\n");
    }
    if let (false, Some(peer)) = (xff_done, xff) {
        put_header(out, b"x-forwarded-for", peer.as_bytes());
    }
    out.extend_from_slice(b"\r\n");
}

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

    const LIM: HeadLimits = HeadLimits {
        max_head_bytes: 4096,
        max_headers: 32,
        max_url_bytes: 1024,
    };

    fn upstream_request(head: &str, xff: Option<&str>) -> String {
        let req = parse_request(&Bytes::from(head.to_string()), &LIM).expect("fast path");
        let mut out = Vec::new();
        encode_request(&mut out, &req.parts, xff);
        String::from_utf8(out).expect("utf8")
    }

    #[test]
    fn hop_by_hop_fields_go_and_xff_is_appended_in_place() {
        let out = upstream_request(
            "GET /a?b=1 HTTP/1.1\r\nHost: shop\r\nX-Forwarded-For: 203.0.113.9\r\n\
             Connection: keep-alive, X-Drop\r\nX-Drop: 1\r\nKeep-Alive: 5\r\nTE: trailers, deflate\r\n\
             Proxy-Connection: x\r\nAccept: */*\r\n\r\n",
            Some("127.0.0.1"),
        );
        assert_eq!(
            out,
            "GET /a?b=1 HTTP/1.1\r\nhost: shop\r\nx-forwarded-for: 203.0.113.9, 127.0.0.1\r\n\
             accept: */*\r\nte: trailers\r\n\r\n"
        );
        let out = upstream_request("GET http://h:1/x HTTP/1.1\r\n\r\n", Some("::1"));
        assert_eq!(
            out,
            "GET /x HTTP/1.1\r\nhost: h:1\r\nx-forwarded-for: ::1\r\n\r\n"
        );
        let out = upstream_request("GET / HTTP/1.1\r\nX-Forwarded-For: a\r\n\r\n", None);
        assert_eq!(out, "GET / HTTP/1.1\r\nx-forwarded-for: a\r\n\r\n");
    }

    #[test]
    fn only_bodiless_http11_heads_take_the_fast_path() {
        let parse = |h: &str| parse_request(&Bytes::from(h.to_string()), &LIM).map(|r| r.close);
        assert_eq!(
            parse("GET / HTTP/1.1\r\nConnection: Close\r\n\r\n"),
            Ok(true)
        );
        assert_eq!(
            parse("DELETE / HTTP/1.1\r\ncontent-length: 0\r\n\r\n"),
            Ok(false)
        );
        for h in [
            "GET / HTTP/1.0\r\n\r\n",
            "POST / HTTP/1.1\r\ncontent-length: 1\r\n\r\n",
            "POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n",
            "GET / HTTP/1.1\r\nconnection: upgrade\r\nupgrade: websocket\r\n\r\n",
            "GET / HTTP/1.1\r\ncontent-length: 1\r\ntransfer-encoding: chunked\r\n\r\n",
            "CONNECT h:1 HTTP/1.1\r\n\r\n",
        ] {
            assert_eq!(parse(h), Err(Handover), "{h:?}");
        }
    }

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
