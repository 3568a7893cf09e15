//! Application-services declarations (AS3): `/mgmt/shared/appsvcs/declare`,
//! `/info` and `/task`. A declaration is parsed and validated into a typed model (`model.rs`,
//! `classes.rs`, `props.rs`), planned into objects of the object model under
//! `/<Tenant>/<Application>/` (`plan.rs`), and deployed atomically per tenant (`deploy.rs`);
//! WAF policies go through `mgmt::asm` (`waf.rs`). See docs/as3.md.

mod classes;
mod deploy;
pub(crate) mod model;
pub(crate) mod plan;
mod props;
mod routes;
mod secure;
mod seed;
mod service;
#[cfg(test)]
mod tests;
mod waf;

use portcullis_admin::MgmtState;
use portcullis_admin::Route;

static ROUTES: &[Route] = &[
    Route {
        path: deploy::DECLARE,
        prefix: true,
        handler: routes::declare,
    },
    Route {
        path: routes::INFO,
        prefix: false,
        handler: routes::info,
    },
    Route {
        path: routes::TASK,
        prefix: true,
        handler: routes::task,
    },
];

/// Registers the AS3 endpoints, adds the built-in objects AS3 declarations name (the TCP
/// profiles `f5-tcp-wan`/`f5-tcp-lan`, the `_sys_https_redirect` rule) when missing, and puts
/// tenants deployed with `persist: false` back to their persisted state (this runs at start).
pub fn install(st: &MgmtState) {
    st.extend(ROUTES, &[]);
    if let Err(e) = seed::builtins(st) {
        tracing::error!(error = %e.message, "cannot add the AS3 built-in objects");
    }
    deploy::restore_unpersisted(st);
}
