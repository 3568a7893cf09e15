//! API access control, the stateful part: the per-listener [`Gate`] (profile swap, JWKS and
//! introspection caches, rate-limit buckets), bounded HTTP exchanges for JWKS and introspection,
//! rate limits and revocations shared by a fleet in Redis ([`shared`], [`revocations`]), and
//! loading a profile file for `portcullis proxy --access FILE`. Decisions are made by the pure
//! `waf::access`.

mod gate;
pub(crate) mod introspect;
mod jwks;
pub(crate) mod load;
mod ratelimit;
pub(crate) mod revocations;
pub(crate) mod revoke;
pub(crate) mod shared;

pub use gate::Gate;
pub use introspect::Introspector;
pub use load::{JwksFileProblem, LoadError, load_file, summary as profile_summary};
pub use revocations::Revoked;
pub use revoke::{
    RevokeError, StoreArgs as RevocationStoreArgs, check_id as check_revocation_id,
    list as list_revoked, list_cli as list_revoked_cli, parse_ttl as parse_revocation_ttl, revoke,
    revoke_cli, unrevoke, unrevoke_cli,
};
pub use shared::{StoreUrlError, Stores};
