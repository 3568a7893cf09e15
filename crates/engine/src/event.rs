//! The security event: one record per blocked or alarmed request, for the event log,
//! the admin API's request events and remote logging.

use std::borrow::Cow;

use serde::Serialize;
use serde::ser::{SerializeSeq, Serializer};

use super::json_plain::plain_ascii;
use super::verdict::Action;
use super::violation::Violation;
use crate::FieldKind;

/// One blocked or alarmed request. Serialised as one JSON line in the event log, every field
/// name in camelCase (`supportId`, `signatureIds`, ...), as the stored events and the admin API
/// spell them; only the block response body keeps the spelling `supportID`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SecurityEvent {
    /// Decimal support id, as in the block response.
    pub support_id: String,
    /// ISO 8601 UTC time the request arrived.
    pub time: String,
    pub time_micros: u64,
    pub client_ip: String,
    pub method: String,
    /// The request target in origin form (path and query), whatever form the client sent:
    /// HTTP/2 requests carry an absolute URI, HTTP/1 requests usually a path.
    pub uri: String,
    pub protocol: String,
    pub policy: String,
    pub action: Action,
    pub rating: u8,
    pub violations: Vec<Violation>,
    /// The virtual server (listener) that received the request; filled in by the data plane
    /// (empty when the engine runs without one).
    #[serde(rename = "virtualServerName", skip_serializing_if = "String::is_empty")]
    pub virtual_server: String,
    /// The status code answered to the client; filled in by the data plane (0 when unknown).
    #[serde(skip_serializing_if = "is_zero")]
    pub response_code: u16,
    /// The request's header fields as `[name, value]` pairs, credentials masked
    /// and bounded ([`event_headers`]), so the request log can show the request.
    #[serde(skip_serializing_if = "EventHeaders::is_empty")]
    pub headers: EventHeaders,
}

#[cfg(any(test, feature = "test-support"))]
impl SecurityEvent {
    /// A blocked `GET /` from 192.0.2.1 with no violation, support id `support_id`: the event the
    /// tests of the event's consumers (sinks, stores) start from, changing only what they look at.
    pub fn sample(support_id: &str) -> SecurityEvent {
        SecurityEvent {
            support_id: support_id.into(),
            time: String::new(),
            time_micros: 0,
            client_ip: "192.0.2.1".into(),
            method: "GET".into(),
            uri: "/".into(),
            protocol: "HTTP/1.1".into(),
            policy: "p".into(),
            action: Action::Block,
            rating: 4,
            violations: Vec::new(),
            virtual_server: "/Common/vs".into(),
            response_code: 403,
            headers: EventHeaders::default(),
        }
    }
}

fn is_zero(n: &u16) -> bool {
    *n == 0
}

/// Most header bytes (names and values) kept per event; fields beyond are dropped, long values cut,
/// so an event stays small whatever the client sends.
pub const HEADERS_MAX: usize = 8 * 1024;
/// Longest value kept per header field.
const VALUE_MAX: usize = 1024;
const MASK: &str = "********";

/// Whether a header field carries a credential by its name.
fn secret_name(name: &str) -> bool {
    // One pass over the name's positions, the words tried only where their first letter is:
    // header names are short, and a substring searcher per word costs more to set up than this
    // whole loop.
    let n = name.as_bytes();
    let at = |i: usize, w: &[u8]| n[i..].starts_with(w);
    matches!(
        name,
        "authorization" | "proxy-authorization" | "x-f5-auth-token"
    ) || (0..n.len()).any(|i| match n[i] {
        b't' => at(i, b"token"),
        b's' => at(i, b"secret") || at(i, b"session"),
        b'p' => at(i, b"password") || at(i, b"passwd"),
        b'a' => at(i, b"api-key") || at(i, b"apikey"),
        _ => false,
    })
}

/// The value of header `name` (lower case) as the request log keeps it, written at the end of
/// `out`: credentials masked (the scheme of an `Authorization` kept, cookie names kept and values
/// masked), long values cut.
fn mask_into(name: &str, value: &[u8], out: &mut String) {
    // Header values are nearly always ASCII: `from_utf8` checks them a word at a time, where the
    // lossy decoder walks them in chunks; only invalid text pays for the replacement.
    let text = match std::str::from_utf8(value) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(value),
    };
    if name == "cookie" {
        for (i, pair) in text.split(';').enumerate() {
            if i > 0 {
                out.push_str("; ");
            }
            match pair.split_once('=') {
                Some((n, _)) => {
                    out.push_str(n.trim());
                    out.push('=');
                    out.push_str(MASK);
                }
                None => out.push_str(pair.trim()),
            }
        }
        return;
    }
    if secret_name(name) {
        match text.split_once(' ') {
            Some((scheme, _)) if name.ends_with("authorization") => {
                out.push_str(scheme);
                out.push(' ');
                out.push_str(MASK);
            }
            _ => out.push_str(MASK),
        }
        return;
    }
    let mut end = text.len().min(VALUE_MAX);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    out.push_str(&text[..end]);
}

