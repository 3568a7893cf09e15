//! The fleet search, `GET /mgmt/cm/asm/events/requests` (criteria as query parameters, newest
//! first, `$top`/`$skip`/`$select`, `totalItems`), one event by support id
//! (`/mgmt/cm/asm/events/requests/<supportId>`), and how collection goes
//! (`/mgmt/cm/asm/events/collection`). See docs/central.md.

use std::net::IpAddr;

use http::StatusCode;
use serde_json::{Value, json};

use super::{FleetEvents, Search};
use crate::devices;
use portcullis_admin::Ctx;
use portcullis_admin::Reply;
use portcullis_admin::Route;
use portcullis_admin::{MgmtError, MgmtResult};
use portcullis_support::{iso8601_utc, parse_iso8601_utc};

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

/// An address block: an address and how many leading bits must match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cidr {
    pub addr: IpAddr,
    pub bits: u8,
}

impl Cidr {
    /// `192.0.2.7`, `10.0.0.0/8`, `2001:db8::/32`.
    pub fn parse(s: &str) -> Option<Cidr> {
        let (a, bits) = match s.split_once('/') {
            Some((a, b)) => (a, Some(b.parse::<u8>().ok()?)),
            None => (s, None),
        };
        let addr: IpAddr = a.parse().ok()?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let bits = bits.unwrap_or(max);
        (bits <= max).then_some(Cidr { addr, bits })
    }

    pub fn contains(&self, ip: &str) -> bool {
        let Ok(ip) = ip.parse::<IpAddr>() else {
            return false;
        };
        let (a, b, width) = match (self.addr, ip) {
            (IpAddr::V4(a), IpAddr::V4(b)) => {
                (u128::from(a.to_bits()), u128::from(b.to_bits()), 32)
            }
            (IpAddr::V6(a), IpAddr::V6(b)) => (a.to_bits(), b.to_bits(), 128),
            _ => return false,
        };
        let shift = width - u32::from(self.bits);
        shift >= width || (a >> shift) == (b >> shift)
    }
}

impl std::fmt::Display for Cidr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.addr, self.bits)
    }
}

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
                q.client =
                    Some(Cidr::parse(v).ok_or_else(|| bad(k, v, "an IP address or a CIDR block"))?)
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

fn store_failed(e: String) -> MgmtError {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn address_blocks() {
        let c = Cidr::parse("10.1.0.0/16").unwrap();
        assert!(c.contains("10.1.200.3") && !c.contains("10.2.0.1") && !c.contains("::1"));
        assert!(Cidr::parse("192.0.2.7").unwrap().contains("192.0.2.7"));
        assert!(!Cidr::parse("192.0.2.7").unwrap().contains("192.0.2.8"));
        assert!(Cidr::parse("0.0.0.0/0").unwrap().contains("203.0.113.9"));
        assert!(
            Cidr::parse("2001:db8::/32")
                .unwrap()
                .contains("2001:db8:1::5")
        );
        for bad in ["10.0.0.0/33", "host", "10.0.0.0/x", ""] {
            assert!(Cidr::parse(bad).is_none(), "{bad}");
        }
        assert_eq!(Cidr::parse("10.0.0.0/8").unwrap().to_string(), "10.0.0.0/8");
    }
}
