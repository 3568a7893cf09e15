//! Phase 1 protocol checks on what reaches the engine after the HTTP parser: the `Host` field
//! ("No Host header in HTTP/1.1 request", "Bad host header value"), the `Content-Type` grammar
//! ("Unparsable request content": a media type without a subtype, parameters that are not
//! `name=value`, a charset no decoder knows such as EBCDIC's `ibm037`, a second charset, a
//! `boundary` on a type that has no parts or none on one that has, two media types in
//! `Content-Type` fields or in one field's list), the grammar of the fields browsers and HTTP
//! libraries write themselves (`Range`, `Expect`, an empty `User-Agent` or `Accept`, an
//! `Accept-Encoding` naming no content coding), an absolute-form target naming another host than
//! `Host`, a `Content-Encoding` or `Content-Range` on a GET or HEAD that carries no body, which
//! bodies a GET or HEAD may carry (a JSON or XML document the policy parses), and
//! method override (`X-HTTP-Method-Override`, `_method`) to a method the policy does not allow,
//! on a request that is not a POST, or through `_method` to a method a form can send without it
//! (VIOL_METHOD): how a request gets a method past a check that only reads the request line.

use super::known_fields::Known;
use crate::parse::query;
use crate::policy::compile::compiled::CompiledPolicy;
use crate::policy::compile::entities::BodyKind;
use crate::violation::{Context, Violation, ViolationKind as K};

impl CompiledPolicy {
    pub(in crate::policy) fn check_protocol(
        &self,
        head: &crate::RequestHead,
        known: &Known<'_>,
        out: &mut Vec<Violation>,
    ) {
        const NO_HOST: &str = "No Host header in HTTP/1.1 request";
        const BAD_HOST: &str = "Bad host header value";
        const UNPARSABLE: &str = "Unparsable request content";
        match known.host {
            None if head.version == http::Version::HTTP_11 => self.protocol(out, NO_HOST),
            Some(h) if !valid_host(h.as_bytes()) => self.protocol(out, BAD_HOST),
            _ => {}
        }
        if let Some(ct) = known.content_type
            && self.protocol_on(UNPARSABLE)
            && (!valid_content_type(ct.as_bytes())
                || two_media_types(head.headers.get_all(http::header::CONTENT_TYPE)))
        {
            self.protocol(out, UNPARSABLE);
        }
        self.check_client_fields(head, known, out);
        self.check_method_override(head, known, out);
        self.check_bodiless_content(head, known, out);
    }

    /// `Content-Encoding` and `Content-Range` describe a body; on a GET or HEAD framed as having
    /// none (no length, or zero, and not chunked) they describe nothing, and no client library
    /// sends them there. A request that carries one anyway is probing whether a proxy or the
    /// server reads a body the framing says is absent, or reaches a handler through the header
    /// alone (an upload resumed at an offset, a decompressor). A POST is left out: beacons
    /// recorded without their body keep `Content-Encoding: gzip`. HTTP/2 announces no length,
    /// so its requests are left out too.
    fn check_bodiless_content(
        &self,
        head: &crate::RequestHead,
        known: &Known<'_>,
        out: &mut Vec<Violation>,
    ) {
        const WHAT: &str = "Content header without a body";
        let bodiless = matches!(head.method, http::Method::GET | http::Method::HEAD)
            && head.version < http::Version::HTTP_2
            && !known.transfer_encoding
            && known
                .content_length
                .is_none_or(|v| v.as_bytes().trim_ascii() == b"0");
        if bodiless && known.describes_body && self.protocol_on(WHAT) {
            self.protocol(out, WHAT);
        }
    }

