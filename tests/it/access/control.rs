//! API access control through the real `portcullis proxy` on loopback: JWTs signed in the test
//! (RS256, ES256) against a JWKS served over HTTP, token introspection (RFC 7662), API keys added
//! and revoked without a restart, Basic credentials, a gRPC call without credentials, rate limits.
//! The controller's `/mgmt` objects, OpenAPI `security` and file validation are in
//! `access/config.rs`.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::access::*;
use crate::support::free_addr;
use crate::support::proxy::{PASS_POLICY, Proxy};

fn profile(idp: &Idp, alice_hash: &str, partner_keys: Value) -> Value {
    let base = format!("http://{}", idp.addr);
    json!({
        "realm": "orders",
        "methods": {
            "sso": {"jwt": {"jwksUrl": format!("{base}/jwks"), "issuers": ["https://issuer.test"],
                            "audiences": ["orders"], "leewaySeconds": 5, "minRefreshSeconds": 3},
                    "identityHeader": "x-user", "claimHeaders": {"scope": "x-scope", "tenant": "x-tenant"}},
            "partner": {"apiKey": {"in": "header", "name": "x-api-key", "keys": partner_keys},
                        "identityHeader": "x-api-client"},
            "ops": {"basic": {"users": [{"name": "alice", "hash": alice_hash}]}, "identityHeader": "x-user"},
            "opaque": {"introspection": {"endpoint": format!("{base}/introspect"), "clientId": "gw",
                                         "clientSecret": "s3cret", "timeoutMs": 500, "audiences": ["orders"]},
                       "identityHeader": "x-user", "claimHeaders": {"tenant": "x-tenant"}}
        },
        "rules": [
            {"path": "/public/*", "require": []},
            {"path": "/admin/*", "require": [{"sso": ["admin"]}]},
            {"path": "/ops/*", "require": [{"ops": []}]},
            {"path": "/opaque/*", "require": [{"opaque": []}]},
            {"path": "/scoped/*", "require": [{"opaque": ["write"]}]},
            {"path": "/partner/*", "require": [{"partner": []}]},
            {"path": "/either/*", "require": [{"partner": []}, {"opaque": []}]}
        ],
        "default": [{"sso": []}, {"partner": []}]
    })
}

struct Setup {
    proxy: Proxy,
    idp: Idp,
    rsa: Signer,
    ec: Signer,
    dir: tempfile::TempDir,
    access: String,
    metrics: std::net::SocketAddr,
}

