//! Upstream response heads of the fast path, parsed with httparse: status, version, the fields as
//! [`Fields`] (names lower-cased in place and values, as ranges of the head split off the
//! connection's read buffer, no copy; in the order a `HeaderMap` would list them, with no map or
//! `HeaderName` built: the response head is only re-encoded for the client), how the body is delimited and whether the connection can be reused.
//! Malformed heads (bad status, invalid names or values, differing `Content-Length`s, too large) are
//! errors the exchange answers with 502.

use std::mem::MaybeUninit;

use bytes::{Bytes, BytesMut};
use http::header::{HeaderName, HeaderValue};
use http::{HeaderMap, Method, StatusCode, Version};

use super::wire::{Special, has_token};
use portcullis_support::InlineVec;

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

/// One field of a response head: its name (lower-cased in place) and value as ranges of the head.
#[derive(Clone, Copy, Debug)]
struct Field {
    name: (u32, u32),
    value: (u32, u32),
    special: Special,
}

/// The fields of a response head: grouped like a `HeaderMap` iterates them (names in the order
/// they first appear, each followed by all of its values in order). No `HeaderName` is built: a
/// relayed head is only re-encoded, and the few names the proxy acts on are told apart once
/// ([`Special`]).
pub struct Fields {
    head: Bytes,
    list: Vec<Field>,
}

fn range(head: &[u8], (a, b): (u32, u32)) -> &[u8] {
    &head[a as usize..b as usize]
}

