//! The admin-server core every REST surface of the binary is built on (the controller's `/mgmt`
//! objects, the central manager's `/mgmt/cm` tasks): the single dispatch entry and its router,
//! authentication and roles, the part-7 error object, handlers' replies, the per-request
//! context and the shared state, collection query options, object addressing, and the generic
//! object engine over the store (a table-driven registry of kinds, writes in one transaction).
//!
//! What a surface serves is registered, not imported: the controller hands its built-in routes,
//! kinds, login and transaction queue to the state it opens ([`Builtins`]), other modules
//! add theirs with [`MgmtState::extend`].

mod auth;
mod dispatch;
mod engine;
mod error;
mod kinds;
mod names;
mod ops;
mod query;
mod reply;
mod roles;
mod state;

pub use auth::{
    AuthCache, User, basic_credentials, hash_password, hash_stored_tokens, is_token_key, new_token,
    put_user, random_password, revoke_tokens, token_key,
};
pub use dispatch::{Peer, Route, call_as, dispatch, peer_of, router, segments};
pub use engine::children;
pub use error::{ConfigError, MgmtError, MgmtResult};
pub use kinds::{Coll, KindSpec, ParentRef, PendingWrite, Target, resolve, str_field};
pub use names::{ObjName, check_name, full_path_of};
pub use ops::{
    commit, create_in, delete_in, next_generation, parse_body, parse_object, strip_read_only,
    touches_data_plane, update_in,
};
pub use query::{Filter, Lit, Query};
pub use reply::Reply;
pub use roles::{Role, allowed, denied, may_change_zones};
pub use state::{Builtins, Ctx, Extensions, MgmtConfig, MgmtState};
