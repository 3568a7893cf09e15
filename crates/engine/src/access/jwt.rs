//! JSON Web Token verification with given keys (RFC 7515/7519): header parsing, key selection by
//! `kid`, signature verification by `jsonwebtoken` (ring backend, the same crypto as our TLS),
//! `exp`/`nbf` with leeway, `iss`, `aud` and required claims. The key decides the algorithms it
//! may verify (RSA → RS*/PS*, P-256 → ES256, P-384 → ES384, Ed25519 → EdDSA, oct → HS*), so an
//! `alg: none` token or an HS256 token "signed" with an RSA public key never verifies.
//!
//! Pure: keys come in as JWKS bytes.

use base64::Engine as _;
use jsonwebtoken::jwk::{
    AlgorithmParameters, EllipticCurve, Jwk, JwkSet, KeyAlgorithm, PublicKeyUse,
};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};

/// Most keys kept from one JWKS document (the rest are ignored, with a warning from the caller).
pub const MAX_KEYS: usize = 64;
/// Longest token accepted (bytes).
pub const MAX_TOKEN_BYTES: usize = 8192;

/// One verification key and the algorithms it may verify.
pub struct JwtKey {
    pub kid: Option<String>,
    key: DecodingKey,
    algs: Vec<Algorithm>,
}

/// A set of verification keys (a parsed JWKS, plus configured HMAC secrets).
#[derive(Default)]
pub struct KeySet {
    keys: Vec<JwtKey>,
}

const RSA_ALGS: [Algorithm; 6] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
];
const HMAC_ALGS: [Algorithm; 3] = [Algorithm::HS256, Algorithm::HS384, Algorithm::HS512];

fn algorithm_of(k: KeyAlgorithm) -> Option<Algorithm> {
    Some(match k {
        KeyAlgorithm::HS256 => Algorithm::HS256,
        KeyAlgorithm::HS384 => Algorithm::HS384,
        KeyAlgorithm::HS512 => Algorithm::HS512,
        KeyAlgorithm::ES256 => Algorithm::ES256,
        KeyAlgorithm::ES384 => Algorithm::ES384,
        KeyAlgorithm::RS256 => Algorithm::RS256,
        KeyAlgorithm::RS384 => Algorithm::RS384,
        KeyAlgorithm::RS512 => Algorithm::RS512,
        KeyAlgorithm::PS256 => Algorithm::PS256,
        KeyAlgorithm::PS384 => Algorithm::PS384,
        KeyAlgorithm::PS512 => Algorithm::PS512,
        KeyAlgorithm::EdDSA => Algorithm::EdDSA,
        _ => return None,
    })
}

impl JwtKey {
    /// A key from one JWK; `None` for keys that cannot verify signatures here (encryption keys,
    /// unsupported curves, malformed parameters).
    pub fn from_jwk(jwk: &Jwk) -> Option<JwtKey> {
        if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)) {
            return None;
        }
        let family: Vec<Algorithm> = match &jwk.algorithm {
            AlgorithmParameters::RSA(_) => RSA_ALGS.to_vec(),
            AlgorithmParameters::EllipticCurve(p) => match p.curve {
                EllipticCurve::P256 => vec![Algorithm::ES256],
                EllipticCurve::P384 => vec![Algorithm::ES384],
                _ => return None,
            },
            AlgorithmParameters::OctetKeyPair(p) => match p.curve {
                EllipticCurve::Ed25519 => vec![Algorithm::EdDSA],
                _ => return None,
            },
            AlgorithmParameters::OctetKey(_) => HMAC_ALGS.to_vec(),
        };
        // A key that names its algorithm verifies only that one (and only if it fits the key type).
        let algs = match jwk.common.key_algorithm {
            None => family,
            Some(ka) => {
                let a = algorithm_of(ka)?;
                if !family.contains(&a) {
                    return None;
                }
                vec![a]
            }
        };
        let key = DecodingKey::from_jwk(jwk).ok()?;
        Some(JwtKey {
            kid: jwk.common.key_id.clone(),
            key,
            algs,
        })
    }

    /// An HMAC secret (HS256/384/512).
    pub fn hmac(kid: Option<String>, secret: &[u8]) -> JwtKey {
        JwtKey {
            kid,
            key: DecodingKey::from_secret(secret),
            algs: HMAC_ALGS.to_vec(),
        }
    }
}

