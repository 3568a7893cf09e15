//! Access-control cost per request: JWT verification with cached keys (RS256 2048-bit, ES256,
//! HS256) including claim checks and the identity/claim headers, the whole gate for an ES256
//! token (header stripping, rule lookup, decision, header insertion), and an introspection cache
//! hit. Run: `cargo bench --bench access`.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use criterion::{Criterion, criterion_group, criterion_main};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use portcullis::proxy::UpstreamClients;
use portcullis::proxy::access::Gate;
use portcullis::proxy::access::Introspector;
use portcullis::waf::access::{Grant, Outcome};
use portcullis::waf::access::{MethodKind, check, from_value};
use ring::signature::KeyPair as _;
use serde_json::json;

fn b64(b: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b)
}

fn sign(alg: Algorithm, kid: &str, key: &EncodingKey) -> String {
    let exp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
        + 86_400;
    let mut h = Header::new(alg);
    h.kid = Some(kid.into());
    let claims = json!({"iss": "https://issuer.test", "aud": "orders", "sub": "user-7", "exp": exp,
                        "scope": "read write", "tenant": "t-1"});
    jsonwebtoken::encode(&h, &claims, key).expect("sign")
}

fn bench(c: &mut Criterion) {
    let der = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/access/rsa2048.der"
    ))
    .expect("rsa fixture");
    let rsa = ring::signature::RsaKeyPair::from_der(&der).expect("rsa");
    let comp: ring::rsa::PublicKeyComponents<Vec<u8>> = rsa.public().into();
    let rng = ring::rand::SystemRandom::new();
    let alg = &ring::signature::ECDSA_P256_SHA256_FIXED_SIGNING;
    let pkcs8 = ring::signature::EcdsaKeyPair::generate_pkcs8(alg, &rng).expect("ec");
    let ec = ring::signature::EcdsaKeyPair::from_pkcs8(alg, pkcs8.as_ref(), &rng).expect("ec");
    let pt = ec.public_key().as_ref();
    let secret = "0123456789abcdef0123456789abcdef";
    let rules = json!({"issuers": ["https://issuer.test"], "audiences": ["orders"]});
    let method = |keys: serde_json::Value| {
        let mut m = rules.clone();
        if let (Some(m), Some(k)) = (m.as_object_mut(), keys.as_object()) {
            m.extend(k.clone());
        }
        json!({"jwt": m, "identityHeader": "x-user", "claimHeaders": {"scope": "x-scope", "tenant": "x-tenant"}})
    };
    let profile = Arc::new(
        from_value(
            &json!({"methods": {
                "rs": method(json!({"jwks": {"keys": [{"kty": "RSA", "kid": "r", "n": b64(&comp.n), "e": b64(&comp.e)}]}})),
                "es": method(json!({"jwks": {"keys": [{"kty": "EC", "crv": "P-256", "kid": "e",
                                                      "x": b64(&pt[1..33]), "y": b64(&pt[33..65])}]}})),
                "hs": method(json!({"secrets": [{"kid": "h", "value": secret}]}))
            }}),
            "bench",
        )
        .expect("profile"),
    );
    let tokens = [
        (
            "rs256",
            0,
            sign(Algorithm::RS256, "r", &EncodingKey::from_rsa_der(&der)),
        ),
        (
            "es256",
            1,
            sign(
                Algorithm::ES256,
                "e",
                &EncodingKey::from_ec_der(pkcs8.as_ref()),
            ),
        ),
        (
            "hs256",
            2,
            sign(
                Algorithm::HS256,
                "h",
                &EncodingKey::from_secret(secret.as_bytes()),
            ),
        ),
    ];
    let mut g = c.benchmark_group("jwt_verify");
    g.measurement_time(Duration::from_secs(3));
    for (name, i, token) in &tokens {
        let m = &profile.methods[*i];
        let MethodKind::Jwt(jm) = &m.kind else {
            continue;
        };
        assert!(matches!(
            check::jwt(m, jm, token, &jm.static_keys),
            Ok(Outcome::Valid(_))
        ));
        g.bench_function(*name, |b| {
            b.iter(|| check::jwt(black_box(m), jm, black_box(token), &jm.static_keys))
        });
    }
    g.finish();

    // The whole gate for one ES256 request (no IO: the keys are inline).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let clients = UpstreamClients::new(
        portcullis::proxy::tls_client_config(None).expect("tls"),
        Duration::from_secs(1),
    );
    let stores = portcullis::proxy::access::Stores::new(std::sync::Arc::new(
        portcullis::proxy::Metrics::default(),
    ));
    let gate = Gate::new(profile.clone(), clients, stores);
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("rt");
    let auth = format!("Bearer {}", tokens[1].2);
    let head = http::Request::get("http://a/orders/1")
        .header("host", "a")
        .header("authorization", auth.as_str())
        .header("x-user", "forged")
        .body(())
        .expect("req")
        .into_parts()
        .0;
    let head = portcullis::waf::RequestHead::from(head);
    let ip = std::net::IpAddr::from([127, 0, 0, 1]);
    c.bench_function("gate/es256_request", |b| {
        b.iter(|| {
            let mut h = head.clone();
            rt.block_on(gate.check(&mut h, ip, None)).expect("pass");
            h
        })
    });

    // An introspection cache hit (SHA-256 of the token, map lookup, clone of the grant).
    let intro = Introspector::default();
    let grant = Grant {
        identity: "svc".into(),
        scopes: vec!["read".into()],
        headers: vec![("x-user".into(), "svc".into())],
        revocation_id: None,
    };
    let opaque = "2YotnFZFEjr1zCsicMWpAA-opaque-access-token-of-typical-length";
    intro.remember(
        opaque,
        Outcome::Valid(grant),
        Duration::from_secs(3600),
        10_000,
    );
    for i in 0..9_999 {
        intro.remember(
            &format!("t{i}"),
            Outcome::Invalid("x".into()),
            Duration::from_secs(3600),
            10_000,
        );
    }
    assert!(matches!(intro.cached(opaque), Some(Outcome::Valid(_))));
    c.bench_function("introspection/cache_hit", |b| {
        b.iter(|| intro.cached(black_box(opaque)))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