    /// Fields that browsers and HTTP libraries fill in themselves, so that a value outside their
    /// grammar is written by hand: a tool probing how the server and the proxies in front of it
    /// read the field.
    fn check_client_fields(
        &self,
        head: &crate::RequestHead,
        known: &Known<'_>,
        out: &mut Vec<Violation>,
    ) {
        const EMPTY: &str = "Empty User-Agent or Accept header";
        const RANGE: &str = "Malformed Range header";
        const EXPECT: &str = "Unknown expectation";
        const OTHER_HOST: &str = "Absolute URI names another host";
        const CODING: &str = "Unknown Accept-Encoding";
        // A client that has nothing to say leaves these fields out (.NET's `HttpClient` sends no
        // `User-Agent`, beacons no `Accept`); sending one empty is a choice no library makes.
        let empty = |v: Option<crate::FieldValue<'_>>| {
            v.is_some_and(|v| v.as_bytes().trim_ascii().is_empty())
        };
        if empty(known.user_agent) || empty(known.accept) {
            self.protocol(out, EMPTY);
        }
        if let Some(r) = known.range
            && !valid_range(r.as_bytes())
        {
            self.protocol(out, RANGE);
        }
        // `100-continue` is the only expectation HTTP defines; a server must refuse any other,
        // and proxies differ on whether they forward it or answer it.
        if let Some(e) = known.expect
            && !e
                .as_bytes()
                .trim_ascii()
                .eq_ignore_ascii_case(b"100-continue")
        {
            self.protocol(out, EXPECT);
        }
        // Clients list the codings their decompressors know, and every one of them knows one of
        // the registered codings; a list of none, or one longer than all the registered codings
        // named once each, is written by hand (an overlong or junk value aimed at the server's
        // parser of this field, as in the http.sys overflow). Unknown codings beside a known one
        // are new codings (`dcb`, `dcz`) and pass.
        if let Some(ae) = known.accept_encoding
            && !ae.as_bytes().trim_ascii().is_empty()
            && (ae.len() > MAX_ACCEPT_ENCODING || !names_known_coding(ae.as_bytes()))
        {
            self.protocol(out, CODING);
        }
        // A server reads the authority of an absolute-form target and ignores `Host`, while a
        // cache, a router or the application may read `Host`: two hosts in one request is how
        // one of them is made to act for the other. (An HTTP/2 request's `:authority` is the
        // URI's authority and its `Host`, when sent, must name the same host.)
        if let (Some(authority), Some(host)) = (head.uri.authority(), known.host)
            && !same_host(authority.as_str().as_bytes(), host.as_bytes())
        {
            self.protocol(out, OTHER_HOST);
        }
    }

    fn check_method_override(
        &self,
        head: &crate::RequestHead,
        known: &Known<'_>,
        out: &mut Vec<Violation>,
    ) {
        let from_headers = known
            .overrides
            .iter()
            .flatten()
            .map(|v| v.as_bytes().to_vec());
        let query = head.uri.query().unwrap_or("").as_bytes();
        let from_query = memchr::memmem::find(query, b"_method=")
            .into_iter()
            .flat_map(|_| query::pairs(query, 64))
            .filter(|(n, _, _)| n.eq_ignore_ascii_case(b"_method"))
            .map(|(_, v, _)| {
                let mut f = query::DecodeFlags::default();
                query::decode(v, true, 2, &mut f).into_owned()
            });
        let post = head.method == http::Method::POST;
        let from_headers = from_headers.map(|m| (m, false));
        let from_query = from_query.map(|m| (m, true));
        for (m, param) in from_headers.chain(from_query) {
            let m = String::from_utf8_lossy(m.trim_ascii()).to_ascii_uppercase();
            if m.is_empty() {
                continue;
            }
            // Frameworks honour an override only on a POST (what a form or a client limited to
            // GET and POST can send); on any other request it is a probe for one that does not
            // check, as a GET link carrying `_method=POST` past CSRF defences that exempt GETs.
            // A form's `_method` stands for the methods it cannot send: PUT, PATCH, DELETE.
            let detail = if !self.methods.contains(&m) {
                "method override"
            } else if !post {
                "method override on a request other than POST"
            } else if param && matches!(m.as_str(), "GET" | "HEAD" | "POST" | "OPTIONS") {
                "method override to a method a form sends without one"
            } else {
                continue;
            };
            self.push(
                out,
                Violation::new(K::Method, Context::Request)
                    .snippet(m.as_bytes())
                    .detail(detail),
            );
        }
    }
}

impl CompiledPolicy {
    /// Whether a body of `kind` on a GET or HEAD is judged by what it is rather than refused for
    /// being there. A body on a GET is refused because a server that ignores it reads it as the
    /// next request on the connection. A body the policy reads as a JSON or XML document is
    /// inspected as a POST's is: an XML one that is not a document is malformed (blocked), and a
    /// JSON-labelled one that does not start like JSON is scanned as text, where a request line
    /// and its framing headers are an embedded request's signature. Such bodies are what search
    /// APIs take on a GET (a query document). A form body or text on a GET stays refused: nothing
    /// sends one but a request written by hand.
    pub(super) fn document_body(&self, kind: BodyKind) -> bool {
        let blocks = |k: K| self.settings[k as usize].block;
        match kind {
            BodyKind::Json(_) => blocks(K::JsonMalformed),
            BodyKind::Xml(_) => blocks(K::XmlMalformed),
            _ => false,
        }
    }
}

