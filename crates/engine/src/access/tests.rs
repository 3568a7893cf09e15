//! Unit tests of the pure access-control part: profile validation errors name the field, JWT
//! rules (algorithms bound to key types, kid selection, leeway, required claims), the decision
//! combinator, and the fuzz seeds replayed through the fuzz entry point.

use base64::Engine as _;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

use super::check::fuzz_credentials;
use super::decide::{Grant, Outcome, decide};
use super::jwt::{JwtError, JwtKey, JwtRules, KeySet, verify};
use super::{from_value, parse};

const SECRET: &[u8] = b"0123456789abcdef0123456789abcdef";

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn hs(alg: Algorithm, kid: Option<&str>, claims: &Value) -> String {
    let mut h = Header::new(alg);
    h.kid = kid.map(str::to_string);
    jsonwebtoken::encode(&h, claims, &EncodingKey::from_secret(SECRET)).unwrap_or_default()
}

fn keys() -> KeySet {
    let mut k = KeySet::default();
    k.push(JwtKey::hmac(Some("h1".into()), SECRET));
    k
}

fn error_of(doc: Value) -> String {
    from_value(&doc, "t")
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default()
}

#[test]
fn profile_errors_name_the_field() {
    let jwt = json!({"jwt": {"jwksUrl": "http://127.0.0.1/jwks"}});
    let cases = [
        (json!({"methods": {}}), "methods: at least one"),
        (
            json!({"methods": {"a": jwt}, "extra": 1}),
            "unknown field `extra`",
        ),
        (
            json!({"methods": {"a": {"jwt": {"jwksUrl": "ftp://x"}}}}),
            "methods.a.jwt.jwksUrl:",
        ),
        (
            json!({"methods": {"a": {"jwt": {}}}}),
            "methods.a.jwt: keys are required",
        ),
        (
            json!({"methods": {"a": {"jwt": {"jwksUrl": "http://x/", "algorithms": ["none"]}}}}),
            "methods.a.jwt.algorithms[0]",
        ),
        (
            json!({"methods": {"a": {"jwt": {"secrets": [{"value": "short"}]}}}}),
            "methods.a.jwt.secrets[0].value",
        ),
        (
            json!({"methods": {"a": jwt, "b": {"apiKey": {"in": "header", "name": "x", "keys": [{"id": "k", "sha256": "12"}]}}}}),
            "methods.b.apiKey.keys[0]: sha256 must be 64",
        ),
        (
            json!({"methods": {"a": {"basic": {"users": [{"name": "u", "hash": "plain"}]}}}}),
            "methods.a.basic.users[0]: not a PHC",
        ),
        (
            json!({"methods": {"a": jwt, "b": jwt.clone()}, "rules": [{"path": "x", "require": []}]}),
            "rules[0].path: must start with /",
        ),
        (
            json!({"methods": {"a": jwt}, "default": [{"zz": []}]}),
            "default[0].zz: no method",
        ),
        (
            json!({"methods": {"a": jwt}, "rateLimit": {"requestsPerSecond": 0}}),
            "rateLimit.requestsPerSecond",
        ),
        (
            json!({"methods": {"a": jwt}, "rateLimit": {"requests": 10}}),
            "rateLimit.windowSeconds: is required with requests",
        ),
        (
            json!({"methods": {"a": jwt}, "rateLimit": {"requests": 10, "windowSeconds": 60, "burst": 3}}),
            "rateLimit.burst: goes with requestsPerSecond",
        ),
        (
            json!({"methods": {"a": jwt}, "rateLimit": {"requestsPerSecond": 1, "requests": 5}}),
            "rateLimit: give requestsPerSecond",
        ),
        (
            json!({"methods": {"a": jwt}, "rateLimit": {"requestsPerSecond": 1,
                   "store": {"redis": "http://r:6379"}}}),
            "rateLimit.store.redis: must be a redis:// or rediss:// URL",
        ),
        (
            json!({"methods": {"a": jwt}, "rateLimit": {"requestsPerSecond": 1,
                   "store": {"redis": "redis://r", "onUnavailable": "open"}}}),
            "rateLimit.store.onUnavailable: must be local, allow or deny",
        ),
        (
            json!({"methods": {"a": jwt}, "rateLimit": {"requestsPerSecond": 1,
                   "store": {"redis": "redis://r", "timeoutMs": 0}}}),
            "rateLimit.store.timeoutMs",
        ),
        (
            json!({"methods": {"a": jwt}, "revocations": {"redis": "redis://r", "onUnavailable": "deny"}}),
            "revocations.onUnavailable: applies to rate limits only",
        ),
        (
            json!({"methods": {"a": jwt}, "revocations": {"redis": "redis://r", "keyPrefix": "a b"}}),
            "revocations.keyPrefix",
        ),
        (
            json!({"methods": {"a": {"jwt": {"jwksUrl": "http://x/"}, "identityHeader": "Host"}}}),
            "methods.a.identityHeader: Host cannot",
        ),
        (
            json!({"methods": {"a": {"jwt": {"jwksUrl": "http://x/"}, "basic": {"users": []}}}}),
            "methods.a: exactly one",
        ),
        (
            json!({"methods": {"a": {"jwt": {"jwksUrl": "http://x/", "audience": "x"}}}}),
            "methods.a.jwt.audience: unknown field `audience`",
        ),
    ];
    for (doc, want) in cases {
        let e = error_of(doc.clone());
        assert!(e.contains(want), "{doc}: got {e:?}, want {want:?}");
    }
    let yaml = "methods:\n  k:\n    apiKey: {in: query, name: key, keys: [{id: a, key: x}]}\nrateLimit: {requestsPerSecond: 5}\n";
    let p = parse(yaml.as_bytes(), "a.yaml").expect("yaml profile");
    assert_eq!(p.rate_limit.as_ref().map(|r| r.burst), Some(5));
    assert!(parse(b"methods: [", "a.yaml").is_err());
    let doc = json!({"methods": {"a": jwt},
        "rateLimit": {"requests": 100, "windowSeconds": 60,
                      "store": {"redis": "rediss://gw:pw@redis.internal:6380/2", "onUnavailable": "deny"}},
        "revocations": {"redis": "redis://redis.internal", "keyPrefix": "orders:"}});
    let p = from_value(&doc, "p").expect("shared profile");
    let rl = p.rate_limit.expect("limit");
    assert_eq!(
        (rl.burst, rl.window),
        (100, Some(std::time::Duration::from_secs(60)))
    );
    let store = rl.store.expect("store");
    assert_eq!(store.key_prefix, "portcullis:");
    assert_eq!(store.timeout, std::time::Duration::from_millis(50));
    assert_eq!(store.on_unavailable, super::profile::Unavailable::Deny);
    assert_eq!(p.revocations.expect("revocations").key_prefix, "orders:");
}

