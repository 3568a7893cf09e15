//! The validated access profile: named authentication methods, rules that say which methods (and
//! scopes) a URL or OpenAPI operation requires, rate limiting, and what identity goes upstream.
//! Built from the declaration by [`super::config`]; immutable once built and shared by every
//! request of a listener (the proxy swaps whole profiles).

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use super::jwt::{JwtRules, KeySet};
use super::secrets::{ApiKeySet, Users};
use crate::policy::glob::Glob;

/// Index of a method in [`AccessProfile::methods`].
pub type MethodId = usize;

/// One access profile.
pub struct AccessProfile {
    /// The profile's name (file name or `/Common/name`), for logs.
    pub name: String,
    /// `realm` of the `WWW-Authenticate` challenges.
    pub realm: String,
    pub methods: Vec<Method>,
    /// Checked in order; the first rule whose path and method match decides.
    pub rules: Vec<Rule>,
    /// What a request no rule matches needs.
    pub default: Requirement,
    pub rate_limit: Option<RateLimit>,
    /// Where fleet-wide revocations of API keys and token ids are read (none: not checked).
    pub revocations: Option<SharedStore>,
    /// Forward the client's credentials (Authorization header, API key) upstream.
    pub forward_credentials: bool,
    /// Derive rules from the attached policy's OpenAPI `security` requirements.
    pub openapi: bool,
    /// Header names the client may not set (they carry identity upstream); lower case.
    pub identity_headers: Vec<String>,
}

/// A named authentication method and what it passes upstream.
pub struct Method {
    pub name: String,
    pub kind: MethodKind,
    /// Header that receives the authenticated identity (key id, user, `sub`).
    pub identity_header: Option<String>,
    /// Claims (JWT or introspection) copied to headers: (claim, header).
    pub claim_headers: Vec<(String, String)>,
}

/// Where an API key is sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyLocation {
    Header(String),
    Query(String),
}

pub enum MethodKind {
    ApiKey {
        location: KeyLocation,
        keys: ApiKeySet,
    },
    Jwt(JwtMethod),
    Introspection(IntrospectionMethod),
    Basic {
        users: Users,
    },
}

impl MethodKind {
    /// The `WWW-Authenticate` scheme of this method's challenge.
    pub fn scheme(&self) -> &'static str {
        match self {
            MethodKind::ApiKey { .. } => "ApiKey",
            MethodKind::Jwt(_) | MethodKind::Introspection(_) => "Bearer",
            MethodKind::Basic { .. } => "Basic",
        }
    }
}

/// JWT bearer tokens.
pub struct JwtMethod {
    pub rules: JwtRules,
    /// Keys given in the configuration (inline JWKS, a JWKS file, HMAC secrets).
    pub static_keys: Arc<KeySet>,
    /// A JWKS URL fetched by the proxy (cached, refreshed).
    pub jwks_url: Option<String>,
    /// How long fetched keys are used before they are fetched again.
    pub refresh: Duration,
    /// Least time between two fetches (an unknown `kid` refetches at most this often).
    pub min_refresh: Duration,
    /// Time limit of one fetch.
    pub fetch_timeout: Duration,
}

/// OAuth 2.0 token introspection (RFC 7662).
pub struct IntrospectionMethod {
    pub endpoint: String,
    pub client_id: String,
    pub client_secret: String,
    pub timeout: Duration,
    /// Longest a result is cached (an active token also never beyond its `exp`).
    pub cache_ttl: Duration,
    /// Most cached results.
    pub cache_entries: usize,
    /// Accepted `aud` values (empty: not checked).
    pub audiences: Vec<String>,
}

/// Alternatives, any one of which suffices; each is a set of methods that must all succeed, with
/// the scopes each must grant (OpenAPI's Security Requirement Objects). No alternative, or an
/// empty one, means anonymous access.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Requirement {
    pub alternatives: Vec<Vec<(MethodId, Vec<String>)>>,
}

impl Requirement {
    pub fn anonymous(&self) -> bool {
        self.alternatives.is_empty() || self.alternatives.iter().any(Vec::is_empty)
    }

    /// The methods this requirement may use, each once, in order of first mention.
    pub fn methods(&self) -> Vec<MethodId> {
        let mut out = Vec::new();
        for alt in &self.alternatives {
            for (m, _) in alt {
                if !out.contains(m) {
                    out.push(*m);
                }
            }
        }
        out
    }
}

