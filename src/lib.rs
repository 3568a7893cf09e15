//! Portcullis: a WAF reverse proxy with an embedded management plane.
//!
//! Modules (who may import whom is the table in `docs/architecture.md`, enforced by
//! `architecture_test`):
//! - [`support`]: support ids, clock, bounded body reads and URL pulls, certificate pinning.
//! - [`waf`]: the engine, pure and IO-free: policy → compiled matchers → verdicts.
//! - [`proxy`]: the hyper/tokio data plane.
//! - [`store`]: the embedded crash-safe configuration store.
//! - [`admin`]: the admin-server core: dispatch, authentication, roles, errors, the object engine.
//! - [`mgmt`]: the controller's `/mgmt` object model on that core.
//! - [`central`]: the central manager (`/mgmt/cm` tasks over controllers).
//! - [`dns`]: DNS zones, zone-file text, the DNS listener.
//! - [`soap`]: the iControl SOAP portal for DNS zones.
//! - [`demo`]: `portcullis demo`, the embedded default and its demo upstreams.
//! - [`cli`]: command-line tools that are not servers (`policy check`, `billing-report`, `replay`).

#![forbid(unsafe_code)]

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
