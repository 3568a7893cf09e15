//! The records SIEMs ingest, made from one security event: CEF (ArcSight), LEEF 2.0 (QRadar), the
//! event as a JSON object (JSON lines, the syslog `json` format) and the Splunk HTTP Event
//! Collector envelope. CEF and LEEF travel as the MSG of an RFC 5424 message (`super::syslog`).
//! The field tables are in docs/events.md.

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::syslog::{Header, split_uri};
use portcullis_engine::{Action, SecurityEvent};

/// Vendor, product and version of the CEF and LEEF headers.
pub const VENDOR: &str = "Portcullis";
pub const PRODUCT: &str = "WAF";
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

fn status(ev: &SecurityEvent) -> &'static str {
    match ev.action {
        Action::Block => "blocked",
        Action::Alarm => "alerted",
        Action::Pass => "passed",
    }
}

/// The violation names, comma separated.
fn violations(ev: &SecurityEvent) -> String {
    let names: Vec<&str> = ev.violations.iter().map(|v| v.kind.name()).collect();
    names.join(",")
}

/// The signature ids of all violations, comma separated.
fn signatures(ev: &SecurityEvent) -> String {
    let ids: Vec<String> = ev
        .violations
        .iter()
        .flat_map(|v| v.signature_ids.iter().map(u32::to_string))
        .collect();
    ids.join(",")
}

/// `VIOL_X name: detail; …` (what each violation saw).
fn details(ev: &SecurityEvent) -> String {
    let mut out = String::new();
    for v in &ev.violations {
        if !out.is_empty() {
            out.push_str("; ");
        }
        out.push_str(v.kind.name());
        if let Some(n) = &v.name {
            let _ = write!(out, " {n}");
        }
        if !v.detail.is_empty() {
            let _ = write!(out, ": {}", v.detail);
        }
    }
    out
}

/// The event class of CEF and LEEF: the first violation's name.
fn event_id(ev: &SecurityEvent) -> &'static str {
    ev.violations.first().map_or("VIOL_NONE", |v| v.kind.name())
}

/// Severity on the 0–10 scale of CEF and LEEF: twice the violation rating (1–5).
fn severity(ev: &SecurityEvent) -> u8 {
    ev.rating.clamp(1, 5) * 2
}

