//! The decision for one request: each method the requirement names yields an [`Outcome`]
//! (absent, invalid, or a [`Grant`] with identity and scopes); [`decide`] combines them
//! (alternatives of all-of sets with scopes) into pass or a [`Denial`] with its challenges; a
//! denial becomes a violation and a reply in the listener's format (JSON with the support id, or
//! gRPC status 16/7/8 for gRPC calls).

use serde_json::{Map, Value};

use super::profile::{AccessProfile, Method, MethodId, MethodKind, Requirement};
use crate::response::SUPPORT_ID_PLACEHOLDER;
use crate::{BlockReply, Context, Violation, ViolationKind};

/// What one method made of a request.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The request carries no credential for this method.
    Absent,
    /// A credential is present but refused; the reason is safe to show (no secret in it).
    Invalid(String),
    /// Authenticated.
    Valid(Grant),
}

/// An authenticated identity.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Grant {
    /// Key id, user name, or the token's `sub` (`client_id` when there is none).
    pub identity: String,
    pub scopes: Vec<String>,
    /// Headers to add upstream (identity and mapped claims).
    pub headers: Vec<(String, String)>,
    /// How a fleet-wide revocation names this credential: `key:<key id>` for an API key,
    /// `jti:<jti>` for a token with a `jti` claim.
    pub revocation_id: Option<String>,
}

impl Grant {
    /// The grant of a token: identity from `sub` (or `client_id`, `username`), scopes, claim headers.
    pub fn from_claims(method: &Method, claims: &Map<String, Value>) -> Grant {
        let identity = ["sub", "client_id", "username"]
            .iter()
            .find_map(|c| claims.get(*c).and_then(Value::as_str))
            .unwrap_or_default()
            .to_string();
        let mut g = Grant::of(method, identity);
        g.scopes = super::jwt::scopes(claims);
        g.revocation_id = claims
            .get("jti")
            .and_then(Value::as_str)
            .map(|j| format!("jti:{j}"));
        for (claim, header) in &method.claim_headers {
            if let Some(text) = claims.get(claim).and_then(super::jwt::claim_text) {
                g.headers.push((header.clone(), text));
            }
        }
        g
    }

    /// A grant for `identity` with the method's identity header.
    pub fn of(method: &Method, identity: String) -> Grant {
        let headers = method
            .identity_header
            .iter()
            .map(|h| (h.clone(), identity.clone()))
            .collect();
        Grant {
            identity,
            scopes: Vec::new(),
            headers,
            revocation_id: None,
        }
    }
}

/// Why a request is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denial {
    /// 401, 403 or 429.
    pub status: u16,
    /// `WWW-Authenticate` values, in order.
    pub challenges: Vec<String>,
    /// For the event log (never a credential).
    pub detail: String,
    /// Seconds, for 429.
    pub retry_after: Option<u64>,
}

fn challenge(p: &AccessProfile, m: &Method, error: Option<(&str, &str)>) -> String {
    let realm = &p.realm;
    match &m.kind {
        MethodKind::Basic { .. } => format!("Basic realm=\"{realm}\", charset=\"UTF-8\""),
        MethodKind::ApiKey { location, .. } => {
            let (loc, name) = match location {
                super::profile::KeyLocation::Header(n) => ("header", n),
                super::profile::KeyLocation::Query(n) => ("query", n),
            };
            format!(
                "ApiKey realm=\"{realm}\", in=\"{loc}\", name=\"{}\"",
                quote(name)
            )
        }
        MethodKind::Jwt(_) | MethodKind::Introspection(_) => match error {
            None => format!("Bearer realm=\"{realm}\""),
            Some((code, desc)) => format!(
                "Bearer realm=\"{realm}\", error=\"{code}\", error_description=\"{}\"",
                quote(desc)
            ),
        },
    }
}

/// Makes `s` safe inside a quoted-string (no quotes, backslashes or controls).
fn quote(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_control() && *c != '"' && *c != '\\')
        .collect()
}

