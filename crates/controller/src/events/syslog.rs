//! RFC 5424 formatting of a security event, and RFC 6587 octet-counting framing for TCP (the
//! framing RFC 5425 uses over TLS too).
//!
//! `<PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID [asm@32473 k="v" ...] MSG`: PRI is
//! facility × 8 + severity (3 `err` for a blocked request, 4 `warning` for an alarmed one); the
//! timestamp is UTC with microseconds; header fields are printable US-ASCII cut to their RFC
//! lengths (NILVALUE `-` when empty); PARAM-VALUEs escape `"`, `\` and `]`; the MSG is the
//! entry's format (`key="value"` pairs, a user-defined string, JSON, or a CEF or LEEF record from
//! `super::siem`, which carries every field itself, so the structured data is then `-`) with line
//! breaks escaped so a file holds one message per line. 32473 is the private enterprise number reserved for
//! documentation (RFC 5612).

use std::fmt::Write as _;

use super::config::MsgFormat;
use portcullis_engine::{Action, SecurityEvent};
use portcullis_support::iso8601_utc;

/// The SD-ID of the structured data element.
pub const SD_ID: &str = "asm@32473";

/// The header fields that do not come from the event.
pub struct Header<'a> {
    pub facility: u8,
    pub hostname: &'a str,
    pub app_name: &'a str,
    pub procid: &'a str,
    /// Longest message (bytes); the MSG part is cut to fit.
    pub max_len: usize,
    /// The fullPath of the policy that decided (see [`policy_path`]).
    pub policy: &'a str,
}

/// `YYYY-MM-DDThh:mm:ss.ffffffZ`.
pub fn timestamp(micros: u64) -> String {
    let s = iso8601_utc(micros / 1_000_000);
    format!("{}.{:06}Z", s.trim_end_matches('Z'), micros % 1_000_000)
}

/// A header field: printable US-ASCII (33–126) only, at most `max` characters, `-` if empty.
pub fn header_field(s: &str, max: usize) -> String {
    let out: String = s
        .chars()
        .filter(|c| ('!'..='~').contains(c))
        .take(max)
        .collect();
    if out.is_empty() { "-".into() } else { out }
}

/// A PARAM-VALUE: `"`, `\` and `]` are escaped with a backslash (RFC 5424 6.3.3).
pub fn param_value(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '"' | '\\' | ']') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The fullPath of the policy an event names: the policy attached to its virtual server when
/// that policy has this name, else the name itself when it is a path, else `/Common/<name>`.
pub fn policy_path(name: &str, attached: Option<&str>) -> String {
    match attached {
        Some(full_path) if full_path == name || full_path.rsplit('/').next() == Some(name) => {
            full_path.to_string()
        }
        _ if name.starts_with('/') => name.to_string(),
        _ => format!("/Common/{name}"),
    }
}

fn status(ev: &SecurityEvent) -> &'static str {
    match ev.action {
        Action::Block => "blocked",
        Action::Alarm => "alerted",
        Action::Pass => "passed",
    }
}

/// The path and the query string of an event's URI (origin or absolute form).
pub fn split_uri(uri: &str) -> (&str, &str) {
    // Absolute form (`http://host/p?q`, HTTP/2) only: a `://` in an origin-form query string
    // (`/r?next=http://h/x`) is not a scheme.
    let path_start = match uri.starts_with('/') {
        true => 0,
        false => uri
            .find("://")
            .and_then(|i| uri[i + 3..].find('/').map(|j| i + 3 + j))
            .unwrap_or(0),
    };
    let rest = &uri[path_start..];
    rest.split_once('?').unwrap_or((rest, ""))
}

