//! The HTTP/1 request-head validator: the proxy's own parser at the edge, run on every head of a
//! keep-alive connection *before* hyper sees it (hyper silently drops `Content-Length` when
//! `Transfer-Encoding` is present, see `docs/limits.md`). A head that could be framed two ways
//! (request smuggling) or breaks a limit is rejected with a status, and nothing of it is forwarded.
//!
//! Pure: bytes in, [`Framing`] or [`Reject`] out. Imports: httparse, memchr. This is the fuzz target
//! `http1_head`.

use std::mem::MaybeUninit;

/// How the body that follows a valid head is delimited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// No body: the next byte starts the next head.
    None,
    /// `Content-Length: n`.
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// No body, and the client asks to switch protocols (`Connection: upgrade` + `Upgrade`, HTTP/1.1,
    /// e.g. WebSocket): what follows the head belongs to the new protocol if the server answers
    /// `101`, and is never read as HTTP/1 either way.
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
    parse_scanned(head, lim, |_| ()).map(|(framing, ())| framing)
}

/// [`validate_scanned`] that also hands the parsed head to `build` (called only for a valid head),
/// so a caller that needs the fields parses the head once.
pub fn parse_scanned<T>(
    head: &[u8],
    lim: &HeadLimits,
    build: impl FnOnce(&httparse::Request<'_, '_>) -> T,
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
    let (mut upgrade, mut connection_upgrade) = (false, false);
    for h in req.headers.iter() {
        if h.name.eq_ignore_ascii_case("upgrade") {
            upgrade = true;
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
        Framing::Chunked
    } else {
        match length {
            Some(0) | None if upgrade && connection_upgrade && !http10 => Framing::Upgrade,
            Some(0) | None => Framing::None,
            Some(n) => Framing::Length(n),
        }
    };
    Ok((framing, build(&req)))
}

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
            check("POST / HTTP/1.1\r\nContent-Length: 5\r\ncontent-length: 5\r\n\r\n"),
            Ok(Framing::Length(5))
        );
        assert_eq!(
            check("POST / HTTP/1.1\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n"),
            Ok(Framing::Chunked)
        );
        assert_eq!(
            check(
                "GET /ws HTTP/1.1\r\nConnection: keep-alive, Upgrade\r\nUpgrade: websocket\r\n\r\n"
            ),
            Ok(Framing::Upgrade)
        );
        // Not an upgrade: no Connection token, HTTP/1.0, or a body to frame first.
        let not = [
            "GET /ws HTTP/1.1\r\nUpgrade: websocket\r\n\r\n",
            "GET /ws HTTP/1.0\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n",
        ];
        for h in not {
            assert_eq!(check(h), Ok(Framing::None), "{h:?}");
        }
        assert_eq!(
            check(
                "POST /ws HTTP/1.1\r\nConnection: upgrade\r\nUpgrade: x\r\nContent-Length: 2\r\n\r\n"
            ),
            Ok(Framing::Length(2))
        );
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
        let long = format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(80));
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
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz/seeds/http1_head");
        let mut n = 0;
        for entry in std::fs::read_dir(dir).expect("seed dir") {
            let bytes = std::fs::read(entry.expect("entry").path()).expect("seed");
            let _ = fuzz_head(&bytes);
            n += 1;
        }
        assert!(n >= 3, "expected seed files in {dir}");
    }
}
