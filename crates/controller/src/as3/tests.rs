//! Unit tests of the declaration model and the plan: defaults, every kind of error with its
//! path, `use` resolution, and the objects a declaration becomes; plus the fuzz seeds
//! (fuzz/seeds/as3_declaration) replayed through the fuzz target's functions.

use serde_json::{Value, json};

use super::classes::{Item, Target};
use super::model::{Action, parse_value};
use super::plan::plan_tenant;

fn decl(app: Value) -> Value {
    json!({"class": "AS3", "declaration": {"class": "ADC", "schemaVersion": "3.18.0", "T": {"class": "Tenant", "A": app}}})
}

fn errors_of(v: Value) -> Vec<String> {
    parse_value(&v).expect_err("invalid")
}

#[test]
fn defaults_of_an_https_service() {
    let req = parse_value(&decl(json!({"class": "Application", "template": "https",
        "serviceMain": {"class": "Service_HTTPS", "virtualAddresses": ["10.0.0.1"], "serverTLS": {"bigip": "/Common/clientssl"}}})))
    .unwrap();
    assert_eq!(req.action, Action::Deploy);
    assert!(req.persist);
    let Item::Service(s) = &req.adc.tenants[0].apps[0].items[0].item else {
        panic!("service")
    };
    assert_eq!((s.port, s.redirect), (443, Some(80)));
    assert_eq!(
        (s.tcp_client.path(), s.http.path()),
        ("/Common/tcp", "/Common/http")
    );
    let plan = plan_tenant(&req.adc, &req.adc.tenants[0]);
    let names: Vec<&str> = plan
        .objects
        .iter()
        .map(|o| o.body["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["/T/A/serviceMain", "/T/A/serviceMain-Redirect-"]);
    assert_eq!(plan.objects[0].body["destination"], "/T/10.0.0.1:443");
    assert_eq!(plan.objects[1].body["destination"], "/T/10.0.0.1:80");
    assert_eq!(
        plan.objects[1].body["rules"],
        json!(["/Common/_sys_https_redirect"])
    );
}

#[test]
fn use_pointers_resolve_to_full_paths_of_the_right_class() {
    let req = parse_value(&decl(json!({"class": "Application",
        "svc": {"class": "Service_HTTP", "virtualAddresses": ["2001:db8::1"], "pool": "p", "policyWAF": {"use": "/T/A/w"}},
        "p": {"class": "Pool", "monitors": ["http", "tcp"], "minimumMonitors": 2,
              "members": [{"servicePort": 8080, "serverAddresses": ["2001:db8::2", "192.0.2.1"], "adminState": "disable"}]},
        "w": {"class": "WAF_Policy", "policy": {"policy": {"name": "w"}}}})))
    .unwrap();
    let Item::Service(s) = &req.adc.tenants[0].apps[0].items[0].item else {
        panic!("service")
    };
    assert_eq!(
        s.pool.as_ref().unwrap().target,
        Target::Use("/T/A/p".into())
    );
    let plan = plan_tenant(&req.adc, &req.adc.tenants[0]);
    let pool = plan
        .objects
        .iter()
        .find(|o| o.body["name"] == "/T/A/p")
        .unwrap();
    assert_eq!(
        pool.body["monitor"],
        "min 2 of { /Common/http /Common/tcp }"
    );
    assert_eq!(pool.body["members"][0]["name"], "2001:db8::2.8080");
    assert_eq!(pool.body["members"][1]["session"], "user-disabled");
    let vs = plan
        .objects
        .iter()
        .find(|o| o.body["name"] == "/T/A/svc")
        .unwrap();
    assert_eq!(vs.body["destination"], "/T/2001:db8::1.80");
    assert_eq!(
        plan.attachments,
        [("/T/A/w".to_string(), "/T/A/svc".to_string())]
    );

    let errs = errors_of(decl(json!({"class": "Application",
        "svc": {"class": "Service_HTTP", "virtualAddresses": ["10.0.0.1"], "pool": "w", "profileHTTP": {"use": "nothing"}},
        "w": {"class": "WAF_Policy", "url": "https://x/p.json"}})));
    assert!(
        errs.iter()
            .any(|e| e == "/T/A/svc/pool: /T/A/w is a WAF_Policy, expected Pool"),
        "{errs:?}"
    );
    assert!(
        errs.iter()
            .any(|e| e.starts_with("/T/A/svc/profileHTTP: /T/A/nothing is not declared")),
        "{errs:?}"
    );
}

#[test]
fn every_error_is_listed_with_its_path() {
    let errs = errors_of(
        json!({"class": "AS3", "action": "patch", "declaration": {"class": "ADC", "schemaVersion": "3.99.0",
        "T": {"class": "Tenant", "A": {"class": "Application",
            "svc": {"class": "Service_HTTPS", "virtualAddresses": [], "virtualPort": 70000, "redirect80": "yes", "extra": 1},
            "c": {"class": "Certificate", "certificate": "garbage", "privateKey": "garbage"},
            "w": {"class": "WAF_Policy", "url": "gopher://x", "file": "/x"},
            "bad name": {"class": "Pool"}}}}}),
    );
    for want in [
        "/action: should be equal to one of the allowed values",
        "/schemaVersion: schemaVersion 3.99.0 is not supported",
        "/T/A/svc/virtualAddresses: should NOT have fewer than 1 items",
        "/T/A/svc/virtualPort: should be >= 0 and <= 65535",
        "/T/A/svc/redirect80: should be boolean",
        "/T/A/svc/extra: property is not supported",
        "/T/A/svc: should have required property 'serverTLS'",
        "/T/A/c/certificate: is not a PEM X.509 certificate",
        "/T/A/c/privateKey: is not an unencrypted PEM private key",
        "/T/A/w: should have exactly one of the properties url, file, policy",
        "/T/A/bad name: item name should match",
    ] {
        assert!(
            errs.iter().any(|e| e.starts_with(want)),
            "{want} not in {errs:?}"
        );
    }
}

#[test]
fn a_certificate_must_match_its_key() {
    let a = rcgen::generate_simple_self_signed(vec!["a.test".into()]).unwrap();
    let b = rcgen::generate_simple_self_signed(vec!["b.test".into()]).unwrap();
    let app = |key: String| {
        json!({"class": "Application",
        "c": {"class": "Certificate", "certificate": a.cert.pem(), "privateKey": key}})
    };
    assert!(parse_value(&decl(app(a.signing_key.serialize_pem()))).is_ok());
    let errs = errors_of(decl(app(b.signing_key.serialize_pem())));
    assert_eq!(errs, ["/T/A/c/privateKey: does not match the certificate"]);
}

#[test]
fn fuzz_seeds_parse_or_fail_cleanly() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/as3_declaration");
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let bytes = std::fs::read(e.unwrap().path()).unwrap();
        match super::model::parse(&bytes) {
            Ok(req) => {
                for t in &req.adc.tenants {
                    plan_tenant(&req.adc, t);
                }
            }
            Err(errs) => assert!(!errs.is_empty()),
        }
        n += 1;
    }
    assert!(n >= 5);
}

