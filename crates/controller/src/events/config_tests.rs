//! Tests of `super` (the log profile entry model): entries, defaults, SIEM destinations and the
//! errors naming what is wrong, server addresses, and the fuzz seeds.

use super::*;
use serde_json::json;

#[test]
fn fuzz_seeds_run_without_panicking() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/log_profile");
    let mut n = 0;
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        fuzz_log_profile(&std::fs::read(e.path()).unwrap_or_default());
        n += 1;
    }
    assert!(n >= 4, "seeds found: {n}");
}

fn obj(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap()
}

#[test]
fn server_addresses() {
    assert_eq!(parse_server("192.0.2.1:514").unwrap().port(), 514);
    assert_eq!(
        parse_server("[2001:db8::1]:6514").unwrap(),
        "[2001:db8::1]:6514".parse().unwrap()
    );
    assert_eq!(
        parse_server("2001:db8::1.514").unwrap(),
        "[2001:db8::1]:514".parse().unwrap()
    );
    for bad in [
        "",
        "192.0.2.1",
        "192.0.2.1:0",
        "host:514",
        "1.2.3.4.514",
        "::1.x",
    ] {
        assert!(parse_server(bad).is_err(), "{bad}");
    }
}

#[test]
fn entries_parse_with_defaults_and_precise_errors() {
    let apps = |v: Value| -> Result<Vec<LogApp>, String> {
        applications(&obj(v), "p")
            .map_err(|e| e.to_string())?
            .unwrap_or_default()
            .iter()
            .map(|m| parse_app(m, "p").map_err(|e| e.to_string()))
            .collect()
    };
    let got = apps(json!({"name": "p", "application": {"p": {
        "remoteStorage": "remote", "protocol": "tcp",
        "servers": [{"name": "127.0.0.1:5514"}],
        "filter": [{"name": "request-type", "values": ["all"]}]}}}))
    .unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].name, "p");
    assert!(got[0].local_storage);
    assert_eq!(got[0].facility, 16);
    assert_eq!(
        got[0].remote,
        Remote::Syslog {
            servers: vec!["127.0.0.1:5514".parse().unwrap()],
            transport: Transport::Tcp
        }
    );
    assert_eq!(applications(&obj(json!({"name": "p"})), "p"), Ok(None));
    let items = applications(
        &obj(json!({"applicationReference": {"items": [{"name": "/Common/x"}]}})),
        "p",
    )
    .unwrap()
    .unwrap();
    assert_eq!(items[0]["name"], "/Common/x");
    let e = apps(json!({"application": [{"name": "a",
        "remoteStorage": "remote", "servers": []}]}))
    .unwrap_err();
    assert!(
        e.contains("application 'a'") && e.contains("at least one server"),
        "{e}"
    );
    let e = apps(json!({"application": [{"remoteStorage": "file",
        "file": "../x"}]}))
    .unwrap_err();
    assert!(e.contains("invalid log file name"), "{e}");
    let e = parse_app(
        &obj(json!({"protocol": "tcp-rfc3195", "remoteStorage": "remote",
        "servers": [{"name": "127.0.0.1:1"}]})),
        "x",
    )
    .unwrap_err();
    assert!(
        matches!(&e, AppError::Entry { application, reason }
            if application == "x" && reason.contains("unsupported protocol")),
        "{e}"
    );
    let a = parse_app(
        &obj(json!({"localStorage": "disabled", "facility": "local7",
        "filter": {"requestType": "blocked"},
        "format": {"type": "user-defined", "userString": "%support_id%"}})),
        "x",
    )
    .unwrap();
    assert!(!a.local_storage);
    assert_eq!(a.facility, 23);
    assert_eq!(a.request_type, RequestType::Blocked);
    assert_eq!(a.format, MsgFormat::User("%support_id%".into()));
    // The AS3 spelling: servers as {address, port}, storageFilter, localStorage as a bool.
    let a = parse_app(
        &obj(json!({"localStorage": false, "remoteStorage": "remote",
        "servers": [{"address": "192.0.2.9", "port": "514"}, {"address": "2001:db8::9", "port": 6514}],
        "storageFilter": {"requestType": "illegal"}})),
        "x",
    )
    .unwrap();
    assert!(!a.local_storage);
    assert_eq!(
        a.remote,
        Remote::Syslog {
            servers: vec![
                "192.0.2.9:514".parse().unwrap(),
                "[2001:db8::9]:6514".parse().unwrap()
            ],
            transport: Transport::Udp
        }
    );
}

