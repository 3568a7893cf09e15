//! The access gate of one listener: holds the current profile (swapped whole on apply) and the
//! state that outlives a profile change — JWKS caches by URL, introspection caches by endpoint,
//! rate-limit buckets, the shared store and revocation list the profile names, and a short cache
//! of Basic successes (argon2 is deliberately slow). One call per request decides pass (adding
//! identity headers) or a [`Denial`].

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arc_swap::{ArcSwap, ArcSwapOption};
use http::HeaderValue;
use parking_lot::Mutex;

use super::introspect::Introspector;
use super::jwks::Jwks;
use super::ratelimit::Limiter;
use super::revocations::Revocations;
use super::shared::{RedisStore, Stores};
use crate::upstream::Clients;
use portcullis_engine::CompiledPolicy;
use portcullis_engine::access::JwtError;
use portcullis_engine::access::check::{self, Presented};
use portcullis_engine::access::operation_requirement;
use portcullis_engine::access::sha256;
use portcullis_engine::access::strip_query_key;
use portcullis_engine::access::{AccessProfile, Denial, Outcome, decide};
use portcullis_engine::access::{
    KeyLocation, MethodId, MethodKind, RateKey, RateLimit, Requirement, Unavailable,
};

/// How long a verified Basic password is remembered, and how many are.
const BASIC_TTL: Duration = Duration::from_secs(300);
const BASIC_ENTRIES: usize = 10_000;

pub struct Gate {
    profile: ArcSwap<AccessProfile>,
    clients: Clients,
    jwks: Mutex<HashMap<String, Arc<Jwks>>>,
    introspection: Mutex<HashMap<String, Arc<Introspector>>>,
    limiter: Limiter,
    stores: Arc<Stores>,
    /// The shared store of the profile's rate limit, if it names one.
    rate_store: ArcSwapOption<RedisStore>,
    /// The fleet-wide revocations the profile follows, if any.
    revocations: ArcSwapOption<Revocations>,
    basic_ok: Mutex<HashMap<[u8; 32], Instant>>,
}

impl Gate {
    /// A gate for `profile`; its shared stores come from `stores`. Call inside a runtime.
    pub fn new(profile: Arc<AccessProfile>, clients: Clients, stores: Arc<Stores>) -> Gate {
        let g = Gate {
            profile: ArcSwap::new(profile.clone()),
            clients,
            jwks: Mutex::default(),
            introspection: Mutex::default(),
            limiter: Limiter::default(),
            stores,
            rate_store: ArcSwapOption::empty(),
            revocations: ArcSwapOption::empty(),
            basic_ok: Mutex::default(),
        };
        g.configure(profile);
        g
    }

    pub fn profile(&self) -> Arc<AccessProfile> {
        self.profile.load_full()
    }

    /// Swaps in a new profile. Fetched JWKS of URLs it still uses are kept (keys do not depend on
    /// the profile); introspection results and Basic successes are forgotten, since they were
    /// judged with the old settings (audiences, claim headers, users).
    pub fn configure(&self, profile: Arc<AccessProfile>) {
        let urls: Vec<&str> = profile
            .methods
            .iter()
            .filter_map(|m| match &m.kind {
                MethodKind::Jwt(j) => j.jwks_url.as_deref(),
                _ => None,
            })
            .collect();
        self.jwks.lock().retain(|u, _| urls.contains(&u.as_str()));
        self.introspection.lock().clear();
        self.basic_ok.lock().clear();
        let shared = profile.rate_limit.as_ref().and_then(|r| r.store.as_ref());
        self.rate_store.store(shared.and_then(|s| {
            self.stores
                .redis(&s.url)
                .inspect_err(|e| tracing::error!(profile = %profile.name, "shared store: {e}"))
                .ok()
        }));
        self.revocations
            .store(profile.revocations.as_ref().and_then(|s| {
                self.stores
                    .revocations(s)
                    .inspect_err(|e| tracing::error!(profile = %profile.name, "revocations: {e}"))
                    .ok()
            }));
        self.profile.store(profile);
    }

    /// Takes one request of `key` from the rate limit `rl`: in its shared store when it names
    /// one and the store answers, else as `onUnavailable` says (this node's buckets by default).
    async fn limit(&self, key: &str, rl: &RateLimit) -> Result<(), u64> {
        if let Some(cfg) = &rl.store {
            let decided = match self.rate_store.load_full() {
                Some(store) => store.take(cfg, key, rl).await,
                None => None,
            };
            match (decided, cfg.on_unavailable) {
                (Some(d), _) => return d,
                (None, Unavailable::Allow) => return Ok(()),
                (None, Unavailable::Deny) => return Err(1),
                (None, Unavailable::Local) => {}
            }
        }
        self.limiter.take(key, rl, Instant::now())
    }

