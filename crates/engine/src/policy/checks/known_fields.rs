//! The request fields the phase-1 checks read by name (`Host`, `Content-Length`, `Content-Type`,
//! `Transfer-Encoding`, `Content-Encoding`, `Content-Range`, `X-Requested-With`, the `User-Agent`, `Accept`, `Accept-Encoding`,
//! `Range` and `Expect` whose grammar the protocol checks judge, and the method-override fields),
//! found in one pass over the head's fields by the kind each name was given when the fields were
//! built ([`crate::FieldKind`]): a map lookup
//! hashes the name and probes (≈ 110 instructions even in a map of one field), and one pass over a
//! request's fields costs less than the half-dozen lookups it replaces.

use crate::{FieldValue, Fields};

/// The first value of each field (what `HeaderMap::get` gives), and how many `Host` fields there
/// are.
#[derive(Default)]
pub(in crate::policy) struct Known<'h> {
    pub host: Option<FieldValue<'h>>,
    pub hosts: usize,
    pub content_length: Option<FieldValue<'h>>,
    pub content_type: Option<FieldValue<'h>>,
    pub transfer_encoding: bool,
    /// A `Content-Encoding` or `Content-Range` field: one that describes a body.
    pub describes_body: bool,
    pub requested_with: Option<FieldValue<'h>>,
    pub user_agent: Option<FieldValue<'h>>,
    pub accept: Option<FieldValue<'h>>,
    pub accept_encoding: Option<FieldValue<'h>>,
    pub range: Option<FieldValue<'h>>,
    pub expect: Option<FieldValue<'h>>,
    /// The first value of each field through which clients ask a framework to treat a POST as
    /// another method: `X-HTTP-Method-Override`, `X-HTTP-Method`, `X-Method-Override`.
    pub overrides: [Option<FieldValue<'h>>; 3],
}

impl<'h> Known<'h> {
    pub fn of(h: &'h Fields) -> Known<'h> {
        use crate::FieldKind as F;
        let mut k = Known::default();
        // Each name's kind was found when the fields were built: one byte compared per field.
        for (_, kind, v) in h.iter_kinds() {
            match kind {
                F::Host => {
                    k.hosts += 1;
                    k.host.get_or_insert(v);
                }
                F::ContentLength => _ = k.content_length.get_or_insert(v),
                F::ContentType => _ = k.content_type.get_or_insert(v),
                F::TransferEncoding => k.transfer_encoding = true,
                F::ContentEncoding | F::ContentRange => k.describes_body = true,
                F::RequestedWith => _ = k.requested_with.get_or_insert(v),
                F::UserAgent => _ = k.user_agent.get_or_insert(v),
                F::Accept => _ = k.accept.get_or_insert(v),
                F::AcceptEncoding => _ = k.accept_encoding.get_or_insert(v),
                F::Range => _ = k.range.get_or_insert(v),
                F::Expect => _ = k.expect.get_or_insert(v),
                F::HttpMethodOverride => _ = k.overrides[0].get_or_insert(v),
                F::HttpMethod => _ = k.overrides[1].get_or_insert(v),
                F::MethodOverride => _ = k.overrides[2].get_or_insert(v),
                _ => {}
            }
        }
        k
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::header::*;

    const OVERRIDE_FIELDS: [&str; 3] = [
        "x-http-method-override",
        "x-http-method",
        "x-method-override",
    ];

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
        let f = Fields::from_map(&h);
        let k = Known::of(&f);
        let h = &f;
        assert_eq!(k.host, h.get(HOST));
        assert_eq!(k.hosts, h.get_all(HOST).count());
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
        let mut h = f.clone();
        h.append("Transfer-Encoding", b"chunked");
        assert!(Known::of(&h).transfer_encoding);
        assert!(!Known::of(&h).describes_body);
        h.append("content-range", b"bytes 0-1/2");
        assert!(Known::of(&h).describes_body);
        let empty = Fields::default();
        let k = Known::of(&empty);
        assert_eq!((k.host, k.hosts, k.content_type), (None, 0, None));
        assert_eq!(k.overrides, [None; 3]);
    }
}