/// The named fields of an event, as the `predefined` format and `%field%` placeholders use them.
pub fn fields(ev: &SecurityEvent, h: &Header<'_>) -> Vec<(&'static str, String)> {
    let (path, query) = split_uri(&ev.uri);
    let join = |f: &dyn Fn(&portcullis_engine::Violation) -> Option<String>| {
        ev.violations.iter().filter_map(f).collect::<Vec<_>>()
    };
    let names = join(&|v| Some(v.kind.name().to_string())).join(",");
    let sigs = ev
        .violations
        .iter()
        .flat_map(|v| v.signature_ids.iter().map(u32::to_string))
        .collect::<Vec<_>>()
        .join(",");
    let details = join(&|v| {
        let mut d = v.kind.name().to_string();
        if let Some(n) = &v.name {
            let _ = write!(d, " {n}");
        }
        if !v.detail.is_empty() {
            let _ = write!(d, ": {}", v.detail);
        }
        Some(d)
    })
    .join("; ");
    let severity = if ev.action == Action::Block {
        "Error"
    } else {
        "Warning"
    };
    vec![
        ("unit_hostname", h.hostname.to_string()),
        ("date_time", ev.time.clone()),
        ("support_id", ev.support_id.clone()),
        ("request_status", status(ev).to_string()),
        ("response_code", ev.response_code.to_string()),
        ("ip_client", ev.client_ip.clone()),
        ("method", ev.method.clone()),
        ("protocol", ev.protocol.clone()),
        ("uri", path.to_string()),
        ("query_string", query.to_string()),
        ("vs_name", ev.virtual_server.clone()),
        ("policy_name", h.policy.to_string()),
        ("violations", names),
        ("violation_details", details),
        ("sig_ids", sigs),
        ("violation_rating", ev.rating.to_string()),
        ("severity", severity.to_string()),
    ]
}