/// The bytes of a registered name or IPv4 address in a `Host` value (what [`valid_host`] allows
/// in a name).
const NAME_BYTES: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b'_' | b'%');
        b += 1;
    }
    t
};

/// A `Host` value: a registered name or IPv4 address, or an IPv6 literal in brackets, with an
/// optional port.
fn valid_host(v: &[u8]) -> bool {
    let v = v.trim_ascii();
    // Most values are a name alone: bytes of a name only (no `:` of a port, no `[` of an IPv6
    // literal), settled by one table pass.
    if !v.is_empty() && v.iter().all(|&b| NAME_BYTES[usize::from(b)]) {
        return true;
    }
    let (name, port) = match v.iter().rposition(|&b| b == b':') {
        Some(i) if !v.starts_with(b"[") || v[..i].ends_with(b"]") => (&v[..i], Some(&v[i + 1..])),
        _ => (v, None),
    };
    let name_ok = if let Some(inner) = name.strip_prefix(b"[").and_then(|n| n.strip_suffix(b"]")) {
        !inner.is_empty()
            && inner
                .iter()
                .all(|b| b.is_ascii_hexdigit() || matches!(b, b':' | b'.'))
    } else {
        !name.is_empty()
            && name
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b'%'))
    };
    name_ok
        && port.is_none_or(|p| !p.is_empty() && p.len() <= 5 && p.iter().all(u8::is_ascii_digit))
}

/// The host of an authority (`host[:port]`, user information dropped), as compared with `Host`:
/// ASCII case-insensitive, a port on one side only ignored (clients leave out a default port on
/// either).
pub(super) fn same_host(authority: &[u8], host: &[u8]) -> bool {
    fn split(a: &[u8]) -> (&[u8], Option<&[u8]>) {
        let a = a.trim_ascii();
        host_port(
            a.iter()
                .rposition(|&b| b == b'@')
                .map_or(a, |i| &a[i + 1..]),
        )
    }
    let ((h1, p1), (h2, p2)) = (split(authority), split(host));
    h1.eq_ignore_ascii_case(h2) && (p1.is_none() || p2.is_none() || p1 == p2)
}

/// The host of `host[:port]` (a fully qualified name's final dot dropped; an IPv6 literal keeps
/// its brackets and colons) and the port, if any.
pub(super) fn host_port(a: &[u8]) -> (&[u8], Option<&[u8]>) {
    let (host, port) = match a.iter().rposition(|&b| b == b':') {
        Some(i) if !a.starts_with(b"[") || a[..i].ends_with(b"]") => (&a[..i], Some(&a[i + 1..])),
        _ => (a, None),
    };
    (host.strip_suffix(b".").unwrap_or(host), port)
}

/// A `Range` value: `bytes=` and a list of `first-last` (first ≤ last), `first-` or `-suffix`,
/// none overlapping another (what media players and download managers send: `bytes=0-`,
/// `bytes=1000-2047`); another unit is the application's own and is not judged. A reversed or
/// overlapping list is the shape of range exhaustion attacks on servers that honour every range.
fn valid_range(v: &[u8]) -> bool {
    let v = v.trim_ascii();
    let Some(eq) = v.iter().position(|&b| b == b'=') else {
        return false;
    };
    let (unit, set) = (v[..eq].trim_ascii(), &v[eq + 1..]);
    if !token(unit) {
        return false;
    }
    if !unit.eq_ignore_ascii_case(b"bytes") {
        return true;
    }
    let number = |d: &[u8]| -> Option<u64> {
        if d.is_empty() || d.len() > 19 || !d.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(d).ok()?.parse().ok()
    };
    // Closed intervals of the ranges with a first byte (a suffix range's place depends on the
    // length): at most a few in a valid value, so the pairwise test is cheap.
    let mut spans: Vec<(u64, u64)> = Vec::new();
    let mut any = false;
    for spec in set.split(|&b| b == b',').map(<[u8]>::trim_ascii) {
        if spec.is_empty() {
            continue;
        }
        any = true;
        let Some(dash) = spec.iter().position(|&b| b == b'-') else {
            return false;
        };
        let (first, last) = (spec[..dash].trim_ascii(), spec[dash + 1..].trim_ascii());
        let span = match (first.is_empty(), last.is_empty()) {
            (true, true) => return false,
            (true, false) => {
                if number(last).is_none() {
                    return false;
                }
                continue;
            }
            (false, true) => number(first).map(|f| (f, u64::MAX)),
            (false, false) => number(first).zip(number(last)),
        };
        let Some((f, l)) = span.filter(|(f, l)| f <= l) else {
            return false;
        };
        if spans.iter().any(|&(a, b)| f <= b && a <= l) {
            return false;
        }
        spans.push((f, l));
    }
    any
}

