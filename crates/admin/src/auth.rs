//! Authentication: HTTP Basic on every endpoint, `X-F5-Auth-Token` tokens, password hashing
//! (argon2id), lockout after repeated failures, and throttling of failed logins.
//!
//! Argon2 is deliberately slow, and clients such as f5-sdk send Basic credentials on *every*
//! request, so a verified `(user, password)` pair is remembered as a keyed SHA-256 digest (the
//! key is random per process) together with the hash it was verified against: a password change
//! invalidates it.
//!
//! Against guessing (docs/mgmt.md, "Login throttling"):
//! * lockout counters of existing users are kept apart from those of unknown names, so spraying
//!   unknown names cannot evict them; unknown names lock out alike (bounded, and evicting those
//!   only forgets unknown names), so the lockout does not tell which names exist;
//! * failed logins are throttled per source address and across all sources;
//! * an unknown name costs one argon2 verification too (against a fixed hash), so the time of a
//!   failure does not tell either;
//! * tokens are stored as their SHA-256: the store holds nothing that authenticates.

use std::collections::HashMap;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use argon2::Argon2;
use argon2::{PasswordHasher, PasswordVerifier};
use base64::Engine as _;
use http::StatusCode;
use parking_lot::Mutex;
use rand::RngExt as _;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::error::{MgmtError, MgmtResult};
use super::roles::Role;
use super::state::MgmtState;
use portcullis_store::{Table, WriteTx};
use portcullis_support::now_micros;

/// Counters of unknown names and of sources kept at most: past it, those whose lock or window
/// is over are dropped, and if that is not enough, all of them (known users are kept apart).
const MAX_TRACKED: usize = 10_000;
/// Verified credentials cached at most (the cache is cleared when full).
const MAX_VERIFIED: usize = 10_000;
/// Failed logins the global throttle lets through at once, as a multiple of its rate per second.
const GLOBAL_BURST_SECONDS: f64 = 10.0;

/// An authenticated user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct User {
    pub name: String,
    pub role: Role,
}

/// Consecutive failures of one name, and until when it is locked.
#[derive(Clone, Copy, Debug, Default)]
struct Failures {
    count: u32,
    locked_until: Option<Instant>,
}

/// In-memory authentication state: verified-credential cache, failure counters, throttles.
pub struct AuthCache {
    key: [u8; 32],
    verified: Mutex<HashMap<[u8; 32], String>>,
    /// Existing users: at most one entry per user, never evicted.
    users: Mutex<HashMap<String, Failures>>,
    /// Names that do not exist: bounded.
    unknown: Mutex<HashMap<String, Failures>>,
    /// Failed logins per source address: (count, start of its window).
    sources: Mutex<HashMap<String, (u32, Instant)>>,
    /// Failed logins across all sources: a token bucket (tokens, last refill).
    global: Mutex<(f64, Instant)>,
    /// The hash an unknown name is verified against.
    decoy: OnceLock<String>,
}

impl Default for AuthCache {
    fn default() -> Self {
        AuthCache {
            key: rand::rng().random(),
            verified: Mutex::new(HashMap::new()),
            users: Mutex::new(HashMap::new()),
            unknown: Mutex::new(HashMap::new()),
            sources: Mutex::new(HashMap::new()),
            global: Mutex::new((f64::MAX, Instant::now())),
            decoy: OnceLock::new(),
        }
    }
}

/// Hashes a password with argon2id and a random salt (PHC string).
pub fn hash_password(password: &str) -> MgmtResult<String> {
    let salt: [u8; 16] = rand::rng().random();
    Argon2::default()
        .hash_password_with_salt(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| MgmtError::internal(format!("password hash: {e}")))
}

fn verify_hash(password: &str, phc: &str) -> bool {
    Argon2::default()
        .verify_password(password.as_bytes(), phc)
        .is_ok()
}

/// A random 26-character token in the real format (base32 upper case).
pub fn new_token() -> String {
    const ALPHA: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let mut rng = rand::rng();
    (0..26)
        .map(|_| ALPHA[rng.random_range(0..32usize)] as char)
        .collect()
}

