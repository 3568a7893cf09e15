//! Phase 1 protocol checks on what reaches the engine after the HTTP parser: the `Host` field
//! ("No Host header in HTTP/1.1 request", "Bad host header value"), the `Content-Type` grammar
//! ("Unparsable request content": a media type without a subtype, parameters that are not
//! `name=value`, a charset no decoder knows such as EBCDIC's `ibm037`, a second charset, a
//! `boundary` on a type that has no parts), and method override (`X-HTTP-Method-Override`,
//! `_method`) to a method the policy does not allow (VIOL_METHOD), which is how a request gets a
//! method past a check that only reads the request line.

use super::known_fields::Known;
use crate::parse::query;
use crate::policy::compile::compiled::CompiledPolicy;
use crate::violation::{Context, Violation, ViolationKind as K};

/// Headers through which clients ask a framework to treat a POST as another method.
const OVERRIDE_HEADERS: [&str; 3] = [
    "x-http-method-override",
    "x-http-method",
    "x-method-override",
];

impl CompiledPolicy {
    pub(in crate::policy) fn check_protocol(
        &self,
        head: &http::request::Parts,
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
            && !valid_content_type(ct.as_bytes())
        {
            self.protocol(out, UNPARSABLE);
        }
        self.check_method_override(head, out);
    }

    fn check_method_override(&self, head: &http::request::Parts, out: &mut Vec<Violation>) {
        let from_headers = OVERRIDE_HEADERS
            .iter()
            .filter_map(|n| head.headers.get(*n))
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
        for m in from_headers.chain(from_query) {
            let m = String::from_utf8_lossy(m.trim_ascii()).to_ascii_uppercase();
            if !m.is_empty() && !self.methods.contains(&m) {
                self.push(
                    out,
                    Violation::new(K::Method, Context::Request)
                        .snippet(m.as_bytes())
                        .detail("method override"),
                );
            }
        }
    }
}

/// A `Host` value: a registered name or IPv4 address, or an IPv6 literal in brackets, with an
/// optional port.
fn valid_host(v: &[u8]) -> bool {
    let v = v.trim_ascii();
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

fn token(v: &[u8]) -> bool {
    !v.is_empty()
        && v.iter()
            .all(|&b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// `type/subtype *(; name=value)` (a list of such, comma-separated, is tolerated: some clients
/// repeat the type); a charset must be one a decoder knows, once; `boundary` only on multipart.
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
            } else if name.eq_ignore_ascii_case(b"boundary") && !multipart {
                return false;
            }
        }
        true
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
    fn content_types() {
        assert_judges(
            valid_content_type,
            &[
                b"application/json",
                b"application/x-www-form-urlencoded; charset=UTF-8",
                b"multipart/form-data; boundary=----WebKitFormBoundaryABC",
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
            ],
        );
    }
}
