//! Portcullis: a WAF reverse proxy with an embedded management plane.
//!
//! Module map (who may import whom is the architecture, see `docs/architecture.md`):
//! - [`support`]: support ids, clock, small shared types. Imports nothing internal.
//! - [`waf`]: the engine, pure and IO-free: policy → compiled matchers → verdicts. Imports `support`.
//! - [`proxy`]: the hyper/tokio data plane. Imports `waf`, `support`.
//! - [`store`]: the embedded crash-safe configuration store. Imports `support`.
//! - [`demo`]: `portcullis demo`, the embedded default. Imports `proxy`, `waf`.

pub mod demo;
pub mod proxy;
pub mod store;
pub mod support;
pub mod waf;
