//! A security event as the event log's JSON line, written straight into the log's buffer: byte for
//! byte what serde_json makes of the event's `Serialize` (the tests compare the two), at a fraction
//! of the cost. The event log writes one line per blocked request, and serde_json escapes strings
//! one byte at a time through its formatter; here a run of bytes that need no escape is found eight
//! at a time and copied whole. The `Serialize` impls stay what the stores and the admin API read.

use portcullis_support::{DECIMAL_MAX, decimal_bytes};

use super::event::{SecurityEvent, Shown};
use super::json_plain::plain_run;
use super::verdict::Action;
use super::violation::{Context, Violation};

impl SecurityEvent {
    /// Appends the event as one compact JSON object (no newline): the same text as
    /// `serde_json::to_vec(self)`.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        let parts = LineParts {
            support_id: self.support_id.as_bytes(),
            time: &self.time,
            time_micros: self.time_micros,
            client_ip: &self.client_ip,
            method: &self.method,
            uri: &self.uri,
            protocol: &self.protocol,
            policy: &self.policy,
            action: self.action,
            rating: self.rating,
            violations: &self.violations,
            virtual_server: &self.virtual_server,
            response_code: self.response_code,
            // An event read back from a store may hold any text in any field.
            ours: false,
            method_token: false,
        };
        parts.write(out, |list| {
            for (name, value) in self.headers.iter() {
                list.pair(name, value);
            }
        });
    }
}

/// The fields of an event as its line reads them, borrowed: from a [`SecurityEvent`], or from the
/// transaction that would otherwise build one only to have it written
/// (`Transaction::finish_into`). Both go through [`LineParts::write`], so the two lines cannot
/// differ.
pub(crate) struct LineParts<'a> {
    /// The id's text: bytes, so that the transaction's own digits go in without a UTF-8 check
    /// (they are ASCII by construction); an event's are its string's bytes.
    pub support_id: &'a [u8],
    pub time: &'a str,
    pub time_micros: u64,
    pub client_ip: &'a str,
    pub method: &'a str,
    pub uri: &'a str,
    pub protocol: &'a str,
    pub policy: &'a str,
    pub action: Action,
    pub rating: u8,
    pub violations: &'a [Violation],
    pub virtual_server: &'a str,
    pub response_code: u16,
    /// `support_id`, `time`, `client_ip` and `protocol` are the transaction's own text (digits, a
    /// timestamp, an address, a version name): nothing in them needs an escape, so they are
    /// copied without the escape scan.
    pub ours: bool,
    /// `method` is a parsed method, an HTTP token: no quote, backslash or control byte.
    pub method_token: bool,
}

/// The `headers` member being written: present only when it has a pair (as serde skips an empty
/// list).
pub(crate) struct HeaderList<'o> {
    out: &'o mut Vec<u8>,
    pairs: usize,
}

impl HeaderList<'_> {
    /// Appends the field `name: value`.
    pub fn pair(&mut self, name: &str, value: &str) {
        self.name(name);
        string(self.out, value);
        self.out.push(b']');
    }

    /// Appends a field as [`shown_headers`](super::event::shown_headers) gives it: a plain
    /// value copied as it is, without a second look at its bytes.
    pub fn shown(&mut self, name: &str, value: Shown<'_>) {
        match value {
            Shown::Text(v) => self.pair(name, v),
            Shown::Plain(v) => {
                self.name(name);
                self.out.push(b'"');
                self.out.extend_from_slice(v);
                self.out.extend_from_slice(b"\"]");
            }
        }
    }

    /// Opens a pair and writes its name.
    fn name(&mut self, name: &str) {
        let before: &[u8] = match self.pairs {
            0 => b",\"headers\":[[",
            _ => b",[",
        };
        self.out.extend_from_slice(before);
        self.pairs += 1;
        string(self.out, name);
        self.out.push(b',');
    }
}

