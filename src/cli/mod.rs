//! Command-line helpers that do IO on behalf of the pure engine (the binary's side of `waf`).
//! `billing-report` is here too: it talks to a central manager over HTTPS. `replay` runs recorded
//! requests through the engine as the proxy takes them (`proxy::head`, `proxy::run`'s loader).

pub mod billing_build;
pub mod billing_keys;
pub mod billing_mask;
pub mod billing_report;
pub mod billing_transport;
pub mod policy_check;
pub mod replay;
pub mod replay_report;
pub mod replay_wire;
