//! API access control, the stateful part: the per-listener [`Gate`] (profile swap, JWKS and
//! introspection caches, rate-limit buckets), bounded HTTP exchanges for JWKS and introspection,
//! rate limits and revocations shared by a fleet in Redis ([`shared`], [`revocations`]), and
//! loading a profile file for `portcullis proxy --access FILE`. Decisions are made by the pure
//! `waf::access`.

mod gate;
pub mod introspect;
mod jwks;
pub mod load;
mod ratelimit;
pub mod revocations;
pub mod revoke;
pub(crate) mod shared;

pub use gate::Gate;
pub use load::load_file;
pub use shared::Stores;