impl LineParts<'_> {
    /// Appends the line (no newline); `headers` gives the header fields, in order.
    pub fn write(&self, out: &mut Vec<u8>, headers: impl FnOnce(&mut HeaderList<'_>)) {
        out.extend_from_slice(b"{\"supportId\":");
        field(out, self.support_id, self.ours);
        out.extend_from_slice(b",\"time\":");
        field(out, self.time.as_bytes(), self.ours);
        out.extend_from_slice(b",\"timeMicros\":");
        number(out, self.time_micros);
        out.extend_from_slice(b",\"clientIp\":");
        field(out, self.client_ip.as_bytes(), self.ours);
        out.extend_from_slice(b",\"method\":");
        field(out, self.method.as_bytes(), self.method_token);
        out.extend_from_slice(b",\"uri\":");
        string(out, self.uri);
        out.extend_from_slice(b",\"protocol\":");
        field(out, self.protocol.as_bytes(), self.ours);
        out.extend_from_slice(b",\"policy\":");
        string(out, self.policy);
        out.extend_from_slice(b",\"action\":\"");
        out.extend_from_slice(action_name(self.action).as_bytes());
        out.extend_from_slice(b"\",\"rating\":");
        number(out, u64::from(self.rating));
        out.extend_from_slice(b",\"violations\":[");
        for (i, v) in self.violations.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            violation(out, v);
        }
        out.push(b']');
        if !self.virtual_server.is_empty() {
            out.extend_from_slice(b",\"virtualServerName\":");
            string(out, self.virtual_server);
        }
        if self.response_code != 0 {
            out.extend_from_slice(b",\"responseCode\":");
            number(out, u64::from(self.response_code));
        }
        let mut list = HeaderList { out, pairs: 0 };
        headers(&mut list);
        if list.pairs > 0 {
            list.out.push(b']');
        }
        list.out.push(b'}');
    }
}

fn violation(out: &mut Vec<u8>, v: &Violation) {
    out.extend_from_slice(b"{\"kind\":\"");
    out.extend_from_slice(v.kind.name().as_bytes());
    out.extend_from_slice(b"\",\"context\":\"");
    out.extend_from_slice(context_name(v.context).as_bytes());
    out.push(b'"');
    if let Some(name) = &v.name {
        out.extend_from_slice(b",\"name\":");
        string(out, name);
    }
    if !v.snippet.is_empty() {
        out.extend_from_slice(b",\"snippet\":");
        string(out, &v.snippet);
    }
    if !v.detail.is_empty() {
        out.extend_from_slice(b",\"detail\":");
        string(out, &v.detail);
    }
    if !v.signature_ids.is_empty() {
        out.extend_from_slice(b",\"signatureIds\":[");
        for (i, id) in v.signature_ids.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            number(out, u64::from(*id));
        }
        out.push(b']');
    }
    if v.staged {
        out.extend_from_slice(b",\"staged\":true");
    }
    out.push(b'}');
}

/// The names `#[serde(rename_all = "lowercase")]` gives the actions.
fn action_name(a: Action) -> &'static str {
    match a {
        Action::Pass => "pass",
        Action::Alarm => "alarm",
        Action::Block => "block",
    }
}

/// The names `#[serde(rename_all = "kebab-case")]` gives the contexts.
fn context_name(c: Context) -> &'static str {
    match c {
        Context::Request => "request",
        Context::Url => "url",
        Context::Query => "query",
        Context::Parameter => "parameter",
        Context::Header => "header",
        Context::Cookie => "cookie",
        Context::Body => "body",
        Context::Json => "json",
        Context::Xml => "xml",
        Context::Grpc => "grpc",
    }
}

/// A string member of the line, `s` the bytes of a `str`: copied between quotes when `plain`
/// says it holds nothing to escape (the writer's caller knows it by construction), else escaped
/// as [`string`] escapes it.
fn field(out: &mut Vec<u8>, s: &[u8], plain: bool) {
    if plain {
        debug_assert!(super::json_plain::plain_run(s) == s.len(), "{s:?}");
        out.push(b'"');
        out.extend_from_slice(s);
        out.push(b'"');
    } else {
        escaped(out, s);
    }
}

fn number(out: &mut Vec<u8>, n: u64) {
    let mut buf = [0; DECIMAL_MAX];
    out.extend_from_slice(decimal_bytes(n, false, &mut buf));
}

/// `s` as a JSON string, escaped as serde_json escapes it: `"`, `\`, and the control bytes (the
/// five with a short form, the others as `\u00xx`); everything else, non-ASCII included, as is.
fn string(out: &mut Vec<u8>, s: &str) {
    escaped(out, s.as_bytes());
}

