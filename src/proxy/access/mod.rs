//! API access control, the stateful part: the per-listener [`Gate`] (profile swap, JWKS and
//! introspection caches, rate-limit buckets), bounded HTTP exchanges for JWKS and introspection,
//! and loading a profile file for `portcullis proxy --access FILE`. Decisions are made by the pure
//! `waf::access`.
//!
//! Imports: `waf::access`, `proxy::upstream`, tokio, hyper (through the pooled client).

pub mod gate;
pub mod introspect;
pub mod jwks;
pub mod load;
pub mod ratelimit;

pub use gate::Gate;
pub use load::load_file;
