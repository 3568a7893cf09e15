//! The HTTP/1 request-head validator: the proxy's own parser at the edge, run on every head of a
//! keep-alive connection *before* hyper sees it (hyper silently drops `Content-Length` when
//! `Transfer-Encoding` is present, see `docs/limits.md`). A head that could be framed two ways
//! (request smuggling) or breaks a limit is rejected with a status, and nothing of it is forwarded.
//!
//! Pure: bytes in, [`Framing`] or [`Reject`] out. This is the fuzz target
//! `http1_head`.

use std::fmt::Write as _;
use std::mem::MaybeUninit;

use http::Uri;

/// How the body that follows a valid head is delimited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// No body: the next byte starts the next head.
    None,
    /// `Content-Length: n`.
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// No body, and the client asks to switch to WebSocket (`Connection: upgrade` + `Upgrade:
    /// websocket`, HTTP/1.1; no other protocol is ever switched to): what follows the head
    /// belongs to the new protocol if the server answers `101`, and is never read as HTTP/1
    /// either way.
    Upgrade,
}

/// Why a head is refused: the status to answer and a short reason for the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reject {
    pub status: u16,
    pub reason: &'static str,
}

impl Reject {
    const fn bad(reason: &'static str) -> Self {
        Reject {
            status: 400,
            reason,
        }
    }

    /// Whether the refusal is for one of the proxy's size limits (`413`, `414`, `431`) rather
    /// than for a request that is not valid HTTP. See [`is_limit_status`].
    pub fn is_limit(&self) -> bool {
        is_limit_status(self.status)
    }
}

/// A status the proxy refuses a request with for its size (body, target, head): a bound of
/// the proxy's, which browsers reach with long search and tracking URLs, so the answer is the
/// status and its reason, for the client to shorten the request. Every other refusal is of a
/// request that is not valid HTTP (request line, version, framing, `Host`), which no browser
/// sends: it is answered with the policy's blocking page, as a blocked request is.
pub fn is_limit_status(status: u16) -> bool {
    matches!(status, 413 | 414 | 431)
}

/// The limits the validator enforces (a slice of [`super::Limits`]).
#[derive(Clone, Copy, Debug)]
pub struct HeadLimits {
    /// Largest head, request line included (bytes) → 431.
    pub max_head_bytes: usize,
    /// Most header fields → 431.
    pub max_headers: usize,
    /// Longest request target → 414.
    pub max_url_bytes: usize,
}

/// Hard cap on header fields, whatever the configuration says (sizes the parser's stack array).
pub const HEADER_CAP: usize = 256;

/// A header name the proxy uses internally to carry a rejection to its service; clients may not send it.
pub const REJECT_HEADER: &str = "x-portcullis-reject";

/// Finds the end of a head in `buf`: the index just past the empty line, or a rejection for a
/// bare CR or LF, or a line folded with leading whitespace (obs-fold), seen on the way.
/// `Ok(None)` means more bytes are needed.
pub fn find_head_end(buf: &[u8]) -> Result<Option<usize>, Reject> {
    let mut i = 0;
    while let Some(off) = memchr::memchr2(b'\r', b'\n', &buf[i..]) {
        i += off;
        if buf[i] == b'\n' {
            return Err(Reject::bad("bare LF in head"));
        }
        match buf.get(i + 1) {
            None => return Ok(None),
            Some(b'\n') => {}
            Some(_) => return Err(Reject::bad("bare CR in head")),
        }
        match buf.get(i + 2) {
            None => return Ok(None),
            Some(b'\r') => {
                return match buf.get(i + 3) {
                    None => Ok(None),
                    Some(b'\n') => Ok(Some(i + 4)),
                    Some(_) => Err(Reject::bad("bare CR in head")),
                };
            }
            // A line that starts with whitespace continues the previous one.
            Some(b' ' | b'\t') if i > 0 => return Err(Reject::bad("obsolete line folding")),
            Some(_) => i += 2,
        }
    }
    Ok(None)
}

/// Validates one complete head (ending with CRLF CRLF) and says how its body is framed.
pub fn validate_head(head: &[u8], lim: &HeadLimits) -> Result<Framing, Reject> {
    if head.len() > lim.max_head_bytes {
        return Err(Reject {
            status: 431,
            reason: "request head too large",
        });
    }
    match find_head_end(head)? {
        Some(end) if end == head.len() => validate_scanned(head, lim),
        _ => Err(Reject::bad("incomplete head")),
    }
}

