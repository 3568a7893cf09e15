//! API access control, the pure part: credential parsing ([`credentials`]), JWT verification with
//! given keys ([`jwt`]), hashed API keys and argon2 Basic users ([`secrets`]), the validated
//! profile ([`profile`], built by [`config`]), per-method checks ([`check`]), the combination into
//! pass or a denial rendered as a reply ([`decide`]), and OpenAPI `security` → rules ([`openapi`]).
//! Fetching JWKS, introspection, caches and rate-limit buckets live in `proxy::access`.
//!
//! No IO, no tokio, no hyper.

pub mod check;
mod config;
pub(crate) mod credentials;
pub(crate) mod decide;
mod decl;
pub(crate) mod jwt;
pub(crate) mod openapi;
pub(crate) mod profile;
pub(crate) mod secrets;

pub use config::{AccessError, from_value, parse};
pub use credentials::{CredentialError, strip_query_key};
pub use decide::{Denial, Grant, Outcome, decide};
pub use jwt::{JwtError, KeySet, NotJwks};
pub use openapi::operation_requirement;
pub use profile::{
    AccessProfile, IntrospectionMethod, JwtMethod, KeyLocation, Method, MethodId, MethodKind,
    RateKey, RateLimit, Requirement, SharedStore, Unavailable,
};
pub use secrets::{Users, hex, sha256};

#[cfg(test)]
mod tests;
