//! Shared pieces of the access-control tests: signing keys made in the test (ES256 generated with
//! ring, RS256 from a fixture since ring cannot generate RSA keys), JWTs signed with them, an
//! upstream that echoes the headers it receives, and one loopback server for the JWKS document and
//! the introspection endpoint that counts its calls.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use base64::Engine as _;
use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use parking_lot::Mutex;
use ring::signature::KeyPair as _;
use serde_json::{Value, json};

use super::upstream::{authorization_and_body, serve_fn};

pub fn b64(b: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b)
}

pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs()
}

/// A signing key and its public JWK.
pub struct Signer {
    pub kid: String,
    pub alg: Algorithm,
    pub key: EncodingKey,
    pub jwk: Value,
    /// The public key bytes (used as an HMAC secret in the algorithm-confusion attempt).
    pub public: Vec<u8>,
}

impl Signer {
    pub fn rsa(kid: &str) -> Signer {
        let der = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/access/rsa2048.der"
        ))
        .expect("rsa fixture");
        let kp = ring::signature::RsaKeyPair::from_der(&der).expect("rsa key");
        let c: ring::rsa::PublicKeyComponents<Vec<u8>> = kp.public().into();
        Signer {
            kid: kid.into(),
            alg: Algorithm::RS256,
            key: EncodingKey::from_rsa_der(&der),
            jwk: json!({"kty": "RSA", "kid": kid, "use": "sig", "n": b64(&c.n), "e": b64(&c.e)}),
            public: kp.public().as_ref().to_vec(),
        }
    }

    pub fn ec(kid: &str) -> Signer {
        let rng = ring::rand::SystemRandom::new();
        let alg = &ring::signature::ECDSA_P256_SHA256_FIXED_SIGNING;
        let pkcs8 = ring::signature::EcdsaKeyPair::generate_pkcs8(alg, &rng).expect("ec key");
        let kp = ring::signature::EcdsaKeyPair::from_pkcs8(alg, pkcs8.as_ref(), &rng).expect("ec");
        let public = kp.public_key().as_ref().to_vec();
        Signer {
            kid: kid.into(),
            alg: Algorithm::ES256,
            key: EncodingKey::from_ec_der(pkcs8.as_ref()),
            jwk: json!({"kty": "EC", "crv": "P-256", "kid": kid, "alg": "ES256",
                        "x": b64(&public[1..33]), "y": b64(&public[33..65])}),
            public,
        }
    }

    pub fn sign(&self, claims: &Value) -> String {
        let mut h = Header::new(self.alg);
        h.kid = Some(self.kid.clone());
        jsonwebtoken::encode(&h, claims, &self.key).expect("sign")
    }
}

/// Claims valid for an hour for issuer `https://issuer.test`, audience `orders`.
pub fn claims(sub: &str) -> Value {
    json!({"iss": "https://issuer.test", "aud": "orders", "sub": sub,
           "exp": now() + 3600, "iat": now(), "scope": "read admin", "tenant": "t-1"})
}

type Body = http_body_util::combinators::BoxBody<Bytes, Infallible>;

fn full(b: impl Into<Bytes>) -> Body {
    Full::new(b.into()).boxed()
}

/// An upstream answering every request with a JSON object of the headers it received plus
/// `:path`; gRPC calls get an empty OK reply.
pub async fn echo_upstream() -> SocketAddr {
    serve_fn(|r: Request<Incoming>| async move {
        let mut m = serde_json::Map::new();
        for (k, v) in r.headers() {
            m.insert(k.as_str().into(), json!(v.to_str().unwrap_or("?")));
        }
        m.insert(":path".into(), json!(r.uri().to_string()));
        Response::builder()
            .header("content-type", "application/json")
            .body(full(Value::Object(m).to_string()))
            .expect("response")
    })
    .await
}

/// The identity provider: `GET /jwks` serves `jwks`, `POST /introspect` answers RFC 7662 for the
/// tokens `active-*` (active; scope `read`), `inactive`, `slow` (answers after 3 s).
pub struct Idp {
    pub addr: SocketAddr,
    pub jwks: Arc<Mutex<Value>>,
    pub jwks_hits: Arc<AtomicUsize>,
    pub introspect_hits: Arc<AtomicUsize>,
}

