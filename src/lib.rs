//! Portcullis: a WAF reverse proxy with an embedded management plane.
//!
//! Module map (who may import whom is the architecture, see `docs/architecture.md`):
//! - [`support`]: support ids, clock, small shared types. Imports nothing internal.
//! - [`waf`]: the engine, pure and IO-free: policy → compiled matchers → verdicts. Imports `support`.
//! - [`proxy`]: the hyper/tokio data plane. Imports `waf`, `support`.
//! - [`store`]: the embedded crash-safe configuration store. Imports `support`.
//! - [`mgmt`]: the `/mgmt` REST surface. Imports `store`, `support`, `proxy::topology`, `waf::Engine`.
//! - [`central`]: the central manager (`/mgmt/cm` tasks over controllers). Imports `mgmt`, `store`, `support`.
//! - [`dns`]: DNS zones, zone-file text, the DNS listener. Imports `store`, `support`.
//! - [`soap`]: the iControl SOAP portal for DNS zones. Imports `dns`, `store`, `support`.
//! - [`demo`]: `portcullis demo`, the embedded default and its demo upstreams. Imports `proxy`, `waf`.
//! - [`cli`]: command-line tools that are not servers (`policy check`, `billing-report`). Imports `waf`,
//!   `central::client` and `proxy::{tls, fetch}` (the billing tool talks HTTPS).

pub mod admin;
pub mod central;
pub mod cli;
pub mod demo;
pub mod dns;
pub mod mgmt;
pub mod proxy;
pub mod soap;
pub mod store;
pub mod support;
pub mod waf;

#[cfg(test)]
mod architecture_test;
