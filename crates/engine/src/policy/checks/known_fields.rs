//! The request fields the phase-1 checks read by name (`Host`, `Content-Length`, `Content-Type`,
//! `Transfer-Encoding`, `Content-Encoding`, `Content-Range`, `X-Requested-With`, the `User-Agent`, `Accept`, `Accept-Encoding`,
//! `Range` and `Expect` whose grammar the protocol checks judge, and the method-override fields),
//! found in one pass over the head's fields: a map lookup
//! hashes the name and probes (≈ 110 instructions even in a map of one field), and one pass over a
//! request's fields costs less than the half-dozen lookups it replaces.

use http::header::{ACCEPT, ACCEPT_ENCODING, EXPECT, RANGE, USER_AGENT};
use http::header::{CONTENT_ENCODING, CONTENT_RANGE, TRANSFER_ENCODING};
use http::header::{CONTENT_LENGTH, CONTENT_TYPE, HOST, HeaderMap, HeaderName, HeaderValue};

/// Parsed once: a `&str` name is parsed on every comparison.
const X_REQUESTED_WITH: HeaderName = HeaderName::from_static("x-requested-with");

/// The fields through which clients ask a framework to treat a POST as another method, in the
/// order the method-override check reads them.
pub(in crate::policy) const OVERRIDE_FIELDS: [HeaderName; 3] = [
    HeaderName::from_static("x-http-method-override"),
    HeaderName::from_static("x-http-method"),
    HeaderName::from_static("x-method-override"),
];

/// The first value of each field (what `HeaderMap::get` gives), and how many `Host` fields there
/// are.
#[derive(Default)]
pub(in crate::policy) struct Known<'h> {
    pub host: Option<&'h HeaderValue>,
    pub hosts: usize,
    pub content_length: Option<&'h HeaderValue>,
    pub content_type: Option<&'h HeaderValue>,
    pub transfer_encoding: bool,
    /// A `Content-Encoding` or `Content-Range` field: one that describes a body.
    pub describes_body: bool,
    pub requested_with: Option<&'h HeaderValue>,
    pub user_agent: Option<&'h HeaderValue>,
    pub accept: Option<&'h HeaderValue>,
    pub accept_encoding: Option<&'h HeaderValue>,
    pub range: Option<&'h HeaderValue>,
    pub expect: Option<&'h HeaderValue>,
    /// The first value of each of [`OVERRIDE_FIELDS`], in its order.
    pub overrides: [Option<&'h HeaderValue>; 3],
}

impl<'h> Known<'h> {
    pub fn of(h: &'h HeaderMap) -> Known<'h> {
        let mut k = Known::default();
        for (name, v) in h {
            if *name == HOST {
                k.hosts += 1;
                k.host.get_or_insert(v);
            } else if *name == CONTENT_LENGTH {
                k.content_length.get_or_insert(v);
            } else if *name == CONTENT_TYPE {
                k.content_type.get_or_insert(v);
            } else if *name == TRANSFER_ENCODING {
                k.transfer_encoding = true;
            } else if *name == CONTENT_ENCODING || *name == CONTENT_RANGE {
                k.describes_body = true;
            } else if *name == X_REQUESTED_WITH {
                k.requested_with.get_or_insert(v);
            } else if *name == USER_AGENT {
                k.user_agent.get_or_insert(v);
            } else if *name == ACCEPT {
                k.accept.get_or_insert(v);
            } else if *name == ACCEPT_ENCODING {
                k.accept_encoding.get_or_insert(v);
            } else if *name == RANGE {
                k.range.get_or_insert(v);
            } else if *name == EXPECT {
                k.expect.get_or_insert(v);
            } else if let Some(i) = OVERRIDE_FIELDS.iter().position(|o| o == name) {
                k.overrides[i].get_or_insert(v);
            }
        }
        k
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_as_lookups() {
        let mut h = HeaderMap::new();
        for (n, v) in [
            ("accept", "*/*"),
            ("Host", "a"),
            ("content-type", "text/plain"),
            ("host", "b"),
            ("X-Requested-With", "XMLHttpRequest"),
            ("content-length", "3"),
            ("content-type", "application/json"),
            ("user-agent", "curl/8.5.0"),
            ("range", "bytes=0-1"),
            ("accept-encoding", "gzip, br"),
            ("expect", "100-continue"),
            ("X-HTTP-Method", "PUT"),
            ("x-method-override", "DELETE"),
            ("x-http-method", "PATCH"),
        ] {
            h.append(
                HeaderName::from_bytes(n.as_bytes()).expect("name"),
                HeaderValue::from_static(v),
            );
        }
        let k = Known::of(&h);
        assert_eq!(k.host, h.get(HOST));
        assert_eq!(k.hosts, h.get_all(HOST).iter().count());
        assert_eq!(k.content_length, h.get(CONTENT_LENGTH));
        assert_eq!(k.content_type, h.get(CONTENT_TYPE));
        assert_eq!(k.requested_with, h.get("x-requested-with"));
        assert_eq!(k.user_agent, h.get(USER_AGENT));
        assert_eq!(k.accept, h.get(ACCEPT));
        assert_eq!(k.accept_encoding, h.get(ACCEPT_ENCODING));
        assert_eq!(k.range, h.get(RANGE));
        assert_eq!(k.expect, h.get(EXPECT));
        for (i, name) in OVERRIDE_FIELDS.iter().enumerate() {
            assert_eq!(k.overrides[i], h.get(name), "{name}");
        }
        assert!(!k.transfer_encoding);
        h.append(TRANSFER_ENCODING, HeaderValue::from_static("chunked"));
        assert!(Known::of(&h).transfer_encoding);
        assert!(!Known::of(&h).describes_body);
        h.append(CONTENT_RANGE, HeaderValue::from_static("bytes 0-1/2"));
        assert!(Known::of(&h).describes_body);
        let empty = HeaderMap::new();
        let k = Known::of(&empty);
        assert_eq!((k.host, k.hosts, k.content_type), (None, 0, None));
        assert_eq!(k.overrides, [None; 3]);
    }
}
