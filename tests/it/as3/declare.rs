//! AS3 declarations against the real `portcullis serve` binary with its data plane: a
//! declaration builds listeners that carry traffic; invalid ones change nothing; redeploys are
//! "no change"; HTTPS with an inline certificate and the port-80 redirect; a WAF policy pulled
//! from a URL protects its listener in one call; tenant removal; restart and `persist`.

use std::sync::Arc;

use parking_lot::Mutex;
use reqwest::Method;
use serde_json::{Value, json};

use crate::support::as3::{DECLARE, as3, body_of, http_app, virtual_names};
use crate::support::free_port;
use crate::support::mgmt::{Api, start};
use crate::support::upstream::{get_when_up, gone, http_server, http_server_shared};

#[tokio::test]
async fn http_service_serves_traffic_redeploy_is_no_change_bad_declaration_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), None);
    let api = Api::new(&server);
    let member = http_server("hello from upstream".into()).await;
    let port = free_port();
    let decl = as3(json!({"T1": {"class": "Tenant", "A1": http_app(port, member)}}));

    let (s, b) = api.req(Method::POST, DECLARE, Some(decl.clone())).await;
    assert_eq!(s, 200, "{b}");
    let r = &b["results"][0];
    assert_eq!(
        (
            r["code"].as_u64(),
            r["message"].as_str(),
            r["tenant"].as_str()
        ),
        (Some(200), Some("success"), Some("T1")),
        "{b}"
    );
    assert!(
        r["lineCount"].as_u64().unwrap() >= 3 && r["runTime"].is_u64() && r["host"] == "localhost",
        "{b}"
    );
    assert_eq!(
        b["declaration"]["T1"]["A1"]["serviceMain"]["virtualPort"],
        port
    );

    let url = format!("http://127.0.0.1:{port}/hello");
    assert_eq!(
        body_of(&url).await,
        (200, "hello from upstream".to_string())
    );
    assert!(
        virtual_names(&api)
            .await
            .contains(&"/T1/A1/serviceMain".to_string())
    );
    let (s, vs) = api
        .req(Method::GET, "/mgmt/tm/ltm/virtual/~T1~A1~serviceMain", None)
        .await;
    assert_eq!(s, 200, "{vs}");
    assert_eq!(vs["destination"], format!("/T1/127.0.0.1:{port}"));
    assert_eq!(vs["pool"], "/T1/A1/web_pool");
    let (_, pool) = api
        .req(
            Method::GET,
            "/mgmt/tm/ltm/pool/~T1~A1~web_pool?expandSubcollections=true",
            None,
        )
        .await;
    assert_eq!(pool["monitor"], "/Common/tcp", "{pool}");
    assert_eq!(
        pool["membersReference"]["items"][0]["name"],
        format!("127.0.0.1:{}", member.port())
    );
    let (_, xff) = api
        .req(Method::GET, "/mgmt/tm/ltm/profile/http/~T1~A1~xff", None)
        .await;
    assert_eq!(xff["xForwardedFor"], "enabled", "{xff}");

    // GET returns the declaration; per tenant; an unknown tenant is a 404.
    let (s, got) = api.req(Method::GET, DECLARE, None).await;
    assert_eq!(s, 200);
    assert_eq!(got["class"], "ADC");
    assert_eq!(got["T1"], decl["declaration"]["T1"]);
    let (s, _) = api.req(Method::GET, &format!("{DECLARE}/T1"), None).await;
    assert_eq!(s, 200);
    let (s, _) = api.req(Method::GET, &format!("{DECLARE}/Nope"), None).await;
    assert_eq!(s, 404);

    // The same declaration again: no change, nothing rewritten.
    let generation = vs["generation"].clone();
    let (s, b) = api.req(Method::POST, DECLARE, Some(decl.clone())).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["results"][0]["message"], "no change", "{b}");
    let (_, vs2) = api
        .req(Method::GET, "/mgmt/tm/ltm/virtual/~T1~A1~serviceMain", None)
        .await;
    assert_eq!(vs2["generation"], generation);

    // An invalid declaration: 422 with every error, nothing changed.
    let mut bad = decl.clone();
    bad["declaration"]["T1"]["A1"]["serviceMain"]["virtualPort"] = json!("eighty");
    bad["declaration"]["T1"]["A1"]["web_pool"]["members"][0]["serverAddresses"] =
        json!(["not-an-ip"]);
    bad["declaration"]["T1"]["A1"]["thing"] = json!({"class": "Firewall_Policy"});
    bad["declaration"]["T2"] =
        json!({"class": "Tenant", "A": {"class": "Application", "template": "https"}});
    let (s, b) = api.req(Method::POST, DECLARE, Some(bad)).await;
    assert_eq!(s, 422, "{b}");
    assert_eq!(
        (b["code"].as_u64(), b["message"].as_str()),
        (Some(422), Some("declaration is invalid"))
    );
    assert_eq!(b["declarationFullId"], "test-decl");
    let errors: Vec<&str> = b["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    for want in [
        "/T1/A1/serviceMain/virtualPort: should be integer",
        "/T1/A1/web_pool/members/0/serverAddresses/0: should be an IP address",
        "/T1/A1/thing/class: class Firewall_Policy is not supported",
        "/T2/A: template https requires an item serviceMain of class Service_HTTPS",
    ] {
        assert!(
            errors.iter().any(|e| e.starts_with(want)),
            "{want} not in {errors:?}"
        );
    }
    // A declaration that validates but cannot be built (a pool that does not exist): the
    // tenant answers 422 and keeps its running configuration.
    let mut unbuildable = decl.clone();
    unbuildable["declaration"]["T1"]["A1"]["serviceMain"]["pool"] =
        json!({"bigip": "/Common/no_such_pool"});
    let (s, b) = api.req(Method::POST, DECLARE, Some(unbuildable)).await;
    assert_eq!(s, 422, "{b}");
    assert_eq!(b["results"][0]["message"], "declaration failed");
    assert!(
        b["results"][0]["errors"][0]
            .as_str()
            .unwrap()
            .contains("/Common/no_such_pool"),
        "{b}"
    );
    let (_, got2) = api.req(Method::GET, DECLARE, None).await;
    assert_eq!(got2["T1"], decl["declaration"]["T1"]);
    let (_, vs3) = api
        .req(Method::GET, "/mgmt/tm/ltm/virtual/~T1~A1~serviceMain", None)
        .await;
    assert_eq!(vs3["generation"], generation);
    assert_eq!(
        body_of(&url).await,
        (200, "hello from upstream".to_string())
    );

    // DELETE of the tenant removes its objects and its listener.
    let (s, b) = api
        .req(Method::DELETE, &format!("{DECLARE}/T1"), None)
        .await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["results"][0]["message"], "success");
    assert!(
        gone(&url).await,
        "the listener of a removed tenant keeps answering"
    );
    assert!(
        !virtual_names(&api)
            .await
            .iter()
            .any(|v| v.starts_with("/T1/"))
    );
    let (s, _) = api
        .req(Method::GET, "/mgmt/tm/ltm/pool/~T1~A1~web_pool", None)
        .await;
    assert_eq!(s, 404);
    // Nothing deployed: GET still answers 200 with a JSON body.
    let (s, got) = api.req(Method::GET, DECLARE, None).await;
    assert_eq!(s, 200);
    assert_eq!(got["class"], "ADC");
    assert!(got.get("T1").is_none());
}

