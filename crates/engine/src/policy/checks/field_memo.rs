//! A per-thread memo of the header fields whose checks found nothing, so that a field a client
//! sends again byte for byte (a keep-alive connection's `User-Agent`, `Accept`,
//! `Accept-Language` on every request, the same fields from every client of an API) costs a
//! comparison instead of its checks: entity pick, byte classes, metacharacters, escapes, the
//! open-redirect gate and the signature scans.
//!
//! Why it is exact: the checks of one field ([`super::fields`]) are a function of the policy, the
//! field's name and its value, except for what this memo never keeps. An entry is the policy's
//! [`CompiledPolicy::id`], the name and the value, compared in full: a hit is the same input,
//! hence the same (empty) outcome. Kept only when the field's checks pushed nothing while no
//! violation that they would have deduplicated (an evasion or HTTP-protocol finding) was already
//! there, and only for fields whose checks read nothing else: never a `Cookie`, a `Referer` (its
//! page's query is judged against the `Host`), a value the open-redirect check judged (against the
//! `Host`), a field of a policy with header-located parameters (they count and repeat across the
//! request), or an empty value. Whether a name repeats is the request's, checked before the memo.
//!
//! Why by position: the entry of a field is looked up at its place in the head (the first
//! [`FIELDS`] places), so a look-up compares bytes without hashing them; clients repeat their fields
//! in the same order. A different field at a place replaces the entry (one copy of its bytes).
//!
//! Secrets stay out as they stay out of the scan memo (`signatures::memo`): a field the scan memo
//! would not keep (a masked header, credentials, no signature check to make) is not kept here, so
//! the time a request takes does not tell whether someone else sent the same secret.

use std::cell::RefCell;

use crate::policy::compile::compiled::CompiledPolicy;

/// Places in a head remembered (later fields are checked every time).
const FIELDS: usize = 32;
/// Longest field (name and value) remembered.
const MAX_FIELD: usize = 512;

#[derive(Default)]
struct Entry {
    /// [`CompiledPolicy::id`] of the policy that judged the field; 0 while the entry is empty.
    policy: u64,
    name_len: usize,
    /// The name, then the value.
    bytes: Vec<u8>,
}

/// This thread's memo, lent by [`with_field_memo`] for one request's fields.
pub(in crate::policy) struct FieldMemo {
    entries: Vec<Entry>,
}

impl FieldMemo {
    /// Whether the field `name: value` at place `at` was judged clean by `policy`.
    #[inline]
    pub fn clean(&self, policy: &CompiledPolicy, at: usize, name: &str, value: &[u8]) -> bool {
        self.entries.get(at).is_some_and(|e| {
            e.policy == policy.id
                && e.name_len == name.len()
                && e.bytes.len() == name.len() + value.len()
                && e.bytes[..name.len()] == *name.as_bytes()
                && e.bytes[name.len()..] == *value
        })
    }

    /// Remembers that `policy` judged the field `name: value` at place `at` clean.
    pub fn keep(&mut self, policy: &CompiledPolicy, at: usize, name: &str, value: &[u8]) {
        if name.len() + value.len() > MAX_FIELD {
            return;
        }
        let Some(e) = self.entries.get_mut(at) else {
            return;
        };
        e.policy = policy.id;
        e.name_len = name.len();
        e.bytes.clear();
        e.bytes.extend_from_slice(name.as_bytes());
        e.bytes.extend_from_slice(value);
    }
}

thread_local! {
    static MEMO: RefCell<Option<FieldMemo>> = const { RefCell::new(None) };
}

/// Runs `f` with this thread's field memo (made on first use); `None` when it is already lent
/// further up the stack, and the fields are then checked without it, with the same results.
pub(in crate::policy) fn with_field_memo<R>(f: impl FnOnce(Option<&mut FieldMemo>) -> R) -> R {
    MEMO.with(|cell| match cell.try_borrow_mut() {
        Ok(mut memo) => f(Some(memo.get_or_insert_with(|| {
            FieldMemo {
                entries: std::iter::repeat_with(Entry::default)
                    .take(FIELDS)
                    .collect(),
            }
        }))),
        Err(_) => f(None),
    })
}

#[cfg(test)]
mod tests {
    use super::with_field_memo;
    use crate::RequestHead;
    use crate::policy::compile::compiled::{CompiledPolicy, Scratch};
    use crate::resolver::NoResolver;

