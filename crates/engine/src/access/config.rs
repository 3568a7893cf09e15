//! The access profile document (JSON or YAML) → a validated [`AccessProfile`]. Unknown fields,
//! wrong types and inconsistent values are refused with an error naming the field
//! (`methods.sso.jwt.audiences[0]: ...`), like `portcullis policy check`. The format is described
//! in `docs/access.md`.

use std::sync::Arc;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::decl::*;
use super::jwt::{JwtKey, JwtRules, KeySet};
use super::profile::*;
use super::secrets::{ApiKeySet, Users, hex, sha256};
use crate::policy::glob::Glob;

/// A profile that cannot be used: the field and the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct AccessError {
    pub path: String,
    pub message: String,
}

fn err(path: impl Into<String>, message: impl Into<String>) -> AccessError {
    AccessError {
        path: path.into(),
        message: message.into(),
    }
}

fn typed<T: DeserializeOwned>(v: &Value, prefix: &str) -> Result<T, AccessError> {
    serde_path_to_error::deserialize(v).map_err(|e| {
        let p = e.path().to_string();
        let path = match (prefix.is_empty(), p == ".") {
            (true, _) => p,
            (false, true) => prefix.to_string(),
            (false, false) => format!("{prefix}.{p}"),
        };
        err(path, e.into_inner().to_string())
    })
}

/// Parses and validates a profile document (JSON or YAML) named `name`.
pub fn parse(bytes: &[u8], name: &str) -> Result<AccessProfile, AccessError> {
    let v =
        crate::policy::parse_document(bytes, name).map_err(|e| err("(document)", e.to_string()))?;
    from_value(&v, name)
}

/// Validates a profile given as a JSON value.
pub fn from_value(v: &Value, name: &str) -> Result<AccessProfile, AccessError> {
    let d: ProfileDecl = typed(v, "")?;
    let realm = d.realm.unwrap_or_else(|| "api".into());
    if realm.contains(['"', '\\']) || realm.chars().any(char::is_control) {
        return Err(err(
            "realm",
            "must not contain quotes, backslashes or control characters",
        ));
    }
    let mut methods = Vec::new();
    let mut identity_headers = Vec::new();
    for (mname, mv) in &d.methods {
        let path = format!("methods.{mname}");
        if mname.is_empty() || mname.len() > 128 {
            return Err(err(path, "a method name must have 1 to 128 characters"));
        }
        let m: MethodDecl = typed(mv, &path)?;
        let method = method(mname, m, &path)?;
        for h in method
            .identity_header
            .iter()
            .chain(method.claim_headers.iter().map(|(_, h)| h))
        {
            if !identity_headers.contains(h) {
                identity_headers.push(h.clone());
            }
        }
        methods.push(method);
    }
    if methods.is_empty() {
        return Err(err(
            "methods",
            "at least one authentication method is required",
        ));
    }
    let mut p = AccessProfile {
        name: name.to_string(),
        realm,
        methods,
        rules: Vec::new(),
        default: Requirement::default(),
        rate_limit: None,
        revocations: d
            .revocations
            .as_ref()
            .map(|r| shared_store(r, "revocations"))
            .transpose()?,
        forward_credentials: d.forward_credentials.unwrap_or(true),
        openapi: d.openapi.unwrap_or(false),
        identity_headers,
    };
    p.default = match &d.default {
        Some(sec) => requirement(&p, sec, "default")?,
        // Without a default, any one method suffices.
        None => p.any_method(),
    };
    for (i, r) in d.rules.iter().enumerate() {
        let path = format!("rules[{i}]");
        if !r.path.starts_with('/') {
            return Err(err(format!("{path}.path"), "must start with /"));
        }
        let mut http_methods = Vec::new();
        for (j, m) in r.methods.iter().enumerate() {
            if m.is_empty() || !m.bytes().all(|b| b.is_ascii_alphabetic()) {
                return Err(err(
                    format!("{path}.methods[{j}]"),
                    format!("{m:?} is not an HTTP method"),
                ));
            }
            http_methods.push(m.to_ascii_uppercase());
        }
        let requirement = requirement(&p, &r.require, &format!("{path}.require"))?;
        p.rules.push(Rule {
            path: Glob::new(&r.path, true, false),
            http_methods,
            requirement,
        });
    }
    if let Some(r) = &d.rate_limit {
        p.rate_limit = Some(rate_limit(r)?);
    }
    Ok(p)
}