#[tokio::test]
async fn https_service_with_inline_certificate_and_redirect() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), None);
    let api = Api::new(&server);
    let member = http_server("secure hello".into()).await;
    let (port, redirect) = (free_port(), free_port());
    let ck = rcgen::generate_simple_self_signed(vec!["app.example.test".into()]).unwrap();
    let app = json!({
        "class": "Application", "template": "https",
        "serviceMain": {"class": "Service_HTTPS", "virtualAddresses": ["127.0.0.1"], "virtualPort": port,
                        "redirectPort": redirect, "pool": "pool", "serverTLS": "webtls",
                        "profileTCP": {"egress": "wan", "ingress": {"use": "tcp_in"}}},
        "pool": {"class": "Pool", "members": [{"servicePort": member.port(), "serverAddresses": ["127.0.0.1"]}]},
        "tcp_in": {"class": "TCP_Profile", "idleTimeout": 120},
        "webtls": {"class": "TLS_Server", "certificates": [{"certificate": "webcert"}]},
        "webcert": {"class": "Certificate", "certificate": ck.cert.pem(), "privateKey": ck.signing_key.serialize_pem()}
    });
    let (s, b) = api
        .req(
            Method::POST,
            DECLARE,
            Some(as3(json!({"Web": {"class": "Tenant", "App": app}}))),
        )
        .await;
    assert_eq!(s, 200, "{b}");

    // HTTPS serves with the declared certificate.
    let r = get_when_up(&format!("https://127.0.0.1:{port}/x"))
        .await
        .expect("https listener");
    let served = r
        .extensions()
        .get::<reqwest::tls::TlsInfo>()
        .and_then(|i| i.peer_certificate())
        .map(<[u8]>::to_vec);
    assert_eq!(served.as_deref(), Some(ck.cert.der().as_ref()));
    assert_eq!(r.status(), 200);
    assert_eq!(r.text().await.unwrap(), "secure hello");

    // The redirect virtual sends plain HTTP to HTTPS.
    let r = get_when_up(&format!("http://127.0.0.1:{redirect}/path?q=1"))
        .await
        .expect("redirect listener");
    assert_eq!(r.status(), 302);
    assert_eq!(r.headers()["location"], "https://127.0.0.1/path?q=1");

    // The objects: ingress/egress TCP profiles, the client-ssl profile, the redirect virtual.
    let (_, vs) = api
        .req(
            Method::GET,
            "/mgmt/tm/ltm/virtual/~Web~App~serviceMain?expandSubcollections=true",
            None,
        )
        .await;
    let profiles: Vec<(String, String)> = vs["profilesReference"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["fullPath"].as_str().unwrap().to_string(),
                p["context"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    for want in [
        ("/Web/App/tcp_in", "clientside"),
        ("/Common/f5-tcp-wan", "serverside"),
        ("/Web/App/webtls", "clientside"),
        ("/Common/http", "all"),
    ] {
        assert!(
            profiles.contains(&(want.0.to_string(), want.1.to_string())),
            "{want:?} not in {profiles:?}"
        );
    }
    let (s, rd) = api
        .req(
            Method::GET,
            "/mgmt/tm/ltm/virtual/~Web~App~serviceMain-Redirect-",
            None,
        )
        .await;
    assert_eq!(s, 200, "{rd}");
    assert_eq!(rd["rules"], json!(["/Common/_sys_https_redirect"]));
    let (s, cert) = api
        .req(
            Method::GET,
            "/mgmt/tm/sys/file/ssl-cert/~Web~App~webcert",
            None,
        )
        .await;
    assert_eq!(s, 200, "{cert}");
    assert!(
        cert["subject"].as_str().unwrap().contains("rcgen"),
        "{cert}"
    );
    // The private key is not left in the downloadable directory.
    assert!(
        !dir.path().join("downloads").read_dir().unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with("as3_"))
    );
}

