//! The firewall-policy surface of the controller (`/mgmt/tm/asm/...`): policies, the import,
//! apply and export tasks, and the bridge that puts applied policies into the engines of the
//! virtual servers they are attached to.
//!
//! - [`policies`]: the policy objects, their edited and applied documents, `put/attach/delete`;
//! - [`compile`]: pulls the links of a policy (through `support::fetch`) and compiles it;
//! - [`apply`]: `apply_policy`, the apply task, and the policy a virtual starts with;
//! - [`tasks`]: the asynchronous task records (NEW → STARTED → COMPLETED | FAILURE);
//! - [`import`]: the import task (upload, URL, inline forms);
//! - [`export`]: the export task (inline and as a downloadable file);
//! - [`templates`]: the read-only policy templates;
//! - [`learn`]: the tuning loop: suggestions learned from events, accepting a request by its
//!   support id, readiness for blocking.

mod apply;
pub(crate) mod compile;
pub(crate) mod export;
pub(crate) mod import;
pub(crate) mod learn;
pub(crate) mod policies;
mod tasks;
mod templates;

use portcullis_admin::MgmtState;
use portcullis_admin::Route;

pub use apply::{apply_policy, attached_policy, running_policy};
pub use compile::compile_fetching;
#[cfg(fuzzing)]
pub use import::fuzz_import_request;
pub use learn::learner::learn as learn_from_events;
pub use learn::suggestions::records as suggestion_records;
pub use policies::{attach_policy, delete_policy, policy_id, put_policy, put_policy_linked};

/// Every fixed route of the ASM surface.
static ROUTES: &[Route] = &[
    Route {
        path: policies::POLICIES,
        prefix: true,
        handler: policies::handle,
    },
    Route {
        path: import::IMPORT.path,
        prefix: true,
        handler: import::handle,
    },
    Route {
        path: apply::APPLY.path,
        prefix: true,
        handler: apply::handle,
    },
    Route {
        path: export::EXPORT.path,
        prefix: true,
        handler: export::handle,
    },
    Route {
        path: templates::TEMPLATES,
        prefix: true,
        handler: templates::handle,
    },
    Route {
        path: "/mgmt/tm/asm/file-transfer/downloads",
        prefix: true,
        handler: super::objects::download::handle,
    },
];

/// Registers the ASM routes, and fails the tasks a previous run left unfinished.
pub fn install(st: &MgmtState) {
    st.extend(ROUTES, &[]);
    tasks::fail_interrupted(st);
}