/// A CEF header field: `\` and `|` escaped, line breaks made spaces.
fn cef_header(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '|' => out.push_str("\\|"),
            '\r' | '\n' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A CEF extension value: `\` and `=` escaped, line breaks as `\r` / `\n`.
pub fn cef_value(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '=' => out.push_str("\\="),
            '\r' => out.push_str("\\r"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// The CEF record (`CEF:0|Portcullis|WAF|<version>|<first violation>|Request blocked|<severity>|…`).
pub fn cef(ev: &SecurityEvent, h: &Header<'_>) -> String {
    let name = format!("Request {}", status(ev));
    let mut out = format!(
        "CEF:0|{VENDOR}|{PRODUCT}|{}|{}|{}|{}|",
        cef_header(VERSION),
        cef_header(event_id(ev)),
        cef_header(&name),
        severity(ev)
    );
    let code = ev.response_code.to_string();
    let rating = ev.rating.to_string();
    let ext: [(&str, &str); 24] = [
        ("rt", &(ev.time_micros / 1000).to_string()),
        ("dvchost", h.hostname),
        ("externalId", &ev.support_id),
        ("src", &ev.client_ip),
        ("requestMethod", &ev.method),
        ("request", &ev.uri),
        ("app", &ev.protocol),
        ("act", status(ev)),
        ("cn1", &code),
        ("cn1Label", "responseCode"),
        ("cn2", &rating),
        ("cn2Label", "violationRating"),
        ("cs1", h.policy),
        ("cs1Label", "policyName"),
        ("cs2", &ev.virtual_server),
        ("cs2Label", "virtualServer"),
        ("cs3", &violations(ev)),
        ("cs3Label", "violations"),
        ("cs4", &signatures(ev)),
        ("cs4Label", "signatureIds"),
        ("cs5", &ev.support_id),
        ("cs5Label", "supportId"),
        ("msg", &details(ev)),
        ("deviceProcessName", h.app_name),
    ];
    pairs(&mut out, &ext, ' ', cef_value);
    out
}

/// Appends `k=v` for each pair, separated by `sep`, values escaped by `escape`.
fn pairs(out: &mut String, kv: &[(&str, &str)], sep: char, escape: fn(&str) -> String) {
    for (i, (k, v)) in kv.iter().enumerate() {
        if i > 0 {
            out.push(sep);
        }
        let _ = write!(out, "{k}={}", escape(v));
    }
}

/// A LEEF header field: `|` and `\` escaped, line breaks made spaces.
fn leef_header(s: &str) -> String {
    cef_header(s)
}

/// A LEEF attribute value: the tab delimiter, `\` and line breaks escaped.
pub fn leef_value(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// The LEEF 2.0 record, attributes separated by tabs (`LEEF:2.0|Portcullis|WAF|<version>|<first
/// violation>|x09|devTime=…\tsrc=…`).
pub fn leef(ev: &SecurityEvent, h: &Header<'_>) -> String {
    let mut out = format!(
        "LEEF:2.0|{VENDOR}|{PRODUCT}|{}|{}|x09|",
        leef_header(VERSION),
        leef_header(event_id(ev))
    );
    let (path, query) = split_uri(&ev.uri);
    let attrs: [(&str, &str); 18] = [
        ("devTime", &ev.time),
        ("devTimeFormat", "yyyy-MM-dd'T'HH:mm:ssX"),
        ("cat", status(ev)),
        ("sev", &severity(ev).to_string()),
        ("src", &ev.client_ip),
        ("identHostName", h.hostname),
        ("supportId", &ev.support_id),
        ("method", &ev.method),
        ("url", path),
        ("query", query),
        ("httpVersion", &ev.protocol),
        ("responseCode", &ev.response_code.to_string()),
        ("policy", h.policy),
        ("virtualServer", &ev.virtual_server),
        ("violations", &violations(ev)),
        ("signatureIds", &signatures(ev)),
        ("violationRating", &ev.rating.to_string()),
        ("details", &details(ev)),
    ];
    pairs(&mut out, &attrs, '\t', leef_value);
    out
}

/// The event as one JSON object: its own fields plus `policyFullPath` and `unitHostname`.
pub fn json_event(ev: &SecurityEvent, h: &Header<'_>) -> Value {
    let mut v = serde_json::to_value(ev).unwrap_or_else(|_| json!({}));
    if let Some(m) = v.as_object_mut() {
        m.insert("policyFullPath".into(), json!(h.policy));
        m.insert("unitHostname".into(), json!(h.hostname));
    }
    v
}

/// Settings of the HEC envelope.
pub struct HecMeta<'a> {
    pub index: Option<&'a str>,
    pub source: &'a str,
    pub sourcetype: &'a str,
}

