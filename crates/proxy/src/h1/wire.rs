//! The request side of the HTTP/1.1 wire format: a validated request head into the engine's
//! [`waf::RequestHead`] (one parse: [`crate::head::parse_scanned`] validates and builds; the
//! header values are ranges of the head's bytes, no `HeaderMap` is built), and the upstream request head (hop-by-hop fields left out,
//! `X-Forwarded-For` appended). Upstream response heads are parsed in [`super::response`], response
//! heads to the client encoded in [`super::encode`].

use bytes::Bytes;
use http::header::{CONNECTION, HeaderName};
use http::{Method, Uri, Version};
use portcullis_engine::{self as waf, FieldKind, Fields};

use crate::head::{self, Framing, HeadLimits, Reject};

/// A client request head, validated and parsed.
pub struct RequestHead {
    pub parts: waf::RequestHead,
    /// How its body is delimited (`Framing::Upgrade`: a WebSocket upgrade, no body).
    pub framing: Framing,
    /// The connection ends after this exchange (`Connection: close`, or HTTP/1.0 without
    /// `Connection: keep-alive`).
    pub close: bool,
    /// `Expect: 100-continue` (HTTP/1.1).
    pub expect_continue: bool,
    /// Fields seen while parsing, so that nothing looks them up in the map again.
    pub seen: HopByHopFields,
}

/// What the fields of a request head hold, as far as the upstream request head needs it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HopByHopFields {
    /// A `Connection` field (it may name more fields to leave out).
    pub connection: bool,
    /// `TE: trailers`: the client accepts trailer fields.
    pub te_trailers: bool,
}

impl HopByHopFields {
    /// What the fields of `h` hold (for heads not parsed here).
    pub fn of(h: &Fields) -> HopByHopFields {
        let mut seen = HopByHopFields::default();
        for (_, kind, v) in h.iter_kinds() {
            match kind {
                FieldKind::Connection => seen.connection = true,
                FieldKind::Te => seen.te_trailers |= has_token(v.as_bytes(), b"trailers"),
                _ => {}
            }
        }
        seen
    }
}

/// Validates and parses the complete head `bytes` (as found by `find_head_end`): a head the
/// validator refuses comes back as its [`Reject`] (answered by the caller, nothing forwarded).
pub fn parse_request(bytes: &Bytes, lim: &HeadLimits) -> Result<RequestHead, Reject> {
    let target = |t: &str| Uri::from_maybe_shared(bytes.slice_ref(t.as_bytes())).ok();
    let built = head::parse_scanned(bytes, lim, target, |req, uri| {
        build_request(bytes, req, uri)
    })?;
    match built {
        (framing, Some(mut head)) => {
            head.framing = framing;
            Ok(head)
        }
        (_, None) => Err(Reject {
            status: 400,
            reason: "malformed request head",
        }),
    }
}

/// The longest field name (`HeaderName`'s limit, which a head read through hyper also meets).
const MAX_NAME: usize = (1 << 16) - 1;

fn build_request(bytes: &Bytes, req: &httparse::Request<'_, '_>, uri: Uri) -> Option<RequestHead> {
    let http10 = req.version == Some(0);
    let method = Method::from_bytes(req.method?.as_bytes()).ok()?;
    // httparse takes in a name exactly the bytes `HeaderName` takes (RFC 9110 tokens) and in a
    // value what `HeaderValue` takes (tab, space, visible ASCII, obs-text): the fields are kept as
    // ranges of the head without checking them again.
    let mut headers = Fields::sharing(bytes.clone(), req.headers.len());
    let (mut close, mut keep_alive, mut expect_continue) = (false, false, false);
    let mut seen = HopByHopFields::default();
    for h in req.headers.iter() {
        if h.name.len() > MAX_NAME {
            return None;
        }
        match headers.append(h.name, h.value) {
            FieldKind::Connection => {
                seen.connection = true;
                close |= has_token(h.value, b"close");
                keep_alive |= has_token(h.value, b"keep-alive");
            }
            FieldKind::Te => seen.te_trailers |= has_token(h.value, b"trailers"),
            FieldKind::Expect => {
                expect_continue |= h.value.trim_ascii().eq_ignore_ascii_case(b"100-continue");
            }
            _ => {}
        }
    }
    let version = if http10 {
        Version::HTTP_10
    } else {
        Version::HTTP_11
    };
    Some(RequestHead {
        parts: waf::RequestHead {
            method,
            uri,
            version,
            headers,
        },
        framing: Framing::None,
        close: close || (http10 && !keep_alive),
        expect_continue: expect_continue && !http10,
        seen,
    })
}

