//! Stored secrets: API keys kept only as SHA-256 digests (a lookup hashes the presented key), and
//! Basic users with argon2 password hashes (PHC strings, verified with the `argon2` crate).

use std::collections::HashMap;

use argon2::password_hash::{PasswordHash, PasswordVerifier};
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

/// API keys by digest → key id.
#[derive(Debug, Default, Clone)]
pub struct ApiKeySet {
    by_digest: HashMap<[u8; 32], String>,
}

impl ApiKeySet {
    /// Adds key `id` by its hex SHA-256 digest; an error names what is wrong.
    pub fn add_digest(&mut self, id: &str, sha256_hex: &str) -> Result<(), String> {
        let d = unhex(&sha256_hex.to_ascii_lowercase())
            .ok_or("sha256 must be 64 hexadecimal digits")?;
        if self.by_digest.insert(d, id.to_string()).is_some() {
            return Err("the same key is listed twice".into());
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
    pub fn add(&mut self, name: &str, hash: &str) -> Result<(), String> {
        let parsed = PasswordHash::new(hash).map_err(|e| format!("not a PHC hash string: {e}"))?;
        if !parsed.algorithm.as_str().starts_with("argon2") {
            return Err(format!(
                "hash algorithm {} is not supported (use argon2id)",
                parsed.algorithm
            ));
        }
        if name.is_empty() || name.contains(':') {
            return Err("a user name must be non-empty and contain no ':'".into());
        }
        if self
            .by_name
            .insert(name.to_string(), hash.to_string())
            .is_some()
        {
            return Err(format!("user {name} is listed twice"));
        }
        Ok(())
    }

    /// Whether `user` exists and `password` matches its hash (argon2: deliberately slow; the
    /// proxy caches successes).
    pub fn verify(&self, user: &str, password: &str) -> bool {
        let Some(h) = self.by_name.get(user) else {
            return false;
        };
        let Ok(parsed) = PasswordHash::new(h) else {
            return false;
        };
        argon2::Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
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
        assert!(s.add_digest("b", "zz").is_err());
        assert!(s.add_digest("c", &hex(&sha256(b"k-1"))).is_err());
    }

    #[test]
    fn argon2_users_verify() {
        let mut u = Users::default();
        // The engine only verifies; the hash is made here the way any argon2id tool makes one.
        use argon2::password_hash::{PasswordHasher, SaltString};
        let salt = SaltString::encode_b64(b"a fixed test salt").unwrap();
        let h = argon2::Argon2::default()
            .hash_password(b"wonder", &salt)
            .unwrap()
            .to_string();
        u.add("alice", &h).unwrap();
        assert!(u.verify("alice", "wonder"));
        assert!(!u.verify("alice", "nope"));
        assert!(!u.verify("bob", "wonder"));
        assert!(u.add("carol", "plain").is_err());
    }
}