/// Escapes a value inside `key="value"` pairs and removes line breaks.
fn pair_value(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\r' => out.push_str("\\r"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

fn msg(ev: &SecurityEvent, format: &MsgFormat, h: &Header<'_>) -> String {
    match format {
        MsgFormat::Pairs { delimiter } => fields(ev, h)
            .iter()
            .map(|(k, v)| format!("{k}=\"{}\"", pair_value(v)))
            .collect::<Vec<_>>()
            .join(delimiter),
        MsgFormat::User(template) => {
            let mut out = template.clone();
            for (k, v) in fields(ev, h) {
                out = out.replace(&format!("%{k}%"), &v);
            }
            out.replace('\r', "\\r").replace('\n', "\\n")
        }
        // serde_json escapes control characters, so JSON never contains a raw line break.
        MsgFormat::Json => super::siem::json_event(ev, h).to_string(),
        MsgFormat::Cef => super::siem::cef(ev, h),
        MsgFormat::Leef => super::siem::leef(ev, h),
    }
}

/// The RFC 5424 message for `ev`, at most `h.max_len` bytes (the MSG part is cut on a character
/// boundary; the header and structured data are always whole).
pub fn message(h: &Header<'_>, ev: &SecurityEvent, format: &MsgFormat) -> String {
    let severity = if ev.action == Action::Block { 3 } else { 4 };
    let pri = u16::from(h.facility.min(23)) * 8 + severity;
    let mut out = format!(
        "<{pri}>1 {} {} {} {} {} ",
        timestamp(ev.time_micros),
        header_field(h.hostname, 255),
        header_field(h.app_name, 48),
        header_field(h.procid, 128),
        header_field(status(ev), 32),
    );
    if matches!(format, MsgFormat::Cef | MsgFormat::Leef) {
        // The record carries every field itself; SIEM parsers look for it right after the header.
        out.push_str("- ");
    } else {
        out.push('[');
        out.push_str(SD_ID);
        let names: Vec<&str> = ev.violations.iter().map(|v| v.kind.name()).collect();
        for (k, v) in [
            ("supportId", ev.support_id.as_str()),
            ("requestStatus", status(ev)),
            ("clientIp", ev.client_ip.as_str()),
            ("virtualServer", ev.virtual_server.as_str()),
            ("policy", h.policy),
            ("violations", &names.join(",")),
            ("violationRating", &ev.rating.to_string()),
        ] {
            let _ = write!(out, " {k}=\"{}\"", param_value(v));
        }
        out.push_str("] ");
    }
    let body = msg(ev, format, h);
    let room = h.max_len.saturating_sub(out.len());
    let mut cut = body.len().min(room);
    while !body.is_char_boundary(cut) {
        cut -= 1;
    }
    out.push_str(&body[..cut]);
    out
}

/// RFC 6587 octet counting: `LEN SP MSG`.
pub fn octet_frame(msg: &str) -> Vec<u8> {
    let mut f = format!("{} ", msg.len()).into_bytes();
    f.extend_from_slice(msg.as_bytes());
    f
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use portcullis_engine::{Context, Violation, ViolationKind};

    /// A blocked request's event with characters every format must escape (shared by the
    /// format tests of this module's siblings).
    pub fn event() -> SecurityEvent {
        SecurityEvent {
            support_id: "1234567890123456789".into(),
            time: "2026-11-22T06:25:26Z".into(),
            time_micros: 1_795_328_726_000_042,
            client_ip: "192.0.2.7".into(),
            method: "GET".into(),
            uri: "/api/items?q=1%27+or+1=1".into(),
            protocol: "HTTP/1.1".into(),
            policy: "demo_api_policy".into(),
            action: Action::Block,
            rating: 4,
            violations: vec![
                Violation::new(ViolationKind::AttackSignature, Context::Query)
                    .named("q")
                    .detail("SQL \"injection\"] \\ end")
                    .signatures(vec![200002147]),
            ],
            virtual_server: "/Common/vs \"one\"]".into(),
            response_code: 403,
            headers: Default::default(),
        }
    }

    pub fn header(max_len: usize) -> Header<'static> {
        Header {
            facility: 16,
            hostname: "waf-1",
            app_name: "portcullis",
            procid: "42",
            max_len,
            policy: "/Common/demo_api_policy",
        }
    }

    #[test]
    fn header_and_structured_data_follow_rfc5424() {
        let m = message(
            &header(65536),
            &event(),
            &MsgFormat::Pairs {
                delimiter: ",".into(),
            },
        );
        assert!(
            m.starts_with("<131>1 2026-11-22T06:25:26.000042Z waf-1 portcullis 42 blocked [asm@32473 supportId=\"1234567890123456789\" requestStatus=\"blocked\""),
            "{m}"
        );
        assert!(m.contains(r#"virtualServer="/Common/vs \"one\"\]""#), "{m}");
        assert!(
            m.contains("violations=\"VIOL_ATTACK_SIGNATURE\" violationRating=\"4\"] "),
            "{m}"
        );
        assert!(
            m.contains(r#"support_id="1234567890123456789",request_status="blocked""#),
            "{m}"
        );
        assert!(
            m.contains(r#"uri="/api/items",query_string="q=1%27+or+1=1""#),
            "{m}"
        );
        assert!(
            m.contains(r#"violation_details="VIOL_ATTACK_SIGNATURE q: SQL \"injection\"] \\ end""#),
            "{m}"
        );
        assert!(m.contains(r#"sig_ids="200002147""#), "{m}");
        assert!(!m.contains('\n'));
    }

    #[test]
    fn policy_paths() {
        assert_eq!(policy_path("p", Some("/T/app/p")), "/T/app/p");
        assert_eq!(policy_path("p", Some("/T/other")), "/Common/p");
        assert_eq!(policy_path("/T/p", None), "/T/p");
        assert_eq!(policy_path("p", None), "/Common/p");
    }

    #[test]
    fn escaping_nilvalue_and_lengths() {
        assert_eq!(param_value(r#"a"b\c]d"#), r#"a\"b\\c\]d"#);
        assert_eq!(param_value("plain é"), "plain é");
        assert_eq!(header_field("", 255), "-");
        assert_eq!(header_field("a b\tc\u{e9}", 255), "abc");
        assert_eq!(header_field(&"x".repeat(300), 255).len(), 255);
        assert_eq!(header_field(&"m".repeat(40), 32).len(), 32);
        let h = Header {
            hostname: "",
            procid: "",
            ..header(300)
        };
        let m = message(&h, &event(), &MsgFormat::Json);
        assert!(m.contains("Z - portcullis - blocked ["), "{m}");
        assert!(m.len() <= 300, "{}", m.len());
        let nil = Header {
            hostname: "",
            procid: "",
            ..header(65536)
        };
        let full = message(&nil, &event(), &MsgFormat::Json);
        assert!(full.len() > 300);
        assert!(
            full.starts_with(&m),
            "a cut message is a prefix of the whole one"
        );
        let mut alarm = event();
        alarm.action = Action::Alarm;
        let m = message(
            &Header {
                facility: 23,
                ..header(65536)
            },
            &alarm,
            &MsgFormat::Json,
        );
        assert!(m.starts_with("<188>1 "), "{m}");
    }

    #[test]
    fn user_defined_and_framing() {
        let f = MsgFormat::User("id=%support_id% vs=%vs_name%\nx=%unknown%".into());
        let m = message(&header(65536), &event(), &f);
        assert!(
            m.ends_with(r#"] id=1234567890123456789 vs=/Common/vs "one"]\nx=%unknown%"#),
            "{m}"
        );
        let frame = octet_frame("<131>1 é");
        assert_eq!(frame, "9 <131>1 é".as_bytes());
        assert_eq!(timestamp(0), "1970-01-01T00:00:00.000000Z");
    }
}