#[tokio::test]
async fn declaration_and_listeners_come_back_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let member = http_server("still here".into()).await;
    let (port, port2, port3) = (free_port(), free_port(), free_port());
    // T1 is protected by an inline WAF policy; the protection comes back with the listener.
    let mut app = http_app(port, member);
    app["serviceMain"]["policyWAF"] = json!({"use": "waf"});
    app["waf"] = json!({"class": "WAF_Policy", "policy": {"text": waf_doc("inline")}});
    let decl = as3(json!({"T1": {"class": "Tenant", "A1": app}}));
    // `persist: false`: T2 does not survive a restart; T3 goes back to its persisted version.
    let mut transient = as3(
        json!({"T2": {"class": "Tenant", "A1": http_app(port2, member)},
                                   "T3": {"class": "Tenant", "A1": http_app(port3, member)}}),
    );
    transient["persist"] = json!(false);

    let loopback_url = |p: u16| format!("http://127.0.0.1:{p}/");
    {
        let server = start(dir.path(), None);
        let api = Api::new(&server);
        let (s, b) = api.req(Method::POST, DECLARE, Some(decl.clone())).await;
        assert_eq!(s, 200, "{b}");
        let mut t3_first = as3(json!({"T3": {"class": "Tenant", "A1": http_app(port3, member)}}));
        t3_first["declaration"]["T3"]["A1"]["serviceMain"]["virtualAddresses"] =
            json!(["127.0.0.2"]);
        let (s, b) = api.req(Method::POST, DECLARE, Some(t3_first)).await;
        assert_eq!(s, 200, "{b}");
        let (s, b) = api.req(Method::POST, DECLARE, Some(transient)).await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(body_of(&loopback_url(port2)).await.0, 200);
        assert_eq!(body_of(&loopback_url(port3)).await.0, 200);
    }
    let server = start(dir.path(), None);
    let api = Api::new(&server);
    let (_, got) = api.req(Method::GET, DECLARE, None).await;
    assert_eq!(got["T1"], decl["declaration"]["T1"]);
    assert!(got.get("T2").is_none(), "{got}");
    assert_eq!(
        got["T3"]["A1"]["serviceMain"]["virtualAddresses"],
        json!(["127.0.0.2"]),
        "{got}"
    );
    assert!(gone(&loopback_url(port2)).await);
    assert!(gone(&loopback_url(port3)).await);
    assert_eq!(body_of(&format!("http://127.0.0.2:{port3}/")).await.0, 200);
    assert_eq!(
        body_of(&format!("http://127.0.0.1:{port}/allowed")).await,
        (200, "still here".to_string())
    );
    assert_blocked(&format!("http://127.0.0.1:{port}/elsewhere")).await;
    let (_, b) = api.req(Method::POST, DECLARE, Some(decl)).await;
    assert_eq!(b["results"][0]["message"], "no change");
}

