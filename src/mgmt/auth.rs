//! Authentication: HTTP Basic on every endpoint, `X-F5-Auth-Token` tokens, password hashing
//! (argon2id), and lockout after repeated failures.
//!
//! Argon2 is deliberately slow, and clients such as f5-sdk send Basic credentials on *every*
//! request, so a verified `(user, password)` pair is remembered as a keyed SHA-256 digest (the
//! key is random per process) together with the hash it was verified against: a password change
//! invalidates it. Imports: `store`, `support`, `mgmt::{error,state}`.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use base64::Engine as _;
use http::StatusCode;
use parking_lot::Mutex;
use rand::RngExt as _;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::error::{MgmtError, MgmtResult};
use super::roles::Role;
use super::state::MgmtState;
use crate::store::{Table, WriteTx};
use crate::support::now_micros;

/// Failure counters kept at most (beyond, only active lockouts are kept).
const MAX_TRACKED: usize = 10_000;
/// Verified credentials cached at most (the cache is cleared when full).
const MAX_VERIFIED: usize = 10_000;

/// An authenticated user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct User {
    pub name: String,
    pub role: Role,
}

/// In-memory authentication state: verified-credential cache and failure counters.
pub struct AuthCache {
    key: [u8; 32],
    verified: Mutex<HashMap<[u8; 32], String>>,
    failures: Mutex<HashMap<String, (u32, Option<Instant>)>>,
}

impl Default for AuthCache {
    fn default() -> Self {
        AuthCache {
            key: rand::rng().random(),
            verified: Mutex::new(HashMap::new()),
            failures: Mutex::new(HashMap::new()),
        }
    }
}

/// Hashes a password with argon2id and a random salt (PHC string).
pub fn hash_password(password: &str) -> MgmtResult<String> {
    let salt_bytes: [u8; 16] = rand::rng().random();
    let salt = SaltString::encode_b64(&salt_bytes)
        .map_err(|e| MgmtError::internal(format!("salt: {e}")))?;
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| MgmtError::internal(format!("password hash: {e}")))
}

fn verify_hash(password: &str, phc: &str) -> bool {
    PasswordHash::new(phc)
        .map(|h| {
            Argon2::default()
                .verify_password(password.as_bytes(), &h)
                .is_ok()
        })
        .unwrap_or(false)
}

/// A random 26-character token in the real format (base32 upper case).
pub fn new_token() -> String {
    const ALPHA: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let mut rng = rand::rng();
    (0..26)
        .map(|_| ALPHA[rng.random_range(0..32usize)] as char)
        .collect()
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

impl MgmtState {
    /// Checks a user name and password, with lockout. The error is the 401 to send.
    pub fn check_password(&self, name: &str, password: &str) -> MgmtResult<User> {
        let attempts = self.cfg.lockout_attempts.max(1);
        if let Some((n, Some(until))) = self.auth.failures.lock().get(name).copied()
            && n >= attempts
            && Instant::now() < until
        {
            return Err(MgmtError::new(
                StatusCode::UNAUTHORIZED,
                format!(
                    "Authentication failed: user {name} is locked out after {n} failed attempts; try again later."
                ),
            ));
        }
        let rec = self.store.get(Table::Users, name)?;
        let hash = rec
            .as_ref()
            .and_then(|r| r["passwordHash"].as_str())
            .unwrap_or("");
        let role = rec
            .as_ref()
            .and_then(|r| r["role"].as_str())
            .and_then(Role::parse);
        let digest = self.cred_digest(name, password);
        let cached = self
            .auth
            .verified
            .lock()
            .get(&digest)
            .is_some_and(|h| h == hash);
        let ok = !hash.is_empty() && (cached || verify_hash(password, hash));
        match (ok, role) {
            (true, Some(role)) => {
                let mut v = self.auth.verified.lock();
                if v.len() >= MAX_VERIFIED {
                    v.clear();
                }
                v.insert(digest, hash.to_string());
                drop(v);
                self.auth.failures.lock().remove(name);
                Ok(User {
                    name: name.to_string(),
                    role,
                })
            }
            _ => {
                let mut f = self.auth.failures.lock();
                if f.len() >= MAX_TRACKED {
                    // Bounded memory under a spray of user names: keep only current lockouts.
                    let now = Instant::now();
                    f.retain(|_, (_, until)| until.is_some_and(|u| u > now));
                }
                let e = f.entry(name.to_string()).or_insert((0, None));
                e.0 += 1;
                if e.0 >= attempts {
                    e.1 = Some(Instant::now() + Duration::from_secs(self.cfg.lockout_seconds));
                }
                Err(MgmtError::new(
                    StatusCode::UNAUTHORIZED,
                    "Authentication failed: invalid username or password.",
                ))
            }
        }
    }

    /// Clears the lockout of a user (an administrator changing that user's password).
    pub fn unlock(&self, name: &str) {
        self.auth.failures.lock().remove(name);
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
            return self.check_password(&name, &pass).map(|u| (u, None));
        }
        Err(MgmtError::new(
            StatusCode::UNAUTHORIZED,
            format!(
                "Authorization failed: no user authentication header or token detected. Uri:https://localhost{path} Referrer:{peer} Sender:{peer}"
            ),
        ))
    }

    /// The user a live token belongs to; an unknown or expired token is a 401.
    pub fn user_of_token(&self, tok: &str) -> MgmtResult<User> {
        let missing =
            || MgmtError::new(StatusCode::UNAUTHORIZED, "X-F5-Auth-Token does not exist.");
        if tok.len() > 64 {
            return Err(missing());
        }
        let rec = self.store.get(Table::Tokens, tok)?.ok_or_else(missing)?;
        if rec["expirationMicros"].as_u64().unwrap_or(0) <= now_micros() {
            let _ = self
                .store
                .write(|tx| tx.delete(Table::Tokens, tok).map(|_| ()));
            return Err(MgmtError::new(
                StatusCode::UNAUTHORIZED,
                "X-F5-Auth-Token has expired.",
            ));
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