fn token(v: &[u8]) -> bool {
    !v.is_empty()
        && v.iter()
            .all(|&b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Whether the `Content-Type` fields, or the comma-separated list of one field, name two different
/// media types. Servers disagree on which one a body is parsed as (the first, the last, or the
/// list joined by a proxy), which is how a body the inspection reads as a form reaches the
/// application as JSON or XML. The same type repeated names one, as clients that set the field
/// twice send it.
fn two_media_types<'a>(fields: impl Iterator<Item = crate::FieldValue<'a>>) -> bool {
    let mut first: Option<&[u8]> = None;
    for one in fields.flat_map(|v| v.as_bytes().split(|&b| b == b',')) {
        let media = one
            .split(|&b| b == b';')
            .next()
            .unwrap_or_default()
            .trim_ascii();
        if media.is_empty() {
            continue;
        }
        match first {
            None => first = Some(media),
            Some(f) if !f.eq_ignore_ascii_case(media) => return true,
            Some(_) => {}
        }
    }
    false
}

/// Whether an `Accept-Encoding` list names at least one registered content coding (or `*`).
fn names_known_coding(v: &[u8]) -> bool {
    const KNOWN: [&[u8]; 15] = [
        b"gzip",
        b"x-gzip",
        b"deflate",
        b"br",
        b"zstd",
        b"compress",
        b"x-compress",
        b"identity",
        b"*",
        b"aes128gcm",
        b"exi",
        b"pack200-gzip",
        b"dcb",
        b"dcz",
        b"sdch",
    ];
    v.split(|&b| b == b',').any(|item| {
        let coding = item
            .split(|&b| b == b';')
            .next()
            .unwrap_or_default()
            .trim_ascii();
        KNOWN.iter().any(|k| k.eq_ignore_ascii_case(coding))
    })
}

/// About the length of the registered content codings written out once each, comma-separated
/// (`aes128gcm, br, compress, …, zstd`): a client lists the few its decompressors know, far
/// fewer.
const MAX_ACCEPT_ENCODING: usize = 100;

/// `type/subtype *(; name=value)` (a list of such, comma-separated, is tolerated: some clients
/// repeat the type); a charset must be one a decoder knows, once; `boundary` only on multipart,
/// and always there: a multipart body without one has no delimiter a parser can find its parts
/// by, so each reader guesses (or reads it as one opaque part) differently.
fn valid_content_type(v: &[u8]) -> bool {
    v.split(|&b| b == b',').all(|one| {
        let mut parts = one.split(|&b| b == b';');
        let media = parts.next().unwrap_or_default().trim_ascii();
        let Some(slash) = media.iter().position(|&b| b == b'/') else {
            return false;
        };
        if !token(&media[..slash]) || !token(&media[slash + 1..]) {
            return false;
        }
        let multipart = media[..slash].eq_ignore_ascii_case(b"multipart");
        let mut charsets = 0;
        let mut boundary = false;
        for p in parts.map(<[u8]>::trim_ascii).filter(|p| !p.is_empty()) {
            let Some(eq) = p.iter().position(|&b| b == b'=') else {
                return false;
            };
            // No white space around `=`: `boundary=  x` is read differently by different parsers.
            let (name, value) = (&p[..eq], &p[eq + 1..]);
            let quoted = value.len() >= 2 && value.starts_with(b"\"") && value.ends_with(b"\"");
            let value = if quoted {
                &value[1..value.len() - 1]
            } else {
                value
            };
            if !token(name) || !(quoted || token(value)) {
                return false;
            }
            if name.eq_ignore_ascii_case(b"charset") {
                charsets += 1;
                if charsets > 1 || encoding_rs::Encoding::for_label(value).is_none() {
                    return false;
                }
            } else if name.eq_ignore_ascii_case(b"boundary") {
                if !multipart {
                    return false;
                }
                boundary = !value.is_empty();
            }
        }
        boundary || !multipart
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::assert_judges;

    #[test]
    fn host_values() {
        assert_judges(
            valid_host,
            &[
                b"example.com",
                b"example.com:8080",
                b"10.0.0.1",
                b"[::1]",
                b"[fe80::1]:443",
                b"my_host.local",
            ],
            &[
                b"",
                b" ",
                b"a b",
                b"example.com:",
                b"evil.com/x",
                b"user@host",
                b"[::1",
            ],
        );
    }

    #[test]
    fn range_values() {
        assert_judges(
            valid_range,
            &[
                b"bytes=0-",
                b"bytes=1000-2047",
                b"bytes=-500",
                b"bytes=0-50, 100-150",
                b"bytes=0-0,-1",
                b"items=0-24",
            ],
            &[
                b"bytes=500-100",
                b"bytes=0-10, 5-20",
                b"bytes=10-20,0-5,15-",
                b"bytes=abc-def",
                b"bytes=",
                b"bytes=-",
                b"0-1023",
                b"bytes=1-2;x",
            ],
        );
    }

    #[test]
    fn hosts_compared() {
        let same: &[(&[u8], &[u8])] = &[
            (b"shop.example", b"shop.example"),
            (b"Shop.Example:80", b"shop.example"),
            (b"shop.example", b"shop.example:8080"),
            (b"[::1]:443", b"[::1]"),
            (b"user@shop.example", b"shop.example."),
        ];
        for (a, h) in same {
            assert!(same_host(a, h), "{a:?} {h:?}");
        }
        let other: &[(&[u8], &[u8])] = &[
            (b"evil.example", b"shop.example"),
            (b"shop.example:8080", b"shop.example:8443"),
            (b"169.254.169.254", b"shop.example"),
            (b"shop.example.evil.example", b"shop.example"),
        ];
        for (a, h) in other {
            assert!(!same_host(a, h), "{a:?} {h:?}");
        }
    }

    #[test]
    fn media_types_counted_across_fields_and_lists() {
        let judge = |fields: &[&'static str]| {
            let mut h = crate::Fields::default();
            for f in fields {
                h.append("content-type", f.as_bytes());
            }
            two_media_types(h.get_all(http::header::CONTENT_TYPE))
        };
        assert!(!judge(&["application/json"]));
        assert!(!judge(&["application/json, application/json"]));
        assert!(!judge(&["text/plain; charset=utf-8", "Text/Plain"]));
        assert!(judge(&[
            "application/x-www-form-urlencoded",
            "application/json"
        ]));
        assert!(judge(&["text/plain, application/xml"]));
    }

    #[test]
    fn accept_encodings() {
        assert_judges(
            names_known_coding,
            &[
                b"gzip, deflate, br, zstd",
                b"gzip, deflate, br, zstd, dcb, dcz",
                b"identity",
                b"*;q=0.1",
                b"GZIP;q=1.0, foo",
                b"x-gzip",
            ],
            &[
                b"foo",
                b"bogus, bad",
                b"x-bogus;q=1",
                b"AAAA&AA**A",
                b"gzipx",
            ],
        );
    }

    #[test]
    fn content_types() {
        assert_judges(
            valid_content_type,
            &[
                b"application/json",
                b"application/x-www-form-urlencoded; charset=UTF-8",
                b"multipart/form-data; boundary=----WebKitFormBoundaryABC",
                b"multipart/related; type=\"application/xop+xml\"; boundary=\"uuid:1\"",
                b"text/plain;charset=\"utf-8\"",
                b"application/json; charset=gbk",
                b"application/json, application/json",
                b"text/xml;",
            ],
            &[
                b"my-new-content-type",
                b"application",
                b"text/plain; charset=\"UTF-8\"; garbage",
                b"application/x-www-form-urlencoded; charset=ibm037",
                b"application/x-www-form-urlencoded;charset=ibm037;charset=UTF-8",
                b"application/x-www-form-urlencoded;boundary=\"application/json\"",
                b"text/xml; blah",
                b"multipart/form-data; boundary=  test_data_123456",
                b"multipart/related",
                b"Multipart/Form-Data; charset=utf-8",
                b"multipart/mixed; boundary=\"\"",
            ],
        );
    }
}