/// [`validate_head`] for a head already delimited by [`find_head_end`] (which rejected bare CR/LF
/// and obs-fold on the way).
pub fn validate_scanned(head: &[u8], lim: &HeadLimits) -> Result<Framing, Reject> {
    parse_scanned(head, lim, |t| Uri::try_from(t).ok(), |_, _| ()).map(|(framing, ())| framing)
}

/// [`validate_scanned`] that also hands the parsed head and its target to `build` (called only for
/// a valid head), so a caller that needs the fields parses the head once. `target` parses the
/// request target (the fast path shares the head's bytes, the guard copies them).
pub fn parse_scanned<T>(
    head: &[u8],
    lim: &HeadLimits,
    target: impl FnOnce(&str) -> Option<Uri>,
    build: impl FnOnce(&httparse::Request<'_, '_>, Uri) -> T,
) -> Result<(Framing, T), Reject> {
    if head.len() > lim.max_head_bytes {
        return Err(Reject {
            status: 431,
            reason: "request head too large",
        });
    }
    let mut storage: [MaybeUninit<httparse::Header<'_>>; HEADER_CAP] =
        [const { MaybeUninit::uninit() }; HEADER_CAP];
    let cap = lim.max_headers.clamp(1, HEADER_CAP);
    let mut req = httparse::Request::new(&mut []);
    match req.parse_with_uninit_headers(head, &mut storage[..cap]) {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) => return Err(Reject::bad("incomplete head")),
        Err(httparse::Error::TooManyHeaders) => {
            return Err(Reject {
                status: 431,
                reason: "too many header fields",
            });
        }
        Err(httparse::Error::Version) => {
            return Err(Reject {
                status: 505,
                reason: "unsupported HTTP version",
            });
        }
        Err(_) => return Err(Reject::bad("malformed request head")),
    }
    let path = req.path.unwrap_or("");
    if path.len() > lim.max_url_bytes {
        return Err(Reject {
            status: 414,
            reason: "request target too long",
        });
    }
    let http10 = req.version == Some(0);
    let mut length: Option<u64> = None;
    let mut chunked = false;
    let mut te_seen = false;
    let mut te_unsupported = false;
    let mut host: Option<&[u8]> = None;
    // `Some(true)`: one `Upgrade` field naming WebSocket alone.
    let (mut upgrade, mut connection_upgrade) = (None::<bool>, false);
    for h in req.headers.iter() {
        if h.name.eq_ignore_ascii_case("host") {
            if host.is_some() {
                return Err(Reject::bad("more than one Host field"));
            }
            host = Some(h.value);
        } else if h.name.eq_ignore_ascii_case("upgrade") {
            // Only WebSocket is forwarded as an upgrade (the policy inspects its handshake);
            // any other protocol, or a list, leaves an ordinary request (`Upgrade` is dropped).
            let websocket = h.value.trim_ascii().eq_ignore_ascii_case(b"websocket");
            upgrade = Some(upgrade.is_none() && websocket);
        } else if h.name.eq_ignore_ascii_case("connection") {
            connection_upgrade |= h
                .value
                .split(|b| *b == b',')
                .any(|t| t.trim_ascii().eq_ignore_ascii_case(b"upgrade"));
        }
        if h.name.eq_ignore_ascii_case("content-length") {
            for part in h.value.split(|b| *b == b',') {
                let n = parse_length(part.trim_ascii())?;
                if length.is_some_and(|l| l != n) {
                    return Err(Reject::bad("differing Content-Length values"));
                }
                length = Some(n);
            }
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            if chunked {
                return Err(Reject::bad("Transfer-Encoding after chunked"));
            }
            te_seen = true;
            let value = std::str::from_utf8(h.value)
                .map_err(|_| Reject::bad("non-ASCII Transfer-Encoding"))?;
            let codings: Vec<&str> = value.split(',').map(str::trim).collect();
            for (i, c) in codings.iter().enumerate() {
                if c.eq_ignore_ascii_case("chunked") {
                    if i + 1 != codings.len() {
                        return Err(Reject::bad("chunked is not the final transfer coding"));
                    }
                    chunked = true;
                } else if c.is_empty() {
                    return Err(Reject::bad("empty transfer coding"));
                } else {
                    te_unsupported = true;
                }
            }
        } else if h.name.eq_ignore_ascii_case(REJECT_HEADER) {
            return Err(Reject::bad("reserved header field"));
        }
    }
    let framing = if te_seen {
        if length.is_some() {
            return Err(Reject::bad("both Content-Length and Transfer-Encoding"));
        }
        if http10 {
            return Err(Reject::bad("Transfer-Encoding in an HTTP/1.0 request"));
        }
        if !chunked {
            return Err(Reject::bad("Transfer-Encoding without final chunked"));
        }
        if te_unsupported {
            // A coding the proxy cannot undo: forwarding the body as if it were plain chunked
            // would drop the coding (and the inspection would see compressed bytes).
            return Err(Reject {
                status: 501,
                reason: "unsupported transfer coding",
            });
        }
        Framing::Chunked
    } else {
        match length {
            Some(0) | None if upgrade == Some(true) && connection_upgrade && !http10 => {
                Framing::Upgrade
            }
            Some(0) | None => Framing::None,
            Some(n) => Framing::Length(n),
        }
    };
    let uri = target(path)
        .or_else(|| encoded_target(path))
        .ok_or(Reject::bad("invalid request target"))?;
    check_target(req.method.unwrap_or(""), path, &uri)?;
    match host {
        None if !http10 => return Err(Reject::bad("no Host field")),
        Some(h) if !valid_authority(h, true) => return Err(Reject::bad("invalid Host field")),
        _ => {}
    }
    Ok((framing, build(&req, uri)))
}