/// Allows `GET /allowed` only; anything else is VIOL_URL, blocked. `marker` ends up in the
/// policy description, so two versions differ.
fn waf_doc(marker: &str) -> String {
    json!({"policy": {
        "name": "waf", "description": marker,
        "template": {"name": "POLICY_TEMPLATE_API_SECURITY"},
        "enforcementMode": "blocking",
        "urls": [{"name": "*", "type": "wildcard", "method": "*", "$action": "delete"},
                 {"name": "/allowed", "method": "GET"}],
        "blocking-settings": {"violations": [{"name": "VIOL_URL", "alarm": true, "block": true}]}
    }})
    .to_string()
}

async fn assert_blocked(url: &str) {
    let r = get_when_up(url).await.expect("listener answers");
    assert_eq!(r.status(), 403, "{url}");
    assert_eq!(
        r.headers()["content-type"],
        "application/json; charset=utf-8"
    );
    let v: Value = r.json().await.unwrap();
    let id = v["supportID"].as_str().expect("supportID");
    assert!(
        id.len() >= 19 && id.bytes().all(|b| b.is_ascii_digit()),
        "{id}"
    );
}

#[tokio::test]
async fn waf_policy_from_a_url_protects_the_listener_in_one_call() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), None);
    let api = Api::new(&server);
    let member = http_server("protected upstream".into()).await;
    let doc = Arc::new(Mutex::new(waf_doc("v1")));
    let repo = http_server_shared(doc.clone()).await;
    let port = free_port();
    let mut app = http_app(port, member);
    app["serviceMain"]["policyWAF"] = json!({"use": "waf"});
    app["serviceMain"]["securityLogProfiles"] = json!([{"bigip": "/Common/Log all requests"}]);
    app["waf"] = json!({"class": "WAF_Policy", "url": format!("http://{repo}/policies/waf.json"), "ignoreChanges": false});
    let decl = as3(json!({"T1": {"class": "Tenant", "A1": app}}));
    let (s, b) = api.req(Method::POST, DECLARE, Some(decl.clone())).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["results"][0]["message"], "success", "{b}");

    let base = format!("http://127.0.0.1:{port}");
    assert_eq!(
        body_of(&format!("{base}/allowed")).await,
        (200, "protected upstream".to_string())
    );
    assert_blocked(&format!("{base}/admin?cmd=cat%20/etc/passwd")).await;

    // The policy is an ASM policy attached to the virtual; the virtual names its log profiles.
    let (_, pols) = api.req(Method::GET, "/mgmt/tm/asm/policies", None).await;
    let pol = pols["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["fullPath"] == "/T1/A1/waf")
        .cloned()
        .expect("policy");
    assert_eq!(
        pol["virtualServers"],
        json!(["/T1/A1/serviceMain"]),
        "{pol}"
    );
    let (_, vs) = api
        .req(Method::GET, "/mgmt/tm/ltm/virtual/~T1~A1~serviceMain", None)
        .await;
    assert_eq!(
        vs["securityLogProfiles"],
        json!(["/Common/Log all requests"])
    );

    // ignoreChanges false: the URL is pulled again; the same content is no change,
    // a new version is deployed.
    let (_, b) = api.req(Method::POST, DECLARE, Some(decl.clone())).await;
    assert_eq!(b["results"][0]["message"], "no change", "{b}");
    *doc.lock() = waf_doc("v2");
    let (_, b) = api.req(Method::POST, DECLARE, Some(decl.clone())).await;
    assert_eq!(b["results"][0]["message"], "success", "{b}");
    let (_, pols) = api.req(Method::GET, "/mgmt/tm/asm/policies", None).await;
    assert!(
        pols["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["fullPath"] == "/T1/A1/waf" && p["description"] == "v2"),
        "{pols}"
    );
    assert_blocked(&format!("{base}/nope")).await;

    // A policy that does not compile fails the tenant and leaves it running as it was.
    *doc.lock() = json!({"policy": {"name": "waf", "enforcementMode": "sometimes"}}).to_string();
    let (s, b) = api.req(Method::POST, DECLARE, Some(decl.clone())).await;
    assert_eq!(s, 422, "{b}");
    assert!(
        b["results"][0]["errors"][0]
            .as_str()
            .unwrap()
            .contains("/T1/A1/waf"),
        "{b}"
    );
    assert_blocked(&format!("{base}/nope")).await;
    assert_eq!(body_of(&format!("{base}/allowed")).await.0, 200);

    // Removing the tenant removes the policy with it.
    let (s, _) = api
        .req(Method::DELETE, &format!("{DECLARE}/T1"), None)
        .await;
    assert_eq!(s, 200);
    let (_, pols) = api.req(Method::GET, "/mgmt/tm/asm/policies", None).await;
    assert!(
        !pols["items"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|p| p["fullPath"] == "/T1/A1/waf"),
        "{pols}"
    );
}
