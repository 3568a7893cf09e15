//! One request's pass through the engine: ordered phases feeding one [`Verdict`].
//!
//! The proxy drives the phases in order (see `docs/lifecycle.md`):
//! 1. [`Transaction::on_request_headers`] once;
//! 2. if it answered [`Step::InspectBody`], [`Transaction::on_request_body`] for each body chunk and
//!    [`Transaction::on_request_end`] at the end of the body;
//! 3. [`Transaction::on_response_headers`] when the upstream answers;
//! 4. [`Transaction::finish`] always (the logging phase), which yields the event to log, if any.
//!
//! A [`Step::Block`] ends the request: the proxy sends [`Transaction::block_response`] and forwards
//! nothing more. The transaction owns all per-request scratch space; the policy is shared and read-only.

use std::borrow::Cow;
use std::net::IpAddr;
use std::sync::Arc;

use super::event::SecurityEvent;
use super::event_line::LineParts;
use super::policy::{CompiledPolicy, Decision};
use super::response::{self, BlockResponse};
use super::verdict::{Action, BlockReply, Verdict};
use super::violation::Violation;
use portcullis_support::{SupportId, iso8601_utc, now_micros};

/// The room [`Transaction::finish_into`] makes for an event's line before writing it.
const LINE_ROOM: usize = 2048;

/// What the proxy knows about the connection a request came on.
#[derive(Clone, Copy, Debug)]
pub struct ConnInfo {
    /// The peer address of the TCP connection.
    pub peer: IpAddr,
    /// Whether the request arrived over TLS.
    pub tls: bool,
}

/// What the proxy must do after a phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Go on. After the headers phase: the body need not be fed to the engine.
    Forward,
    /// Headers phase: feed the request body to [`Transaction::on_request_body`]; hold it until released.
    InspectBody,
    /// Body phase: the first `n` body bytes (counted from the start of the body) may go upstream;
    /// hold the rest and keep feeding.
    Release(u64),
    /// Body phase: release everything fed so far and forward the rest of the body without feeding it.
    PassRest,
    /// Stop: answer with [`Transaction::block_response`]; nothing more goes upstream.
    Block,
}

/// Per-request state: the policy snapshot, the request facts, and the violations found so far.
pub struct Transaction {
    policy: Arc<CompiledPolicy>,
    conn: ConnInfo,
    support_id: SupportId,
    started_micros: u64,
    method: http::Method,
    uri: http::Uri,
    version: http::Version,
    /// The client address after `trustXff`/`customXffHeaders` are applied.
    client: IpAddr,
    violations: Vec<Violation>,
    /// The last phase's decision on `violations` (none while nothing was found).
    decision: Option<Decision>,
    scratch: super::policy::Scratch,
    /// Body bytes fed so far, when the transaction counts a body of unknown length against the
    /// maximum request length (`policy/checks/length.rs`).
    body_count: Option<u64>,
    /// The policy is done with the body (never planned it, or past its inspection limit): chunks
    /// are only counted and released.
    count_only: bool,
    /// The event shows the request's header fields: the headers phase found a violation, or the
    /// body will be inspected (a violation may follow). A clean bodiless request's event (a
    /// response-phase violation) shows none.
    shows_fields: bool,
    /// Those fields, once the proxy handed them over ([`Transaction::keep_fields`]).
    fields: Option<crate::Fields>,
    /// Method and target as read, for a request refused before it could be parsed
    /// ([`Transaction::refuse`]).
    refused_line: Option<Box<(String, String)>>,
}

impl Transaction {
    pub fn new(policy: Arc<CompiledPolicy>, conn: ConnInfo) -> Self {
        Transaction {
            policy,
            conn,
            support_id: SupportId::random(),
            started_micros: now_micros(),
            method: http::Method::GET,
            uri: http::Uri::default(),
            version: http::Version::HTTP_11,
            client: conn.peer,
            violations: Vec::new(),
            decision: None,
            scratch: Default::default(),
            body_count: None,
            count_only: false,
            shows_fields: false,
            fields: None,
            refused_line: None,
        }
    }