/// Bytes RFC 3986 leaves out of a URI that clients nevertheless send unencoded (`"`, `<`, `>`,
/// `\`, `^`, `` ` ``, `{`, `|`, `}`; non-ASCII, which [`Uri`] takes as it is, is encoded with
/// them): a target holding them is read as a browser would have sent it, those bytes
/// percent-encoded, so that the policy judges what they spell (a raw `<script>` in a query is an
/// attack to block, a raw JSON filter a value to check) instead of the parser refusing the request
/// unjudged. The upstream receives the encoded form. `None` when the target has none of them (it
/// is invalid for another reason) or is still invalid once encoded.
fn encoded_target(raw: &str) -> Option<Uri> {
    let unsafe_byte = |b: u8| b >= 0x80 || b"\"<>\\^`{|}".contains(&b);
    if !raw.bytes().any(unsafe_byte) {
        return None;
    }
    let mut encoded = String::with_capacity(raw.len() + 32);
    for b in raw.bytes() {
        if unsafe_byte(b) {
            let _ = write!(encoded, "%{b:02X}");
        } else {
            encoded.push(char::from(b));
        }
    }
    Uri::try_from(encoded).ok()
}

/// The request target's form must fit the method (RFC 9112 3.2): authority-form only for CONNECT,
/// asterisk-form only for OPTIONS, origin- or absolute-form otherwise; an absolute-form target
/// names an `http(s)` authority without user information. No form holds a fragment: clients
/// strip it, and [`Uri`] drops what follows a `#` without a word, so a target holding one would
/// reach the upstream as something other than what the policy judged.
fn check_target(method: &str, raw: &str, uri: &Uri) -> Result<(), Reject> {
    if raw.contains('#') {
        return Err(Reject::bad("fragment in the request target"));
    }
    let connect = method == "CONNECT";
    if raw == "*" {
        return match method {
            "OPTIONS" => Ok(()),
            _ => Err(Reject::bad(
                "asterisk-form target on a request other than OPTIONS",
            )),
        };
    }
    if raw.starts_with('/') {
        return match connect {
            false => Ok(()),
            true => Err(Reject::bad("CONNECT without an authority-form target")),
        };
    }
    let Some(authority) = uri.authority() else {
        return Err(Reject::bad("invalid request target"));
    };
    if !valid_authority(authority.as_str().as_bytes(), false) {
        return Err(Reject::bad("invalid authority in the request target"));
    }
    match (uri.scheme_str(), connect) {
        (None, true) => Ok(()),
        (None, false) => Err(Reject::bad(
            "authority-form target on a request other than CONNECT",
        )),
        (Some(_), true) => Err(Reject::bad("CONNECT without an authority-form target")),
        (Some(s), false) if s.eq_ignore_ascii_case("http") || s.eq_ignore_ascii_case("https") => {
            Ok(())
        }
        (Some(_), false) => Err(Reject::bad(
            "absolute-form target with a scheme other than http(s)",
        )),
    }
}