async fn setup(jwks_with_ec: bool) -> Setup {
    let rsa = Signer::rsa("rsa-1");
    let ec = Signer::ec("ec-1");
    let keys = if jwks_with_ec {
        json!({"keys": [rsa.jwk, ec.jwk]})
    } else {
        json!({"keys": [rsa.jwk]})
    };
    let idp = Idp::start(keys).await;
    let upstream = echo_upstream().await;
    let dir = tempfile::tempdir().expect("tmp");
    let hash = portcullis::admin::hash_password("wonderland").expect("hash");
    let access = write(
        dir.path(),
        "access.json",
        &profile(
            &idp,
            &hash,
            json!([{"id": "partner-a", "sha256": sha256_hex("key-a-123")}]),
        ),
    );
    let metrics = free_addr();
    let m = metrics.to_string();
    let proxy = Proxy::start(
        &[format!("http://{upstream}")],
        PASS_POLICY,
        &["--access", &access, "--metrics-listen", &m],
    );
    Setup {
        proxy,
        idp,
        rsa,
        ec,
        dir,
        access,
        metrics,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jwts_signed_in_the_test_are_verified_against_a_jwks_over_http() {
    let s = setup(true).await;
    let url = s.proxy.url("/orders/1");

    // RS256 and ES256, valid: forwarded with the identity and mapped claims; the client's own
    // x-user is replaced, never forwarded.
    for signer in [&s.rsa, &s.ec] {
        let t = signer.sign(&claims("user-7"));
        let (st, _, body) = call(
            &url,
            "GET",
            &[("authorization", &bearer(&t)), ("x-user", "root")],
        )
        .await;
        assert_eq!(st, 200, "{:?}: {body}", signer.alg);
        let seen: Value = serde_json::from_str(&body).expect("echo");
        assert_eq!(seen["x-user"], "user-7");
        assert_eq!(seen["x-scope"], "read admin");
        assert_eq!(seen["x-tenant"], "t-1");
        assert!(
            seen["authorization"]
                .as_str()
                .is_some_and(|a| a.starts_with("Bearer "))
        );
    }
    assert_eq!(s.idp.jwks_hits(), 1, "keys are fetched once and cached");

    // No credentials: 401 with every applicable challenge.
    let res = call(&url, "GET", &[]).await;
    assert_401(&res, "Bearer realm=\"orders\"");
    assert!(
        all(&res.1, "www-authenticate")
            .contains("ApiKey realm=\"orders\", in=\"header\", name=\"x-api-key\"")
    );

    // Expired (beyond the 5 s leeway).
    let mut c = claims("user-7");
    c["exp"] = json!(now() - 60);
    let expired = s.rsa.sign(&c);
    let id = assert_401(
        &call(&url, "GET", &[("authorization", &bearer(&expired))]).await,
        "error=\"invalid_token\", error_description=\"the token has expired\"",
    );

    // Wrong audience.
    let mut c = claims("user-7");
    c["aud"] = json!("billing");
    assert_401(
        &call(&url, "GET", &[("authorization", &bearer(&s.ec.sign(&c)))]).await,
        "audience is not accepted",
    );

    // Signed by another key that claims the kid of a trusted one.
    let mut impostor = Signer::ec("ec-1");
    impostor.kid = "ec-1".into();
    assert_401(
        &call(
            &url,
            "GET",
            &[("authorization", &bearer(&impostor.sign(&claims("user-7"))))],
        )
        .await,
        "signature is invalid",
    );

    // alg: none.
    let none = format!(
        "{}.{}.",
        b64(br#"{"alg":"none","kid":"rsa-1","typ":"JWT"}"#),
        b64(claims("user-7").to_string().as_bytes())
    );
    assert_401(
        &call(&url, "GET", &[("authorization", &bearer(&none))]).await,
        "algorithm is not accepted",
    );

    // Algorithm confusion: HS256 "signed" with the RSA public key as the HMAC secret.
    let mut h = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256);
    h.kid = Some("rsa-1".into());
    let confused = jsonwebtoken::encode(
        &h,
        &claims("user-7"),
        &jsonwebtoken::EncodingKey::from_secret(&s.rsa.public),
    )
    .expect("hs256");
    assert_401(
        &call(&url, "GET", &[("authorization", &bearer(&confused))]).await,
        "algorithm is not accepted",
    );

    // Insufficient scope: 403 with the missing scope named.
    let mut c = claims("user-7");
    c["scope"] = json!("read");
    let (st, h, body) = call(
        &s.proxy.url("/admin/x"),
        "GET",
        &[("authorization", &bearer(&s.rsa.sign(&c)))],
    )
    .await;
    assert_eq!(st, 403, "{body}");
    assert!(all(&h, "www-authenticate").contains("error=\"insufficient_scope\", scope=\"admin\""));
    let (st, _, _) = call(
        &s.proxy.url("/admin/x"),
        "GET",
        &[("authorization", &bearer(&s.rsa.sign(&claims("u"))))],
    )
    .await;
    assert_eq!(st, 200);

    // Anonymous paths pass without credentials.
    assert_eq!(call(&s.proxy.url("/public/x"), "GET", &[]).await.0, 200);

    // Events: the support id with the violation; tokens never logged.
    let events = s.proxy.events_containing(&id);
    let line = events
        .lines()
        .find(|l| l.contains(&id))
        .expect("event of the expired token");
    assert!(line.contains("VIOL_ACCESS_UNAUTHORIZED"), "{line}");
    assert!(events.contains("VIOL_ACCESS_FORBIDDEN"), "{events}");
    for secret in [&expired, &confused, &none] {
        let sig = secret.rsplit('.').next().unwrap_or_default();
        assert!(
            sig.is_empty() || !events.contains(sig),
            "a token reached the event log"
        );
        assert!(!events.contains(secret.as_str()));
    }
    // Metrics count refusals by status.
    let (_, _, text) = call(&format!("http://{}/metrics", s.metrics), "GET", &[]).await;
    assert!(
        text.contains("portcullis_access_denials_total{listener=\"proxy\",status=\"401\"} 6"),
        "{text}"
    );
    assert!(
        text.contains("portcullis_access_denials_total{listener=\"proxy\",status=\"403\"} 1"),
        "{text}"
    );
    assert!(
        text.contains("portcullis_blocks_total{violation=\"VIOL_ACCESS_UNAUTHORIZED\"}"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_kid_refetches_the_jwks_at_most_once_per_interval() {
    let s = setup(false).await;
    let url = s.proxy.url("/orders");
    let ok = s.rsa.sign(&claims("u"));
    assert_eq!(
        call(&url, "GET", &[("authorization", &bearer(&ok))])
            .await
            .0,
        200
    );
    assert_eq!(s.idp.jwks_hits(), 1);

    // The issuer rotates in an EC key; wait out the minimum refresh interval (3 s).
    {
        let mut j = s.idp.jwks.lock();
        *j = json!({"keys": [s.rsa.jwk, s.ec.jwk]});
    }
    tokio::time::sleep(Duration::from_millis(3200)).await;
    let fresh = s.ec.sign(&claims("u"));
    assert_eq!(
        call(&url, "GET", &[("authorization", &bearer(&fresh))])
            .await
            .0,
        200
    );
    assert_eq!(s.idp.jwks_hits(), 2, "the unknown kid triggered one fetch");

    // A burst of tokens with unknown kids does not hammer the JWKS endpoint.
    for i in 0..8 {
        let t = Signer::ec(&format!("nope-{i}")).sign(&claims("u"));
        let res = call(&url, "GET", &[("authorization", &bearer(&t))]).await;
        assert_401(&res, "no key matches the token");
    }
    assert_eq!(
        s.idp.jwks_hits(),
        2,
        "refetches are bounded by minRefreshSeconds"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn introspection_active_inactive_slow_and_cached() {
    let s = setup(false).await;
    let url = s.proxy.url("/opaque/a");
    let (st, _, body) = call(&url, "GET", &[("authorization", "Bearer active-1")]).await;
    assert_eq!(st, 200, "{body}");
    let seen: Value = serde_json::from_str(&body).expect("echo");
    assert_eq!(seen["x-user"], "active-1");
    assert_eq!(seen["x-tenant"], "t-9");
    assert_eq!(s.idp.introspect_hits(), 1);
    // Cached: the second request does not reach the endpoint.
    assert_eq!(
        call(&url, "GET", &[("authorization", "Bearer active-1")])
            .await
            .0,
        200
    );
    assert_eq!(s.idp.introspect_hits(), 1);

    assert_401(
        &call(&url, "GET", &[("authorization", "Bearer inactive")]).await,
        "the token is not active",
    );

    let t = Instant::now();
    assert_401(
        &call(&url, "GET", &[("authorization", "Bearer slow")]).await,
        "could not be verified in time",
    );
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());

    // Alternatives are tried in order: a valid API key satisfies the first one, so the bearer
    // token is not introspected.
    let before = s.idp.introspect_hits();
    let (st, _, _) = call(
        &s.proxy.url("/either/x"),
        "GET",
        &[
            ("x-api-key", "key-a-123"),
            ("authorization", "Bearer active-3"),
        ],
    )
    .await;
    assert_eq!(st, 200);
    assert_eq!(s.idp.introspect_hits(), before);
    assert_eq!(
        call(
            &s.proxy.url("/either/x"),
            "GET",
            &[("authorization", "Bearer active-3")]
        )
        .await
        .0,
        200
    );
    assert_eq!(s.idp.introspect_hits(), before + 1);

    // Active but without the scope the rule needs.
    let (st, h, _) = call(
        &s.proxy.url("/scoped/x"),
        "GET",
        &[("authorization", "Bearer active-2")],
    )
    .await;
    assert_eq!(st, 403);
    assert!(all(&h, "www-authenticate").contains("scope=\"write\""));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_keys_are_added_and_revoked_without_a_restart_and_basic_credentials_work() {
    let s = setup(false).await;
    let url = s.proxy.url("/partner/q");
    let (st, _, body) = call(
        &url,
        "GET",
        &[("x-api-key", "key-a-123"), ("x-api-client", "forged")],
    )
    .await;
    assert_eq!(st, 200, "{body}");
    let seen: Value = serde_json::from_str(&body).expect("echo");
    assert_eq!(seen["x-api-client"], "partner-a");
    assert_401(
        &call(&url, "GET", &[("x-api-key", "key-b-456")]).await,
        "ApiKey realm=\"orders\"",
    );

    // Add key b, revoke key a; SIGHUP applies it in place.
    let idp = &s.idp;
    let hash = portcullis::admin::hash_password("wonderland").expect("hash");
    write(
        s.dir.path(),
        "access.json",
        &profile(
            idp,
            &hash,
            json!([{"id": "partner-b", "sha256": sha256_hex("key-b-456")}]),
        ),
    );
    s.proxy.signal("HUP");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if call(&url, "GET", &[("x-api-key", "key-b-456")]).await.0 == 200 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "key b never became valid: {}",
            s.proxy.stderr()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_401(
        &call(&url, "GET", &[("x-api-key", "key-a-123")]).await,
        "ApiKey",
    );
    assert!(s.access.ends_with("access.json"));

    // Basic.
    let ops = s.proxy.url("/ops/x");
    let good = format!(
        "Basic {}",
        base64::Engine::encode(
            &base64::engine::general_purpose::STANDARD,
            "alice:wonderland"
        )
    );
    let (st, _, body) = call(&ops, "GET", &[("authorization", &good)]).await;
    assert_eq!(st, 200);
    assert_eq!(
        serde_json::from_str::<Value>(&body).expect("echo")["x-user"],
        "alice"
    );
    let bad = format!(
        "Basic {}",
        base64::Engine::encode(&base64::engine::general_purpose::STANDARD, "alice:queen")
    );
    assert_401(
        &call(&ops, "GET", &[("authorization", &bad)]).await,
        "Basic realm=\"orders\", charset=\"UTF-8\"",
    );
    assert_401(&call(&ops, "GET", &[]).await, "Basic realm=\"orders\"");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!s.proxy.events().contains("wonderland") && !s.proxy.events().contains("queen"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grpc_call_without_credentials_gets_unauthenticated() {
    let s = setup(false).await;
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{}", s.proxy.addr))
        .expect("endpoint")
        .timeout(Duration::from_secs(10))
        .connect()
        .await
        .expect("connect");
    let mut grpc = tonic::client::Grpc::new(channel);
    grpc.ready().await.expect("ready");
    let status = grpc
        .unary(
            tonic::Request::new(bytes::Bytes::from_static(b"\x0a\x03bob")),
            http::uri::PathAndQuery::from_static("/demo.Greeter/SayHello"),
            crate::support::grpc::codec::BytesCodec,
        )
        .await
        .expect_err("refused");
    assert_eq!(status.code(), tonic::Code::Unauthenticated, "{status:?}");
    assert!(
        status.message().contains("Your support ID is: "),
        "{}",
        status.message()
    );

    // With a token the call goes through the access gate (the echo upstream is not a gRPC
    // server, so only the refusal code matters here: it is no longer 16).
    grpc.ready().await.expect("ready");
    let mut req = tonic::Request::new(bytes::Bytes::from_static(b"\x0a\x03bob"));
    req.metadata_mut().insert(
        "authorization",
        bearer(&s.rsa.sign(&claims("u"))).parse().expect("metadata"),
    );
    let r = grpc
        .unary(
            req,
            http::uri::PathAndQuery::from_static("/demo.Greeter/SayHello"),
            crate::support::grpc::codec::BytesCodec,
        )
        .await;
    if let Err(st) = r {
        assert_ne!(st.code(), tonic::Code::Unauthenticated, "{st:?}");
    }
}

/// The proxy (pass-through policy) in front of the echo upstream, with the access profile
/// `profile`; the directory holding the profile's file lives as long as the test keeps it.
async fn behind_access(profile: Value) -> (Proxy, tempfile::TempDir) {
    let upstream = echo_upstream().await;
    let dir = tempfile::tempdir().expect("tmp");
    let access = write(dir.path(), "access.yaml", &profile);
    let proxy = Proxy::start(
        &[format!("http://{upstream}")],
        PASS_POLICY,
        &["--access", &access],
    );
    (proxy, dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limits_answer_429_with_retry_after() {
    let (proxy, _dir) = behind_access(json!({
            "methods": {"partner": {"apiKey": {"in": "query", "name": "api_key",
                                               "keys": [{"id": "a", "key": "k-a"}, {"id": "b", "key": "k-b"}]}}},
            "forwardCredentials": false,
            "rateLimit": {"requestsPerSecond": 0.2, "burst": 2, "by": "identity"}
        })).await;
    let url = |k: &str| proxy.url(&format!("/x?api_key={k}&q=1"));
    for _ in 0..2 {
        let (st, _, body) = call(&url("k-a"), "GET", &[]).await;
        assert_eq!(st, 200, "{body}");
        let seen: Value = serde_json::from_str(&body).expect("echo");
        assert_eq!(seen[":path"], "/x?q=1", "the key is not forwarded");
    }
    let (st, h, body) = call(&url("k-a"), "GET", &[]).await;
    assert_eq!(st, 429, "{body}");
    let retry: u64 = h["retry-after"]
        .to_str()
        .expect("text")
        .parse()
        .expect("seconds");
    assert!((1..=5).contains(&retry), "{retry}");
    assert!(serde_json::from_str::<Value>(&body).expect("json")["supportID"].is_string());
    // Another identity has its own bucket.
    assert_eq!(call(&url("k-b"), "GET", &[]).await.0, 200);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        proxy
            .events_containing("VIOL_RATE_LIMIT")
            .contains("VIOL_RATE_LIMIT")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_key_in_the_query_string_never_reaches_the_event_log() {
    let (proxy, _dir) = behind_access(json!({
        "methods": {"partner": {"apiKey": {"in": "query", "name": "api_key",
                                           "keys": [{"id": "a", "key": "valid-key-a"}]}}},
        "rateLimit": {"requestsPerSecond": 0.2, "burst": 1, "by": "identity"}
    }))
    .await;
    // An invalid key (refused), one the WAF flags as well (its value would be the excerpt of a
    // violation), then a valid one past its rate limit (refused too).
    let (st, _, _) = call(&proxy.url("/x?q=1&api_key=guessed-key-z"), "GET", &[]).await;
    assert_eq!(st, 401);
    let flagged = "/x?api_key=leaked%3Cscript%3Ealert(1)%3C%2Fscript%3E";
    assert_eq!(call(&proxy.url(flagged), "GET", &[]).await.0, 401);
    assert_eq!(
        call(&proxy.url("/x?api_key=valid-key-a"), "GET", &[])
            .await
            .0,
        200
    );
    let (st, _, _) = call(&proxy.url("/x?api_key=valid-key-a&q=2"), "GET", &[]).await;
    assert_eq!(st, 429);
    let log = proxy.events_containing("VIOL_RATE_LIMIT");
    assert!(log.contains("VIOL_RATE_LIMIT"), "{log}");
    assert!(
        !log.contains("guessed-key-z") && !log.contains("valid-key-a") && !log.contains("leaked"),
        "a key in the event log: {log}"
    );
    let uris: Vec<String> = log
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("json")["uri"].to_string())
        .collect();
    assert!(
        uris.iter().any(|u| u.contains("/x?q=1&api_key=********")),
        "{uris:?}"
    );
    assert!(
        uris.iter().any(|u| u.contains("/x?api_key=********&q=2")),
        "{uris:?}"
    );
}
