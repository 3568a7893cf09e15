//! Stored secrets: API keys kept only as SHA-256 digests (a lookup hashes the presented key), and
//! Basic users with argon2 password hashes (PHC strings, verified with the `argon2` crate).

use std::collections::HashMap;

use argon2::{PasswordHash, PasswordVerifier};
use sha2::{Digest, Sha256};

/// SHA-256 of `bytes`.
pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<[u8; 32]> {
    if s.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

/// Why a key or a user cannot be added; the profile loader puts the text after the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    #[error("sha256 must be 64 hexadecimal digits")]
    BadDigest,
    #[error("the same key is listed twice")]
    DuplicateKey,
    #[error("not a PHC hash string: {0}")]
    NotPhc(String),
    #[error("hash algorithm {algorithm} is not supported (use argon2id)")]
    Algorithm { algorithm: String },
    #[error("a user name must be non-empty and contain no ':'")]
    BadUserName,
    #[error("user {name} is listed twice")]
    DuplicateUser { name: String },
}

/// API keys by digest → key id.
#[derive(Debug, Default, Clone)]
pub struct ApiKeySet {
    by_digest: HashMap<[u8; 32], String>,
}

impl ApiKeySet {
    /// Adds key `id` by its hex SHA-256 digest; an error names what is wrong.
    pub fn add_digest(&mut self, id: &str, sha256_hex: &str) -> Result<(), SecretError> {
        let d = unhex(&sha256_hex.to_ascii_lowercase()).ok_or(SecretError::BadDigest)?;
        if self.by_digest.insert(d, id.to_string()).is_some() {
            return Err(SecretError::DuplicateKey);
        }
        Ok(())
    }

    /// The id of `key`, if it is in the set.
    pub fn lookup(&self, key: &str) -> Option<&str> {
        self.by_digest
            .get(&sha256(key.as_bytes()))
            .map(String::as_str)
    }

    pub fn len(&self) -> usize {
        self.by_digest.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_digest.is_empty()
    }
}

/// Basic users: name → argon2 PHC hash.
#[derive(Debug, Default, Clone)]
pub struct Users {
    by_name: HashMap<String, String>,
}

impl Users {
    /// Adds `name` with PHC string `hash` (`$argon2id$...`, `$argon2i$`, `$argon2d$`).
    pub fn add(&mut self, name: &str, hash: &str) -> Result<(), SecretError> {
        let parsed = PasswordHash::new(hash).map_err(|e| SecretError::NotPhc(e.to_string()))?;
        if !parsed.algorithm.as_str().starts_with("argon2") {
            return Err(SecretError::Algorithm {
                algorithm: parsed.algorithm.to_string(),
            });
        }
        if name.is_empty() || name.contains(':') {
            return Err(SecretError::BadUserName);
        }
        if self
            .by_name
            .insert(name.to_string(), hash.to_string())
            .is_some()
        {
            return Err(SecretError::DuplicateUser {
                name: name.to_string(),
            });
        }
        Ok(())
    }

    /// Whether `user` exists and `password` matches its hash (argon2: deliberately slow; the
    /// proxy caches successes).
    pub fn verify(&self, user: &str, password: &str) -> bool {
        let Some(h) = self.by_name.get(user) else {
            return false;
        };
        argon2::Argon2::default()
            .verify_password(password.as_bytes(), h.as_str())
            .is_ok()
    }

    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_keys_are_found_by_digest_only() {
        let mut s = ApiKeySet::default();
        s.add_digest("a", &hex(&sha256(b"k-1"))).unwrap();
        assert_eq!(s.lookup("k-1"), Some("a"));
        assert_eq!(s.lookup("k-2"), None);
        assert_eq!(s.add_digest("b", "zz"), Err(SecretError::BadDigest));
        assert_eq!(
            s.add_digest("c", &hex(&sha256(b"k-1"))),
            Err(SecretError::DuplicateKey)
        );
    }

    #[test]
    fn argon2_users_verify() {
        let mut u = Users::default();
        // The engine only verifies; the hash is made here the way any argon2id tool makes one.
        use argon2::PasswordHasher;
        let h = argon2::Argon2::default()
            .hash_password_with_salt(b"wonder", b"a fixed test salt")
            .unwrap()
            .to_string();
        u.add("alice", &h).unwrap();
        assert!(u.verify("alice", "wonder"));
        assert!(!u.verify("alice", "nope"));
        assert!(!u.verify("bob", "wonder"));
        // A hash stored by an earlier build (its argon2 0.5 and `access hash-password`) still
        // verifies: the PHC string is the format, whatever library wrote it.
        let stored = "$argon2id$v=19$m=19456,t=2,p=1$wAkWApiO+DtiFZbil+PhDg$WjrmdsoGe2WIqKVaLgVOfdDg6v9h9+iwcDl10FQsvQo";
        u.add("dave", stored).unwrap();
        assert!(u.verify("dave", "wonder"));
        assert!(!u.verify("dave", "wonder2"));
        assert!(matches!(
            u.add("carol", "plain"),
            Err(SecretError::NotPhc(_))
        ));
        assert_eq!(
            u.add("alice", &h),
            Err(SecretError::DuplicateUser {
                name: "alice".into()
            })
        );
        assert_eq!(u.add("a:b", &h), Err(SecretError::BadUserName));
    }
}
