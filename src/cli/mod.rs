//! Command-line helpers that do IO on behalf of the pure engine (the binary's side of `waf`).
//! Imports: `waf`.

pub mod policy_check;