/// Resolves a list of Security Requirement Objects against the profile's methods.
pub fn requirement(
    p: &AccessProfile,
    sec: &Security,
    path: &str,
) -> Result<Requirement, AccessError> {
    let mut alternatives = Vec::new();
    for (i, alt) in sec.iter().enumerate() {
        let mut all = Vec::new();
        for (name, scopes) in alt {
            let id = p.method_id(name).ok_or_else(|| {
                err(
                    format!("{path}[{i}].{name}"),
                    "no method of this name is defined in methods",
                )
            })?;
            all.push((id, scopes.clone()));
        }
        alternatives.push(all);
    }
    Ok(Requirement { alternatives })
}

fn header_name(v: &str, path: &str) -> Result<String, AccessError> {
    let lower = v.to_ascii_lowercase();
    if http::HeaderName::from_bytes(lower.as_bytes()).is_err() {
        return Err(err(path, format!("{v:?} is not a valid header name")));
    }
    if matches!(
        lower.as_str(),
        "host"
            | "content-length"
            | "transfer-encoding"
            | "connection"
            | "authorization"
            | "content-type"
            | "te"
    ) {
        return Err(err(path, format!("{v} cannot carry identity")));
    }
    Ok(lower)
}

fn secs(v: Option<u64>, default: u64, path: &str, max: u64) -> Result<Duration, AccessError> {
    let s = v.unwrap_or(default);
    if s > max {
        return Err(err(path, format!("must be at most {max}")));
    }
    Ok(Duration::from_secs(s))
}

fn method(name: &str, m: MethodDecl, path: &str) -> Result<Method, AccessError> {
    let set = [
        m.api_key.is_some(),
        m.jwt.is_some(),
        m.introspection.is_some(),
        m.basic.is_some(),
    ];
    if set.iter().filter(|x| **x).count() != 1 {
        return Err(err(
            path,
            "exactly one of apiKey, jwt, introspection, basic is required",
        ));
    }
    let identity_header = m
        .identity_header
        .as_deref()
        .map(|h| header_name(h, &format!("{path}.identityHeader")))
        .transpose()?;
    let mut claim_headers = Vec::new();
    for (claim, h) in &m.claim_headers {
        claim_headers.push((
            claim.clone(),
            header_name(h, &format!("{path}.claimHeaders.{claim}"))?,
        ));
    }
    let kind = if let Some(k) = m.api_key {
        let p = format!("{path}.apiKey");
        let location = match k.location.as_str() {
            "header" => KeyLocation::Header(header_name(&k.name, &format!("{p}.name"))?),
            "query" if !k.name.is_empty() => KeyLocation::Query(k.name.clone()),
            "query" => return Err(err(format!("{p}.name"), "must not be empty")),
            other => {
                return Err(err(
                    format!("{p}.in"),
                    format!("must be header or query, not {other:?}"),
                ));
            }
        };
        let mut keys = ApiKeySet::default();
        for (i, kd) in k.keys.iter().enumerate() {
            let kp = format!("{p}.keys[{i}]");
            let digest = match (&kd.sha256, &kd.key) {
                (Some(d), None) => d.clone(),
                (None, Some(plain)) if !plain.is_empty() => hex(&sha256(plain.as_bytes())),
                _ => {
                    return Err(err(
                        kp,
                        "exactly one of sha256 and key (non-empty) is required",
                    ));
                }
            };
            if kd.id.is_empty() {
                return Err(err(format!("{kp}.id"), "must not be empty"));
            }
            keys.add_digest(&kd.id, &digest)
                .map_err(|e| err(kp, e.to_string()))?;
        }
        MethodKind::ApiKey { location, keys }
    } else if let Some(j) = m.jwt {
        MethodKind::Jwt(jwt(j, &format!("{path}.jwt"))?)
    } else if let Some(i) = m.introspection {
        let p = format!("{path}.introspection");
        if !(i.endpoint.starts_with("http://") || i.endpoint.starts_with("https://"))
            || i.endpoint.parse::<http::Uri>().is_err()
        {
            return Err(err(
                format!("{p}.endpoint"),
                "must be an http:// or https:// URL",
            ));
        }
        let timeout = Duration::from_millis(i.timeout_ms.unwrap_or(2000));
        if timeout.is_zero() || timeout > Duration::from_secs(60) {
            return Err(err(format!("{p}.timeoutMs"), "must be between 1 and 60000"));
        }
        MethodKind::Introspection(IntrospectionMethod {
            endpoint: i.endpoint,
            client_id: i.client_id,
            client_secret: i.client_secret,
            timeout,
            cache_ttl: secs(i.cache_seconds, 300, &format!("{p}.cacheSeconds"), 86_400)?,
            cache_entries: i.cache_entries.unwrap_or(10_000).clamp(1, 1_000_000),
            audiences: i.audiences,
        })
    } else if let Some(b) = m.basic {
        let mut users = Users::default();
        for (i, u) in b.users.iter().enumerate() {
            users
                .add(&u.name, &u.hash)
                .map_err(|e| err(format!("{path}.basic.users[{i}]"), e.to_string()))?;
        }
        MethodKind::Basic { users }
    } else {
        return Err(err(path, "no method kind"));
    };
    Ok(Method {
        name: name.to_string(),
        kind,
        identity_header,
        claim_headers,
    })
}

