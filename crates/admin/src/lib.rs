//! The admin-server core every REST surface of the binary is built on (the controller's `/mgmt`
//! objects, the central manager's `/mgmt/cm` tasks): the single dispatch entry and its router,
//! authentication and roles, the part-7 error object, handlers' replies, the per-request
//! context and the shared state, collection query options, object addressing, and the generic
//! object engine over the store (a table-driven registry of kinds, writes in one transaction).
//!
//! What a surface serves is registered, not imported: the controller hands its built-in routes,
//! kinds, login and transaction queue to the state it opens ([`state::Builtins`]), other modules
//! add theirs with [`MgmtState::extend`].

pub mod auth;
pub mod dispatch;
pub mod engine;
pub mod error;
pub mod kinds;
pub mod names;
pub mod ops;
pub mod query;
pub mod reply;
pub mod roles;
pub mod state;

pub use dispatch::router;
pub use error::{MgmtError, MgmtResult};
pub use state::{MgmtConfig, MgmtState};
