//! Access profiles as configuration: created over the controller's `/mgmt` API and attached to a
//! virtual server (enforced without a restart, keys replaced live), derived from the OpenAPI
//! `security` of the policy's spec, and refused with the field named when the file is wrong.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::access::*;
use crate::support::free_addr;
use crate::support::proxy::{PASS_POLICY, Proxy};

#[test]
fn a_bad_access_file_stops_the_proxy_with_the_field_named() {
    let dir = tempfile::tempdir().expect("tmp");
    let policy = dir.path().join("p.json");
    std::fs::write(&policy, PASS_POLICY).expect("policy");
    let access = dir.path().join("a.yaml");
    std::fs::write(
        &access,
        "methods:\n  sso:\n    jwt:\n      jwksUrl: http://127.0.0.1:1/jwks\n      audiences: [1]\n",
    )
    .expect("access");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_portcullis"))
        .args([
            "proxy",
            "--listen",
            &free_addr().to_string(),
            "--upstream",
            "http://127.0.0.1:9",
        ])
        .arg("--policy")
        .arg(&policy)
        .arg("--access")
        .arg(&access)
        .output()
        .expect("run");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("methods.sso.jwt.audiences[0]"), "{err}");
    // The same check offline, and a good file summarised.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_portcullis"))
        .args(["access", "check"])
        .arg(&access)
        .output()
        .expect("run");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("methods.sso.jwt.audiences[0]"));

    // hash-password prints an argon2id hash a Basic user can use.
    use std::io::Write as _;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_portcullis"))
        .args(["access", "hash-password"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"wonderland\n")
        .expect("write");
    let out = child.wait_with_output().expect("wait");
    let hash = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(hash.starts_with("$argon2id$"), "{hash}");
    std::fs::write(
        &access,
        serde_json::to_vec(
            &json!({"methods": {"ops": {"basic": {"users": [{"name": "alice", "hash": hash}]}}},
                                   "rateLimit": {"requestsPerSecond": 5}}),
        )
        .expect("json"),
    )
    .expect("access");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_portcullis"))
        .args(["access", "check"])
        .arg(&access)
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("method ops: Basic (1 users)") && text.contains("burst 5"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_access_profile_created_over_rest_is_enforced_without_a_restart() {
    use crate::support::mgmt::{Api, assert_error, start};
    use reqwest::Method;

    let dir = tempfile::tempdir().expect("tmp");
    let server = start(dir.path(), None);
    let api = Api::new(&server);
    let upstream = echo_upstream().await;
    let port = free_addr().port();

    let (st, b) = api
        .req(
            Method::POST,
            "/mgmt/tm/ltm/pool",
            Some(json!({"name": "web", "members": [{"name": upstream.to_string()}]})),
        )
        .await;
    assert_eq!(st, 200, "{b}");
    let (st, b) = api
        .req(Method::POST, "/mgmt/tm/ltm/virtual",
             Some(json!({"name": "vs", "destination": format!("127.0.0.1:{port}"), "pool": "/Common/web"})))
        .await;
    assert_eq!(st, 200, "{b}");
    let url = format!("http://127.0.0.1:{port}/orders");
    let mut open = false;
    for _ in 0..50 {
        if reqwest::get(&url)
            .await
            .is_ok_and(|r| r.status().as_u16() == 200)
        {
            open = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(open, "the virtual server never served");

    // A bad profile is refused with the field named, and nothing is stored.
    let (st, b) = api
        .req(
            Method::POST,
            "/mgmt/tm/ltm/profile/api-access",
            Some(
                json!({"name": "bad", "methods": {"k": {"apiKey": {"in": "cookie", "name": "x"}}}}),
            ),
        )
        .await;
    assert_eq!(st, 400, "{b}");
    assert_error(&b, 400);
    assert!(
        b["message"]
            .as_str()
            .unwrap_or_default()
            .contains("methods.k.apiKey.in"),
        "{b}"
    );

    let (st, b) = api
        .req(Method::POST, "/mgmt/tm/ltm/profile/api-access",
             Some(json!({"name": "keys", "realm": "shop",
                         "methods": {"k": {"apiKey": {"in": "header", "name": "x-api-key",
                                                       "keys": [{"id": "client-1", "key": "plain-key-1"}]},
                                           "identityHeader": "x-client"}}})))
        .await;
    assert_eq!(st, 200, "{b}");
    assert!(
        !b.to_string().contains("plain-key-1"),
        "the key is stored hashed: {b}"
    );
    assert_eq!(
        b["methods"]["k"]["apiKey"]["keys"][0]["sha256"],
        sha256_hex("plain-key-1")
    );

    let (st, b) = api
        .req(
            Method::POST,
            "/mgmt/tm/ltm/virtual/~Common~vs/profiles",
            Some(json!({"name": "/Common/keys"})),
        )
        .await;
    assert_eq!(st, 200, "{b}");
    let mut enforced = false;
    for _ in 0..50 {
        if call(&url, "GET", &[]).await.0 == 401 {
            enforced = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(enforced, "the attached profile is not enforced");
    let res = call(&url, "GET", &[]).await;
    assert_401(&res, "ApiKey realm=\"shop\"");
    let (st, _, body) = call(&url, "GET", &[("x-api-key", "plain-key-1")]).await;
    assert_eq!(st, 200, "{body}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).expect("echo")["x-client"],
        "client-1"
    );

    // Keys are replaced live with a PATCH: the old key stops working, the new one works.
    let (st, b) = api
        .req(Method::PATCH, "/mgmt/tm/ltm/profile/api-access/~Common~keys",
             Some(json!({"methods": {"k": {"apiKey": {"in": "header", "name": "x-api-key",
                                                      "keys": [{"id": "client-2", "key": "plain-key-2"}]}}}})))
        .await;
    assert_eq!(st, 200, "{b}");
    let mut swapped = false;
    for _ in 0..50 {
        if call(&url, "GET", &[("x-api-key", "plain-key-2")]).await.0 == 200 {
            swapped = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(swapped);
    assert_eq!(
        call(&url, "GET", &[("x-api-key", "plain-key-1")]).await.0,
        401
    );

    // In use: cannot be deleted (the listener would lose its access control).
    let (st, b) = api
        .req(
            Method::DELETE,
            "/mgmt/tm/ltm/profile/api-access/~Common~keys",
            None,
        )
        .await;
    assert_eq!(st, 400, "{b}");
    assert!(
        b["message"]
            .as_str()
            .unwrap_or_default()
            .contains("in use by a virtual server (/Common/vs)"),
        "{b}"
    );
    assert_eq!(call(&url, "GET", &[]).await.0, 401);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openapi_security_requirements_become_access_rules() {
    let upstream = echo_upstream().await;
    let dir = tempfile::tempdir().expect("tmp");
    let spec = write(
        dir.path(),
        "pets.json",
        &json!({
            "openapi": "3.0.3",
            "info": {"title": "pets", "version": "1"},
            "security": [{"partnerKey": []}],
            "components": {"securitySchemes": {
                "partnerKey": {"type": "apiKey", "in": "header", "name": "X-Api-Key"},
                "oauth": {"type": "oauth2", "flows": {"clientCredentials": {
                    "tokenUrl": "https://issuer.test/token", "scopes": {"pets:write": "write"}}}}}},
            "paths": {
                "/pets": {
                    "get": {"responses": {"200": {"description": "ok"}}},
                    "post": {"security": [{"oauth": ["pets:write"]}], "responses": {"200": {"description": "ok"}}}
                },
                "/health": {"get": {"security": [], "responses": {"200": {"description": "ok"}}}}
            }
        }),
    );
    let policy =
        json!({"policy": {"name": "pets", "template": {"name": "POLICY_TEMPLATE_API_SECURITY"},
        "enforcementMode": "blocking", "open-api-files": [{"link": format!("file://{spec}")}]}})
        .to_string();
    let signer = Signer::ec("ec-1");
    let access = write(
        dir.path(),
        "access.json",
        &json!({
            "openapi": true,
            "methods": {
                "keys": {"apiKey": {"in": "header", "name": "x-api-key", "keys": [{"id": "p1", "key": "pk-1"}]}},
                "sso": {"jwt": {"jwks": {"keys": [signer.jwk]}, "audiences": ["orders"]}}
            }
        }),
    );
    let proxy = Proxy::start(
        &[format!("http://{upstream}")],
        &policy,
        &["--access", &access],
    );
    // GET /pets inherits the root requirement: the API key.
    assert_401(
        &call(&proxy.url("/pets"), "GET", &[]).await,
        "ApiKey realm=\"api\", in=\"header\", name=\"x-api-key\"",
    );
    assert_eq!(
        call(&proxy.url("/pets"), "GET", &[("x-api-key", "pk-1")])
            .await
            .0,
        200
    );
    // POST /pets needs an OAuth token with pets:write: the JWT method checks it.
    let res = call(&proxy.url("/pets"), "POST", &[("x-api-key", "pk-1")]).await;
    assert_401(&res, "Bearer realm=\"api\"");
    let mut c = claims("svc");
    c["scope"] = json!("pets:read");
    let (st, h, _) = call(
        &proxy.url("/pets"),
        "POST",
        &[("authorization", &bearer(&signer.sign(&c)))],
    )
    .await;
    assert_eq!(st, 403);
    assert!(all(&h, "www-authenticate").contains("scope=\"pets:write\""));
    c["scope"] = json!("pets:read pets:write");
    let (st, _, body) = call(
        &proxy.url("/pets"),
        "POST",
        &[("authorization", &bearer(&signer.sign(&c)))],
    )
    .await;
    assert_eq!(st, 200, "{body}");
    // `security: []` is anonymous.
    assert_eq!(call(&proxy.url("/health"), "GET", &[]).await.0, 200);
}