/// [`string`] of the bytes of a `str` (the escapes keep UTF-8 text UTF-8; other bytes would
/// make the line invalid).
fn escaped(out: &mut Vec<u8>, b: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    let (mut start, mut i) = (0, 0);
    loop {
        // Most strings of an event need no escape: their runs are found a word at a time.
        i += plain_run(&b[i..]);
        let Some(&c) = b.get(i) else { break };
        let short = match c {
            b'"' => b'"',
            b'\\' => b'\\',
            b'\n' => b'n',
            b'\r' => b'r',
            b'\t' => b't',
            0x08 => b'b',
            0x0c => b'f',
            // A run ends only at a quote, a backslash or a control byte.
            _ => b'u',
        };
        out.extend_from_slice(&b[start..i]);
        out.push(b'\\');
        out.push(short);
        if short == b'u' {
            out.extend_from_slice(b"00");
            out.push(HEX[usize::from(c >> 4)]);
            out.push(HEX[usize::from(c & 0xf)]);
        }
        i += 1;
        start = i;
    }
    out.extend_from_slice(&b[start..]);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::violation::ViolationKind;

    fn line(e: &SecurityEvent) -> String {
        let mut out = Vec::new();
        e.write_json(&mut out);
        String::from_utf8(out).expect("utf-8")
    }

    #[test]
    fn strings_escape_as_serde_json_escapes_them() {
        let mut cases: Vec<String> = vec![
            String::new(),
            "plain ascii text longer than one word".into(),
            "q\"uote\\back/slash".into(),
            "\u{0}\u{1}\u{8}\u{9}\u{a}\u{b}\u{c}\u{d}\u{1f}\u{7f} end".into(),
            "é中文🙂 and \"quoted\" after eight".into(),
            "<script>alert(document.cookie)</script>".into(),
        ];
        // Every byte value at every offset of a word, so the word test meets each one in each lane.
        for c in (0u8..=0x7f).map(char::from).chain(['é', '\u{2028}']) {
            for pad in 0..9 {
                cases.push(format!("{}{c}{}", "a".repeat(pad), "b".repeat(9 - pad)));
            }
            // Shorter than a word, and a word and a piece: the last word padded or overlapping.
            for pad in 0..16 {
                cases.push(format!("{}{c}", "a".repeat(pad)));
            }
        }
        for s in &cases {
            let mut out = Vec::new();
            string(&mut out, s);
            let want = serde_json::to_string(s).expect("json");
            assert_eq!(String::from_utf8(out).expect("utf-8"), want, "{s:?}");
        }
    }

    #[test]
    fn an_event_reads_as_its_serde_json() {
        let mut e = SecurityEvent::sample("9197345846373499510");
        assert_eq!(line(&e), serde_json::to_string(&e).expect("json"));
        e.time = "2026-11-27T16:10:58Z".into();
        e.time_micros = u64::MAX;
        e.rating = 255;
        e.uri = "/a?q=1%27%20OR\t\"x\"".into();
        e.virtual_server = String::new();
        e.response_code = 0;
        e.action = Action::Alarm;
        e.headers = [
            ("host", "api.example.test"),
            ("authorization", "Bearer ********"),
            ("x-odd", "tab\there \u{1} é"),
        ]
        .into_iter()
        .collect();
        let contexts = [
            Context::Request,
            Context::Url,
            Context::Query,
            Context::Parameter,
            Context::Header,
            Context::Cookie,
            Context::Body,
            Context::Json,
            Context::Xml,
            Context::Grpc,
        ];
        for (i, c) in contexts.into_iter().enumerate() {
            let mut v = Violation::new(ViolationKind::ALL[i * 7], c);
            if i % 2 == 0 {
                v = v.named(format!("n\"{i}"));
            }
            if i % 3 == 0 {
                v = v.snippet(b"1' OR '1'='1\n");
            }
            if i % 4 == 0 {
                v = v.detail("metacharacter 0x27");
            }
            if i % 5 == 0 {
                v = v.signatures(vec![0, 300001000, u32::MAX]);
            }
            v.staged = i % 3 == 1;
            e.violations.push(v);
        }
        assert_eq!(line(&e), serde_json::to_string(&e).expect("json"));
        for a in [Action::Pass, Action::Block] {
            e.action = a;
            e.response_code = 403;
            e.virtual_server = "/Common/vs".into();
            assert_eq!(line(&e), serde_json::to_string(&e).expect("json"));
        }
    }
}
