//! The pure checks of one method against one request: API key lookup, Basic credentials (the
//! password check is injected so the proxy can cache argon2 successes), bearer token extraction
//! and JWT verification with given keys. Each yields an [`Outcome`].

use super::credentials::{self, Authorization, CredentialError};
use super::decide::{Grant, Outcome};
use super::jwt::{self, JwtError, KeySet};
use super::profile::{JwtMethod, KeyLocation, Method, MethodKind};

/// The request facts the checks read, parsed once.
pub struct Presented<'a> {
    pub headers: &'a crate::Fields,
    pub query: Option<&'a str>,
    pub authorization: Option<Result<Authorization, CredentialError>>,
}

impl<'a> Presented<'a> {
    pub fn new(head: &'a crate::RequestHead) -> Self {
        Presented {
            headers: &head.headers,
            query: head.uri.query(),
            authorization: credentials::authorization(&head.headers),
        }
    }

    /// The bearer token: `Ok(None)` when there is none (or another scheme is used).
    pub fn bearer(&self) -> Result<Option<&str>, CredentialError> {
        match &self.authorization {
            None | Some(Ok(Authorization::Basic { .. } | Authorization::Other(_))) => Ok(None),
            Some(Ok(Authorization::Bearer(t))) => Ok(Some(t)),
            Some(Err(e)) => Err(*e),
        }
    }
}

/// An API key method.
pub fn api_key(m: &Method, p: &Presented<'_>) -> Outcome {
    let MethodKind::ApiKey { location, keys } = &m.kind else {
        return Outcome::Absent;
    };
    let found = match location {
        KeyLocation::Header(h) => credentials::header_key(p.headers, h),
        KeyLocation::Query(q) => credentials::query_key(p.query, q),
    };
    match found {
        None => Outcome::Absent,
        Some(Err(e)) => Outcome::Invalid(e.to_string()),
        Some(Ok(k)) => match keys.lookup(&k) {
            Some(id) => Outcome::Valid(Grant {
                revocation_id: Some(format!("key:{id}")),
                ..Grant::of(m, id.to_string())
            }),
            None => Outcome::Invalid("the API key is not valid".into()),
        },
    }
}

/// A Basic method; `verify(user, password)` checks the password.
pub fn basic(m: &Method, p: &Presented<'_>, verify: impl FnOnce(&str, &str) -> bool) -> Outcome {
    match &p.authorization {
        Some(Ok(Authorization::Basic { user, password })) => {
            if verify(user, password) {
                Outcome::Valid(Grant::of(m, user.clone()))
            } else {
                Outcome::Invalid("the user name or password is not valid".into())
            }
        }
        Some(Err(CredentialError::BadBasic)) => {
            Outcome::Invalid(CredentialError::BadBasic.to_string())
        }
        Some(Err(CredentialError::Repeated)) => {
            Outcome::Invalid(CredentialError::Repeated.to_string())
        }
        _ => Outcome::Absent,
    }
}

/// A JWT method with keys `keys`: `Err(UnknownKey)` tells the caller that fresh keys may help.
pub fn jwt(m: &Method, jm: &JwtMethod, token: &str, keys: &KeySet) -> Result<Outcome, JwtError> {
    match jwt::verify(token, keys, &jm.rules) {
        Ok(claims) => Ok(Outcome::Valid(Grant::from_claims(m, &claims))),
        Err(JwtError::UnknownKey) => Err(JwtError::UnknownKey),
        Err(e) => Ok(Outcome::Invalid(e.to_string())),
    }
}

/// The fuzz entry point: the Authorization-header parser and, for a bearer token, the JWT parser
/// and the verifier (with an empty key set and with one HMAC key).
#[cfg(any(test, fuzzing))]
pub fn fuzz_credentials(data: &[u8]) {
    if let Ok(Authorization::Bearer(t)) = credentials::parse_authorization(data) {
        let _ = jwt::parse_unverified(&t);
        let mut keys = KeySet::default();
        let _ = jwt::verify(&t, &keys, &jwt::JwtRules::default());
        keys.push(jwt::JwtKey::hmac(None, b"fuzzing-secret-fuzzing-secret-32"));
        let _ = jwt::verify(&t, &keys, &jwt::JwtRules::default());
    }
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = jwt::parse_unverified(text);
        let _ = credentials::query_key(Some(text), "api_key");
    }
}