/// One Splunk HTTP Event Collector event (`/services/collector/event`): `time` in seconds with
/// microseconds, `host`, `source`, `sourcetype`, `index` when set, and the event object.
pub fn hec_event(ev: &SecurityEvent, h: &Header<'_>, meta: &HecMeta<'_>) -> String {
    let mut v = json!({
        "time": format!("{}.{:06}", ev.time_micros / 1_000_000, ev.time_micros % 1_000_000)
            .parse::<f64>()
            .unwrap_or(0.0),
        "host": h.hostname,
        "source": meta.source,
        "sourcetype": meta.sourcetype,
        "event": json_event(ev, h),
    });
    if let Some(i) = meta.index {
        v["index"] = json!(i);
    }
    v.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use portcullis_engine::{Context, Violation, ViolationKind};

    /// The syslog tests' event, with a query holding `=` and `|`, a detail holding a tab, `\`,
    /// `=` and a line break, and a second violation.
    fn event() -> SecurityEvent {
        let mut ev = super::super::syslog::tests::event();
        ev.uri = "/api/items?q=a=b|c".into();
        ev.virtual_server = "/Common/vs|1".into();
        ev.violations = vec![
            Violation::new(ViolationKind::AttackSignature, Context::Query)
                .named("q")
                .detail("SQL\tinjection\\ =\nnext")
                .signatures(vec![200002147, 200002148]),
            Violation::new(ViolationKind::ParameterValueMetachar, Context::Query),
        ];
        ev
    }

    fn header() -> Header<'static> {
        super::super::syslog::tests::header(65536)
    }

    #[test]
    fn cef_escapes_its_header_and_extension() {
        let c = cef(&event(), &header());
        assert!(
            c.starts_with(&format!(
                "CEF:0|Portcullis|WAF|{VERSION}|VIOL_ATTACK_SIGNATURE|Request blocked|8|rt=1795328726000 dvchost=waf-1 externalId=1234567890123456789 src=192.0.2.7"
            )),
            "{c}"
        );
        assert!(
            c.contains(r"request=/api/items?q\=a\=b|c app=HTTP/1.1"),
            "{c}"
        );
        assert!(c.contains("cs2=/Common/vs|1 cs2Label=virtualServer"), "{c}");
        assert!(
            c.contains("cs3=VIOL_ATTACK_SIGNATURE,VIOL_PARAMETER_VALUE_METACHAR cs3Label"),
            "{c}"
        );
        assert!(c.contains("cs4=200002147,200002148 cs4Label"), "{c}");
        assert!(
            c.contains(r"msg=VIOL_ATTACK_SIGNATURE q: SQL	injection\\ \=\nnext; VIOL_PARAMETER_VALUE_METACHAR"),
            "{c}"
        );
        assert!(!c.contains('\n'));
        let mut odd = event();
        odd.violations.clear();
        odd.action = Action::Alarm;
        odd.rating = 1;
        assert!(cef(&odd, &header()).contains("|VIOL_NONE|Request alerted|2|"));
    }

    #[test]
    fn leef_separates_attributes_by_tabs() {
        let l = leef(&event(), &header());
        let (head, attrs) = l.split_at(l.find("x09|").unwrap() + 4);
        assert_eq!(
            head,
            format!("LEEF:2.0|Portcullis|WAF|{VERSION}|VIOL_ATTACK_SIGNATURE|x09|")
        );
        let pairs: Vec<(&str, &str)> = attrs
            .split('\t')
            .map(|kv| kv.split_once('=').unwrap())
            .collect();
        assert_eq!(pairs[0], ("devTime", "2026-11-22T06:25:26Z"));
        assert!(pairs.contains(&("url", "/api/items")));
        assert!(pairs.contains(&("query", "q=a=b|c")));
        assert!(pairs.contains(&("sev", "8")));
        let details = pairs.iter().find(|(k, _)| *k == "details").unwrap().1;
        assert_eq!(
            details,
            r"VIOL_ATTACK_SIGNATURE q: SQL\tinjection\\ =\nnext; VIOL_PARAMETER_VALUE_METACHAR"
        );
    }

    #[test]
    fn hec_envelope_carries_time_and_metadata() {
        let meta = HecMeta {
            index: Some("waf"),
            source: "portcullis",
            sourcetype: "portcullis:security",
        };
        let v: Value = serde_json::from_str(&hec_event(&event(), &header(), &meta)).unwrap();
        assert_eq!(v["time"], json!(1_795_328_726.000042));
        assert_eq!(v["index"], "waf");
        assert_eq!(v["event"]["supportId"], "1234567890123456789");
        assert_eq!(v["event"]["policyFullPath"], "/Common/demo_api_policy");
    }
}