    pub fn support_id(&self) -> SupportId {
        self.support_id
    }

    /// The client address the policy trusts (the peer, or the X-Forwarded-For address when trusted).
    pub fn client(&self) -> IpAddr {
        self.client
    }

    /// Phase 1: request line and headers.
    pub fn on_request_headers(&mut self, head: &crate::RequestHead) -> Step {
        // Cheap clones (the URI shares its bytes); rendered as text only for the event.
        self.method = head.method.clone();
        self.uri = head.uri.clone();
        self.version = head.version;
        self.client = self.policy.client_address(head, self.conn.peer);
        let wants_body =
            self.policy
                .check_headers(head, self.conn.tls, &mut self.scratch, &mut self.violations);
        self.body_count = self
            .policy
            .counts_body_length(head, &self.scratch)
            .then_some(0);
        self.count_only = !wants_body;
        self.shows_fields = wants_body || !self.violations.is_empty();
        if self.decide_if_blocking() {
            return Step::Block;
        }
        if wants_body || self.body_count.is_some() {
            Step::InspectBody
        } else {
            Step::Forward
        }
    }

    /// Copies the request's header fields for the event (when it shows them and none are kept
    /// yet): the caller is about to change or give away the head it passed to
    /// [`Self::on_request_headers`], and the event shows the fields as the policy judged them.
    /// A caller that keeps the head unchanged hands it to [`Self::finish`] instead, so that only
    /// a request that has an event pays for its fields.
    pub fn keep_fields(&mut self, headers: &crate::Fields) {
        if self.shows_fields && self.fields.is_none() {
            self.fields = Some(headers.clone());
        }
    }

    /// Phase 2: one chunk of the request body, in order.
    pub fn on_request_body(&mut self, chunk: &[u8]) -> Step {
        let mut step = Step::Release(0);
        if let Some(n) = self.body_count.as_mut() {
            *n += chunk.len() as u64;
            let (n, only) = (*n, self.count_only);
            let over = self
                .policy
                .check_body_length(&self.scratch, n, &mut self.violations);
            if over && self.decide_if_blocking() {
                return Step::Block;
            }
            if only {
                return Step::Release(n);
            }
            step = Step::Release(n);
        }
        let inspected =
            self.policy
                .check_body_chunk(chunk, &mut self.scratch, &mut self.violations);
        step = match (inspected, step) {
            // Past the inspection limit, a body of unknown length is still counted.
            (Step::PassRest, Step::Release(n)) => {
                self.count_only = true;
                Step::Release(n)
            }
            (s, _) => s,
        };
        if self.decide_if_blocking() {
            Step::Block
        } else {
            step
        }
    }

    /// Phase 2 end: the whole body has been fed.
    pub fn on_request_end(&mut self) -> Step {
        if !self.count_only {
            self.policy
                .check_body_end(&mut self.scratch, &mut self.violations);
        }
        if self.decide_if_blocking() {
            Step::Block
        } else {
            Step::Forward
        }
    }

    /// Phase 2 end, early: the proxy holds no more than `limit` body bytes for inspection and the
    /// body is longer. Raises VIOL_REQUEST_MAX_LENGTH (the rest cannot be inspected) and judges
    /// what was seen as [`Self::on_request_end`] does.
    pub fn on_request_overflow(&mut self, limit: u64) -> Step {
        self.policy
            .check_inspection_overflow(limit, &mut self.violations);
        self.on_request_end()
    }

    /// Whether [`Self::on_response_headers`] reads the header fields. The engine's response phase
    /// (`CompiledPolicy::check_response_headers`) looks at the status only, so a caller without a
    /// `HeaderMap` at hand may pass an empty one; this turns true when a check reads the fields.
    pub fn needs_response_headers(&self) -> bool {
        false
    }

