//! `ltm pool` with its `members` sub-collection, and `ltm node`. Members are `addr:port`
//! (IPv6 `addr.port`); a pool may be created with inline `members`. A pool used by a virtual
//! server cannot be deleted.

use std::net::IpAddr;

use serde_json::{Map, Value, json};

use crate::PlaneState;
use portcullis_admin::MgmtState;
use portcullis_admin::commit;
use portcullis_admin::{Coll, KindSpec, PendingWrite, str_field};
use portcullis_admin::{MgmtError, MgmtResult};
use portcullis_admin::{ObjName, full_path_of};
use portcullis_store::{Table, WriteTx};

pub static POOL: KindSpec = KindSpec {
    path: "/mgmt/tm/ltm/pool",
    label: "Pool",
    subs: &[&MEMBERS],
    defaults: pool_defaults,
    prepare: prepare_pool,
    before_delete: pool_in_use,
    data_plane: true,
    ..KindSpec::BASE
};

pub static MEMBERS: KindSpec = KindSpec {
    path: "members",
    label: "Pool Member",
    defaults: member_defaults,
    prepare: prepare_member,
    decorate: member_state,
    data_plane: true,
    ..KindSpec::BASE
};

pub static NODE: KindSpec = KindSpec {
    path: "/mgmt/tm/ltm/node",
    label: "Node",
    defaults: node_defaults,
    prepare: prepare_node,
    ..KindSpec::BASE
};

fn pool_defaults() -> Value {
    json!({"allowNat": "yes", "allowSnat": "yes", "loadBalancingMode": "round-robin",
           "minActiveMembers": 0, "queueDepthLimit": 0, "reselectTries": 0,
           "serviceDownAction": "none", "slowRampTime": 10})
}

fn member_defaults() -> Value {
    json!({"connectionLimit": 0, "priorityGroup": 0, "ratio": 1, "session": "user-enabled",
           "state": "unchecked", "monitor": "default"})
}

fn node_defaults() -> Value {
    json!({"connectionLimit": 0, "monitor": "default", "ratio": 1, "session": "user-enabled", "state": "unchecked"})
}

/// `http` → `/Common/http`; `min 1 of { http tcp }` keeps its shape with full paths; `a and b`.
pub fn normalise_monitor(tx: &WriteTx<'_>, m: &str) -> MgmtResult<String> {
    let mut out = Vec::new();
    for tok in m.split_whitespace() {
        let keep = matches!(tok, "and" | "of" | "{" | "}" | "min") || tok.parse::<u32>().is_ok();
        if keep {
            out.push(tok.to_string());
            continue;
        }
        let full_path = full_path_of(tok)?;
        if !super::profile::monitor_exists(tx, &full_path)? {
            return Err(MgmtError::bad_request(format!(
                "01020036:3: The requested monitor ({full_path}) was not found."
            )));
        }
        out.push(full_path);
    }
    Ok(out.join(" "))
}

fn prepare_pool(p: &mut PendingWrite<'_, '_>) -> MgmtResult<()> {
    if let Some(m) = str_field(p.obj, "monitor")?.map(str::to_string) {
        let norm = normalise_monitor(p.tx, &m)?;
        p.obj.insert("monitor".into(), json!(norm));
    }
    if let Some(mode) = str_field(p.obj, "loadBalancingMode")?
        && !matches!(
            mode,
            "round-robin"
                | "least-connections-member"
                | "ratio-member"
                | "predictive-member"
                | "observed-member"
        )
    {
        return Err(MgmtError::bad_request(format!(
            "Unsupported loadBalancingMode '{mode}'."
        )));
    }
    if let Some(members) = p.obj.remove("members") {
        let Value::Array(list) = members else {
            return Err(MgmtError::bad_request("members must be an array."));
        };
        for k in p.tx.keys(Table::Objects, &format!("{}/members/", p.key))? {
            p.tx.delete(Table::Objects, &k)?;
        }
        let coll = Coll {
            spec: &MEMBERS,
            path: format!("{}/members", p.key),
            kind_base: "tm:ltm:pool:members".into(),
            parent: None,
        };
        for m in list {
            let mut attrs = match m {
                Value::Object(o) => o,
                Value::String(s) => Map::from_iter([("name".to_string(), json!(s))]),
                _ => {
                    return Err(MgmtError::bad_request(
                        "each member must be an object or a name.",
                    ));
                }
            };
            let name = str_field(&attrs, "name")?.ok_or_else(|| {
                MgmtError::bad_request("each member needs a name (address:port).")
            })?;
            let n = ObjName::from_body(name, str_field(&attrs, "partition")?, None)?;
            let mut merged = match member_defaults() {
                Value::Object(d) => d,
                _ => Map::new(),
            };
            attrs.retain(|k, _| {
                !matches!(k.as_str(), "kind" | "selfLink" | "generation" | "fullPath")
            });
            merged.extend(attrs);
            let key = coll.key(&n);
            commit(p.st, p.tx, &coll, &n, &key, merged, true, p.user)?;
        }
    }
    Ok(())
}

