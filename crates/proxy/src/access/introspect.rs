//! OAuth 2.0 token introspection (RFC 7662) with a bounded cache: results are kept for their
//! remaining lifetime (an active token never beyond its `exp`, nor beyond the method's cache TTL;
//! an inactive one for at most a minute). Timeouts and endpoint errors are not cached and refuse
//! the token. The cache is keyed by the token's SHA-256, so no token is kept in memory.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use parking_lot::Mutex;
use serde_json::{Map, Value};

use crate::fetch::exchange;
use crate::upstream::Clients;
use portcullis_engine::access::sha256;
use portcullis_engine::access::{Grant, Outcome};
use portcullis_engine::access::{IntrospectionMethod, Method};
use portcullis_support::OutboundError;

/// Longest an inactive result is remembered.
/// Largest introspection answer read.
const MAX_ANSWER_BYTES: usize = 64 << 10;

const NEGATIVE_TTL: Duration = Duration::from_secs(60);

struct Entry {
    outcome: Outcome,
    until: Instant,
}

/// The cache of one introspection endpoint.
#[derive(Default)]
pub struct Introspector {
    cache: Mutex<HashMap<[u8; 32], Entry>>,
    calls: AtomicU64,
}

fn form(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Introspector {
    /// Calls made to the endpoint (for tests and metrics).
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }

    /// A cached outcome for `token`, if fresh.
    pub fn cached(&self, token: &str) -> Option<Outcome> {
        let key = sha256(token.as_bytes());
        let mut cache = self.cache.lock();
        match cache.get(&key) {
            Some(e) if e.until > Instant::now() => Some(e.outcome.clone()),
            Some(_) => {
                cache.remove(&key);
                None
            }
            None => None,
        }
    }

    /// The outcome of `token` for method `m`: from the cache, or asked of the endpoint.
    pub async fn check(
        &self,
        clients: &Clients,
        m: &Method,
        im: &IntrospectionMethod,
        token: &str,
    ) -> Outcome {
        if let Some(o) = self.cached(token) {
            return o;
        }
        self.calls.fetch_add(1, Ordering::Relaxed);
        let basic = base64::engine::general_purpose::STANDARD.encode(format!(
            "{}:{}",
            form(&im.client_id),
            form(&im.client_secret)
        ));
        let body = format!("token={}&token_type_hint=access_token", form(token));
        let res = exchange(
            clients,
            http::Method::POST,
            &im.endpoint,
            &[
                ("authorization", format!("Basic {basic}")),
                ("content-type", "application/x-www-form-urlencoded".into()),
                ("accept", "application/json".into()),
            ],
            Some(body.into()),
            im.timeout,
            MAX_ANSWER_BYTES,
        )
        .await;
        let (status, bytes) = match res {
            Ok(x) => x,
            Err(OutboundError::Timeout(_)) => {
                tracing::warn!(endpoint = %im.endpoint, "token introspection timed out");
                return Outcome::Invalid("the token could not be verified in time".into());
            }
            Err(e) => {
                tracing::warn!(endpoint = %im.endpoint, "token introspection failed: {e}");
                return Outcome::Invalid("the token could not be verified".into());
            }
        };
        let claims = match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(m)) if status == 200 => m,
            _ => {
                tracing::warn!(endpoint = %im.endpoint, status, "token introspection gave no JSON object");
                return Outcome::Invalid("the token could not be verified".into());
            }
        };
        let (outcome, ttl) = judge(m, im, &claims);
        self.remember(token, outcome.clone(), ttl, im.cache_entries);
        outcome
    }

    /// Caches `outcome` for `token` for `ttl`, keeping at most `max` entries.
    pub fn remember(&self, token: &str, outcome: Outcome, ttl: Duration, max: usize) {
        if ttl.is_zero() {
            return;
        }
        let now = Instant::now();
        let mut cache = self.cache.lock();
        if cache.len() >= max {
            cache.retain(|_, e| e.until > now);
            if cache.len() >= max {
                // Still full of live entries: forget them all rather than grow without bound.
                cache.clear();
            }
        }
        cache.insert(
            sha256(token.as_bytes()),
            Entry {
                outcome,
                until: now + ttl,
            },
        );
    }
}

/// The outcome of an introspection response and how long it may be cached.
fn judge(m: &Method, im: &IntrospectionMethod, claims: &Map<String, Value>) -> (Outcome, Duration) {
    let negative = im.cache_ttl.min(NEGATIVE_TTL);
    if claims.get("active").and_then(Value::as_bool) != Some(true) {
        return (Outcome::Invalid("the token is not active".into()), negative);
    }
    let now = now_secs();
    let exp = claims.get("exp").and_then(Value::as_u64);
    if exp.is_some_and(|e| e <= now) {
        return (Outcome::Invalid("the token has expired".into()), negative);
    }
    if !im.audiences.is_empty() {
        let ok = match claims.get("aud") {
            Some(Value::String(a)) => im.audiences.contains(a),
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(Value::as_str)
                .any(|x| im.audiences.iter().any(|y| y == x)),
            _ => false,
        };
        if !ok {
            return (
                Outcome::Invalid("the token's audience is not accepted".into()),
                negative,
            );
        }
    }
    let ttl = match exp {
        Some(e) => im.cache_ttl.min(Duration::from_secs(e - now)),
        None => im.cache_ttl,
    };
    (Outcome::Valid(Grant::from_claims(m, claims)), ttl)
}