/// True for `host [":" port]` as a `Host` field or a target's authority holds it (RFC 9110 7.2,
/// RFC 3986 3.2.2): a bracketed IP literal or a registered name (unreserved, sub-delims and
/// percent signs: no `@`, `/`, `?`, `#` or spaces), then an optional port of digits. An empty
/// value is valid only where `empty_ok` (a `Host` field when the target has no authority).
pub fn valid_authority(v: &[u8], empty_ok: bool) -> bool {
    if v.is_empty() {
        return empty_ok;
    }
    let (host, port) = if v[0] == b'[' {
        let Some(close) = memchr::memchr(b']', v) else {
            return false;
        };
        let literal = &v[1..close];
        if literal.is_empty()
            || !literal.iter().all(|b| {
                b.is_ascii_alphanumeric() || matches!(b, b':' | b'.' | b'%' | b'-' | b'_' | b'~')
            })
        {
            return false;
        }
        match &v[close + 1..] {
            [] => (literal, None),
            [b':', port @ ..] => (literal, Some(port)),
            _ => return false,
        }
    } else {
        match memchr::memrchr(b':', v) {
            Some(i) => (&v[..i], Some(&v[i + 1..])),
            None => (v, None),
        }
    };
    let reg_name =
        v[0] == b'[' || (!host.is_empty() && host.iter().all(|&b| REG_NAME[usize::from(b)]));
    reg_name && port.is_none_or(|p| p.iter().all(u8::is_ascii_digit))
}

/// Bytes of a registered name: unreserved, sub-delims and `%` (RFC 3986 3.2.2).
const REG_NAME: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric()
            || matches!(
                c,
                b'-' | b'.'
                    | b'_'
                    | b'~'
                    | b'%'
                    | b'!'
                    | b'$'
                    | b'&'
                    | b'\''
                    | b'('
                    | b')'
                    | b'*'
                    | b'+'
                    | b','
                    | b';'
                    | b'='
            );
        b += 1;
    }
    t
};

fn parse_length(v: &[u8]) -> Result<u64, Reject> {
    if v.is_empty() || v.len() > 19 || !v.iter().all(u8::is_ascii_digit) {
        return Err(Reject::bad("invalid Content-Length"));
    }
    std::str::from_utf8(v)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or(Reject::bad("invalid Content-Length"))
}

