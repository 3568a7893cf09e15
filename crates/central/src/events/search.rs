//! The fleet search, `GET /mgmt/cm/asm/events/requests` (criteria as query parameters, newest
//! first, `$top`/`$skip`/`$select`, `totalItems`), one event by support id
//! (`/mgmt/cm/asm/events/requests/<supportId>`), and how collection goes
//! (`/mgmt/cm/asm/events/collection`). See docs/central.md.

use http::StatusCode;
use serde_json::{Value, json};

use super::{FleetEvents, Search};
use crate::devices;
use portcullis_admin::Ctx;
use portcullis_admin::Reply;
use portcullis_admin::Route;
use portcullis_admin::{MgmtError, MgmtResult};
use portcullis_support::{Cidr, iso8601_utc, parse_iso8601_utc};

pub const PATH: &str = "/mgmt/cm/asm/events/requests";
pub const STATUS_PATH: &str = "/mgmt/cm/asm/events/collection";
const KIND: &str = "cm:asm:events:requests:requeststate";
const COLLECTION_KIND: &str = "cm:asm:events:requests:requestcollectionstate";
/// Items of one answer by default, and at most.
const DEFAULT_TOP: usize = 100;
const MAX_TOP: usize = 1000;

pub static ROUTES: &[Route] = &[
    Route {
        path: PATH,
        prefix: true,
        handler: handle,
    },
    Route {
        path: STATUS_PATH,
        prefix: false,
        handler: status,
    },
];

fn bad(what: &str, v: &str, want: &str) -> MgmtError {
    MgmtError::bad_request(format!(
        "Query parameter {what} '{v}' is not valid: {want}."
    ))
}

/// Microseconds since the epoch of `v`: a number of microseconds or `YYYY-MM-DDThh:mm:ssZ`.
pub fn instant(what: &str, v: &str) -> MgmtResult<u64> {
    v.parse::<u64>()
        .ok()
        .or_else(|| parse_iso8601_utc(v).map(|s| s * 1_000_000))
        .ok_or_else(|| {
            bad(
                what,
                v,
                "microseconds since the epoch or YYYY-MM-DDThh:mm:ssZ",
            )
        })
}

/// The search the query parameters ask for; `device` is resolved against the trusted devices
/// (machine id, host name, address or `address:port`).
pub fn parse(ctx: &Ctx<'_>) -> MgmtResult<Search> {
    let mut q = Search {
        top: ctx.query.top.unwrap_or(DEFAULT_TOP).min(MAX_TOP),
        skip: ctx.query.skip,
        ..Search::default()
    };
    for (k, v) in &ctx.query.other {
        let v = v.trim();
        match k.as_str() {
            "supportId" => q.support_id = Some(v.to_string()),
            "device" => {
                let c = crate::state(ctx.st)?;
                let ids = devices::list(&c.store)?
                    .into_iter()
                    .filter(|d| {
                        d.machine_id == v || d.hostname == v || d.address == v || d.endpoint() == v
                    })
                    .map(|d| d.machine_id)
                    .collect();
                q.devices = Some(ids);
            }
            "policy" => q.policy = Some(v.to_string()),
            "violation" => q.violation = Some(v.to_string()),
            "signature" => {
                q.signature = Some(
                    v.parse()
                        .map_err(|_| bad(k, v, "a signature id (a number)"))?,
                )
            }
            "clientIp" => {
                let block = v.parse::<Cidr>();
                q.client = Some(block.map_err(|_| bad(k, v, "an IP address or a CIDR block"))?)
            }
            "since" => q.since_micros = Some(instant(k, v)?),
            "until" => q.until_micros = Some(instant(k, v)?),
            "ver" | "$orderby" => {}
            other => {
                return Err(MgmtError::bad_request(format!(
                    "Unknown query parameter {other}: use supportId, device, policy, violation, signature, clientIp, since, until, $top, $skip, $select."
                )));
            }
        }
    }
    Ok(q)
}

fn fleet(ctx: &Ctx<'_>) -> MgmtResult<std::sync::Arc<FleetEvents>> {
    ctx.st.attached::<FleetEvents>().ok_or_else(|| {
        MgmtError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "The fleet event store is not running on this node.",
        )
    })
}

fn store_failed(e: super::EventStoreError) -> MgmtError {
    MgmtError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        format!("The fleet event store failed: {e}"),
    )
}

fn item(ctx: &Ctx<'_>, mut v: Value) -> Value {
    let id = v["supportId"].as_str().unwrap_or_default().to_string();
    v["kind"] = json!(KIND);
    v["selfLink"] = json!(ctx.st.link(&format!("{PATH}/{id}")));
    ctx.query.project(v)
}

/// `GET /mgmt/cm/asm/events/requests[/<supportId>]`.
pub fn handle(ctx: &Ctx<'_>, _body: &[u8]) -> MgmtResult<Reply> {
    ctx.only_get()?;
    let f = fleet(ctx)?;
    let rt = crate::state(ctx.st)?.rt.clone();
    let one = ctx
        .path
        .strip_prefix(PATH)
        .and_then(|r| r.strip_prefix('/'));
    let mut q = parse(ctx)?;
    if let Some(id) = one {
        q = Search {
            support_id: Some(id.to_string()),
            top: 1,
            ..Search::default()
        };
    }
    let found = rt.block_on(f.store.search(&q)).map_err(store_failed)?;
    if let Some(id) = one {
        return match found.items.into_iter().next() {
            Some(v) => Ok(Reply::json(item(ctx, v))),
            None => Err(MgmtError::not_found("Request", id)),
        };
    }
    Ok(Reply::json(json!({
        "kind": COLLECTION_KIND,
        "selfLink": ctx.st.link(PATH),
        "totalItems": found.total,
        "items": found.items.into_iter().map(|v| item(ctx, v)).collect::<Vec<_>>(),
    })))
}

/// `GET /mgmt/cm/asm/events/collection`: the store, its retention, and each device's collection.
pub fn status(ctx: &Ctx<'_>, _body: &[u8]) -> MgmtResult<Reply> {
    ctx.only_get()?;
    let f = fleet(ctx)?;
    let c = crate::state(ctx.st)?;
    let at = |micros: u64| (micros > 0).then(|| iso8601_utc(micros / 1_000_000));
    let items: Vec<Value> = devices::list(&c.store)?
        .iter()
        .map(|d| {
            let s = f.status.of(&d.machine_id);
            json!({
                "machineId": d.machine_id,
                "hostname": d.hostname,
                "address": d.endpoint(),
                "cursor": s.cursor,
                "collected": s.collected,
                "lastCollected": at(s.last_success_micros),
                "lastError": s.last_error,
                "lastErrorTime": at(s.last_error_micros),
            })
        })
        .collect();
    Ok(Reply::json(json!({
        "kind": "cm:asm:events:collection:collectionstate",
        "selfLink": ctx.st.link(STATUS_PATH),
        "store": f.store.kind(),
        "pollSeconds": f.cfg.poll_secs,
        "maxAgeSeconds": f.cfg.max_age_secs,
        "maxEvents": f.cfg.max_events,
        "items": items,
    })))
}