    /// `outcome`, refused when its credential is revoked fleet-wide.
    fn unless_revoked(&self, outcome: Outcome) -> Outcome {
        if let Outcome::Valid(g) = &outcome
            && let (Some(id), Some(list)) = (&g.revocation_id, &*self.revocations.load())
            && list.is_revoked(id)
        {
            let what = if id.starts_with("key:") {
                "the API key"
            } else {
                "the token"
            };
            return Outcome::Invalid(format!("{what} has been revoked"));
        }
        outcome
    }

    /// The JWKS cache of `url` (created on first use).
    pub fn jwks(&self, url: &str) -> Arc<Jwks> {
        self.jwks
            .lock()
            .entry(url.to_string())
            .or_insert_with(|| Arc::new(Jwks::new(url)))
            .clone()
    }

    /// The introspection cache of method `method` (created on first use; one per method, since
    /// a cached result carries that method's audience check and claim headers).
    pub fn introspector(&self, method: &str) -> Arc<Introspector> {
        self.introspection
            .lock()
            .entry(method.to_string())
            .or_default()
            .clone()
    }

    /// What a request needs: the first matching profile rule, else (when the profile says so) the
    /// `security` of the OpenAPI operation of `policy`, else the profile's default.
    pub async fn check(
        &self,
        head: &mut portcullis_engine::RequestHead,
        client: IpAddr,
        policy: Option<&CompiledPolicy>,
    ) -> Result<(), Denial> {
        let p = self.profile.load_full();
        for h in &p.identity_headers {
            head.headers.remove(h.as_str());
        }
        let ip = client.to_string();
        if let Some(rl) = p.rate_limit.as_ref().filter(|r| r.by == RateKey::Ip) {
            self.limit(&format!("ip:{ip}"), rl)
                .await
                .map_err(Denial::rate_limited)?;
        }
        let (method, path) = (head.method.as_str(), head.uri.path());
        let from_spec;
        let req = match p.rule(method, path) {
            Some(r) => r,
            None => match policy.and_then(CompiledPolicy::api).filter(|_| p.openapi) {
                Some(api) => match operation_requirement(&p, api, method, path) {
                    Some(Some(r)) => {
                        from_spec = r;
                        &from_spec
                    }
                    // The operation needs a scheme no method serves: nothing can satisfy it.
                    Some(None) => return decide(&p, &p.any_method(), &[]).map(|_| ()),
                    None => &p.default,
                },
                None => &p.default,
            },
        };
        let used = req.methods();
        let outcomes = self.outcomes(&p, req, head).await;
        let grants = decide(&p, req, &outcomes)?;
        if let Some(rl) = p.rate_limit.as_ref().filter(|r| r.by == RateKey::Identity) {
            let key = grants
                .first()
                .map_or_else(|| format!("ip:{ip}"), |g| format!("id:{}", g.identity));
            self.limit(&key, rl).await.map_err(Denial::rate_limited)?;
        }
        let headers: Vec<(String, String)> =
            grants.iter().flat_map(|g| g.headers.clone()).collect();
        for (k, v) in headers {
            // Checked as a `HeaderMap` would check them: a grant's field goes upstream as is.
            if let (Ok(k), Ok(v)) = (
                http::HeaderName::from_bytes(k.as_bytes()),
                HeaderValue::from_str(&v),
            ) {
                head.headers.append(k.as_str(), v.as_bytes());
            }
        }
        if !p.forward_credentials {
            strip_credentials(&p, &used, head);
        }
        Ok(())
    }

    /// Evaluates the methods alternative by alternative and stops at the first satisfied one,
    /// so a valid API key never costs an introspection call. When none is satisfied, every
    /// method has been evaluated (the denial names them all).
    async fn outcomes(
        &self,
        p: &AccessProfile,
        req: &Requirement,
        head: &portcullis_engine::RequestHead,
    ) -> Vec<(MethodId, Outcome)> {
        let presented = Presented::new(head);
        let mut out: Vec<(MethodId, Outcome)> = Vec::new();
        for alt in &req.alternatives {
            for (id, _) in alt {
                if !out.iter().any(|(m, _)| m == id) {
                    let o = self.outcome(p, *id, &presented).await;
                    out.push((*id, self.unless_revoked(o)));
                }
            }
            let this = Requirement {
                alternatives: vec![alt.clone()],
            };
            if decide(p, &this, &out).is_ok() {
                break;
            }
        }
        out
    }