impl KeySet {
    /// Parses a JWKS document (`{"keys":[...]}`); keys that cannot verify are skipped.
    /// Returns the set and how many keys were skipped.
    pub fn from_jwks(bytes: &[u8]) -> Result<(KeySet, usize), NotJwks> {
        let set: JwkSet = serde_json::from_slice(bytes).map_err(NotJwks)?;
        let mut keys = Vec::new();
        let mut skipped = 0;
        for jwk in &set.keys {
            match JwtKey::from_jwk(jwk) {
                Some(k) if keys.len() < MAX_KEYS => keys.push(k),
                _ => skipped += 1,
            }
        }
        Ok((KeySet { keys }, skipped))
    }

    pub fn push(&mut self, key: JwtKey) {
        self.keys.push(key);
    }

    pub fn extend(&mut self, other: KeySet) {
        self.keys.extend(other.keys);
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Whether a key with this `kid` is in the set.
    pub fn has_kid(&self, kid: &str) -> bool {
        self.keys.iter().any(|k| k.kid.as_deref() == Some(kid))
    }
}

/// What a token must satisfy besides its signature.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JwtRules {
    /// Accepted `iss` values (empty: any).
    pub issuers: Vec<String>,
    /// Accepted `aud` values; the token must name one of them (empty: `aud` is not checked).
    pub audiences: Vec<String>,
    /// Clock skew allowed on `exp` and `nbf`, seconds.
    pub leeway_seconds: u64,
    /// Claims that must be present (besides `exp`, which is always required).
    pub required_claims: Vec<String>,
    /// Algorithms accepted at all (empty: every algorithm a key allows).
    pub algorithms: Vec<Algorithm>,
}

/// Bytes that are not a JWKS document (`{"keys": [...]}`), with the parser's reason.
#[derive(Debug, thiserror::Error)]
#[error("not a JWKS document: {0}")]
pub struct NotJwks(#[source] pub serde_json::Error);

/// Why a token was refused. Shown to the client as `error_description`; never contains the token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JwtError {
    #[error("the token is not a well-formed JWT")]
    Malformed,
    #[error("the token's algorithm is not accepted")]
    Algorithm,
    #[error("no key matches the token")]
    UnknownKey,
    #[error("the token's signature is invalid")]
    Signature,
    #[error("the token has expired")]
    Expired,
    #[error("the token is not valid yet")]
    NotYetValid,
    #[error("the token's issuer is not accepted")]
    Issuer,
    #[error("the token's audience is not accepted")]
    Audience,
    #[error("the token lacks the claim {0}")]
    MissingClaim(String),
}

/// The protected header fields that select a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JwtHeader {
    pub alg: String,
    pub kid: Option<String>,
}

fn b64_json(part: &str) -> Result<Map<String, Value>, JwtError> {
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(part.trim_end_matches('='))
        .map_err(|_| JwtError::Malformed)?;
    match serde_json::from_slice(&raw) {
        Ok(Value::Object(m)) => Ok(m),
        _ => Err(JwtError::Malformed),
    }
}

/// Splits and decodes a compact JWS without verifying it: the header fields and the claims.
pub fn parse_unverified(token: &str) -> Result<(JwtHeader, Map<String, Value>), JwtError> {
    if token.len() > MAX_TOKEN_BYTES {
        return Err(JwtError::Malformed);
    }
    let mut parts = token.split('.');
    let (Some(h), Some(p), Some(_sig), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(JwtError::Malformed);
    };
    let header = b64_json(h)?;
    let alg = header
        .get("alg")
        .and_then(Value::as_str)
        .ok_or(JwtError::Malformed)?
        .to_string();
    let kid = match header.get("kid") {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(JwtError::Malformed),
    };
    if header.contains_key("crit") {
        // No critical extension is understood, so none may be required (RFC 7515 4.1.11).
        return Err(JwtError::Malformed);
    }
    Ok((JwtHeader { alg, kid }, b64_json(p)?))
}

