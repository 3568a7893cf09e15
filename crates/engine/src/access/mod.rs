//! API access control, the pure part: credential parsing ([`credentials`]), JWT verification with
//! given keys ([`jwt`]), hashed API keys and argon2 Basic users ([`secrets`]), the validated
//! profile ([`profile`], built by [`config`]), per-method checks ([`check`]), the combination into
//! pass or a denial rendered as a reply ([`decide`]), and OpenAPI `security` → rules ([`openapi`]).
//! Fetching JWKS, introspection, caches and rate-limit buckets live in `proxy::access`.
//!
//! No IO, no tokio, no hyper.

pub mod check;
mod config;
pub mod credentials;
pub mod decide;
mod decl;
pub mod jwt;
pub mod openapi;
pub mod profile;
pub mod secrets;

pub use config::{AccessError, from_value, parse};
pub use decide::{Denial, Grant, Outcome, decide};
pub use profile::{AccessProfile, MethodKind, Requirement};

#[cfg(test)]
mod tests;
