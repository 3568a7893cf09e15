//! Engine behaviour not visible in a verdict table: XFF client address, sensitive-value masking,
//! block responses of the API-security template, the event record, and `policy check` output.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

use portcullis::waf::NoResolver;
use portcullis::waf::policy;
use portcullis::waf::{ConnInfo, Step, Transaction, ViolationKind};

fn compile(doc: &str) -> Arc<policy::CompiledPolicy> {
    Arc::new(
        policy::load(doc.as_bytes(), "t.json", &NoResolver)
            .expect("policy loads")
            .policy,
    )
}

fn head(uri: &str, headers: &[(&str, &str)]) -> portcullis::waf::RequestHead {
    let mut b = http::Request::builder().uri(uri);
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    b.body(()).expect("request").into_parts().0.into()
}

const PEER: IpAddr = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1));

#[test]
fn xff_is_trusted_only_when_configured() {
    let h = head(
        "/",
        &[
            ("host", "a"),
            ("x-forwarded-for", "203.0.113.9"),
            ("x-real-client", "198.51.100.7"),
        ],
    );
    let off = compile(r#"{"policy": {"name": "p"}}"#);
    let mut tx = Transaction::new(
        off,
        ConnInfo {
            peer: PEER,
            tls: false,
        },
    );
    tx.on_request_headers(&h);
    assert_eq!(tx.client(), PEER);

    let on = compile(r#"{"policy": {"name": "p", "general": {"trustXff": true}}}"#);
    let mut tx = Transaction::new(
        on,
        ConnInfo {
            peer: PEER,
            tls: false,
        },
    );
    tx.on_request_headers(&h);
    assert_eq!(tx.client().to_string(), "203.0.113.9");

    let custom = compile(
        r#"{"policy": {"name": "p", "general": {"trustXff": true, "customXffHeaders": ["X-Real-Client"]}}}"#,
    );
    let mut tx = Transaction::new(
        custom,
        ConnInfo {
            peer: PEER,
            tls: false,
        },
    );
    tx.on_request_headers(&h);
    assert_eq!(tx.client().to_string(), "198.51.100.7");
}

#[test]
fn sensitive_values_are_masked_in_the_event() {
    let p = compile(
        r#"{"policy": {"name": "p", "parameters": [{"name": "pin", "dataType": "integer", "sensitiveParameter": true}]}}"#,
    );
    let mut tx = Transaction::new(
        p,
        ConnInfo {
            peer: PEER,
            tls: false,
        },
    );
    let req = head("/?pin=secret1&password=hunter2%3C", &[("host", "a")]);
    tx.on_request_headers(&req);
    let ev = tx.finish(&req.headers).expect("an alarm event");
    let dt = ev
        .violations
        .iter()
        .find(|v| v.kind == ViolationKind::ParameterDataType)
        .expect("data type violation");
    assert_eq!(dt.snippet, "********");
    let meta = ev
        .violations
        .iter()
        .find(|v| v.kind == ViolationKind::ParameterValueMetachar)
        .expect("metachar violation");
    assert_eq!(meta.name.as_deref(), Some("password"));
    assert!(!meta.snippet.contains("hunter2"));
}

#[test]
fn api_security_blocks_with_403_json_and_logs_the_event() {
    let p = compile(
        r#"{"policy": {"name": "api", "template": {"name": "POLICY_TEMPLATE_API_SECURITY"},
            "urls": [{"name": "*", "type": "wildcard", "$action": "delete"}, {"name": "/pets"}]}}"#,
    );
    let mut tx = Transaction::new(
        p,
        ConnInfo {
            peer: PEER,
            tls: false,
        },
    );
    let req = head("/admin", &[("host", "a")]);
    assert_eq!(tx.on_request_headers(&req), Step::Block);
    let r = tx.block_response();
    assert_eq!(r.status, 403);
    assert_eq!(
        String::from_utf8_lossy(&r.body),
        format!("{{\"supportID\":\"{}\"}}", tx.support_id())
    );
    let ev = tx.finish(&req.headers).expect("event");
    assert_eq!(ev.policy, "api");
    assert!(ev.violations.iter().any(|v| v.kind == ViolationKind::Url));
}