/// The fuzz entry point: splits `bytes` at the first head end and validates that head.
#[cfg(any(test, fuzzing))]
pub fn fuzz_head(bytes: &[u8]) -> Option<Framing> {
    let lim = HeadLimits {
        max_head_bytes: 16 * 1024,
        max_headers: 100,
        max_url_bytes: 8 * 1024,
    };
    let end = find_head_end(bytes).ok()??;
    validate_head(&bytes[..end], &lim).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIM: HeadLimits = HeadLimits {
        max_head_bytes: 1024,
        max_headers: 8,
        max_url_bytes: 64,
    };

    fn check(head: &str) -> Result<Framing, Reject> {
        validate_head(head.as_bytes(), &LIM)
    }

    #[test]
    fn framing_of_valid_heads() {
        assert_eq!(
            check("GET / HTTP/1.1\r\nHost: a\r\n\r\n"),
            Ok(Framing::None)
        );
        assert_eq!(
            check("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n"),
            Ok(Framing::Length(5))
        );
        assert_eq!(
            check("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\ncontent-length: 5\r\n\r\n"),
            Ok(Framing::Length(5))
        );
        assert_eq!(
            check("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Chunked\r\n\r\n"),
            Ok(Framing::Chunked)
        );
        assert_eq!(
            check(
                "GET /ws HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, Upgrade\r\nUpgrade: WebSocket\r\n\r\n"
            ),
            Ok(Framing::Upgrade)
        );
        // Not an upgrade: no Connection token, HTTP/1.0, a protocol other than WebSocket (h2c
        // included), more than one, or a body to frame first.
        let not = [
            "GET /ws HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\n\r\n",
            "GET /ws HTTP/1.0\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: a\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: a\r\nConnection: upgrade\r\nUpgrade: foo\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: a\r\nConnection: upgrade\r\nUpgrade: websocket, foo\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: a\r\nConnection: upgrade\r\nUpgrade: websocket\r\nUpgrade: websocket\r\n\r\n",
        ];
        for h in not {
            assert_eq!(check(h), Ok(Framing::None), "{h:?}");
        }
        assert_eq!(
            check(
                "POST /ws HTTP/1.1\r\nHost: a\r\nConnection: upgrade\r\nUpgrade: websocket\r\nContent-Length: 2\r\n\r\n"
            ),
            Ok(Framing::Length(2))
        );
    }

    #[test]
    fn host_and_target_must_agree_with_the_method() {
        let ok = [
            "GET / HTTP/1.1\r\nHost: a.example:8080\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: [::1]:80\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: \r\n\r\n",
            "GET / HTTP/1.0\r\n\r\n",
            "GET http://a.example/x HTTP/1.1\r\nHost: b.example\r\n\r\n",
            "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n",
            "CONNECT a.example:443 HTTP/1.1\r\nHost: a.example:443\r\n\r\n",
        ];
        for h in ok {
            assert!(check(h).is_ok(), "{h:?}: {:?}", check(h));
        }
        let bad = [
            "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
            "GET / HTTP/1.1\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: a/b@c\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: user@a\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: a b\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: a:8x\r\n\r\n",
            "GET http://user@a.example/ HTTP/1.1\r\nHost: a\r\n\r\n",
            "GET ftp://a.example/ HTTP/1.1\r\nHost: a\r\n\r\n",
            "GET a.example:80 HTTP/1.1\r\nHost: a\r\n\r\n",
            "GET * HTTP/1.1\r\nHost: a\r\n\r\n",
            "CONNECT / HTTP/1.1\r\nHost: a\r\n\r\n",
            "CONNECT http://a.example/ HTTP/1.1\r\nHost: a\r\n\r\n",
            "GET /index.html#/../admin HTTP/1.1\r\nHost: a\r\n\r\n",
            "GET /a?b=c#d HTTP/1.1\r\nHost: a\r\n\r\n",
        ];
        for h in bad {
            assert_eq!(check(h).map_err(|r| r.status), Err(400), "{h:?}");
        }
    }

    #[test]
    fn targets_with_bytes_a_uri_leaves_out_are_read_percent_encoded() {
        let target = |head: &str| {
            parse_scanned(
                head.as_bytes(),
                &LIM,
                |t| Uri::try_from(t).ok(),
                |_, uri| uri,
            )
            .map(|(_, uri)| uri.to_string())
            .map_err(|r| r.status)
        };
        let cases = [
            ("/a?q=<script>", Ok("/a?q=%3Cscript%3E")),
            ("/s?f={\"id\":[1]}", Ok("/s?f=%7B%22id%22:[1]%7D")),
            ("/c:\\win|x^`", Ok("/c:%5Cwin%7Cx%5E%60")),
            ("/caf\u{e9}", Ok("/caf\u{e9}")),
            ("/caf\u{e9}<", Ok("/caf%C3%A9%3C")),
            ("/plain?a=1", Ok("/plain?a=1")),
            ("http://user@a.example/<", Err(400)),
        ];
        for (raw, want) in cases {
            let head = format!("GET {raw} HTTP/1.1\r\nHost: a\r\n\r\n");
            assert_eq!(target(&head), want.map(String::from), "{raw:?}");
        }
    }

    #[test]
    fn transfer_codings_other_than_chunked_are_not_implemented() {
        for h in [
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n",
        ] {
            assert_eq!(check(h).map_err(|r| r.status), Err(501), "{h:?}");
        }
    }

    #[test]
    fn smuggling_forms_are_rejected() {
        let cases = [
            "POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: 5, 6\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: +5\r\n\r\n",
            "GET / HTTP/1.1\r\nX-A: a\r\n b\r\n\r\n",
            "GET / HTTP/1.1\r\nHost : a\r\n\r\n",
            "GET / HTTP/1.1\r\nBad[Name]: a\r\n\r\n",
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
            "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
            "GET / HTTP/1.1\r\nx-portcullis-reject: 1\r\n\r\n",
        ];
        for c in cases {
            assert_eq!(check(c).map_err(|r| r.status), Err(400), "{c:?}");
        }
        assert!(find_head_end(b"GET / HTTP/1.1\nHost: a\r\n\r\n").is_err());
        assert!(find_head_end(b"GET / HTTP/1.1\r\nX: a\rb\r\n\r\n").is_err());
    }

    #[test]
    fn limits_give_their_status() {
        let long = format!("GET /{} HTTP/1.1\r\nHost: a\r\n\r\n", "a".repeat(80));
        assert_eq!(check(&long).map_err(|r| r.status), Err(414));
        let many = format!("GET / HTTP/1.1\r\n{}\r\n", "X: a\r\n".repeat(9));
        assert_eq!(check(&many).map_err(|r| r.status), Err(431));
        let big = format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(1100));
        assert_eq!(check(&big).map_err(|r| r.status), Err(431));
    }

    #[test]
    fn head_end_needs_the_empty_line() {
        assert_eq!(find_head_end(b"GET / HTTP/1.1\r\n"), Ok(None));
        assert_eq!(find_head_end(b"GET / HTTP/1.1\r\n\r"), Ok(None));
        assert_eq!(find_head_end(b"GET / HTTP/1.1\r\n\r\nXYZ"), Ok(Some(18)));
    }

    #[test]
    fn fuzz_seeds_do_not_panic() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz/seeds/http1_head");
        let mut n = 0;
        for entry in std::fs::read_dir(dir).expect("seed dir") {
            let bytes = std::fs::read(entry.expect("entry").path()).expect("seed");
            let _ = fuzz_head(&bytes);
            n += 1;
        }
        assert!(n >= 3, "expected seed files in {dir}");
    }
}