/// True when the comma-separated list `v` holds `token` (ASCII case-insensitive).
#[inline]
pub fn has_token(v: &[u8], token: &[u8]) -> bool {
    v.split(|b| *b == b',')
        .any(|t| t.trim_ascii().eq_ignore_ascii_case(token))
}

/// The field names the fast path treats on their own, told apart once per field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Special {
    Other,
    ContentLength,
    TransferEncoding,
    Connection,
    Trailer,
    /// Never forwarded, like `Connection` and `Transfer-Encoding` (RFC 9110 7.6.1): `keep-alive`,
    /// `proxy-connection`, `proxy-authenticate`, `proxy-authorization`, `upgrade`, `te`;
    /// `http2-settings`, which only means something with an `Upgrade: h2c` that is never
    /// forwarded; and `expect`, which the proxy answers itself (`100 Continue`) before it reads
    /// the body, so the member must not hold the body back waiting to send its own.
    HopByHop,
}

impl Special {
    /// The kind of a lower-case field name.
    pub fn of(name: &[u8]) -> Special {
        match name {
            b"content-length" => Special::ContentLength,
            b"transfer-encoding" => Special::TransferEncoding,
            b"connection" => Special::Connection,
            b"trailer" => Special::Trailer,
            b"keep-alive"
            | b"proxy-connection"
            | b"proxy-authenticate"
            | b"proxy-authorization"
            | b"upgrade"
            | b"http2-settings"
            | b"expect"
            | b"te" => Special::HopByHop,
            _ => Special::Other,
        }
    }

    /// The kind of a request field, from the kind the engine's fields found for its name.
    pub fn of_kind(kind: FieldKind) -> Special {
        match kind {
            FieldKind::ContentLength => Special::ContentLength,
            FieldKind::TransferEncoding => Special::TransferEncoding,
            FieldKind::Connection => Special::Connection,
            FieldKind::Trailer => Special::Trailer,
            FieldKind::HopByHop | FieldKind::Expect | FieldKind::Te => Special::HopByHop,
            _ => Special::Other,
        }
    }

    /// Fields never forwarded, besides those `Connection` names.
    pub fn hop_by_hop(self) -> bool {
        matches!(
            self,
            Special::Connection | Special::TransferEncoding | Special::HopByHop
        )
    }
}

/// The names the `Connection` fields of `h` list (never the ones that identify or frame a request);
/// none for the usual `keep-alive` (no allocation then).
pub fn connection_named(h: &Fields) -> Vec<HeaderName> {
    connection_named_in(|| h.get_all(CONNECTION).map(|v| v.as_bytes()))
}

/// [`connection_named`] for the values of the `Connection` fields, however they are kept.
pub fn connection_named_in<'a, I: Iterator<Item = &'a [u8]>>(
    values: impl Fn() -> I,
) -> Vec<HeaderName> {
    const CLOSE: HeaderName = HeaderName::from_static("close");
    // The values nearly every client sends, `close` and `keep-alive`, are settled without
    // parsing a name: `keep-alive` is hop-by-hop anyway, and `close` names itself.
    let mut close = false;
    let plain = values().all(|v| {
        v.split(|b| *b == b',').all(|t| {
            let t = t.trim_ascii();
            let is_close = t.eq_ignore_ascii_case(b"close");
            close |= is_close;
            is_close || t.eq_ignore_ascii_case(b"keep-alive")
        })
    });
    if plain {
        return if close { vec![CLOSE] } else { Vec::new() };
    }
    values()
        // What `HeaderValue::to_str` accepts: visible ASCII and tab.
        .filter(|v| v.iter().all(|&b| b == b'\t' || (32..127).contains(&b)))
        .filter_map(|v| std::str::from_utf8(v).ok())
        .flat_map(|s| s.split(','))
        .filter_map(|n| HeaderName::from_bytes(n.trim().as_bytes()).ok())
        .filter(|n| !matches!(n.as_str(), "host" | "content-length" | "x-forwarded-for"))
        .collect()
}