    async fn outcome(&self, p: &AccessProfile, id: MethodId, presented: &Presented<'_>) -> Outcome {
        let m = &p.methods[id];
        match &m.kind {
            MethodKind::ApiKey { .. } => check::api_key(m, presented),
            MethodKind::Basic { users } => check::basic(m, presented, |u, pw| {
                self.basic_verify(&m.name, users, u, pw)
            }),
            MethodKind::Jwt(jm) => match presented.bearer() {
                Err(e) => Outcome::Invalid(e.to_string()),
                Ok(None) => Outcome::Absent,
                Ok(Some(token)) => self.jwt(m, jm, token).await,
            },
            MethodKind::Introspection(im) => match presented.bearer() {
                Err(e) => Outcome::Invalid(e.to_string()),
                Ok(None) => Outcome::Absent,
                Ok(Some(token)) => {
                    self.introspector(&m.name)
                        .check(&self.clients, m, im, token)
                        .await
                }
            },
        }
    }

    async fn jwt(
        &self,
        m: &portcullis_engine::access::Method,
        jm: &portcullis_engine::access::JwtMethod,
        token: &str,
    ) -> Outcome {
        let unknown = || Outcome::Invalid(JwtError::UnknownKey.to_string());
        match check::jwt(m, jm, token, &jm.static_keys) {
            Ok(o) => return o,
            Err(_) if jm.jwks_url.is_none() => return unknown(),
            Err(_) => {}
        }
        let Some(url) = jm.jwks_url.as_deref() else {
            return unknown();
        };
        let jwks = self.jwks(url);
        let fetched = jwks
            .keys(&self.clients, jm.refresh, jm.min_refresh, jm.fetch_timeout)
            .await;
        if let Some(f) = &fetched
            && let Ok(o) = check::jwt(m, jm, token, &f.keys)
        {
            return o;
        }
        // An unknown key: the issuer may have rotated its keys (bounded refetch).
        match jwks
            .refresh_for(&self.clients, jm.min_refresh, jm.fetch_timeout)
            .await
        {
            Some(f) => check::jwt(m, jm, token, &f.keys).unwrap_or_else(|_| unknown()),
            None => Outcome::Invalid("the signing keys are not available".into()),
        }
    }

    fn basic_verify(
        &self,
        method: &str,
        users: &portcullis_engine::access::Users,
        user: &str,
        password: &str,
    ) -> bool {
        let key = sha256(format!("{method}\0{user}\0{password}").as_bytes());
        let now = Instant::now();
        if self.basic_ok.lock().get(&key).is_some_and(|t| *t > now) {
            return true;
        }
        if !users.verify(user, password) {
            return false;
        }
        let mut c = self.basic_ok.lock();
        if c.len() >= BASIC_ENTRIES {
            c.retain(|_, t| *t > now);
            if c.len() >= BASIC_ENTRIES {
                c.clear();
            }
        }
        c.insert(key, now + BASIC_TTL);
        true
    }
}

/// Removes the credentials the used methods read (when the profile does not forward them).
fn strip_credentials(
    p: &AccessProfile,
    used: &[MethodId],
    head: &mut portcullis_engine::RequestHead,
) {
    for &id in used {
        match &p.methods[id].kind {
            MethodKind::ApiKey {
                location: KeyLocation::Header(h),
                ..
            } => {
                head.headers.remove(h.as_str());
            }
            MethodKind::ApiKey {
                location: KeyLocation::Query(q),
                ..
            } => {
                let Some(query) = head.uri.query() else {
                    continue;
                };
                let pq = match strip_query_key(query, q) {
                    Some(rest) => format!("{}?{rest}", head.uri.path()),
                    None => head.uri.path().to_string(),
                };
                let mut parts = head.uri.clone().into_parts();
                if let Ok(pq) = pq.parse() {
                    parts.path_and_query = Some(pq);
                    if let Ok(u) = http::Uri::from_parts(parts) {
                        head.uri = u;
                    }
                }
            }
            _ => {
                head.headers.remove(http::header::AUTHORIZATION.as_str());
            }
        }
    }
}