/// Combines the outcomes (indexed by method id) under `req`: the grants of the first satisfied
/// alternative (empty for anonymous access), or the denial.
pub fn decide<'a>(
    p: &AccessProfile,
    req: &Requirement,
    outcomes: &'a [(MethodId, Outcome)],
) -> Result<Vec<&'a Grant>, Denial> {
    let outcome = |m: MethodId| outcomes.iter().find(|(id, _)| *id == m).map(|(_, o)| o);
    if req.alternatives.is_empty() {
        return Ok(Vec::new());
    }
    let mut missing_scopes: Option<Vec<String>> = None;
    for alt in &req.alternatives {
        let mut grants = Vec::new();
        let mut ok = true;
        let mut scope_gap = Vec::new();
        for (m, scopes) in alt {
            match outcome(*m) {
                Some(Outcome::Valid(g)) => {
                    scope_gap.extend(scopes.iter().filter(|s| !g.scopes.contains(s)).cloned());
                    grants.push(g);
                }
                _ => ok = false,
            }
        }
        if ok && scope_gap.is_empty() {
            return Ok(grants);
        }
        if ok && missing_scopes.is_none() {
            missing_scopes = Some(scope_gap);
        }
    }
    if let Some(scopes) = missing_scopes {
        let realm = &p.realm;
        let list = quote(&scopes.join(" "));
        return Err(Denial {
            status: 403,
            challenges: vec![format!(
                "Bearer realm=\"{realm}\", error=\"insufficient_scope\", scope=\"{list}\""
            )],
            detail: format!("insufficient scope: {list} required"),
            retry_after: None,
        });
    }
    let mut challenges: Vec<String> = Vec::new();
    let mut details = Vec::new();
    for m in req.methods() {
        let method = &p.methods[m];
        let c = match outcome(m) {
            Some(Outcome::Invalid(why)) => {
                details.push(format!("{}: {why}", method.name));
                challenge(p, method, Some(("invalid_token", why)))
            }
            _ => challenge(p, method, None),
        };
        if !challenges.contains(&c) {
            challenges.push(c);
        }
    }
    // A plain challenge is redundant next to an error challenge of the same scheme.
    let erred: Vec<String> = challenges
        .iter()
        .filter(|c| c.contains("error="))
        .filter_map(|c| c.split(' ').next().map(str::to_string))
        .collect();
    challenges
        .retain(|c| c.contains("error=") || !erred.iter().any(|s| c.starts_with(&format!("{s} "))));
    Err(Denial {
        status: 401,
        challenges,
        detail: if details.is_empty() {
            "no credentials".into()
        } else {
            details.join("; ")
        },
        retry_after: None,
    })
}

impl Denial {
    /// The 429 of a rate limit.
    pub fn rate_limited(retry_after: u64) -> Denial {
        Denial {
            status: 429,
            challenges: Vec::new(),
            detail: "rate limit exceeded".into(),
            retry_after: Some(retry_after.max(1)),
        }
    }

    /// The violation recorded in the event.
    pub fn violation(&self) -> Violation {
        let kind = match self.status {
            403 => ViolationKind::AccessForbidden,
            429 => ViolationKind::RateLimit,
            _ => ViolationKind::AccessUnauthorized,
        };
        Violation::new(kind, Context::Request).detail(self.detail.clone())
    }

    /// The reply: gRPC trailers-only with status 16 (UNAUTHENTICATED), 7 (PERMISSION_DENIED) or
    /// 8 (RESOURCE_EXHAUSTED) for gRPC calls; else the JSON body with the support id, the
    /// challenges and `Retry-After`.
    pub fn reply(&self, grpc: bool) -> BlockReply {
        if grpc {
            let (status, what) = match self.status {
                403 => (7, "Permission denied"),
                429 => (8, "Rate limit exceeded"),
                _ => (16, "Unauthenticated"),
            };
            return BlockReply::Grpc {
                status,
                message: format!("{what}. Your support ID is: {SUPPORT_ID_PLACEHOLDER}"),
            };
        }
        let mut headers = vec![
            (
                "content-type".to_string(),
                "application/json; charset=utf-8".to_string(),
            ),
            ("cache-control".to_string(), "no-cache".to_string()),
            ("pragma".to_string(), "no-cache".to_string()),
        ];
        for c in &self.challenges {
            headers.push(("www-authenticate".into(), c.clone()));
        }
        if let Some(s) = self.retry_after {
            headers.push(("retry-after".into(), s.to_string()));
        }
        BlockReply::Custom {
            status: self.status,
            headers,
            body: format!("{{\"supportID\":\"{SUPPORT_ID_PLACEHOLDER}\"}}"),
        }
    }
}