fn jwt(j: JwtDecl, p: &str) -> Result<JwtMethod, AccessError> {
    let mut keys = KeySet::default();
    if let Some(doc) = &j.jwks {
        let bytes = serde_json::to_vec(doc).map_err(|e| err(format!("{p}.jwks"), e.to_string()))?;
        let (set, _) =
            KeySet::from_jwks(&bytes).map_err(|e| err(format!("{p}.jwks"), e.to_string()))?;
        if set.is_empty() {
            return Err(err(
                format!("{p}.jwks"),
                "no key in it can verify signatures",
            ));
        }
        keys.extend(set);
    }
    for (i, s) in j.secrets.iter().enumerate() {
        if s.value.len() < 32 {
            return Err(err(
                format!("{p}.secrets[{i}].value"),
                "an HMAC secret needs at least 32 bytes",
            ));
        }
        keys.push(JwtKey::hmac(s.kid.clone(), s.value.as_bytes()));
    }
    if let Some(u) = &j.jwks_url
        && (!(u.starts_with("http://") || u.starts_with("https://"))
            || u.parse::<http::Uri>().is_err())
    {
        return Err(err(
            format!("{p}.jwksUrl"),
            "must be an http:// or https:// URL",
        ));
    }
    if keys.is_empty() && j.jwks_url.is_none() {
        return Err(err(
            p,
            "keys are required: jwks, jwksFile, jwksUrl or secrets",
        ));
    }
    let mut algorithms = Vec::new();
    for (i, a) in j.algorithms.iter().enumerate() {
        let alg: jsonwebtoken::Algorithm = a.parse().map_err(|_| {
            err(
                format!("{p}.algorithms[{i}]"),
                format!("{a:?} is not a JWS algorithm"),
            )
        })?;
        algorithms.push(alg);
    }
    let timeout = Duration::from_millis(j.timeout_ms.unwrap_or(3000));
    if timeout.is_zero() || timeout > Duration::from_secs(60) {
        return Err(err(format!("{p}.timeoutMs"), "must be between 1 and 60000"));
    }
    Ok(JwtMethod {
        rules: JwtRules {
            issuers: j.issuers,
            audiences: j.audiences,
            leeway_seconds: j.leeway_seconds.unwrap_or(60).min(3600),
            required_claims: j.required_claims,
            algorithms,
        },
        static_keys: Arc::new(keys),
        jwks_url: j.jwks_url,
        refresh: secs(
            j.refresh_seconds,
            3600,
            &format!("{p}.refreshSeconds"),
            7 * 86_400,
        )?,
        min_refresh: secs(
            j.min_refresh_seconds,
            10,
            &format!("{p}.minRefreshSeconds"),
            86_400,
        )?,
        fetch_timeout: timeout,
    })
}

/// Most requests a window may admit: a shared window keeps one entry per admitted request.
const MAX_WINDOW_REQUESTS: u32 = 100_000;