/// True for a field (lower-case `name` of kind `special`) that does not go on to the next hop.
pub fn skipped(name: &[u8], special: Special, named: &[HeaderName]) -> bool {
    special.hop_by_hop() || named.iter().any(|n| n.as_str().as_bytes() == name)
}

/// Writes one `name: value` line of a head.
pub fn put_header(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.extend_from_slice(name);
    out.extend_from_slice(b": ");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

/// Writes the upstream request head for `parts` (whose fields hold what `seen` says) into `out`:
/// origin-form target, HTTP/1.1, the client's fields in their order without hop-by-hop ones
/// (`Host` already set from an absolute-form target by the caller), `te: trailers` when the client
/// asked for trailers, `X-Forwarded-For` with `peer` appended when `xff` is set, then the `extra`
/// fields (the body's framing, an upgrade's `Connection` and `Upgrade`).
pub fn encode_request(
    out: &mut Vec<u8>,
    parts: &waf::RequestHead,
    seen: HopByHopFields,
    xff: Option<&str>,
    extra: &[(&[u8], &[u8])],
) {
    const XFF: &str = "x-forwarded-for";
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
    let named = if seen.connection {
        connection_named(h)
    } else {
        Vec::new()
    };
    let mut xff_done = xff.is_none();
    for (name, kind, value) in h.iter_kinds() {
        let lower = name.as_bytes();
        if skipped(lower, Special::of_kind(kind), &named) {
            continue;
        }
        if kind == FieldKind::XForwardedFor
            && let Some(peer) = xff
        {
            if !xff_done {
                xff_done = true;
                out.extend_from_slice(b"x-forwarded-for: ");
                for prior in h.get_all(XFF).filter_map(|v| v.to_str().ok()) {
                    out.extend_from_slice(prior.as_bytes());
                    out.extend_from_slice(b", ");
                }
                out.extend_from_slice(peer.as_bytes());
                out.extend_from_slice(b"\r\n");
            }
            continue;
        }
        put_header(out, lower, value.as_bytes());
    }
    if seen.te_trailers {
        out.extend_from_slice(b"te: trailers\r\n");
    }
    if let (false, Some(peer)) = (xff_done, xff) {
        put_header(out, b"x-forwarded-for", peer.as_bytes());
    }
    for (name, value) in extra {
        put_header(out, name, value);
    }
    out.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIM: HeadLimits = HeadLimits {
        max_head_bytes: 4096,
        max_headers: 32,
        max_url_bytes: 1024,
    };

    /// A request field's kind, read from the engine's fields, is the one its name gives.
    #[test]
    fn kinds_are_the_names_kinds() {
        let names = [
            "content-length",
            "transfer-encoding",
            "connection",
            "trailer",
            "keep-alive",
            "proxy-connection",
            "proxy-authenticate",
            "proxy-authorization",
            "upgrade",
            "http2-settings",
            "expect",
            "te",
            "host",
            "x-forwarded-for",
            "cookie",
            "tee",
            "x-te",
            "content-type",
            "trailers",
            "",
        ];
        for n in names {
            assert_eq!(
                Special::of_kind(FieldKind::of(n)),
                Special::of(n.as_bytes()),
                "{n}"
            );
        }
    }

    #[test]
    fn connection_options_name_the_fields_they_name() {
        let named = |values: &[&str]| -> Vec<String> {
            connection_named_in(|| values.iter().map(|v| v.as_bytes()))
                .iter()
                .map(|n| n.as_str().to_string())
                .collect()
        };
        assert!(named(&["keep-alive"]).is_empty());
        assert!(named(&[]).is_empty());
        assert_eq!(named(&["close"]), ["close"]);
        assert_eq!(named(&["Keep-Alive, CLOSE", "close "]), ["close"]);
        assert_eq!(named(&["close, X-Foo"]), ["close", "x-foo"]);
        assert_eq!(named(&["keep-alive, x-foo, host"]), ["keep-alive", "x-foo"]);
        let req = "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\nClose: 1\r\nX-A: 2\r\n\r\n";
        assert_eq!(
            upstream_request(req, None),
            "GET / HTTP/1.1\r\nhost: a\r\nx-a: 2\r\n\r\n"
        );
    }

    fn upstream_request(head: &str, xff: Option<&str>) -> String {
        let req = parse_request(&Bytes::from(head.to_string()), &LIM).expect("valid");
        assert_eq!(req.seen, HopByHopFields::of(&req.parts.headers));
        let mut out = Vec::new();
        encode_request(&mut out, &req.parts, req.seen, xff, &[]);
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
        let out = upstream_request(
            "GET http://h:1/x HTTP/1.1\r\nHost: h:1\r\n\r\n",
            Some("::1"),
        );
        assert_eq!(
            out,
            "GET /x HTTP/1.1\r\nhost: h:1\r\nx-forwarded-for: ::1\r\n\r\n"
        );
        let out = upstream_request(
            "GET / HTTP/1.1\r\nHost: a\r\nX-Forwarded-For: a\r\n\r\n",
            None,
        );
        assert_eq!(
            out,
            "GET / HTTP/1.1\r\nhost: a\r\nx-forwarded-for: a\r\n\r\n"
        );
    }

    #[test]
    fn tokens_are_found_in_lists() {
        for (v, close) in [
            ("close", true),
            (" Close ", true),
            ("keep-alive, close", true),
            (",,close,", true),
            ("x,CLOSE", true),
            ("\tclose\t", true),
            ("closed", false),
            ("", false),
            ("keep-alive", false),
            ("c lose", false),
        ] {
            assert_eq!(has_token(v.as_bytes(), b"close"), close, "{v:?}");
        }
    }

    #[test]
    fn heads_say_how_the_connection_goes_on_and_how_the_body_is_framed() {
        let parse = |h: &str| {
            parse_request(&Bytes::from(h.to_string()), &LIM)
                .map(|r| (r.framing, r.close, r.expect_continue))
        };
        assert_eq!(
            parse("GET / HTTP/1.1\r\nHost: a\r\nConnection: Close\r\n\r\n"),
            Ok((Framing::None, true, false))
        );
        assert_eq!(
            parse("DELETE / HTTP/1.1\r\nHost: a\r\ncontent-length: 0\r\n\r\n"),
            Ok((Framing::None, false, false))
        );
        assert_eq!(
            parse(
                "POST / HTTP/1.1\r\nHost: a\r\ncontent-length: 1\r\nExpect: 100-Continue\r\n\r\n"
            ),
            Ok((Framing::Length(1), false, true))
        );
        assert_eq!(
            parse("POST / HTTP/1.1\r\nHost: a\r\ntransfer-encoding: chunked\r\n\r\n"),
            Ok((Framing::Chunked, false, false))
        );
        assert_eq!(
            parse("GET / HTTP/1.1\r\nHost: a\r\nconnection: upgrade\r\nupgrade: websocket\r\n\r\n"),
            Ok((Framing::Upgrade, false, false))
        );
        assert_eq!(
            parse("GET / HTTP/1.0\r\n\r\n"),
            Ok((Framing::None, true, false))
        );
        assert_eq!(
            parse("GET / HTTP/1.0\r\nConnection: keep-alive\r\nExpect: 100-continue\r\n\r\n"),
            Ok((Framing::None, false, false))
        );
        assert_eq!(
            parse("GET / HTTP/1.1\r\ncontent-length: 1\r\ntransfer-encoding: chunked\r\n\r\n")
                .map_err(|r| r.status),
            Err(400)
        );
    }
}
