//! OpenAPI enforcement end to end: a policy on the API-security template (with `*` deleted) links
//! the petstore spec of tests/fixtures/openapi/ (each version); requests go through a
//! `Transaction` and the verdicts, violations and 403 JSON reply are checked. Also: spec load
//! errors as `policy check` errors, transparent mode, and `policy check --urls`.

use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;
use std::sync::Arc;

use portcullis::cli::{self, CheckOptions};
use portcullis::waf::policy::{self, CompiledPolicy};
use portcullis::waf::{ConnInfo, Step, Transaction, ViolationKind as K};

const SPECS: &[&str] = &[
    "petstore-3.0.yaml",
    "petstore-2.0.json",
    "petstore-3.1.yaml",
];
const UUID: &str = "123e4567-e89b-12d3-a456-426614174000";

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/openapi")
}

fn policy_doc(spec: &str, mode: &str, key: &str) -> String {
    format!(
        r#"{{"policy": {{"name": "pets", "template": {{"name": "POLICY_TEMPLATE_API_SECURITY"}},
        "enforcementMode": "{mode}", "open-api-files": [{{"{key}": "file://{spec}"}}],
        "urls": [{{"name": "*", "type": "wildcard", "$action": "delete"}}]}}}}"#
    )
}

fn load(doc: &str) -> Result<policy::Loaded, policy::PolicyError> {
    let resolver = cli::offline_resolver_in_dir(fixtures());
    policy::load(doc.as_bytes(), "file://policy.json", &resolver)
}

fn compile(spec: &str, mode: &str) -> Arc<CompiledPolicy> {
    Arc::new(
        load(&policy_doc(spec, mode, "link"))
            .expect("policy loads")
            .policy,
    )
}

/// Runs one request; returns the transaction after the last phase it reached.
fn run(
    p: &Arc<CompiledPolicy>,
    method: &str,
    uri: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Transaction {
    let mut b = http::Request::builder().method(method).uri(uri);
    b = b.header("host", "petstore.example.com");
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    if !body.is_empty() {
        b = b.header("content-length", body.len().to_string());
    }
    let head = portcullis::waf::RequestHead::from(b.body(()).expect("request").into_parts().0);
    let conn = ConnInfo {
        peer: IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1)),
        tls: false,
    };
    let mut tx = Transaction::new(p.clone(), conn);
    if tx.on_request_headers(&head) == Step::InspectBody && tx.on_request_body(body) != Step::Block
    {
        tx.on_request_end();
    }
    tx
}

fn kinds(tx: &Transaction) -> Vec<K> {
    tx.verdict().violations.iter().map(|v| v.kind).collect()
}

fn assert_blocked_with(tx: &Transaction, kind: K, case: &str) {
    let v = tx.verdict();
    assert!(v.is_block(), "{case}: not blocked: {:?}", kinds(tx));
    assert!(kinds(tx).contains(&kind), "{case}: {:?}", kinds(tx));
}