/// A rule for a URL (wildcards) and optionally some HTTP methods.
pub struct Rule {
    pub path: Glob,
    /// Upper-case HTTP methods (empty: any).
    pub http_methods: Vec<String>,
    pub requirement: Requirement,
}

/// What a rate limit counts by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateKey {
    /// The authenticated identity (key id, user, `sub`); anonymous requests by client address.
    Identity,
    /// The client address.
    Ip,
}

/// A limit per client: a token bucket of `burst` refilled at `per_second`, or (with `window`) at
/// most `burst` requests in any `window` (a sliding window when counted in a shared store; the
/// local counters approximate it with the token bucket of the same rate).
#[derive(Debug, Clone, PartialEq)]
pub struct RateLimit {
    pub per_second: f64,
    pub burst: u32,
    pub window: Option<Duration>,
    pub by: RateKey,
    /// Most clients tracked at once (the least recently refilled are forgotten first).
    pub max_clients: usize,
    /// Counters shared by every node (Redis/Valkey) instead of this process's own.
    pub store: Option<SharedStore>,
}

/// A Redis (or Valkey) server shared by the nodes of a fleet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedStore {
    /// `redis://[user:password@]host[:port][/db]` or `rediss://…` (TLS).
    pub url: String,
    /// Prepended to every key and channel, so profiles (or fleets) sharing a server stay apart.
    pub key_prefix: String,
    /// Longest wait for an answer before the request is decided without the store.
    pub timeout: Duration,
    pub on_unavailable: Unavailable,
}

/// What a rate limit does while its shared store does not answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unavailable {
    /// Count with this node's own token buckets.
    Local,
    /// Admit every request.
    Allow,
    /// Refuse every request (429).
    Deny,
}

impl AccessProfile {
    /// The requirement for a request: the first matching rule, else the default.
    pub fn requirement(&self, method: &str, path: &str) -> &Requirement {
        self.rule(method, path).unwrap_or(&self.default)
    }

    /// The requirement of the first rule matching the request, if any.
    pub fn rule(&self, method: &str, path: &str) -> Option<&Requirement> {
        self.rules
            .iter()
            .find(|r| {
                (r.http_methods.is_empty() || r.http_methods.iter().any(|m| m == method))
                    && r.path.is_match(path.as_bytes())
            })
            .map(|r| &r.requirement)
    }

    /// Every method as an alternative (what a request must show when nothing more specific applies).
    pub fn any_method(&self) -> Requirement {
        Requirement {
            alternatives: (0..self.methods.len())
                .map(|i| vec![(i, Vec::new())])
                .collect(),
        }
    }

    pub fn method_id(&self, name: &str) -> Option<MethodId> {
        self.methods.iter().position(|m| m.name == name)
    }

    /// The query parameters that carry an API key (`in: query`).
    pub fn query_credentials(&self) -> impl Iterator<Item = &str> {
        self.methods.iter().filter_map(|m| match &m.kind {
            MethodKind::ApiKey {
                location: KeyLocation::Query(q),
                ..
            } => Some(q.as_str()),
            _ => None,
        })
    }

    /// `uri` with the value of every query parameter that carries an API key (`in: query`)
    /// replaced by `********`, for events and logs: they never show a credential, valid or not.
    pub fn mask_credentials<'a>(&self, uri: &'a str) -> Cow<'a, str> {
        let names: Vec<&str> = self.query_credentials().collect();
        let Some((path, query)) = uri.split_once('?') else {
            return Cow::Borrowed(uri);
        };
        let secret = |pair: &str| {
            let raw = pair.split_once('=').map_or(pair, |(k, _)| k);
            form_urlencoded::parse(raw.as_bytes())
                .next()
                .is_some_and(|(k, _)| names.contains(&k.as_ref()))
        };
        if names.is_empty() || !query.split('&').any(secret) {
            return Cow::Borrowed(uri);
        }
        let masked: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((k, _)) if secret(pair) => format!("{k}=********"),
                _ => pair.to_string(),
            })
            .collect();
        Cow::Owned(format!("{path}?{}", masked.join("&")))
    }
}