impl Fields {
    /// (lower-case name, kind, value) triples in `HeaderMap` order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], Special, &[u8])> + Clone {
        let head = &self.head[..];
        self.list
            .iter()
            .map(move |f| (range(head, f.name), f.special, range(head, f.value)))
    }

    /// The fields as a `HeaderMap` (values share the head's bytes).
    pub fn to_map(&self) -> HeaderMap {
        let mut map = HeaderMap::with_capacity(self.list.len());
        for f in &self.list {
            let name = HeaderName::from_bytes(range(&self.head, f.name));
            let value = HeaderValue::from_maybe_shared(
                self.head.slice(f.value.0 as usize..f.value.1 as usize),
            );
            if let (Ok(n), Ok(v)) = (name, value) {
                map.append(n, v);
            }
        }
        map
    }

    /// The fields as the map `to_map` then [`crate::response::strip_hop_by_hop`] (for a response)
    /// leave, in the same order, built without the removals: each removal from a `HeaderMap`
    /// hashes the name, and a removed entry's place is taken by the last one (`swap_remove`),
    /// which the order of the fields relayed to an HTTP/2 client shows. The same removals are
    /// played here on the list of names, then the map is built once.
    pub fn to_relay_map(&self) -> HeaderMap {
        // Each name's fields, as a range of `list` (a name's fields are next to each other).
        let mut names: Vec<(usize, usize)> = Vec::with_capacity(self.list.len());
        for (i, f) in self.list.iter().enumerate() {
            match names.last_mut() {
                Some(last) if self.name_of(&self.list[last.0]) == self.name_of(f) => last.1 = i + 1,
                _ => names.push((i, i + 1)),
            }
        }
        let head = &self.head[..];
        // Stored names are lower-case: comparing without case is comparing with the lower-case
        // name `HeaderName` would make of `name`.
        let remove = |names: &mut Vec<(usize, usize)>, name: &[u8]| {
            let hit = names
                .iter()
                .position(|&(a, _)| range(head, self.list[a].name).eq_ignore_ascii_case(name));
            if let Some(i) = hit {
                names.swap_remove(i);
            }
        };
        if self.list.iter().any(|f| f.special == Special::Connection) {
            // The names every `Connection` value lists (the values are not among what is
            // removed here, so reading them while removing is reading them first): a value that
            // is not visible ASCII is skipped (what `HeaderValue::to_str` refuses), and a token
            // that is no field name matches none of the stored names.
            for f in self
                .list
                .iter()
                .filter(|f| f.special == Special::Connection)
            {
                let v = range(head, f.value);
                if !v.iter().all(|&b| b == b'\t' || (32..127).contains(&b)) {
                    continue;
                }
                for n in v.split(|b| *b == b',').map(<[u8]>::trim_ascii) {
                    let kept = [&b"host"[..], b"content-length", b"x-forwarded-for"];
                    if !kept.iter().any(|k| k.eq_ignore_ascii_case(n)) {
                        remove(&mut names, n);
                    }
                }
            }
            remove(&mut names, b"connection");
        }
        // The names below are all `HopByHop` or `TransferEncoding`: most heads have none left.
        let hop = |&(a, _): &(usize, usize)| {
            matches!(
                self.list[a].special,
                Special::HopByHop | Special::TransferEncoding
            )
        };
        if !names.iter().any(hop) {
            return self.map_of(&names);
        }
        for n in [
            &b"keep-alive"[..],
            b"proxy-connection",
            b"http2-settings",
            b"proxy-authenticate",
            b"proxy-authorization",
            b"transfer-encoding",
            b"upgrade",
            b"te",
        ] {
            remove(&mut names, n);
        }
        self.map_of(&names)
    }

    /// The map of the fields of `names` (ranges of `list`, one per name), in that order.
    fn map_of(&self, names: &[(usize, usize)]) -> HeaderMap {
        let mut map = HeaderMap::with_capacity(self.list.len());
        for &(a, b) in names {
            let Ok(name) = HeaderName::from_bytes(self.name_of(&self.list[a])) else {
                continue;
            };
            for f in &self.list[a..b] {
                let value = HeaderValue::from_maybe_shared(
                    self.head.slice(f.value.0 as usize..f.value.1 as usize),
                );
                if let Ok(v) = value {
                    map.append(name.clone(), v);
                }
            }
        }
        map
    }

    fn name_of(&self, f: &Field) -> &[u8] {
        range(&self.head, f.name)
    }

    /// Adds a field after the values of its name, if it already has some (the `HeaderMap` order).
    fn push(&mut self, head: &[u8], f: Field) {
        let name = range(head, f.name);
        let len = |g: &Field| g.name.1 - g.name.0;
        let same =
            |g: &Field| g.special == f.special && len(g) == len(&f) && range(head, g.name) == name;
        match self.list.iter().rposition(same) {
            Some(i) => self.list.insert(i + 1, f),
            None => self.list.push(f),
        }
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
/// The longest field name (`HeaderName`'s limit).
const MAX_NAME: u32 = (1 << 16) - 1;
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
    let mut head = buf.split_to(len);
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
        // httparse takes in a name exactly the bytes `HeaderName` takes (RFC 9110 tokens); only
        // the length limit is `HeaderName`'s own. In a value it takes what `HeaderValue` takes
        // (tab, space, visible ASCII, obs-text), so values need no second check.
        if n1 - n0 > MAX_NAME {
            return Err("invalid header name");
        }
        let name = &mut head[n0 as usize..n1 as usize];
        lowercase(name);
        let special = Special::of(name);
        let raw = &head[v0 as usize..v1 as usize];
        match special {
            Special::ContentLength => {
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
            Special::TransferEncoding => {
                te = true;
                chunked = raw
                    .rsplit(|b| *b == b',')
                    .next()
                    .is_some_and(|last| last.trim_ascii().eq_ignore_ascii_case(b"chunked"));
            }
            Special::Connection => {
                close |= has_token(raw, b"close");
                keep_alive |= has_token(raw, b"keep-alive");
            }
            _ => {}
        }
        let field = Field {
            name: (n0, n1),
            value: (v0, v1),
            special,
        };
        headers.push(&head, field);
    }
    headers.head = head.freeze();
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

/// `make_ascii_lowercase`, eight bytes at a time: a field name is mostly one or two words, so
/// a byte-by-byte loop costs as much as the rest of the head's handling.
fn lowercase(bytes: &mut [u8]) {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let word = |b: &mut [u8]| {
        let mut w = [0u8; 8];
        w[..b.len()].copy_from_slice(b);
        let w = u64::from_le_bytes(w);
        // Per byte: the high bit of `ge_a` is set from 'A' up, of `gt_z` from 'Z' + 1 up (on the
        // low seven bits, so no carry crosses bytes); bytes from 0x80 up are left alone.
        let low = w & (0x7f * ONES);
        let ge_a = low + (0x80 - u64::from(b'A')) * ONES;
        let gt_z = low + (0x7f - u64::from(b'Z')) * ONES;
        let upper = ge_a & !gt_z & !w & (0x80 * ONES);
        let n = b.len();
        b.copy_from_slice(&(w | (upper >> 2)).to_le_bytes()[..n]);
    };
    let n = bytes.len();
    if n <= 8 {
        return word(bytes);
    }
    for at in (0..n - 8).step_by(8) {
        word(&mut bytes[at..at + 8]);
    }
    // The last eight bytes (overlapping the previous word; lowering twice changes nothing).
    word(&mut bytes[n - 8..]);
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
            .map(|(n, _, v)| (String::from_utf8_lossy(n).into_owned(), v.to_vec()))
            .collect();
        // The order of a map the fields were appended to as they came.
        let mut map = HeaderMap::new();
        for line in raw.split("\r\n").skip(1).filter(|l| !l.is_empty()) {
            let (n, v) = line.split_once(": ").expect("field");
            let n = HeaderName::from_bytes(n.as_bytes()).expect("name");
            map.append(n, HeaderValue::from_str(v).expect("value"));
        }
        let theirs: Vec<(String, Vec<u8>)> = map
            .iter()
            .map(|(n, v)| (n.to_string(), v.as_bytes().to_vec()))
            .collect();
        assert_eq!(ours, theirs);
        assert_eq!(ours.len(), 7);
        assert_eq!(fields.to_map(), map);
        assert!(fields.iter().all(|(_, s, _)| s == Special::Other));
        for bad in ["x: a\x7fb", "x: a\x01b", "x y: 1"] {
            let raw = format!("HTTP/1.1 200 OK\r\n{bad}\r\n\r\n");
            assert!(parse_response(&mut BytesMut::from(&raw[..]), &Method::GET).is_err());
        }
    }

    /// The map relayed to an HTTP/2 client is the one the removals from a full map leave, in
    /// its order too (the order a client sees).
    #[test]
    fn relay_map_is_the_stripped_map() {
        let heads = [
            "Server: nginx\r\nDate: d\r\nContent-Type: a/b\r\nContent-Length: 2\r\nConnection: keep-alive\r\nETag: e\r\nAccept-Ranges: bytes\r\n",
            "Connection: keep-alive\r\nKeep-Alive: timeout=5\r\nX-A: 1\r\nX-B: 2\r\nx-a: 3\r\nX-C: 4\r\n",
            "X-A: 1\r\nConnection: X-C, host, Content-Length\r\nHost: h\r\nX-B: 2\r\nX-C: 3\r\ncontent-length: 0\r\nconnection: x-b\r\nX-D: 4\r\n",
            "Transfer-Encoding: chunked\r\nUpgrade: w\r\nTE: trailers\r\nX-A: 1\r\nProxy-Authenticate: p\r\nX-B: 2\r\nHTTP2-Settings: s\r\nX-C: 3\r\n",
            "Connection: \u{ff}, x-a\r\nX-A: 1\r\nConnection: connection, ,keep-alive\r\nKeep-Alive: 1\r\nX-B: 2\r\nX-Z: 3\r\nX-Y: 4\r\n",
            "X-A: 1\r\nx-a: 2\r\nProxy-Connection: c\r\nX-B: 3\r\nX-A: 4\r\nSet-Cookie: a\r\nset-cookie: b\r\nTE: x\r\n",
            "",
        ];
        for fields in heads {
            let mut raw = b"HTTP/1.1 200 OK\r\n".to_vec();
            raw.extend(fields.chars().map(|c| c as u8));
            raw.extend_from_slice(b"\r\n");
            let Ok(Some(head)) = parse_response(&mut BytesMut::from(&raw[..]), &Method::GET) else {
                panic!("{fields:?}");
            };
            let mut map = head.headers.to_map();
            crate::response::strip_hop_by_hop(&mut map, false);
            let ours = head.headers.to_relay_map();
            let list = |m: &HeaderMap| -> Vec<(String, Vec<u8>)> {
                m.iter()
                    .map(|(n, v)| (n.to_string(), v.as_bytes().to_vec()))
                    .collect()
            };
            assert_eq!(list(&ours), list(&map), "{fields:?}");
        }
    }

    #[test]
    fn lowercase_is_make_ascii_lowercase() {
        for n in 0..=24 {
            for b in 0..=255u8 {
                let mut ours: Vec<u8> = (0..n)
                    .map(|i| b.wrapping_add((i as u8).wrapping_mul(37)))
                    .collect();
                let mut theirs = ours.clone();
                lowercase(&mut ours);
                theirs.make_ascii_lowercase();
                assert_eq!(ours, theirs, "{n} {b}");
            }
        }
    }

    /// A name is taken exactly when `HeaderName` takes it, and comes back lower-cased.
    #[test]
    fn names_are_the_ones_header_name_takes() {
        let long = "n".repeat(usize::from(u16::MAX));
        // (`:`, CR and LF end a name rather than sit in one.)
        let mut names: Vec<Vec<u8>> = (0..=255u8)
            .filter(|b| !b":\r\n".contains(b))
            .map(|b| vec![b'x', b, b'Y'])
            .collect();
        names.extend([
            Vec::new(),
            long.as_bytes().to_vec(),
            format!("{long}n").into_bytes(),
        ]);
        for name in names {
            let mut raw = b"HTTP/1.1 200 OK\r\n".to_vec();
            raw.extend_from_slice(&name);
            raw.extend_from_slice(b": v\r\n\r\n");
            let ours = parse_response(&mut BytesMut::from(&raw[..]), &Method::GET);
            let theirs = HeaderName::from_bytes(&name);
            assert_eq!(
                ours.is_ok(),
                theirs.is_ok(),
                "{:?}",
                String::from_utf8_lossy(&name)
            );
            if let (Ok(Some(head)), Ok(n)) = (ours, theirs) {
                let got: Vec<&[u8]> = head.headers.iter().map(|(n, _, _)| n).collect();
                assert_eq!(got, [n.as_str().as_bytes()]);
            }
        }
    }
}