#[test]
fn route_domain_and_enable_of_tenant_and_application() {
    let v = json!({"class": "ADC", "schemaVersion": "3.18.0",
        "T": {"class": "Tenant", "defaultRouteDomain": 2, "A": {"class": "Application", "enable": false,
            "svc": {"class": "Service_HTTP", "virtualAddresses": ["10.0.0.1", "10.0.0.2%3"], "pool": "p"},
            "p": {"class": "Pool", "members": [{"servicePort": 80, "serverAddresses": ["192.0.2.1"]}]}}}});
    let req = parse_value(&v).unwrap();
    let plan = plan_tenant(&req.adc, &req.adc.tenants[0]);
    let body = |n: &str| {
        plan.objects
            .iter()
            .find(|o| o.body["name"] == n)
            .unwrap()
            .body
            .clone()
    };
    assert_eq!(body("/T/A/svc")["destination"], "/T/10.0.0.1%2:80");
    assert_eq!(body("/T/A/svc")["disabled"], true);
    assert_eq!(body("/T/A/svc-1-")["destination"], "/T/10.0.0.2%3:80");
    assert_eq!(body("/T/A/p")["members"][0]["name"], "192.0.2.1%2:80");
}

#[test]
fn monitors_are_declared_and_used_by_pools() {
    let req = parse_value(&decl(json!({"class": "Application",
        "mon": {"class": "Monitor", "monitorType": "http", "send": "GET /health HTTP/1.0\r\n\r\n", "receive": "OK", "interval": 3},
        "p": {"class": "Pool", "monitors": [{"use": "mon"}, "tcp"], "minimumMonitors": "all",
              "members": [{"servicePort": 80, "serverAddresses": ["192.0.2.1"]}]}})))
    .unwrap();
    let plan = plan_tenant(&req.adc, &req.adc.tenants[0]);
    assert_eq!(plan.objects[0].coll, "/mgmt/tm/ltm/monitor/http");
    assert_eq!(
        plan.objects[0].body["send"],
        "GET /health HTTP/1.0\\r\\n\\r\\n"
    );
    assert_eq!(
        (
            plan.objects[0].body["recv"].as_str(),
            plan.objects[0].body["interval"].as_i64()
        ),
        (Some("OK"), Some(3))
    );
    assert_eq!(plan.objects[1].body["monitor"], "/T/A/mon and /Common/tcp");
    let errs = errors_of(decl(
        json!({"class": "Application", "m": {"class": "Monitor", "monitorType": "icmp"}}),
    ));
    assert!(
        errs[0].starts_with("/T/A/m/monitorType: should be equal to one of"),
        "{errs:?}"
    );
}
