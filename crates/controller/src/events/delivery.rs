//! `GET /mgmt/tm/security/log/destinations`: every remote destination of the security log
//! profiles in use (syslog server, JSON-lines collector, Splunk HEC endpoint, file), with what its
//! queue holds and its counters since the controller started: records delivered, and records
//! dropped (the oldest, when the receiver was slow or dead and the queue full, or refused for good
//! by a HEC endpoint). How an operator sees that a SIEM is missing events.

use serde_json::{Value, json};

use super::route::Routing;
use portcullis_admin::Ctx;
use portcullis_admin::Reply;
use portcullis_admin::{MgmtError, MgmtResult};

pub const PATH: &str = "/mgmt/tm/security/log/destinations";
const KIND: &str = "tm:security:log:destinations:destinationstate";
const COLLECTION_KIND: &str = "tm:security:log:destinations:destinationcollectionstate";

pub fn handle(ctx: &Ctx<'_>, _body: &[u8]) -> MgmtResult<Reply> {
    ctx.only_get()?;
    if ctx.path != PATH {
        return Err(MgmtError::no_such_uri(&ctx.path));
    }
    let table = ctx.st.attached::<Routing>().map(|r| r.current());
    let mut items: Vec<Value> = table
        .iter()
        .flat_map(|t| t.destinations())
        .flat_map(|d| {
            d.outputs().iter().map(|o| {
                json!({
                    "kind": KIND,
                    "profile": d.profile(),
                    "application": d.name(),
                    "destination": o.label(),
                    "queued": o.queued(),
                    "delivered": o.delivered(),
                    "dropped": o.dropped(),
                })
            })
        })
        .collect();
    items.sort_by(|a, b| {
        let key = |v: &Value| {
            ["profile", "application", "destination"]
                .map(|k| v[k].as_str().unwrap_or("").to_string())
        };
        key(a).cmp(&key(b))
    });
    Ok(Reply::json(json!({
        "kind": COLLECTION_KIND,
        "selfLink": ctx.st.link(PATH),
        "items": ctx.query.apply(items),
    })))
}