    const POLICY: &[u8] = br#"{"policy": {"name": "m", "template": {"name": "POLICY_TEMPLATE_NGINX_BASE"},
        "enforcementMode": "blocking",
        "headers": [{"name": "*", "type": "wildcard"}, {"name": "x-secret", "maskValueInLogs": true},
                    {"name": "accept-charset", "percentDecoding": true}],
        "blocking-settings": {
          "violations": [{"name": "VIOL_HTTP_PROTOCOL", "alarm": true, "block": true},
                         {"name": "VIOL_EVASION", "alarm": true, "block": true},
                         {"name": "VIOL_HEADER_METACHAR", "alarm": true, "block": true},
                         {"name": "VIOL_REDIRECT", "alarm": true, "block": true}],
          "http-protocols": [{"description": "High ASCII characters in headers", "enabled": true},
                             {"description": "Header name with no header value", "enabled": true}]}}}"#;

    const UA: &[u8] = b"Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101 Firefox/126.0";

    fn head(host: &str, fields: &[(&str, &[u8])]) -> RequestHead {
        let mut b = http::Request::get("/a/b?c=d").header("host", host);
        for (n, v) in fields {
            b = b.header(*n, http::HeaderValue::from_bytes(v).expect("value"));
        }
        b.body(()).expect("request").into_parts().0.into()
    }

    fn findings(p: &CompiledPolicy, h: &RequestHead) -> String {
        let mut out = Vec::new();
        p.check_headers(h, false, &mut Scratch::default(), &mut out);
        format!("{out:?}")
    }

    fn heads() -> Vec<RequestHead> {
        let browser: &[(&str, &[u8])] = &[
            ("user-agent", UA),
            ("accept", b"application/json"),
            ("accept-language", b"en-US,en;q=0.8"),
            ("authorization", b"Bearer abc.def.ghi"),
            ("x-request-id", b"4f8b1c2e-9d3a-4e5b-8f6a-123456789abc"),
        ];
        vec![
            head("a.example", browser),
            head("b.example", browser),
            head(
                "a.example",
                &[("user-agent", b"<script>alert(1)</script>"), browser[1]],
            ),
            // The second high byte's finding is the first's (deduplicated): not a clean field.
            head(
                "a.example",
                &[("x-a", b"caf\xc3\xa9"), ("x-b", b"caf\xc3\xa9")],
            ),
            head("a.example", &[("x-c", b"plain"), ("x-b", b"caf\xc3\xa9")]),
            head("a.example", &[("x-c", b"plain"), ("x-b", b"plain")]),
            // Judged against the request's own host.
            head("c.example", &[("x-forwarded-host", b"a.example.evil.test")]),
            head("a.example", &[("x-forwarded-host", b"a.example.evil.test")]),
            head("c.example", &[("x-next", b"https://a.example.evil.test/x")]),
            head("a.example", &[("x-next", b"https://a.example.evil.test/x")]),
            head(
                "a.example",
                &[("referer", b"http://a.example/p?q=<script>x</script>")],
            ),
            head(
                "c.example",
                &[("referer", b"http://a.example/p?q=<script>x</script>")],
            ),
            head("a.example", &[("x-e", b""), ("user-agent", UA)]),
            head("a.example", &[("user-agent", UA), ("user-agent", UA)]),
            head(
                "a.example",
                &[("x-p", b"a%0d%0ab"), ("x-q", b"1' or '1'='1")],
            ),
            head("a.example", &[("cookie", b"a=b"), ("x-q", b"plain")]),
            head(
                "a.example",
                &[
                    ("accept-charset", b"a%00b"),
                    ("accept-charset", b"%3Cscript%3E"),
                ],
            ),
            head(
                "a.example",
                &[("accept-charset", b"a%2500b"), ("x-secret", b"s3cr3t")],
            ),
            // The second field's finding is the first's (deduplicated): not a clean field.
            head(
                "a.example",
                &[("accept-charset", b"a%00b"), ("accept-charset", b"a%2500b")],
            ),
            head(
                "a.example",
                &[("x-c", b"plain"), ("accept-charset", b"a%2500b")],
            ),
        ]
    }

    #[test]
    fn answers_from_the_memo_are_those_of_the_checks() {
        let p = crate::policy::load(POLICY, "m.json", &NoResolver)
            .expect("loads")
            .policy;
        // What each head gives on a thread whose memo is empty.
        let hs = heads();
        let alone: Vec<String> = std::thread::scope(|t| {
            hs.iter()
                .map(|h| t.spawn(|| findings(&p, h)).join().expect("thread"))
                .collect()
        });
        assert!(alone[3].contains("High ASCII"), "{}", alone[3]);
        assert!(alone[4].contains("High ASCII"), "{}", alone[4]);
        assert!(alone[2].contains("AttackSignature"), "{}", alone[2]);
        for (clean, flagged) in [(6, 7), (8, 9)] {
            assert_eq!(alone[clean], "[]");
            assert!(alone[flagged].contains("Redirect"), "{}", alone[flagged]);
        }
        assert!(alone[19].contains("Null in request"), "{}", alone[19]);
        for (i, a) in hs.iter().enumerate() {
            for (j, b) in hs.iter().enumerate() {
                for (k, h) in [(i, a), (j, b), (i, a), (j, b)] {
                    assert_eq!(findings(&p, h), alone[k], "head {k} after {i} and {j}");
                }
            }
        }
    }

    #[test]
    fn clean_fields_are_kept_and_credentials_are_not() {
        let p = crate::policy::load(POLICY, "m.json", &NoResolver)
            .expect("loads")
            .policy;
        let h = head(
            "a.example",
            &[
                ("user-agent", UA),
                ("authorization", b"Basic dXNlcjpwYXNz"),
                ("x-secret", b"s3cr3t"),
                ("x-request-id", b"4f8b1c2e"),
            ],
        );
        findings(&p, &h);
        let other = crate::policy::load(POLICY, "m.json", &NoResolver)
            .expect("loads")
            .policy;
        with_field_memo(|m| {
            let m = m.expect("memo");
            for (at, (name, _, v)) in h.headers.iter_kinds().enumerate() {
                let kept = m.clean(&p, at, name, v.as_bytes());
                assert_eq!(
                    kept,
                    !matches!(name, "authorization" | "x-secret"),
                    "{name}"
                );
                // Another policy's checks are its own.
                assert!(!m.clean(&other, at, name, v.as_bytes()), "{name}");
            }
        });
    }
}