    /// Phase 3: the upstream's response status and headers.
    pub fn on_response_headers(&mut self, status: u16, headers: &http::HeaderMap) -> Step {
        self.policy
            .check_response_headers(status, headers, &mut self.violations);
        if self.decide_if_blocking() {
            Step::Block
        } else {
            Step::Forward
        }
    }

    /// Re-rates the request after a phase; returns true when it must be blocked now.
    fn decide_if_blocking(&mut self) -> bool {
        if self.violations.is_empty() {
            return false;
        }
        let decision = self.policy.decide(&self.violations, &self.scratch);
        let block = decision.is_block();
        self.decision = Some(decision);
        block
    }

    /// Blocks the request for a reason decided outside the policy (access control: a missing or
    /// refused credential, a rate limit): records `v` and answers with `reply`.
    pub fn deny(&mut self, v: Violation, reply: super::verdict::BlockReply) {
        self.violations.push(v);
        // Rated like every violation that is not an attack signature (2, `policy/checks/rating.rs`).
        let rating = self.decision.as_ref().map_or(0, |d| d.rating).max(2);
        self.decision = Some(Decision {
            action: Action::Block,
            rating,
            derived: Vec::new(),
            reply,
        });
    }

    /// Records a request the proxy refused before the policy could see it (a head that does not
    /// parse, breaks a limit or frames its body in a way the proxy does not forward): `v`, with the
    /// method and target as far as they could be read. The request is blocked whatever the
    /// policy's settings; the proxy answers it itself, so the reply is only a placeholder.
    pub fn refuse(&mut self, method: &str, target: &str, v: Violation) {
        self.refused_line = Some(Box::new((method.to_string(), target.to_string())));
        self.deny(v, BlockReply::DefaultPage);
    }

    /// The verdict so far (pass when no violation has been found).
    pub fn verdict(&self) -> Verdict {
        match &self.decision {
            Some(d) => d
                .clone()
                .into_verdict(self.support_id, self.violations.clone()),
            None => Verdict::pass_with(self.support_id),
        }
    }

    /// The response to send after a [`Step::Block`]. A blocked HEAD request whose page has a
    /// success status gets `403` instead: its answer carries no body, so the status is all that
    /// tells the client it was refused (a redirecting page keeps its status: its `Location` says
    /// where the refusal is explained).
    pub fn block_response(&self) -> BlockResponse {
        let reply = self
            .decision
            .as_ref()
            .map_or(&BlockReply::DefaultPage, |d| &d.reply);
        let mut r = response::render(reply, self.support_id);
        if self.method == http::Method::HEAD && (200..300).contains(&r.status) {
            r.status = 403;
        }
        r
    }

    /// The answer to a request the proxy refused ([`Transaction::refuse`], or a body whose
    /// framing broke half-way): the policy's blocking page under the refusal's `status`, ending
    /// the connection (nothing after a refused request is read).
    pub fn refusal_response(&self, status: u16) -> BlockResponse {
        let mut r = response::render(&self.policy.refusal_page(), self.support_id);
        r.status = status;
        r.headers.retain(|(k, _)| k != "connection");
        r.headers.push(("connection".into(), "close".into()));
        r
    }

    /// Phase 4, always run: the event to log when the request was alarmed or blocked (taken out of
    /// the transaction, which is done then; borrowed, so that a caller need not move it).
    /// `fields`: the request's header fields as the caller holds them (an empty map when it has
    /// none), read unless [`Self::keep_fields`] kept them earlier.
    pub fn finish(&mut self, fields: &crate::Fields) -> Option<SecurityEvent> {
        let verdict = self.event_verdict()?;
        let refused = self.refused_line.take();
        let (method, uri) = request_line(refused.as_deref(), &self.method, &self.uri);
        let (method, uri) = (method.into_owned(), uri.into_owned());
        Some(SecurityEvent {
            support_id: {
                let mut buf = [0; portcullis_support::DECIMAL_MAX];
                portcullis_support::decimal(self.support_id.0, false, &mut buf).to_string()
            },
            time: iso8601_utc(self.started_micros / 1_000_000),
            time_micros: self.started_micros,
            client_ip: portcullis_support::ip_text(self.client),
            method,
            uri,
            protocol: protocol_name(self.version).into_owned(),
            policy: self.policy.name().to_string(),
            action: verdict.action,
            rating: verdict.rating,
            violations: verdict.violations,
            virtual_server: String::new(),
            response_code: 0,
            headers: match (self.shows_fields, self.fields.take()) {
                (true, Some(kept)) => super::event::event_headers(&kept),
                (true, None) => super::event::event_headers(fields),
                (false, _) => Default::default(),
            },
        })
    }