fn rate_limit(r: &RateDecl) -> Result<RateLimit, AccessError> {
    let (per_second, burst, window) = match (r.requests_per_second, r.requests) {
        (Some(rate), None) => {
            if !(rate.is_finite() && rate > 0.0) {
                return Err(err(
                    "rateLimit.requestsPerSecond",
                    "must be a positive number",
                ));
            }
            if r.window_seconds.is_some() {
                return Err(err(
                    "rateLimit.windowSeconds",
                    "goes with requests, not with requestsPerSecond",
                ));
            }
            let burst = r.burst.unwrap_or_else(|| rate.ceil().max(1.0) as u32);
            if burst == 0 {
                return Err(err("rateLimit.burst", "must be at least 1"));
            }
            (rate, burst, None)
        }
        (None, Some(n)) => {
            if n == 0 || n > MAX_WINDOW_REQUESTS {
                return Err(err(
                    "rateLimit.requests",
                    format!("must be between 1 and {MAX_WINDOW_REQUESTS}"),
                ));
            }
            if r.burst.is_some() {
                return Err(err(
                    "rateLimit.burst",
                    "goes with requestsPerSecond; a window admits requests at once",
                ));
            }
            let secs = r
                .window_seconds
                .ok_or_else(|| err("rateLimit.windowSeconds", "is required with requests"))?;
            if secs == 0 || secs > 86_400 {
                return Err(err(
                    "rateLimit.windowSeconds",
                    "must be between 1 and 86400",
                ));
            }
            (
                f64::from(n) / secs as f64,
                n,
                Some(Duration::from_secs(secs)),
            )
        }
        _ => {
            return Err(err(
                "rateLimit",
                "give requestsPerSecond (a token bucket) or requests with windowSeconds",
            ));
        }
    };
    let by = match r.by.as_deref().unwrap_or("identity") {
        "identity" => RateKey::Identity,
        "ip" => RateKey::Ip,
        other => {
            return Err(err(
                "rateLimit.by",
                format!("must be identity or ip, not {other:?}"),
            ));
        }
    };
    Ok(RateLimit {
        per_second,
        burst,
        window,
        by,
        max_clients: r.max_clients.unwrap_or(100_000).clamp(1, 10_000_000),
        store: r
            .store
            .as_ref()
            .map(|s| shared_store(s, "rateLimit.store"))
            .transpose()?,
    })
}

/// A `redis://` / `rediss://` store declared at `path`.
fn shared_store(d: &StoreDecl, path: &str) -> Result<SharedStore, AccessError> {
    let uri = d.redis.parse::<http::Uri>().ok();
    let scheme_ok = uri
        .as_ref()
        .and_then(|u| u.scheme_str())
        .is_some_and(|s| s == "redis" || s == "rediss");
    if !scheme_ok
        || uri
            .as_ref()
            .and_then(|u| u.host())
            .is_none_or(str::is_empty)
    {
        return Err(err(
            format!("{path}.redis"),
            "must be a redis:// or rediss:// URL with a host",
        ));
    }
    let key_prefix = d.key_prefix.clone().unwrap_or_else(|| "portcullis:".into());
    if key_prefix.len() > 128 || key_prefix.chars().any(|c| c.is_control() || c == ' ') {
        return Err(err(
            format!("{path}.keyPrefix"),
            "must have at most 128 characters, without spaces or control characters",
        ));
    }
    let timeout = Duration::from_millis(d.timeout_ms.unwrap_or(50));
    if timeout.is_zero() || timeout > Duration::from_secs(5) {
        return Err(err(
            format!("{path}.timeoutMs"),
            "must be between 1 and 5000",
        ));
    }
    let on_unavailable = match (d.on_unavailable.as_deref(), path) {
        (None | Some("local"), _) => Unavailable::Local,
        (Some(_), "revocations") => {
            return Err(err(
                format!("{path}.onUnavailable"),
                "applies to rate limits only (revocations keep the last list read)",
            ));
        }
        (Some("allow"), _) => Unavailable::Allow,
        (Some("deny"), _) => Unavailable::Deny,
        (Some(other), _) => {
            return Err(err(
                format!("{path}.onUnavailable"),
                format!("must be local, allow or deny, not {other:?}"),
            ));
        }
    };
    Ok(SharedStore {
        url: d.redis.clone(),
        key_prefix,
        timeout,
        on_unavailable,
    })
}
