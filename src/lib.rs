//! Portcullis: a WAF reverse proxy with an embedded management plane.
//!
//! The root package of the workspace: the `portcullis` binary, the command-line tools and the
//! demo. Each concern is a crate under `crates/` (the table "Crates and who may depend on whom"
//! in `docs/architecture.md`, enforced by Cargo and `architecture_test`); this lib re-exports them
//! under their module names, so `portcullis::waf` is the engine crate wherever it is used:
//! - [`support`] (`portcullis-support`): support ids, clock, bounded body reads and URL pulls, pinning.
//! - [`waf`] (`portcullis-engine`): the engine, pure and IO-free: policy → compiled matchers → verdicts.
//! - [`proxy`] (`portcullis-proxy`): the hyper/tokio data plane.
//! - [`store`] (`portcullis-store`): the embedded crash-safe configuration store.
//! - [`admin`] (`portcullis-admin`): the admin-server core: dispatch, authentication, roles, errors.
//! - [`mgmt`] (`portcullis-controller`): the controller's `/mgmt` object model on that core.
//! - [`central`] (`portcullis-central`): the central manager (`/mgmt/cm` tasks over controllers).
//! - [`dns`], [`soap`] (`portcullis-dns`): DNS zones and listener; the iControl SOAP portal.
//! - [`demo`]: `portcullis demo`, the embedded default and its demo upstreams.
//! - [`cli`]: command-line tools that are not servers (`policy check`, `billing-report`, `replay`).

pub mod cli;
pub mod demo;

pub use portcullis_admin as admin;
pub use portcullis_central as central;
pub use portcullis_controller as mgmt;
pub use portcullis_dns as dns;
pub use portcullis_dns::soap;
pub use portcullis_engine as waf;
pub use portcullis_proxy as proxy;
pub use portcullis_store as store;
pub use portcullis_support as support;

#[cfg(test)]
mod architecture_test;