fn map_error(e: &jsonwebtoken::errors::Error) -> JwtError {
    use jsonwebtoken::errors::ErrorKind as K;
    match e.kind() {
        K::ExpiredSignature => JwtError::Expired,
        K::ImmatureSignature => JwtError::NotYetValid,
        K::InvalidIssuer => JwtError::Issuer,
        K::InvalidAudience => JwtError::Audience,
        K::InvalidAlgorithm | K::InvalidAlgorithmName => JwtError::Algorithm,
        K::MissingRequiredClaim(c) => JwtError::MissingClaim(c.clone()),
        K::InvalidSignature | K::InvalidEcdsaKey | K::InvalidRsaKey(_) | K::InvalidKeyFormat => {
            JwtError::Signature
        }
        _ => JwtError::Malformed,
    }
}

/// Verifies `token` against `keys` and `rules`; returns the claims.
pub fn verify(
    token: &str,
    keys: &KeySet,
    rules: &JwtRules,
) -> Result<Map<String, Value>, JwtError> {
    let (header, _) = parse_unverified(token)?;
    if header.alg.eq_ignore_ascii_case("none") {
        return Err(JwtError::Algorithm);
    }
    let alg: Algorithm = header.alg.parse().map_err(|_| JwtError::Algorithm)?;
    if !rules.algorithms.is_empty() && !rules.algorithms.contains(&alg) {
        return Err(JwtError::Algorithm);
    }
    let candidates: Vec<&JwtKey> = keys
        .keys
        .iter()
        .filter(|k| header.kid.is_none() || k.kid == header.kid)
        .collect();
    if candidates.is_empty() {
        return Err(JwtError::UnknownKey);
    }
    let mut v = Validation::new(alg);
    v.leeway = rules.leeway_seconds;
    v.validate_nbf = true;
    let mut required: Vec<&str> = vec!["exp"];
    if !rules.issuers.is_empty() {
        v.set_issuer(&rules.issuers);
        required.push("iss");
    }
    if rules.audiences.is_empty() {
        v.validate_aud = false;
    } else {
        v.set_audience(&rules.audiences);
        required.push("aud");
    }
    v.set_required_spec_claims(&required);
    let mut last = JwtError::Algorithm;
    for k in candidates.iter().filter(|k| k.algs.contains(&alg)) {
        match jsonwebtoken::decode::<Map<String, Value>>(token, &k.key, &v) {
            Ok(data) => {
                for c in &rules.required_claims {
                    if !data.claims.contains_key(c) {
                        return Err(JwtError::MissingClaim(c.clone()));
                    }
                }
                return Ok(data.claims);
            }
            Err(e) => {
                let mapped = map_error(&e);
                // A claim failure is final; a signature failure may be another key's token.
                if mapped != JwtError::Signature {
                    return Err(mapped);
                }
                last = mapped;
            }
        }
    }
    Err(last)
}

/// The scopes a token or an introspection result grants: `scope` (space-separated, RFC 8693 4.2)
/// or `scp` (a string or an array).
pub fn scopes(claims: &Map<String, Value>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for key in ["scope", "scp"] {
        match claims.get(key) {
            Some(Value::String(s)) => out.extend(s.split_whitespace().map(str::to_string)),
            Some(Value::Array(a)) => {
                out.extend(a.iter().filter_map(Value::as_str).map(str::to_string))
            }
            _ => {}
        }
    }
    out
}

/// A claim as a header value: strings as they are, numbers and booleans as text, arrays of
/// strings joined by spaces; objects are left out.
pub fn claim_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Array(a) => Some(
            a.iter()
                .filter_map(|x| match x {
                    Value::String(s) => Some(s.clone()),
                    Value::Number(n) => Some(n.to_string()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join(" "),
        ),
        _ => None,
    }
}