/// The header fields an event shows, as (name, value) pairs in order, serialised as a list of
/// `[name, value]` pairs. All of the text is in one string: an event is built for every blocked
/// request, and a pair of strings per field would be two allocations per field.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EventHeaders {
    text: String,
    /// For each field, where its name ends and where its value ends in `text`.
    ends: Vec<(usize, usize)>,
}

impl EventHeaders {
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Appends the field `name: value`.
    pub fn push(&mut self, name: &str, value: &str) {
        self.text.push_str(name);
        let name_end = self.text.len();
        self.text.push_str(value);
        self.ends.push((name_end, self.text.len()));
    }

    /// The (name, value) pairs, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        let mut start = 0;
        self.ends.iter().map(move |&(name_end, end)| {
            let pair = (&self.text[start..name_end], &self.text[name_end..end]);
            start = end;
            pair
        })
    }
}

impl<'a> FromIterator<(&'a str, &'a str)> for EventHeaders {
    fn from_iter<I: IntoIterator<Item = (&'a str, &'a str)>>(pairs: I) -> EventHeaders {
        let mut h = EventHeaders::default();
        for (name, value) in pairs {
            h.push(name, value);
        }
        h
    }
}

impl Serialize for EventHeaders {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.len()))?;
        for pair in self.iter() {
            seq.serialize_element(&pair)?;
        }
        seq.end()
    }
}

/// A field's value as an event shows it.
#[derive(Clone, Copy)]
pub(crate) enum Shown<'a> {
    /// The value as received: ASCII with nothing a JSON string escapes
    /// ([`crate::json_plain::plain_ascii`]), so a writer copies it whole.
    Plain(&'a [u8]),
    /// Masked, cut or decoded.
    Text(&'a str),
}

impl Shown<'_> {
    fn len(self) -> usize {
        match self {
            Shown::Plain(b) => b.len(),
            Shown::Text(t) => t.len(),
        }
    }
}

/// Whether a field of `kind` may carry a credential by its name: each named kind's one name holds
/// none of the words [`secret_name`] looks for (a test holds them to that), so only the fields
/// whose kind does not fix their name are read for them.
fn named_by_kind_only(kind: FieldKind) -> bool {
    !matches!(
        kind,
        FieldKind::Other | FieldKind::Authorization | FieldKind::HopByHop | FieldKind::Cookie
    )
}

/// The header fields of a request for an event: masked, in order, at most [`HEADERS_MAX`] bytes.
pub fn event_headers(h: &crate::Fields) -> EventHeaders {
    let mut out = EventHeaders {
        text: String::with_capacity(
            h.iter()
                .map(|(n, v)| n.len() + v.as_bytes().len())
                .sum::<usize>()
                .min(HEADERS_MAX),
        ),
        ends: Vec::with_capacity(h.len()),
    };
    let mut scratch = String::with_capacity(256);
    shown_headers(h, &mut scratch, |name, value| match value {
        Shown::Plain(v) => out.push(name, &String::from_utf8_lossy(v)),
        Shown::Text(v) => out.push(name, v),
    });
    out
}