#[test]
fn json_body_is_inspected_in_chunks() {
    let p = compile(r#"{"policy": {"name": "p", "enforcementMode": "blocking"}}"#);
    let mut tx = Transaction::new(
        p,
        ConnInfo {
            peer: PEER,
            tls: false,
        },
    );
    let h = head(
        "/x",
        &[
            ("host", "a"),
            ("content-type", "application/json"),
            ("content-length", "12"),
        ],
    );
    assert_eq!(tx.on_request_headers(&h), Step::InspectBody);
    assert_eq!(tx.on_request_body(b"{\"a\": "), Step::Release(0));
    assert_eq!(tx.on_request_body(b"[1,"), Step::Release(0));
    assert_eq!(tx.on_request_end(), Step::Block);
}

#[test]
fn policy_check_reports_a_summary() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("p.json");
    std::fs::write(&file, r#"{"policy": {"name": "p", "template": {"name": "POLICY_TEMPLATE_FUNDAMENTAL"}, "bot-defense": {}, "ftypes": []}}"#).expect("write");
    let (report, ok) = portcullis::cli::check_policy(&file, false);
    assert!(ok, "{report}");
    assert!(
        report.contains("template: POLICY_TEMPLATE_FUNDAMENTAL"),
        "{report}"
    );
    assert!(report.contains("enforcement mode: blocking"), "{report}");
    assert!(
        report.contains("warning: policy.bot-defense: accepted but not enforced"),
        "{report}"
    );
    assert!(
        report.contains("warning: policy.ftypes: unknown field ignored"),
        "{report}"
    );
    std::fs::write(
        &file,
        r#"{"policy": {"name": "p", "enforcementMode": "sometimes"}}"#,
    )
    .expect("write");
    let (report, ok) = portcullis::cli::check_policy(&file, false);
    assert!(!ok);
    assert!(
        report.ends_with(
            "policy.enforcementMode: unknown value \"sometimes\" (expected blocking or transparent)"
        ),
        "{report}"
    );
}

#[test]
fn response_status_outside_the_allowed_codes_is_a_violation() {
    let p = compile(
        r#"{"policy": {"name": "p", "general": {"allowedResponseCodes": [404]},
            "blocking-settings": {"violations": [{"name": "VIOL_HTTP_RESPONSE_STATUS", "alarm": true, "block": true}]}}}"#,
    );
    let mut tx = Transaction::new(
        p.clone(),
        ConnInfo {
            peer: PEER,
            tls: false,
        },
    );
    tx.on_request_headers(&head("/", &[("host", "a")]));
    assert_eq!(
        tx.on_response_headers(404, &http::HeaderMap::new()),
        Step::Forward
    );
    let mut tx = Transaction::new(
        p,
        ConnInfo {
            peer: PEER,
            tls: false,
        },
    );
    tx.on_request_headers(&head("/", &[("host", "a")]));
    assert_eq!(
        tx.on_response_headers(500, &http::HeaderMap::new()),
        Step::Block
    );
}

#[test]
fn a_typical_browser_get_passes_the_nginx_base_template() {
    let p =
        compile(r#"{"policy": {"name": "p", "template": {"name": "POLICY_TEMPLATE_NGINX_BASE"}}}"#);
    // The request the engine benches measure.
    let browser_get = include_str!("../../fixtures/browser-get.txt");
    let uri = browser_get.split(' ').nth(1).expect("request line");
    let headers: Vec<(&str, &str)> = browser_get
        .lines()
        .skip(1)
        .filter_map(|l| l.split_once(": "))
        .collect();
    let h = head(uri, &headers);
    let mut tx = Transaction::new(
        p,
        ConnInfo {
            peer: PEER,
            tls: true,
        },
    );
    assert_eq!(tx.on_request_headers(&h), Step::Forward);
    assert!(
        tx.verdict().violations.is_empty(),
        "{:?}",
        tx.verdict().violations
    );
}
