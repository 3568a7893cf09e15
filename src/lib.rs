//! Portcullis: a WAF reverse proxy with an embedded management plane.
//!
//! Module map (who may import whom is the architecture, see `docs/architecture.md`):
//! - [`support`]: support ids, clock, small shared types. Imports nothing internal.
//! - [`waf`]: the engine, pure and IO-free: policy → compiled matchers → verdicts. Imports `support`.
//! - [`proxy`]: the hyper/tokio data plane. Imports `waf`, `support`.
//! - [`demo`]: the built-in demo upstreams of `portcullis demo`. Imports `waf`, `support`.
//! - [`store`]: the embedded crash-safe configuration store. Imports `support`.
//! - [`dns`]: DNS zones, zone-file text, the DNS listener. Imports `store`, `support`.
//! - [`mgmt`]: the `/mgmt` REST surface. Imports `store`, `support`, `proxy::topology`, `waf::Engine`.
//! - [`soap`]: the iControl SOAP portal for DNS zones. Imports `dns`, `store`, `support`.

pub mod demo;
pub mod dns;
pub mod mgmt;
pub mod cli;
//! - [`demo`]: `portcullis demo`, the embedded default. Imports `proxy`, `waf`.

pub mod proxy;
pub mod soap;
pub mod store;
pub mod support;
pub mod waf;