/// Calls `each` with the name and value of every field an event shows, in order: masked, at most
/// [`HEADERS_MAX`] bytes. [`event_headers`] and the event line written straight from a
/// transaction both read the fields through this one loop. `scratch`: room for a masked value.
pub(crate) fn shown_headers(
    h: &crate::Fields,
    scratch: &mut String,
    mut each: impl FnMut(&str, Shown<'_>),
) {
    let mut room = HEADERS_MAX;
    for (n, kind, value) in h.iter_kinds() {
        let bytes = value.as_bytes();
        // Most fields are shown as they are: a value that is short, not a credential nor a
        // cookie, and plain ASCII is what `mask_into` would copy, so it is not copied.
        let value = if bytes.len() <= VALUE_MAX
            && (named_by_kind_only(kind) || kind != FieldKind::Cookie && !secret_name(n))
            && plain_ascii(bytes)
        {
            Shown::Plain(bytes)
        } else {
            scratch.clear();
            mask_into(n, bytes, scratch);
            Shown::Text(scratch)
        };
        let cost = n.len() + value.len();
        if cost > room {
            break;
        }
        room -= cost;
        each(n, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`mask_into`] on its own.
    fn masked_header(name: &str, value: &[u8]) -> String {
        let mut out = String::new();
        mask_into(name, value, &mut out);
        out
    }
    use std::sync::Arc;

    use serde_json::Value;

    use crate::policy;
    use crate::resolver::NoResolver;
    use crate::transaction::{ConnInfo, Transaction};

    /// The event of a request whose query carries a script, as the proxy logs it.
    fn event_for(target: &str, version: http::Version) -> Value {
        let doc = br#"{"policy":{"name":"p","template":{"name":"POLICY_TEMPLATE_NGINX_BASE"},"enforcementMode":"blocking"}}"#;
        let p = policy::load(doc, "", &NoResolver).expect("policy").policy;
        let conn = ConnInfo {
            peer: "192.0.2.1".parse().expect("ip"),
            tls: false,
        };
        let mut tx = Transaction::new(Arc::new(p), conn);
        let (head, ()) = http::Request::get(target)
            .version(version)
            .body(())
            .expect("request")
            .into_parts();
        let head = crate::RequestHead::from(head);
        tx.on_request_headers(&head);
        serde_json::to_value(tx.finish(&head.headers).expect("an event")).expect("json")
    }

    fn keys(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, v) in m {
                    out.push(k.clone());
                    keys(v, out);
                }
            }
            Value::Array(a) => a.iter().for_each(|v| keys(v, out)),
            _ => {}
        }
    }

    #[test]
    fn http1_and_http2_events_spell_the_uri_and_every_field_name_alike() {
        let target = "/a?q=%3Cscript%3Ealert(1)%3C%2Fscript%3E";
        let h1 = event_for(target, http::Version::HTTP_11);
        let h2 = event_for(
            &format!("http://example.test{target}"),
            http::Version::HTTP_2,
        );
        assert_eq!(h1["uri"], target, "{h1}");
        assert_eq!(h2["uri"], target, "{h2}");
        let mut names = Vec::new();
        keys(&h1, &mut names);
        assert!(names.iter().any(|k| k == "supportId"), "{h1}");
        assert!(names.iter().any(|k| k == "signatureIds"), "{h1}");
        for k in &names {
            assert!(
                k.chars().all(|c| c.is_ascii_alphanumeric()) && k.starts_with(char::is_lowercase),
                "field name {k} is not camelCase: {h1}"
            );
        }
    }

    #[test]
    fn no_kind_named_by_its_kind_alone_carries_a_credential_by_name() {
        for (kind, name) in FieldKind::NAMED {
            if named_by_kind_only(kind) {
                assert!(!secret_name(name), "{name}");
                assert_eq!(FieldKind::of(name), kind, "{name}");
            }
        }
        for kind in [
            FieldKind::Other,
            FieldKind::Authorization,
            FieldKind::HopByHop,
        ] {
            assert!(!named_by_kind_only(kind), "{kind:?}");
        }
    }

    #[test]
    fn credentials_are_masked_and_values_bounded() {
        assert_eq!(
            masked_header("authorization", b"Bearer eyJhbGciOi.x.y"),
            "Bearer ********"
        );
        assert_eq!(masked_header("x-api-key", b"k-123"), "********");
        assert_eq!(
            masked_header("cookie", b"sid=abc; theme=dark"),
            "sid=********; theme=********"
        );
        assert_eq!(masked_header("user-agent", b"Mozilla/5.0"), "Mozilla/5.0");
        assert_eq!(masked_header("x-session-id", b"s1"), "********");
        assert_eq!(masked_header("x-my-apikey", b"k"), "********");
        assert_eq!(masked_header("x-sessio", b"s1"), "s1");
        assert_eq!(masked_header("tokens", b"t"), "********");
        assert_eq!(masked_header("referer", &[b'a'; 5000]).len(), VALUE_MAX);
        let mut h = http::HeaderMap::new();
        for i in 0..40 {
            h.insert(
                http::HeaderName::from_bytes(format!("x-h{i}").as_bytes()).unwrap(),
                http::HeaderValue::from_bytes(&[b'v'; 900]).unwrap(),
            );
        }
        assert_eq!(masked_header("x-latin", b"caf\xe9"), "caf\u{fffd}");
        let kept = event_headers(&crate::Fields::from_map(&h));
        assert!(kept.len() < 40 && !kept.is_empty());
        let bytes: usize = kept.iter().map(|(n, v)| n.len() + v.len()).sum();
        let pairs: Vec<(&str, &str)> = kept.iter().collect();
        assert_eq!(pairs[0], ("x-h0", "v".repeat(900).as_str()));
        assert_eq!(
            serde_json::to_value(&kept).expect("json")[1],
            serde_json::json!(["x-h1", "v".repeat(900)])
        );
        assert!(bytes <= HEADERS_MAX);
    }
}