/// The key a token is stored under: its SHA-256 in hex. A copy of the store (or a backup) holds
/// nothing that authenticates.
pub fn token_key(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Whether `s` has the form of a [`token_key`].
pub fn is_token_key(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Deletes every token of `user` except `keep` (the token of the request itself, if any).
pub fn revoke_tokens(tx: &mut WriteTx<'_>, user: &str, keep: Option<&str>) -> MgmtResult<()> {
    let keep = keep.map(token_key);
    for key in tx.keys(Table::Tokens, "")? {
        if Some(&key) == keep.as_ref() {
            continue;
        }
        if tx
            .get(Table::Tokens, &key)?
            .is_some_and(|v| v["userName"] == user)
        {
            tx.delete(Table::Tokens, &key)?;
        }
    }
    Ok(())
}

/// Re-keys tokens stored in plaintext by an earlier version under their [`token_key`].
pub fn hash_stored_tokens(st: &MgmtState) -> MgmtResult<()> {
    let plain: Vec<(String, Value)> = st
        .store
        .list(Table::Tokens, "")?
        .into_iter()
        .filter(|(k, _)| !is_token_key(k))
        .collect();
    if plain.is_empty() {
        return Ok(());
    }
    st.store.write(|tx| {
        for (tok, mut rec) in plain {
            tx.delete(Table::Tokens, &tok)?;
            if let Some(m) = rec.as_object_mut() {
                for k in ["token", "name", "selfLink"] {
                    m.remove(k);
                }
            }
            tx.put(Table::Tokens, &token_key(&tok), &rec)?;
        }
        Ok(())
    })
}

/// Writes (or replaces) a user record with a freshly hashed password.
pub fn put_user(
    tx: &mut WriteTx<'_>,
    name: &str,
    role: Role,
    password: &str,
    extra: &Value,
) -> MgmtResult<()> {
    let mut rec =
        json!({"name": name, "role": role.as_str(), "passwordHash": hash_password(password)?});
    if let (Some(m), Some(e)) = (rec.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            m.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    tx.put(Table::Users, name, &rec)?;
    Ok(())
}

fn unauthorized(message: String) -> MgmtError {
    MgmtError::new(StatusCode::UNAUTHORIZED, message)
}

impl MgmtState {
    /// Checks a user name and password coming from `source` (the client address), with lockout
    /// and throttling. The error is the 401 to send.
    pub fn check_password(&self, name: &str, password: &str, source: &str) -> MgmtResult<User> {
        let rec = self.store.get(Table::Users, name)?;
        let hash = rec
            .as_ref()
            .and_then(|r| r["passwordHash"].as_str())
            .unwrap_or("");
        let role = rec
            .as_ref()
            .and_then(|r| r["role"].as_str())
            .and_then(Role::parse);
        let known = match role {
            Some(role) if !hash.is_empty() => Some(role),
            _ => None,
        };
        let counters = if known.is_some() {
            &self.auth.users
        } else {
            &self.auth.unknown
        };
        if let Some(n) = self.locked(counters, name) {
            return Err(unauthorized(format!(
                "Authentication failed: user {name} is locked out after {n} failed attempts; try again later."
            )));
        }
        let digest = self.cred_digest(name, password);
        // Credentials verified before reveal nothing new: no throttle, no second KDF.
        let cached = known.is_some()
            && self
                .auth
                .verified
                .lock()
                .get(&digest)
                .is_some_and(|h| h == hash);
        if !cached {
            if let Some(wait) = self.throttled(source) {
                return Err(unauthorized(format!(
                    "Authentication failed: too many failed logins; try again in {} s.",
                    wait.as_secs().max(1)
                )));
            }
            let against = if known.is_some() { hash } else { self.decoy() };
            if !verify_hash(password, against) || known.is_none() {
                self.record_failure(counters, name, known.is_some(), source);
                return Err(unauthorized(
                    "Authentication failed: invalid username or password.".into(),
                ));
            }
            let mut v = self.auth.verified.lock();
            if v.len() >= MAX_VERIFIED {
                v.clear();
            }
            v.insert(digest, hash.to_string());
        }
        self.auth.users.lock().remove(name);
        Ok(User {
            name: name.to_string(),
            role: known.unwrap_or(Role::Guest),
        })
    }

    /// Clears the lockout of a user (an administrator changing that user's password).
    pub fn unlock(&self, name: &str) {
        self.auth.users.lock().remove(name);
    }

    /// The failure count of a locked name; an expired lock is lifted (and its count reset).
    fn locked(&self, counters: &Mutex<HashMap<String, Failures>>, name: &str) -> Option<u32> {
        let mut map = counters.lock();
        let f = map.get_mut(name)?;
        match f.locked_until {
            Some(until) if Instant::now() < until => Some(f.count),
            Some(_) => {
                *f = Failures::default();
                None
            }
            None => None,
        }
    }

    /// How long `source` must wait before its next attempt, if it must.
    fn throttled(&self, source: &str) -> Option<Duration> {
        let now = Instant::now();
        let window = Duration::from_secs(self.cfg.login_source_window);
        if let Some((n, since)) = self.auth.sources.lock().get(source).copied()
            && n >= self.cfg.login_source_attempts
            && now < since + window
        {
            return Some(since + window - now);
        }
        let rate = f64::from(self.cfg.login_global_rate);
        if rate > 0.0 {
            let mut g = self.auth.global.lock();
            let burst = rate * GLOBAL_BURST_SECONDS;
            g.0 = (g.0 + now.duration_since(g.1).as_secs_f64() * rate).min(burst);
            g.1 = now;
            if g.0 < 1.0 {
                return Some(Duration::from_secs_f64((1.0 - g.0) / rate));
            }
        }
        None
    }

    fn record_failure(
        &self,
        counters: &Mutex<HashMap<String, Failures>>,
        name: &str,
        known: bool,
        source: &str,
    ) {
        let now = Instant::now();
        {
            let mut map = counters.lock();
            if !known && map.len() >= MAX_TRACKED && !map.contains_key(name) {
                map.retain(|_, f| f.locked_until.is_some_and(|u| u > now));
                if map.len() >= MAX_TRACKED {
                    map.clear();
                }
            }
            let f = map.entry(name.to_string()).or_default();
            f.count += 1;
            if f.count >= self.cfg.lockout_attempts.max(1) {
                f.locked_until = Some(now + Duration::from_secs(self.cfg.lockout_seconds));
            }
        }
        {
            let window = Duration::from_secs(self.cfg.login_source_window);
            let mut map = self.auth.sources.lock();
            if map.len() >= MAX_TRACKED && !map.contains_key(source) {
                map.retain(|_, (_, since)| now < *since + window);
                if map.len() >= MAX_TRACKED {
                    map.clear();
                }
            }
            let e = map.entry(source.to_string()).or_insert((0, now));
            if now >= e.1 + window {
                *e = (0, now);
            }
            e.0 += 1;
        }
        let mut g = self.auth.global.lock();
        g.0 -= 1.0;
    }

    /// A fixed argon2 hash (of a random password, made once) that unknown names are checked
    /// against.
    fn decoy(&self) -> &str {
        self.auth.decoy.get_or_init(|| {
            let random: [u8; 16] = rand::rng().random();
            hash_password(&format!("{random:?}")).unwrap_or_default()
        })
    }

    fn cred_digest(&self, name: &str, password: &str) -> [u8; 32] {
        let mut h = Sha256::new();
        h.update(self.auth.key);
        h.update(name.as_bytes());
        h.update([0]);
        h.update(password.as_bytes());
        h.finalize().into()
    }

    /// Authenticates a request from its headers: a token, else HTTP Basic, else 401.
    pub fn authenticate(
        &self,
        headers: &http::HeaderMap,
        path: &str,
        peer: &str,
    ) -> MgmtResult<(User, Option<String>)> {
        if let Some(tok) = headers.get("x-f5-auth-token").and_then(|v| v.to_str().ok()) {
            return self.user_of_token(tok).map(|u| (u, Some(tok.to_string())));
        }
        if let Some((name, pass)) = basic_credentials(headers) {
            return self.check_password(&name, &pass, peer).map(|u| (u, None));
        }
        Err(unauthorized(format!(
            "Authorization failed: no user authentication header or token detected. Uri:https://localhost{path} Referrer:{peer} Sender:{peer}"
        )))
    }

    /// The user a live token belongs to; an unknown or expired token is a 401.
    pub fn user_of_token(&self, tok: &str) -> MgmtResult<User> {
        let missing = || unauthorized("X-F5-Auth-Token does not exist.".into());
        if tok.len() > 64 {
            return Err(missing());
        }
        let key = token_key(tok);
        let rec = self.store.get(Table::Tokens, &key)?.ok_or_else(missing)?;
        if rec["expirationMicros"].as_u64().unwrap_or(0) <= now_micros() {
            let _ = self
                .store
                .write(|tx| tx.delete(Table::Tokens, &key).map(|_| ()));
            return Err(unauthorized("X-F5-Auth-Token has expired.".into()));
        }
        let name = rec["userName"].as_str().unwrap_or_default();
        let user = self.store.get(Table::Users, name)?.ok_or_else(missing)?;
        let role = user["role"]
            .as_str()
            .and_then(Role::parse)
            .ok_or_else(missing)?;
        Ok(User {
            name: name.to_string(),
            role,
        })
    }
}

/// `Authorization: Basic ...` → (user, password), if well formed.
pub fn basic_credentials(headers: &http::HeaderMap) -> Option<(String, String)> {
    let v = headers.get(http::header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, rest) = v.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let raw = base64::engine::general_purpose::STANDARD
        .decode(rest.trim())
        .ok()?;
    let s = String::from_utf8(raw).ok()?;
    let (u, p) = s.split_once(':')?;
    Some((u.to_string(), p.to_string()))
}

/// A random password of 20 characters from an unambiguous alphabet.
pub fn random_password() -> String {
    const ALPHA: &[u8] = b"abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
    let mut r = rand::rng();
    (0..20)
        .map(|_| ALPHA[r.random_range(0..ALPHA.len())] as char)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_verify_and_differ_per_salt() {
        let a = hash_password("s3cret").unwrap();
        let b = hash_password("s3cret").unwrap();
        assert_ne!(a, b);
        assert!(a.starts_with("$argon2id$"));
        assert!(verify_hash("s3cret", &a));
        assert!(!verify_hash("S3cret", &a));
        assert!(!verify_hash("x", "not a hash"));
    }

    /// A state over an empty store holding one user, `admin`: checking passwords needs no
    /// controller surface, so none is registered.
    fn state_with_admin(cfg: crate::MgmtConfig, password: &str) -> std::sync::Arc<MgmtState> {
        fn refuse(
            _: &MgmtState,
            _: &http::HeaderMap,
            _: &[u8],
            _: &str,
        ) -> MgmtResult<crate::reply::Reply> {
            Err(MgmtError::new(StatusCode::NOT_FOUND, "no login here"))
        }
        fn refuse_queued(
            _: &crate::state::Ctx<'_>,
            _: &str,
            _: Option<&str>,
            _: &[u8],
        ) -> MgmtResult<crate::reply::Reply> {
            Err(MgmtError::new(
                StatusCode::NOT_FOUND,
                "no transactions here",
            ))
        }
        let store = std::sync::Arc::new(portcullis_store::Store::open(&cfg.data_dir).unwrap());
        let user = json!({"passwordHash": hash_password(password).unwrap(), "role": "admin"});
        store
            .write::<_, portcullis_store::StoreError>(|tx| tx.put(Table::Users, "admin", &user))
            .unwrap();
        std::sync::Arc::new_cyclic(|this| MgmtState {
            store,
            cfg,
            auth: AuthCache::default(),
            extensions: Default::default(),
            builtins: crate::state::Builtins {
                routes: &[],
                kinds: &[],
                login: refuse,
                coordinated: refuse_queued,
                reapply: |_| {},
            },
            this: this.clone(),
        })
    }

    #[test]
    fn a_spray_of_unknown_user_names_does_not_evict_a_lockout() {
        use argon2::{Algorithm, Params, Version};
        let dir = tempfile::tempdir().unwrap();
        let cfg = crate::MgmtConfig {
            data_dir: dir.path().to_path_buf(),
            login_source_attempts: u32::MAX,
            login_global_rate: 0,
            ..Default::default()
        };
        let st = state_with_admin(cfg, "Right-pass-1");
        // The attack is about the counters, not the hashing: a cheap decoy keeps the test fast.
        let cheap = Argon2::new(
            Algorithm::Argon2id,
            Version::V0x13,
            Params::new(8, 1, 1, None).unwrap(),
        );
        let decoy = cheap
            .hash_password_with_salt(b"x", &[7; 16])
            .unwrap()
            .to_string();
        st.auth.decoy.set(decoy).unwrap();
        for _ in 0..4 {
            assert!(st.check_password("admin", "wrong", "192.0.2.1").is_err());
        }
        for i in 0..10_050 {
            let _ = st.check_password(&format!("nobody{i}"), "guess", "192.0.2.1");
        }
        for _ in 0..4 {
            assert!(st.check_password("admin", "wrong", "192.0.2.1").is_err());
        }
        let e = st
            .check_password("admin", "Right-pass-1", "192.0.2.1")
            .expect_err("still locked out");
        assert!(e.message.contains("locked out"), "{}", e.message);
    }

    #[test]
    fn tokens_look_real() {
        let t = new_token();
        assert_eq!(t.len(), 26);
        assert!(
            t.chars()
                .all(|c| c.is_ascii_uppercase() || ('2'..='7').contains(&c))
        );
        assert_ne!(t, new_token());
    }
}
