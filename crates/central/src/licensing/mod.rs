//! Licensing pools of the central manager: `/mgmt/cm/shared/licensing/pools`
//! (pools made from a base registration key) and `/pools/<uuid>/members` (one member per device
//! licensed from the pool). Granting a member really licenses the controller through its
//! `/mgmt/tm/sys/license`; revoking removes it there. Wire shapes follow the real system's
//! (`cm:shared:licensing:pools:*` kinds, `baseRegKey`, `deviceReference` or `deviceAddress` +
//! `username` + `password`); docs/licensing.md documents them.
//!
//! Map: [`pools`] (pool records and their handlers), [`members`] (member records and handlers),
//! [`revoke`] (DELETE of a member), [`grant`] (the calls to the controller, run on the central
//! manager's runtime).
//! Records live in the store's `Objects` table under `cm-license-pool/<uuid>` and
//! `cm-license-member/<pool uuid>/<member uuid>`.

mod grant;
mod members;
mod pools;
mod revoke;

use portcullis_admin::Reply;
use portcullis_admin::Role;
use portcullis_admin::{Ctx, MgmtState};
use portcullis_admin::{MgmtError, MgmtResult};
use portcullis_admin::{Route, segments};
use portcullis_support::is_uuid;

/// The collection path.
pub const POOLS: &str = "/mgmt/cm/shared/licensing/pools";

static ROUTES: &[Route] = &[Route {
    path: POOLS,
    prefix: true,
    handler: route,
}];

/// Registers the routes and resumes grants a previous run left in progress (managed devices are
/// licensed again; unmanaged ones fail, their credentials are never stored). Must run inside the
/// central manager's runtime, after `central::install` attached its state.
pub fn install(st: &MgmtState) -> MgmtResult<()> {
    st.extend(ROUTES, &[]);
    members::resume(st)
}

/// `pools`, `pools/<uuid>`, `pools/<uuid>/members`, `pools/<uuid>/members/<uuid>`.
fn route(ctx: &Ctx<'_>, body: &[u8]) -> MgmtResult<Reply> {
    let segs = segments(&ctx.path)?;
    let rest: Vec<&str> = segs.iter().skip(5).map(String::as_str).collect();
    for id in rest.iter().step_by(2) {
        if !is_uuid(id) {
            return Err(MgmtError::new(
                http::StatusCode::NOT_FOUND,
                format!("'{id}' is not a licensing pool or member id (a UUID)."),
            ));
        }
    }
    let write = !matches!(ctx.method, http::Method::GET | http::Method::HEAD);
    if write && ctx.user.role != Role::Admin {
        return Err(portcullis_admin::denied(
            &ctx.user.name,
            &ctx.method,
            &ctx.path,
            &ctx.peer,
        ));
    }
    match rest.as_slice() {
        [] => pools::collection(ctx, body),
        [pool] => pools::item(ctx, pool),
        [pool, "members"] => members::collection(ctx, pool, body),
        [pool, "members", member] => members::item(ctx, pool, member, body),
        _ => Err(MgmtError::no_such_uri(&ctx.path)),
    }
}