    /// [`Self::finish`] written straight as the event's JSON line, appended to `out`: the line
    /// the event log would write for the event with `virtual_server` and `response_code` filled
    /// in, byte for byte, without the event's strings built and copied on the way. Returns the
    /// event's action and violations (`None`: nothing to log, nothing written).
    pub fn finish_into(
        &mut self,
        fields: &crate::Fields,
        virtual_server: &str,
        response_code: u16,
        out: &mut Vec<u8>,
    ) -> Option<(Action, Vec<Violation>)> {
        let verdict = self.event_verdict()?;
        // Room for most lines at once: grown a step at a time, it would be reallocated several
        // times for every event.
        out.reserve(LINE_ROOM);
        let refused = self.refused_line.take();
        let (method, uri) = request_line(refused.as_deref(), &self.method, &self.uri);
        let mut id = [0; portcullis_support::DECIMAL_MAX];
        let parts = LineParts {
            support_id: portcullis_support::decimal_bytes(self.support_id.0, false, &mut id),
            time: &iso8601_utc(self.started_micros / 1_000_000),
            time_micros: self.started_micros,
            client_ip: &portcullis_support::ip_text(self.client),
            method: &method,
            uri: &uri,
            protocol: &protocol_name(self.version),
            policy: self.policy.name(),
            action: verdict.action,
            rating: verdict.rating,
            violations: &verdict.violations,
            virtual_server,
            response_code,
            // Digits, an ISO 8601 time, an address and a version name, all made here.
            ours: true,
            // A refused request's method is as read; a parsed one is a token.
            method_token: refused.is_none(),
        };
        let kept = self.fields.take();
        let shown = match (self.shows_fields, &kept) {
            (true, Some(kept)) => Some(kept),
            (true, None) => Some(fields),
            (false, _) => None,
        };
        parts.write(out, |list| {
            if let Some(shown) = shown {
                // Room for most masked values at once: grown a step at a time, it would be
                // reallocated for the first few fields of every event.
                let mut scratch = String::with_capacity(256);
                super::event::shown_headers(shown, &mut scratch, |n, v| list.shown(n, v));
            }
        });
        Some((verdict.action, verdict.violations))
    }

    /// The verdict an event reports, with the transaction's violations moved into it (it is done
    /// then); `None` when nothing was found.
    fn event_verdict(&mut self) -> Option<Verdict> {
        // No verdict: nothing was found, nothing to log (and nothing to build).
        let decision = self.decision.take().filter(|d| d.action != Action::Pass)?;
        Some(decision.into_verdict(self.support_id, std::mem::take(&mut self.violations)))
    }
}

/// The method and target an event shows: as read for a refused request, else the request's own.
fn request_line<'a>(
    refused: Option<&'a (String, String)>,
    method: &'a http::Method,
    uri: &'a http::Uri,
) -> (Cow<'a, str>, Cow<'a, str>) {
    if let Some((m, u)) = refused {
        return (Cow::Borrowed(m), Cow::Borrowed(u));
    }
    let target = match uri.path_and_query() {
        Some(pq) => Cow::Borrowed(pq.as_str()),
        // Authority form (CONNECT): there is no path to show.
        None => Cow::Owned(uri.to_string()),
    };
    (Cow::Borrowed(method.as_str()), target)
}