#[test]
fn jwt_rules_and_key_types() {
    let c = json!({"sub": "u", "exp": now() + 60, "aud": ["a", "b"], "iss": "i", "scope": "x y"});
    let rules = JwtRules {
        issuers: vec!["i".into()],
        audiences: vec!["b".into()],
        ..JwtRules::default()
    };
    let claims = verify(&hs(Algorithm::HS256, Some("h1"), &c), &keys(), &rules).expect("valid");
    assert_eq!(super::jwt::scopes(&claims), ["x", "y"]);
    // HS512 with the same secret is fine; an unknown kid is reported as such.
    assert!(verify(&hs(Algorithm::HS512, None, &c), &keys(), &rules).is_ok());
    assert_eq!(
        verify(&hs(Algorithm::HS256, Some("h2"), &c), &keys(), &rules),
        Err(JwtError::UnknownKey)
    );
    // Restricting algorithms.
    let only_rs = JwtRules {
        algorithms: vec![Algorithm::RS256],
        ..rules.clone()
    };
    assert_eq!(
        verify(&hs(Algorithm::HS256, Some("h1"), &c), &keys(), &only_rs),
        Err(JwtError::Algorithm)
    );
    // Claims.
    let mut bad = c.clone();
    bad["iss"] = json!("other");
    assert_eq!(
        verify(&hs(Algorithm::HS256, None, &bad), &keys(), &rules),
        Err(JwtError::Issuer)
    );
    let mut bad = c.clone();
    bad["exp"] = json!(now() - 30);
    let lenient = JwtRules {
        leeway_seconds: 60,
        ..rules.clone()
    };
    assert!(verify(&hs(Algorithm::HS256, None, &bad), &keys(), &lenient).is_ok());
    assert_eq!(
        verify(&hs(Algorithm::HS256, None, &bad), &keys(), &rules),
        Err(JwtError::Expired)
    );
    let mut bad = c.clone();
    bad["nbf"] = json!(now() + 600);
    assert_eq!(
        verify(&hs(Algorithm::HS256, None, &bad), &keys(), &rules),
        Err(JwtError::NotYetValid)
    );
    let mut bad = c.clone();
    bad.as_object_mut().map(|m| m.remove("exp"));
    assert_eq!(
        verify(&hs(Algorithm::HS256, None, &bad), &keys(), &rules),
        Err(JwtError::MissingClaim("exp".into()))
    );
    let need_tenant = JwtRules {
        required_claims: vec!["tenant".into()],
        ..rules.clone()
    };
    assert_eq!(
        verify(&hs(Algorithm::HS256, None, &c), &keys(), &need_tenant),
        Err(JwtError::MissingClaim("tenant".into()))
    );
    // A tampered payload.
    let t = hs(Algorithm::HS256, None, &c);
    let mut parts: Vec<&str> = t.split('.').collect();
    let forged = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(json!({"sub": "admin", "exp": now() + 60, "aud": "b", "iss": "i"}).to_string());
    parts[1] = &forged;
    assert_eq!(
        verify(&parts.join("."), &keys(), &rules),
        Err(JwtError::Signature)
    );
    // A JWK that names an algorithm of another family is not used; an EC key only verifies ES*.
    let (set, skipped) = KeySet::from_jwks(br#"{"keys":[{"kty":"oct","k":"c2VjcmV0","alg":"RS256"},{"kty":"RSA","use":"enc","n":"AQAB","e":"AQAB"}]}"#).expect("jwks");
    assert_eq!((set.len(), skipped), (0, 2));
    assert!(KeySet::from_jwks(b"{}").is_err());
}

#[test]
fn decisions_combine_alternatives_and_scopes() {
    let p = from_value(
        &json!({"methods": {
            "a": {"jwt": {"jwksUrl": "http://x/"}},
            "b": {"apiKey": {"in": "header", "name": "x-k"}},
            "c": {"basic": {"users": []}}}}),
        "t",
    )
    .expect("profile");
    let grant = |scopes: &[&str]| {
        Outcome::Valid(Grant {
            identity: "u".into(),
            scopes: scopes.iter().map(|s| s.to_string()).collect(),
            headers: vec![],
            revocation_id: None,
        })
    };
    let req = super::config::requirement(
        &p,
        &vec![
            [("a".to_string(), vec!["w".to_string()])]
                .into_iter()
                .collect(),
            [("b".to_string(), vec![]), ("c".to_string(), vec![])]
                .into_iter()
                .collect(),
        ],
        "r",
    )
    .expect("req");
    // a with the scope.
    assert!(decide(&p, &req, &[(0, grant(&["w"]))]).is_ok());
    // a without the scope: 403 naming it.
    let d = decide(&p, &req, &[(0, grant(&["r"]))]).expect_err("403");
    assert_eq!(d.status, 403);
    assert!(d.challenges[0].contains("scope=\"w\""));
    // b alone is not enough (b AND c).
    let d = decide(&p, &req, &[(1, grant(&[])), (2, Outcome::Absent)]).expect_err("401");
    assert_eq!(d.status, 401);
    assert!(decide(&p, &req, &[(1, grant(&[])), (2, grant(&[]))]).is_ok());
    // An invalid token: the Bearer challenge carries the error, the plain Bearer one is dropped.
    let d = decide(
        &p,
        &req,
        &[(0, Outcome::Invalid("the token has \"expired\"".into()))],
    )
    .expect_err("401");
    assert_eq!(
        d.challenges
            .iter()
            .filter(|c| c.starts_with("Bearer"))
            .count(),
        1
    );
    assert!(
        d.challenges[0].contains("error_description=\"the token has expired\""),
        "{:?}",
        d.challenges
    );
    let reply = d.reply(true);
    assert!(matches!(reply, crate::BlockReply::Grpc { status: 16, .. }));
}

#[test]
fn the_documented_example_is_valid() {
    let doc = include_str!("../../../../docs/access.md");
    let start = doc.find("```yaml\n").map(|i| i + 8).unwrap_or_default();
    let end = doc[start..].find("```").map_or(start, |i| start + i);
    let p = parse(&doc.as_bytes()[start..end], "docs/access.md")
        .expect("the example in docs/access.md");
    assert_eq!(p.methods.len(), 4);
    assert_eq!(p.rules.len(), 4);
    assert!(p.openapi && p.rate_limit.is_some());
}

fn replay(target: &str, run: fn(&[u8])) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/seeds")
        .join(target);
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).expect("seed directory") {
        let path = entry.expect("seed entry").path();
        run(&std::fs::read(&path).expect("seed file"));
        n += 1;
    }
    assert!(n >= 5, "{target}: only {n} seeds");
}

#[test]
fn access_credentials_seeds() {
    replay("access_credentials", fuzz_credentials);
}