impl Idp {
    pub async fn start(jwks: Value) -> Idp {
        let jwks = Arc::new(Mutex::new(jwks));
        let jwks_hits = Arc::new(AtomicUsize::new(0));
        let introspect_hits = Arc::new(AtomicUsize::new(0));
        let (j, jh, ih) = (jwks.clone(), jwks_hits.clone(), introspect_hits.clone());
        let addr = serve_fn(move |r: Request<Incoming>| {
            let (j, jh, ih) = (j.clone(), jh.clone(), ih.clone());
            async move {
                match r.uri().path() {
                    "/jwks" => {
                        jh.fetch_add(1, Ordering::SeqCst);
                        let doc = j.lock().to_string();
                        Response::new(full(doc))
                    }
                    "/introspect" => {
                        ih.fetch_add(1, Ordering::SeqCst);
                        let (auth, body) = authorization_and_body(r).await;
                        let token = form_urlencoded::parse(&body)
                            .find(|(k, _)| k == "token")
                            .map(|(_, v)| v.into_owned())
                            .unwrap_or_default();
                        // Client credentials gw:s3cret (RFC 6749 2.3.1).
                        if auth != format!("Basic {}", base64::engine::general_purpose::STANDARD.encode("gw:s3cret")) {
                            return Response::builder().status(401).body(full("")).expect("r");
                        }
                        let answer = if token.starts_with("active-") {
                            json!({"active": true, "sub": token, "scope": "read",
                                   "aud": ["orders"], "exp": now() + 3600, "tenant": "t-9"})
                        } else if token == "slow" {
                            tokio::time::sleep(Duration::from_secs(3)).await;
                            json!({"active": true, "sub": "slow", "exp": now() + 3600, "aud": "orders"})
                        } else {
                            json!({"active": false})
                        };
                        Response::new(full(answer.to_string()))
                    }
                    _ => Response::builder().status(404).body(full("")).expect("r"),
                }
            }
        })
        .await;
        Idp {
            addr,
            jwks,
            jwks_hits,
            introspect_hits,
        }
    }

    pub fn jwks_hits(&self) -> usize {
        self.jwks_hits.load(Ordering::SeqCst)
    }

    pub fn introspect_hits(&self) -> usize {
        self.introspect_hits.load(Ordering::SeqCst)
    }
}

/// One HTTP/1.1 request; returns status, headers and body.
pub async fn call(
    url: &str,
    method: &str,
    headers: &[(&str, &str)],
) -> (u16, http::HeaderMap, String) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .expect("client");
    let mut r = client.request(method.parse().expect("method"), url);
    for (k, v) in headers {
        r = r.header(*k, *v);
    }
    let res = r.send().await.expect("request");
    let status = res.status().as_u16();
    let h = res.headers().clone();
    (status, h, res.text().await.expect("body"))
}

/// All values of `name`, joined by " | ".
pub fn all(h: &http::HeaderMap, name: &str) -> String {
    h.get_all(name)
        .iter()
        .map(|v| v.to_str().unwrap_or("?"))
        .collect::<Vec<_>>()
        .join(" | ")
}

pub fn write(dir: &std::path::Path, name: &str, v: &Value) -> String {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_vec_pretty(v).expect("json")).expect("write");
    p.display().to_string()
}

pub fn sha256_hex(s: &str) -> String {
    portcullis::waf::access::hex(&portcullis::waf::access::sha256(s.as_bytes()))
}

pub fn bearer(t: &str) -> String {
    format!("Bearer {t}")
}

/// Asserts a 401 in the API format: JSON support id, no caching, the challenge.
pub fn assert_401(res: &(u16, http::HeaderMap, String), challenge_part: &str) -> String {
    let (status, h, body) = res;
    assert_eq!(*status, 401, "{body}");
    assert_eq!(h["content-type"], "application/json; charset=utf-8");
    assert_eq!(h["cache-control"], "no-cache");
    let wa = all(h, "www-authenticate");
    assert!(wa.contains(challenge_part), "{wa}");
    let v: Value = serde_json::from_str(body).expect("json body");
    let id = v["supportID"].as_str().expect("supportID").to_string();
    assert!(
        id.len() >= 18 && id.bytes().all(|b| b.is_ascii_digit()),
        "{id}"
    );
    id
}