/// The protocol as events name it: what `Debug` writes for `http::Version` (`HTTP/1.1`), the
/// versions a request can have spelled out rather than formatted for each event.
fn protocol_name(v: http::Version) -> Cow<'static, str> {
    Cow::Borrowed(match v {
        http::Version::HTTP_09 => "HTTP/0.9",
        http::Version::HTTP_10 => "HTTP/1.0",
        http::Version::HTTP_11 => "HTTP/1.1",
        http::Version::HTTP_2 => "HTTP/2.0",
        http::Version::HTTP_3 => "HTTP/3.0",
        other => return Cow::Owned(format!("{other:?}")),
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::{ConnInfo, Step, Transaction};
    use crate::policy;
    use crate::resolver::NoResolver;

    fn transaction() -> Transaction {
        let doc = br#"{"policy":{"name":"p","template":{"name":"POLICY_TEMPLATE_NGINX_BASE"},"enforcementMode":"blocking"}}"#;
        let p = policy::load(doc, "", &NoResolver).expect("policy").policy;
        let peer = "192.0.2.1".parse().expect("ip");
        Transaction::new(Arc::new(p), ConnInfo { peer, tls: false })
    }

    fn head(target: &str, fields: &[(&str, &str)]) -> crate::RequestHead {
        let mut b = http::Request::get(target);
        for (n, v) in fields {
            b = b.header(*n, *v);
        }
        b.body(()).expect("request").into_parts().0.into()
    }

    fn names(fields: &crate::event::EventHeaders) -> Vec<&str> {
        fields.iter().map(|(n, _)| n).collect()
    }

    #[test]
    fn an_event_shows_the_fields_the_policy_judged() {
        let attack = "/?q=%3Cscript%3Ealert(1)%3C%2Fscript%3E";
        let judged = head(attack, &[("host", "a"), ("x-a", "1")]);
        let later = head(attack, &[("host", "a"), ("x-b", "2")]);

        // The caller still holds the head: the event reads it at the end.
        let mut tx = transaction();
        assert_eq!(tx.on_request_headers(&judged), Step::Block);
        let ev = tx.finish(&judged.headers).expect("an event");
        assert_eq!(names(&ev.headers), ["host", "x-a"]);

        // The caller changed the head after keeping its fields: the kept ones are shown.
        let mut tx = transaction();
        tx.on_request_headers(&judged);
        tx.keep_fields(&judged.headers);
        tx.keep_fields(&later.headers);
        let ev = tx.finish(&later.headers).expect("an event");
        assert_eq!(names(&ev.headers), ["host", "x-a"]);
    }

    #[test]
    fn a_clean_bodiless_request_keeps_no_fields() {
        let clean = head("/index.html", &[("host", "a")]);
        let mut tx = transaction();
        assert_eq!(tx.on_request_headers(&clean), Step::Forward);
        tx.keep_fields(&clean.headers);
        assert!(tx.fields.is_none());
        // A violation of a later phase is logged without the request's fields, as before the
        // fields were read at the end.
        tx.on_response_headers(500, &http::HeaderMap::new());
        let ev = tx.finish(&clean.headers).expect("an event");
        assert!(ev.headers.is_empty(), "{:?}", ev.headers);
    }

    /// The line [`Transaction::finish_into`] writes, against serde_json's text of the event
    /// [`Transaction::finish`] gives for the same request (its random support id and its time
    /// taken from the line).
    fn line_and_event(run: impl Fn(&mut Transaction) -> crate::Fields) -> (String, String) {
        let mut a = transaction();
        let fields = run(&mut a);
        let mut ev = a.finish(&fields).expect("an event");
        let mut b = transaction();
        let fields = run(&mut b);
        let mut line = Vec::new();
        let (action, violations) = b
            .finish_into(&fields, "/Common/vs", 403, &mut line)
            .expect("a line");
        assert_eq!((action, &violations), (ev.action, &ev.violations));
        let v: serde_json::Value = serde_json::from_slice(&line).expect("json");
        ev.support_id = v["supportId"].as_str().expect("id").to_string();
        ev.time = v["time"].as_str().expect("time").to_string();
        ev.time_micros = v["timeMicros"].as_u64().expect("micros");
        ev.virtual_server = "/Common/vs".into();
        ev.response_code = 403;
        let want = serde_json::to_string(&ev).expect("json");
        (String::from_utf8(line).expect("utf-8"), want)
    }

    #[test]
    fn the_line_written_from_the_transaction_is_the_events_json() {
        let long = "a".repeat(1500);
        let fields = [
            ("host", "a"),
            ("user-agent", "Mozilla/5.0 (X11; Linux x86_64)"),
            ("authorization", "Bearer secret"),
            ("proxy-authorization", "Basic c2VjcmV0"),
            ("keep-alive", "timeout=5"),
            ("x-api-key", "k-123"),
            ("cookie", "sid=1; theme=dark"),
            ("x-quote", "say \"hi\"\t"),
            ("x-back", "a\\b"),
            ("x-latin", "café au lait"),
            ("referer", long.as_str()),
        ];
        let attack = "/p?q=1%27%20OR%20%271%27%3D%271&x=%3Cscript%3E";
        let (line, want) = line_and_event(|t| {
            let h = head(attack, &fields);
            assert_eq!(t.on_request_headers(&h), Step::Block);
            h.headers
        });
        assert_eq!(line, want);
        for shown in [
            r#"["authorization","Bearer ********"]"#,
            r#"["proxy-authorization","Basic ********"]"#,
            r#"["x-api-key","********"]"#,
            r#"["user-agent","Mozilla/5.0 (X11; Linux x86_64)"]"#,
            r#"["keep-alive","timeout=5"]"#,
        ] {
            assert!(line.contains(shown), "{shown} not in {line}");
        }

        // Fields kept before the head changed, and many of them: the bound applies alike.
        let big = "v".repeat(900);
        let many: Vec<(String, &str)> =
            (0..12).map(|i| (format!("x-h{i}"), big.as_str())).collect();
        let many: Vec<(&str, &str)> = many.iter().map(|(n, v)| (n.as_str(), *v)).collect();
        let (line, want) = line_and_event(|t| {
            let h = head(attack, &many);
            t.on_request_headers(&h);
            t.keep_fields(&h.headers);
            crate::Fields::default()
        });
        assert_eq!(line, want);

        // No fields shown (a response-phase violation), and a refused request line.
        let (line, want) = line_and_event(|t| {
            let h = head("/index.html", &[("host", "a"), ("cookie", "sid=1")]);
            t.on_request_headers(&h);
            t.on_response_headers(500, &http::HeaderMap::new());
            h.headers
        });
        assert_eq!(line, want);
        assert!(!line.contains("headers"), "{line}");
        let (line, want) = line_and_event(|t| {
            let v = crate::Violation::new(crate::ViolationKind::ALL[0], crate::Context::Request);
            t.refuse("G\u{1}T", "/a\"b", v);
            crate::Fields::default()
        });
        assert_eq!(line, want);
    }

    #[test]
    fn a_clean_request_writes_no_line() {
        let mut tx = transaction();
        let h = head("/index.html", &[("host", "a")]);
        assert_eq!(tx.on_request_headers(&h), Step::Forward);
        let mut line = Vec::new();
        assert!(tx.finish_into(&h.headers, "vs", 200, &mut line).is_none());
        assert!(line.is_empty());
    }

    #[test]
    fn protocol_names_are_what_debug_writes() {
        use http::Version;
        for v in [
            Version::HTTP_09,
            Version::HTTP_10,
            Version::HTTP_11,
            Version::HTTP_2,
            Version::HTTP_3,
        ] {
            assert_eq!(super::protocol_name(v), format!("{v:?}"));
        }
    }
}