/// Splits `10.0.0.1:80`, `2001:db8::1.80`, `node:80` into (address-or-node, port).
pub fn split_member(name: &str) -> MgmtResult<(String, u16)> {
    let bad = || {
        MgmtError::bad_request(format!(
            "01070587:3: The requested pool member ({name}) must be address:port."
        ))
    };
    let colons = name.matches(':').count();
    let (addr, port) = if colons > 1 {
        name.rsplit_once('.')
    } else {
        name.rsplit_once(':')
    }
    .ok_or_else(bad)?;
    let port: u16 = port.parse().map_err(|_| bad())?;
    if addr.is_empty() {
        return Err(bad());
    }
    Ok((addr.to_string(), port))
}

fn prepare_member(p: &mut PendingWrite<'_, '_>) -> MgmtResult<()> {
    let (addr, _) = split_member(&p.name.name)?;
    let address = match str_field(p.obj, "address")? {
        Some(a) => a.to_string(),
        None => addr.clone(),
    };
    let ip = address.split('%').next().unwrap_or_default();
    if ip.parse::<IpAddr>().is_err() {
        // A node name: it must exist, and its address is used.
        let full_path = format!("/{}/{}", p.name.partition, addr);
        let node = p.tx.get(
            Table::Objects,
            &format!("/mgmt/tm/ltm/node/{}", full_path.replace('/', "~")),
        )?;
        let a = node
            .as_ref()
            .and_then(|n| n["address"].as_str())
            .ok_or_else(|| {
                MgmtError::bad_request(format!(
                    "01020036:3: The requested node ({full_path}) was not found."
                ))
            })?;
        p.obj.insert("address".into(), json!(a));
    } else {
        p.obj.insert("address".into(), json!(address));
    }
    if let Some(m) = str_field(p.obj, "monitor")?.map(str::to_string)
        && m != "default"
    {
        let norm = normalise_monitor(p.tx, &m)?;
        p.obj.insert("monitor".into(), json!(norm));
    }
    for (k, allowed) in [
        (
            "session",
            &["user-enabled", "user-disabled", "monitor-enabled"][..],
        ),
        (
            "state",
            &[
                "user-up",
                "user-down",
                "unchecked",
                "up",
                "down",
                "checking",
            ][..],
        ),
    ] {
        if let Some(v) = str_field(p.obj, k)?
            && !allowed.contains(&v)
        {
            return Err(MgmtError::bad_request(format!(
                "Invalid value '{v}' for {k}."
            )));
        }
    }
    Ok(())
}

/// Shows the monitors' verdict: `state` `up`/`down` (with `monitorStatus`) unless forced by the user.
fn member_state(st: &MgmtState, obj: &mut Map<String, Value>) {
    let Some(key) = obj
        .get("selfLink")
        .and_then(Value::as_str)
        .and_then(|l| l.strip_prefix("https://localhost"))
        .map(|l| l.split('?').next().unwrap_or_default().to_string())
    else {
        return;
    };
    if obj.get("state").and_then(Value::as_str) == Some("user-down") {
        return;
    }
    let plane = PlaneState::of(st);
    if let Some(reason) = plane.member_down.read().get(&key) {
        obj.insert("state".into(), json!("down"));
        obj.insert("monitorStatus".into(), json!(reason));
    } else if plane.member_up.read().contains(&key) {
        obj.insert("state".into(), json!("up"));
        obj.insert("monitorStatus".into(), json!("up"));
    }
}

fn prepare_node(p: &mut PendingWrite<'_, '_>) -> MgmtResult<()> {
    let address = str_field(p.obj, "address")?.ok_or_else(|| {
        MgmtError::bad_request("01070734:3: Configuration error: a node requires an address.")
    })?;
    if address
        .split('%')
        .next()
        .unwrap_or_default()
        .parse::<IpAddr>()
        .is_err()
    {
        return Err(MgmtError::bad_request(format!(
            "01070734:3: Configuration error: invalid IP address: {address}"
        )));
    }
    Ok(())
}

fn pool_in_use(_: &MgmtState, tx: &WriteTx<'_>, n: &ObjName) -> MgmtResult<()> {
    let full_path = n.full_path();
    for k in tx.keys(Table::Objects, "/mgmt/tm/ltm/virtual/")? {
        if k["/mgmt/tm/ltm/virtual/".len()..].contains('/') {
            continue;
        }
        if let Some(v) = tx.get(Table::Objects, &k)?
            && v["pool"].as_str() == Some(full_path.as_str())
        {
            return Err(MgmtError::bad_request(format!(
                "01070265:3: The Pool ({full_path}) cannot be deleted because it is in use by a Virtual Server ({}).",
                v["fullPath"].as_str().unwrap_or_default()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_split() {
        assert_eq!(
            split_member("10.0.0.1:80").unwrap(),
            ("10.0.0.1".into(), 80)
        );
        assert_eq!(
            split_member("2001:db8::1.443").unwrap(),
            ("2001:db8::1".into(), 443)
        );
        assert!(split_member("10.0.0.1").is_err());
        assert!(split_member("10.0.0.1:99999").is_err());
    }
}
