//! The data plane: hyper/tokio listeners, TLS, connection handling, upstream pools, the phase
//! driver that feeds the WAF [`crate::waf::Transaction`], body buffering under limits, the event log
//! and metrics. Imports: `waf`, `support`. Never the management plane.
pub mod topology;