#[test]
fn siem_entries_parse_and_errors_name_the_field() {
    let ck = rcgen::generate_simple_self_signed(vec!["siem.test".into()]).unwrap();
    let (cert, key) = (ck.cert.pem(), ck.signing_key.serialize_pem());
    let a = parse_app(
        &obj(json!({"remoteStorage": "arcsight", "protocol": "tls",
            "servers": [{"name": "127.0.0.1:6514"}],
            "tls": {"caCertificate": cert, "serverName": "siem.test",
                    "clientCertificate": cert, "clientKey": key}})),
        "x",
    )
    .unwrap();
    assert_eq!(a.format, MsgFormat::Cef, "arcsight entries speak CEF");
    let Remote::Syslog {
        transport: Transport::Tls(t),
        ..
    } = &a.remote
    else {
        panic!("{:?}", a.remote)
    };
    assert_eq!(t.server_name.as_deref(), Some("siem.test"));
    let a = parse_app(
        &obj(
            json!({"remoteStorage": "remote", "format": {"type": "leef"},
            "servers": [{"name": "127.0.0.1:514"}]}),
        ),
        "x",
    )
    .unwrap();
    assert_eq!(a.format, MsgFormat::Leef);
    let a = parse_app(
        &obj(json!({"remoteStorage": "json-lines", "servers": [{"name": "127.0.0.1:5170"}]})),
        "x",
    )
    .unwrap();
    assert!(matches!(
        a.remote,
        Remote::JsonLines {
            transport: Transport::Tcp,
            ..
        }
    ));
    let a = parse_app(
        &obj(json!({"remoteStorage": "splunk-hec",
            "hec": {"url": "https://splunk.test:8088", "token": "t-1", "batchEvents": 50}})),
        "x",
    )
    .unwrap();
    let Remote::Hec(h) = a.remote else { panic!() };
    assert_eq!(h.url, "https://splunk.test:8088/services/collector/event");
    assert_eq!((h.batch, h.flush), (50, Duration::from_secs(1)));
    assert_eq!(h.sourcetype, "portcullis:security");
    let servers = json!([{"name": "127.0.0.1:514"}]);
    for (entry, needle) in [
        (
            json!({"remoteStorage": "json-lines", "protocol": "udp", "servers": servers}),
            "not udp",
        ),
        (
            json!({"remoteStorage": "remote", "protocol": "tcp", "servers": servers,
                "tls": {"serverName": "a"}}),
            "'tls' needs protocol 'tls'",
        ),
        (
            json!({"remoteStorage": "remote", "protocol": "tls", "servers": servers,
                "tls": {"caCertificate": "nope"}}),
            "'tls.caCertificate' holds no PEM",
        ),
        (
            json!({"remoteStorage": "remote", "protocol": "tls", "servers": servers,
                "tls": {"clientCertificate": cert}}),
            "go together",
        ),
        (
            json!({"remoteStorage": "remote", "protocol": "tls", "servers": servers,
                "tls": {"ca": cert}}),
            "unknown 'tls' field 'ca'",
        ),
        (json!({"remoteStorage": "splunk-hec"}), "needs 'hec'"),
        (
            json!({"remoteStorage": "splunk-hec", "hec": {"url": "ftp://x", "token": "t"}}),
            "https://",
        ),
        (
            json!({"remoteStorage": "splunk-hec", "hec": {"url": "https://x"}}),
            "'hec.token' is required",
        ),
        (
            json!({"remoteStorage": "splunk-hec", "hec": {"url": "https://x", "token": "t",
                "batchEvents": 0}}),
            "'hec.batchEvents' must be",
        ),
        (
            json!({"remoteStorage": "remote", "servers": servers, "format": {"type": "xml"}}),
            "cef or leef",
        ),
    ] {
        let e = parse_app(&obj(entry.clone()), "e").unwrap_err();
        assert!(
            matches!(&e, AppError::Entry { application, reason }
                if application == "e" && reason.contains(needle)),
            "{entry}: {e}"
        );
        assert!(e.to_string().starts_with("application 'e': "), "{e}");
    }
}
