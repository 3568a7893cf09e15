//! The controller's object model on the admin-server core (`admin`): one file per object kind
//! under `objects/`, ASM policies and tasks (`asm`), AS3 (`as3`), request events (`events`),
//! monitors, revocations, the web console, first-start seeding, the apply path that turns
//! configuration into data-plane listeners, and the `serve` HTTPS server. Entry points: [`open`]
//! (state over a data directory), [`server::AdminServer`] (HTTPS listener), and `fuzz_request`
//! (built for tests and cargo-fuzz only).

mod apply;
mod as3;
pub mod asm;
mod console;
pub mod events;
mod monitor;
mod objects;
mod plane;
mod revocations;
mod seed;
mod server;

pub use apply::DetachedTopology;
#[cfg(fuzzing)]
pub use as3::{model::parse as parse_as3, plan::plan_tenant as plan_as3_tenant};
#[cfg(fuzzing)]
pub use console::fuzz_request as fuzz_console_request;
pub use console::router as console_router;
pub use monitor::probe_members;
pub use objects::sys_file::write_durably;
pub use plane::PlaneState;
pub use server::{
    AdminServer, Attach, ConnLimits, ServeArgs, ServeConfig, ServeError, admin_tls,
    run as run_admin_server, serve as serve_admin, shutdown_signal,
};

use std::sync::Arc;

use portcullis_admin::Builtins;
use portcullis_admin::{AuthCache, MgmtConfig, MgmtResult, MgmtState, hash_stored_tokens};
use portcullis_proxy::Topology;
use portcullis_store::Store;

/// Opens the management state over `cfg.data_dir`: the store, first-start seeding (machine id,
/// built-in profiles and monitors, the `admin` user with `admin_password` when it does not
/// exist yet), then one apply of the stored configuration. Returns the state and, when the admin
/// user was created with a generated password, that password (to print once).
pub fn open(
    cfg: MgmtConfig,
    topology: Arc<dyn Topology>,
    admin_password: Option<String>,
) -> MgmtResult<(Arc<MgmtState>, Option<String>)> {
    let store = Arc::new(Store::open(&cfg.data_dir)?);
    let st = Arc::new_cyclic(|this| MgmtState {
        store,
        cfg,
        auth: AuthCache::default(),
        extensions: Default::default(),
        builtins: Builtins {
            routes: objects::ROUTES,
            kinds: objects::REGISTRY,
            login: objects::tokens::login,
            coordinated: objects::transaction::enqueue,
            reapply: apply::reapply,
        },
        this: this.clone(),
    });
    st.attach(Arc::new(PlaneState::new(topology)));
    asm::install(&st);
    hash_stored_tokens(&st)?;
    let generated = seed::first_start(&st, admin_password)?;
    as3::install(&st);
    st.reapply();
    Ok((st, generated))
}

/// Drives the router with one request made from arbitrary bytes (the fuzz target): the first
/// line is `METHOD PATH`, the second an optional `Authorization` value, the rest the body.
#[cfg(any(test, fuzzing))]
pub fn fuzz_request(st: &MgmtState, data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.splitn(3, '\n');
    let first = lines.next().unwrap_or_default();
    let auth = lines.next().unwrap_or_default();
    let body = lines.next().unwrap_or_default();
    let (method, path) = first.split_once(' ').unwrap_or(("GET", first));
    let Ok(method) = http::Method::from_bytes(method.as_bytes()) else {
        return;
    };
    let mut b = http::Request::builder().method(method).uri(path);
    if let Ok(v) = http::HeaderValue::from_str(auth.trim()) {
        b = b.header(http::header::AUTHORIZATION, v);
    }
    let Ok(req) = b.body(()) else { return };
    let (parts, ()) = req.into_parts();
    let _ = portcullis_admin::dispatch(st, &parts, body.as_bytes(), "127.0.0.1");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn router_survives_fuzz_seeds() {
        let dir = tempfile::tempdir().expect("tmp");
        let cfg = MgmtConfig {
            data_dir: dir.path().to_path_buf(),
            ..Default::default()
        };
        let (st, _) =
            open(cfg, Arc::new(apply::DetachedTopology), Some("pw".into())).expect("open");
        let seeds =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/mgmt_router");
        let mut n = 0;
        for e in std::fs::read_dir(&seeds).expect("seeds").flatten() {
            fuzz_request(&st, &std::fs::read(e.path()).expect("seed"));
            n += 1;
        }
        assert!(n >= 5, "seed corpus present");
    }
}