#[test]
fn the_spec_decides_urls_methods_parameters_and_bodies() {
    for spec in SPECS {
        let p = compile(spec, "blocking");
        let id = [("x-request-id", UUID)];
        let json = [("content-type", "application/json")];

        let ok = run(&p, "GET", "/v1/pets?limit=5&status=sold", &id, b"");
        assert!(!ok.verdict().is_block(), "{spec}: {:?}", kinds(&ok));
        assert!(
            ok.verdict().violations.is_empty(),
            "{spec}: {:?}",
            kinds(&ok)
        );
        let ok = run(&p, "POST", "/v1/pets", &json, br#"{"name": "rex"}"#);
        assert!(
            ok.verdict().violations.is_empty(),
            "{spec}: {:?}",
            kinds(&ok)
        );
        let ok = run(&p, "GET", "/v1/pets/42", &[], b"");
        assert!(
            ok.verdict().violations.is_empty(),
            "{spec}: {:?}",
            kinds(&ok)
        );

        let unknown = run(&p, "GET", "/v1/admin", &[], b"");
        assert_blocked_with(&unknown, K::Url, spec);
        let reply = unknown.block_response();
        assert_eq!(reply.status, 403);
        let body: serde_json::Value = serde_json::from_slice(&reply.body).expect("JSON reply");
        assert!(body["supportID"].is_string(), "{spec}: {body}");

        let wrong = run(&p, "DELETE", "/v1/pets/42", &[], b"");
        assert_blocked_with(&wrong, K::Method, spec);

        let bad_type = run(&p, "GET", "/v1/pets?limit=many", &id, b"");
        assert_blocked_with(&bad_type, K::ParameterDataType, spec);
        let bad_path = run(&p, "GET", "/v1/pets/abc", &[], b"");
        assert_blocked_with(&bad_path, K::ParameterDataType, spec);

        let unknown_param = run(&p, "GET", "/v1/pets/42?debug=1", &[], b"");
        assert_blocked_with(&unknown_param, K::Parameter, spec);

        let missing = run(&p, "GET", "/v1/pets", &[], b"");
        assert_blocked_with(&missing, K::MandatoryParameter, spec);

        let schema = run(&p, "POST", "/v1/pets", &json, br#"{"name": 7, "evil": 1}"#);
        assert_blocked_with(&schema, K::JsonSchema, spec);

        let malformed = run(&p, "POST", "/v1/pets", &json, br#"{"name": "#);
        assert_blocked_with(&malformed, K::JsonMalformed, spec);
        let once = kinds(&malformed)
            .iter()
            .filter(|k| **k == K::JsonMalformed)
            .count();
        assert_eq!(once, 1, "{spec}: {:?}", kinds(&malformed));

        let no_body = run(&p, "POST", "/v1/pets", &json, b"");
        assert_blocked_with(&no_body, K::MandatoryRequestBody, spec);
    }
}

#[test]
fn query_values_are_judged_decoded_beside_plain_ones() {
    for spec in SPECS {
        let p = compile(spec, "blocking");
        let id = [("x-request-id", UUID)];
        for target in [
            "/v1/pets?limit=%35&status=sold",
            "/v1/pets?limit=5&status=so%6Cd",
        ] {
            let tx = run(&p, "GET", target, &id, b"");
            assert!(
                tx.verdict().violations.is_empty(),
                "{spec} {target}: {:?}",
                kinds(&tx)
            );
        }
        for target in [
            "/v1/pets?status=sold&limit=m%61ny",
            "/v1/pets?limit=many&status=so%6Cd",
        ] {
            let tx = run(&p, "GET", target, &id, b"");
            assert_blocked_with(&tx, K::ParameterDataType, &format!("{spec} {target}"));
        }
    }
}

#[test]
fn signatures_still_apply_to_values_the_spec_allows() {
    let p = compile("petstore-3.0.yaml", "blocking");
    let tx = run(
        &p,
        "GET",
        "/v1/pets?name=%3Cscript%3Ealert(1)%3C%2Fscript%3E",
        &[("x-request-id", UUID)],
        b"",
    );
    assert!(tx.verdict().is_block(), "{:?}", kinds(&tx));
    assert!(kinds(&tx).contains(&K::AttackSignature), "{:?}", kinds(&tx));
}

#[test]
fn url_metacharacters_are_checked_on_spec_urls() {
    let p = compile("petstore-3.0.yaml", "blocking");
    let tx = run(&p, "GET", "/v1/owners/a%3Cb%3E@example.com", &[], b"");
    assert!(kinds(&tx).contains(&K::UrlMetachar), "{:?}", kinds(&tx));
}

#[test]
fn transparent_mode_records_undocumented_endpoints() {
    let p = compile("petstore-3.0.yaml", "transparent");
    let mut tx = run(&p, "GET", "/v1/shadow/7", &[], b"");
    let v = tx.verdict();
    assert!(!v.is_block());
    let url = v
        .violations
        .iter()
        .find(|v| v.kind == K::Url)
        .expect("VIOL_URL");
    let detail = format!("{url:?}");
    assert!(detail.contains("undocumented endpoint GET"), "{detail}");
    let no_fields = portcullis::waf::Fields::default();
    assert!(
        tx.finish(&no_fields).is_some(),
        "the request is logged as an alarm"
    );
}

#[test]
fn a_ref_item_links_the_spec_too() {
    let l = load(&policy_doc("petstore-3.0.yaml", "blocking", "$ref")).expect("loads");
    assert!(l.policy.api().is_some());
}

#[test]
fn an_unusable_spec_is_a_policy_error_naming_file_pointer_and_reason() {
    let e = load(&policy_doc("missing.yaml", "blocking", "link"))
        .err()
        .expect("error");
    assert!(
        matches!(&e, policy::PolicyError::Link { path, .. } if path == "policy.open-api-files[0].link"),
        "{e:?}"
    );
    assert!(
        e.to_string()
            .starts_with("policy.open-api-files[0].link: cannot read"),
        "{e}"
    );

    let dir = tempfile::tempdir().expect("tmp");
    std::fs::write(
        dir.path().join("bad.yaml"),
        "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    get:\n      parameters:\n        - $ref: '#/nope'\n",
    )
    .expect("write");
    let resolver = cli::offline_resolver_in_dir(dir.path().to_path_buf());
    let doc = policy_doc("bad.yaml", "blocking", "link");
    let e = policy::load(doc.as_bytes(), "file://policy.json", &resolver)
        .err()
        .expect("error");
    let e = e.to_string();
    assert!(e.contains("bad.yaml#/paths/~1a/get/parameters/0"), "{e}");
    assert!(e.contains("#/nope"), "{e}");
}

#[test]
fn policy_check_urls_prints_the_table_of_the_demo_spec() {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("policies/demo/policy.json");
    let (report, ok) = portcullis::cli::check_policy_with(
        &file,
        CheckOptions {
            urls: true,
            ..CheckOptions::default()
        },
    );
    assert!(ok, "{report}");
    let row = report
        .lines()
        .find(|l| l.contains("/api/users/{id}"))
        .unwrap_or_default();
    assert!(
        row.starts_with("GET") && row.contains("path:id:integer*"),
        "{report}"
    );
    assert!(report.contains("body:application/json+"), "{report}");
    let (plain, _) = portcullis::cli::check_policy(&file, false);
    assert!(!plain.contains("/api/users/{id}"), "{plain}");
}
