//! `GET /mgmt`: where to start. The address the demo banner and the README give answers with
//! the main collections of the API, the product and version, and who is asking.

use http::Method;
use serde_json::{Value, json};

use portcullis_admin::Ctx;
use portcullis_admin::Reply;
use portcullis_admin::{MgmtError, MgmtResult};

/// The collections listed, with what each holds.
const ENTRIES: &[(&str, &str)] = &[
    (
        "/mgmt/tm/ltm/virtual",
        "virtual servers: the listeners of the data plane",
    ),
    ("/mgmt/tm/ltm/pool", "pools of upstream members"),
    (
        "/mgmt/tm/asm/policies",
        "security policies, attached to virtual servers",
    ),
    (
        "/mgmt/tm/asm/events/requests",
        "blocked and alarmed requests, by support id",
    ),
    (
        "/mgmt/shared/appsvcs/declare",
        "application services: one declaration per tenant",
    ),
    (
        "/mgmt/tm/sys",
        "system: version, provisioning, license, files",
    ),
    ("/mgmt/tm/auth/user", "local users and their roles"),
    ("/mgmt/shared/authn/login", "POST credentials for a token"),
];

pub fn handle(ctx: &Ctx<'_>, _body: &[u8]) -> MgmtResult<Reply> {
    if ctx.method != Method::GET {
        return Err(MgmtError::method_not_allowed(
            ctx.method.as_str(),
            &ctx.path,
        ));
    }
    let items: Vec<Value> = ENTRIES
        .iter()
        .map(|(path, what)| {
            json!({"name": path.trim_start_matches("/mgmt/"), "description": what,
                   "reference": {"link": ctx.st.link(path)}})
        })
        .collect();
    Ok(Reply::json(json!({
        "kind": "mgmt:index",
        "selfLink": ctx.st.link("/mgmt"),
        "product": ctx.st.cfg.product,
        "version": ctx.st.cfg.version,
        "user": {"name": ctx.user.name, "role": ctx.user.role.as_str()},
        "items": items,
    })))
}
