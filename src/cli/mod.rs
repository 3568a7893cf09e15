//! Command-line helpers that do IO on behalf of the pure engine (the binary's side of `waf`).
//! `billing-report` is here too: it talks to a central manager over HTTPS. `replay` runs recorded
//! requests through the engine as the proxy takes them (`proxy::head`, `proxy::run`'s loader).

pub(crate) mod billing_build;
pub(crate) mod billing_keys;
pub(crate) mod billing_mask;
pub(crate) mod billing_report;
pub(crate) mod billing_transport;
pub(crate) mod policy_check;
pub(crate) mod replay;
pub(crate) mod replay_report;
pub(crate) mod replay_wire;

#[cfg(fuzzing)]
pub use billing_mask::fuzz_billing_input;
pub use billing_report::{BillingReportArgs, run as run_billing_report};
pub use policy_check::{
    CheckFor, CheckOptions, offline_in_dir as offline_resolver_in_dir, run as check_policy,
    run_with as check_policy_with,
};
pub use replay::{ReplayArgs, parse_record as parse_replay_record, run as run_replay};
