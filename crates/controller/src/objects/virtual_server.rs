//! `ltm virtual` (destination normalised to `/Common/ip:port`, `pool`, `rules`, `metadata`
//! replaced as a whole by PATCH, the `profiles` sub-collection with contexts and the rule
//! the real system enforces: exactly one server-side transport profile) and `ltm virtual-address`.
//! The virtual's listener state from the last apply appears in `status`.

use std::net::IpAddr;

use serde_json::{Map, Value, json};

use super::profile::profile_type;
use crate::PlaneState;
use portcullis_admin::MgmtState;
use portcullis_admin::commit;
use portcullis_admin::{Coll, KindSpec, PendingWrite, str_field};
use portcullis_admin::{MgmtError, MgmtResult};
use portcullis_admin::{ObjName, full_path_of};
use portcullis_store::Table;

pub static VIRTUAL: KindSpec = KindSpec {
    path: "/mgmt/tm/ltm/virtual",
    label: "Virtual Server",
    subs: &[&PROFILES],
    defaults: virtual_defaults,
    prepare: prepare_virtual,
    decorate: decorate_virtual,
    data_plane: true,
    ..KindSpec::BASE
};

pub static PROFILES: KindSpec = KindSpec {
    path: "profiles",
    label: "Profile",
    prepare: prepare_profile_ref,
    data_plane: true,
    ..KindSpec::BASE
};

pub static VIRTUAL_ADDRESS: KindSpec = KindSpec {
    path: "/mgmt/tm/ltm/virtual-address",
    label: "Virtual Address",
    prepare: prepare_vaddr,
    ..KindSpec::BASE
};

fn virtual_defaults() -> Value {
    json!({"addressStatus": "yes", "autoLasthop": "default", "connectionLimit": 0, "enabled": true,
           "ipProtocol": "tcp", "mask": "255.255.255.255", "source": "0.0.0.0/0",
           "sourceAddressTranslation": {"type": "automap"}, "translateAddress": "enabled",
           "translatePort": "enabled", "vlansDisabled": true})
}

/// `10.1.1.1:80`, `/Common/10.1.1.1:80`, `10.1.1.1%2:80`, `2001:db8::1.443` → `/P/addr:port`
/// (`/P/addr.port` for IPv6), with the address and port checked.
pub fn normalise_destination(dest: &str, default_partition: &str) -> MgmtResult<String> {
    let bad = || {
        MgmtError::bad_request(format!(
            "01070734:3: Configuration error: invalid destination '{dest}' (expected address:port)."
        ))
    };
    let (partition, rest) = match dest.strip_prefix('/') {
        Some(r) => r.split_once('/').ok_or_else(bad)?,
        None => (default_partition, dest),
    };
    portcullis_admin::check_name(partition).map_err(|_| bad())?;
    let v6 = rest.matches(':').count() > 1;
    let (addr, port) = if v6 {
        rest.rsplit_once('.')
    } else {
        rest.rsplit_once(':')
    }
    .ok_or_else(bad)?;
    let port: u16 = if port == "any" {
        0
    } else {
        port.parse().map_err(|_| bad())?
    };
    let (ip, rd) = match addr.split_once('%') {
        Some((ip, rd)) => (ip, Some(rd.parse::<u16>().map_err(|_| bad())?)),
        None => (addr, None),
    };
    let ip: IpAddr = if ip == "any" {
        IpAddr::from([0, 0, 0, 0])
    } else {
        ip.parse().map_err(|_| bad())?
    };
    let rd = rd.map(|r| format!("%{r}")).unwrap_or_default();
    Ok(if ip.is_ipv6() {
        format!("/{partition}/{ip}{rd}.{port}")
    } else {
        format!("/{partition}/{ip}{rd}:{port}")
    })
}

/// Parses `profiles` / `profilesReference.items` into (fullPath, context) pairs.
fn profile_list(v: &Value) -> MgmtResult<Vec<(String, String)>> {
    let items = match v {
        Value::Array(a) => a.clone(),
        Value::Object(o) => o
            .get("items")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        _ => return Err(MgmtError::bad_request("profiles must be an array.")),
    };
    let mut out = Vec::new();
    for it in items {
        let (name, ctx) = match &it {
            Value::String(s) => (s.clone(), "all".to_string()),
            Value::Object(m) => (
                str_field(m, "name")?
                    .ok_or_else(|| MgmtError::bad_request("each profile needs a name."))?
                    .to_string(),
                str_field(m, "context")?.unwrap_or("all").to_string(),
            ),
            _ => {
                return Err(MgmtError::bad_request(
                    "each profile must be a name or an object.",
                ));
            }
        };
        if !matches!(ctx.as_str(), "all" | "clientside" | "serverside") {
            return Err(MgmtError::bad_request(format!(
                "Invalid profile context '{ctx}' (all, clientside or serverside)."
            )));
        }
        out.push((full_path_of(&name)?, ctx));
    }
    Ok(out)
}

fn prepare_virtual(p: &mut PendingWrite<'_, '_>) -> MgmtResult<()> {
    let dest = str_field(p.obj, "destination")?.ok_or_else(|| {
        MgmtError::bad_request(
            "01070734:3: Configuration error: a virtual server requires a destination.",
        )
    })?;
    let norm = normalise_destination(dest, &p.name.partition)?;
    p.obj.insert("destination".into(), json!(norm));
    match str_field(p.obj, "pool")?.map(str::to_string) {
        Some(pool) if !pool.is_empty() && pool != "none" => {
            let full_path = full_path_of(&pool)?;
            if p.tx
                .get(
                    Table::Objects,
                    &format!("/mgmt/tm/ltm/pool/{}", full_path.replace('/', "~")),
                )?
                .is_none()
            {
                return Err(MgmtError::bad_request(format!(
                    "01070226:3: Pool {full_path} does not exist."
                )));
            }
            p.obj.insert("pool".into(), json!(full_path));
        }
        _ => {
            p.obj.remove("pool");
        }
    }
    if let Some(rules) = p.obj.get("rules").cloned() {
        let Value::Array(rules) = rules else {
            return Err(MgmtError::bad_request(
                "rules must be an array of rule names.",
            ));
        };
        let mut out = Vec::new();
        for r in rules {
            let name = r
                .as_str()
                .ok_or_else(|| MgmtError::bad_request("rules must be an array of rule names."))?;
            let full_path = full_path_of(name)?;
            if p.tx
                .get(
                    Table::Objects,
                    &format!("/mgmt/tm/ltm/rule/{}", full_path.replace('/', "~")),
                )?
                .is_none()
            {
                return Err(MgmtError::bad_request(format!(
                    "01070151:3: Rule object {full_path} not found."
                )));
            }
            out.push(json!(full_path));
        }
        p.obj.insert("rules".into(), Value::Array(out));
    }
    if let Some(md) = p.obj.get("metadata") {
        let ok = md.as_array().is_some_and(|a| {
            a.iter()
                .all(|m| m.get("name").and_then(Value::as_str).is_some())
        });
        if !ok {
            return Err(MgmtError::bad_request(
                "metadata must be an array of {name, value, persist}.",
            ));
        }
    }
    super::security_log::check_virtual_profiles(p)?;
    let given = p
        .obj
        .remove("profiles")
        .or_else(|| p.obj.remove("profilesReference"));
    let prof_path = format!("{}/profiles", p.key);
    let list = match given {
        Some(v) => Some(profile_list(&v)?),
        None if p.created => Some(vec![("/Common/tcp".to_string(), "all".to_string())]),
        None => None,
    };
    let effective: Vec<(String, String)> = match &list {
        Some(l) => l.clone(),
        None => {
            p.tx.keys(Table::Objects, &format!("{prof_path}/"))?
                .iter()
                .filter_map(|k| p.tx.get(Table::Objects, k).ok().flatten())
                .map(|v| {
                    (
                        v["fullPath"].as_str().unwrap_or_default().to_string(),
                        v["context"].as_str().unwrap_or("all").to_string(),
                    )
                })
                .collect()
        }
    };
    let vs = p.name.full_path();
    let mut server_transport = 0;
    let mut client_transport = 0;
    for (full_path, ctx) in &effective {
        let t = profile_type(p.tx, full_path)?.ok_or_else(|| {
            MgmtError::bad_request(format!(
                "01020036:3: The requested profile ({full_path}) was not found."
            ))
        })?;
        if matches!(t, "tcp" | "udp") {
            if ctx != "clientside" {
                server_transport += 1;
            }
            if ctx != "serverside" {
                client_transport += 1;
            }
        }
    }
    if server_transport != 1 || client_transport != 1 {
        return Err(MgmtError::bad_request(format!(
            "01070097:3: Virtual server {vs} must have exactly one serverside UDP, TCP or SCTP profile (and exactly one clientside)."
        )));
    }
    if let Some(l) = list {
        for k in p.tx.keys(Table::Objects, &format!("{prof_path}/"))? {
            p.tx.delete(Table::Objects, &k)?;
        }
        let coll = Coll {
            spec: &PROFILES,
            path: prof_path,
            kind_base: "tm:ltm:virtual:profiles".into(),
            parent: None,
        };
        for (full_path, ctx) in l {
            let n = ObjName::from_body(&full_path, None, None)?;
            let attrs = Map::from_iter([("context".to_string(), json!(ctx))]);
            let key = coll.key(&n);
            commit(p.st, p.tx, &coll, &n, &key, attrs, true, p.user)?;
        }
    }
    Ok(())
}

fn prepare_profile_ref(p: &mut PendingWrite<'_, '_>) -> MgmtResult<()> {
    let ctx = str_field(p.obj, "context")?.unwrap_or("all").to_string();
    if !matches!(ctx.as_str(), "all" | "clientside" | "serverside") {
        return Err(MgmtError::bad_request(format!(
            "Invalid profile context '{ctx}'."
        )));
    }
    let full_path = p.name.full_path();
    if profile_type(p.tx, &full_path)?.is_none() {
        return Err(MgmtError::bad_request(format!(
            "01020036:3: The requested profile ({full_path}) was not found."
        )));
    }
    p.obj.insert("context".into(), json!(ctx));
    Ok(())
}

fn prepare_vaddr(p: &mut PendingWrite<'_, '_>) -> MgmtResult<()> {
    let a = str_field(p.obj, "address")?
        .unwrap_or(&p.name.name)
        .to_string();
    if a.split('%')
        .next()
        .unwrap_or_default()
        .parse::<IpAddr>()
        .is_err()
    {
        return Err(MgmtError::bad_request(format!(
            "01070734:3: Configuration error: invalid IP address: {a}"
        )));
    }
    p.obj.insert("address".into(), json!(a));
    Ok(())
}

fn decorate_virtual(st: &MgmtState, obj: &mut Map<String, Value>) {
    if let Some(pool) = obj.get("pool").and_then(Value::as_str) {
        let link = st.link(&format!("/mgmt/tm/ltm/pool/{}", pool.replace('/', "~")));
        obj.insert("poolReference".into(), json!({"link": link}));
    }
    let full_path = obj
        .get("fullPath")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let disabled = obj
        .get("disabled")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let status = match PlaneState::of(st).listener_errors.read().get(&full_path) {
        _ if disabled => {
            json!({"availabilityState": "unknown", "enabledState": "disabled", "statusReason": "The virtual server is disabled"})
        }
        Some(e) => {
            json!({"availabilityState": "offline", "enabledState": "enabled", "statusReason": e})
        }
        None => {
            json!({"availabilityState": "available", "enabledState": "enabled", "statusReason": "The virtual server is available"})
        }
    };
    obj.insert("status".into(), status);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn destinations_normalise() {
        assert_eq!(
            normalise_destination("10.1.1.1:80", "Common").unwrap(),
            "/Common/10.1.1.1:80"
        );
        assert_eq!(
            normalise_destination("/DMZ/10.1.1.1%6:443", "Common").unwrap(),
            "/DMZ/10.1.1.1%6:443"
        );
        assert_eq!(
            normalise_destination("2001:db8::1.443", "Common").unwrap(),
            "/Common/2001:db8::1.443"
        );
        for bad in [
            "10.1.1.1",
            "10.1.1.300:80",
            "x:80",
            "10.0.0.1:70000",
            "/Common/../x:1",
        ] {
            assert!(normalise_destination(bad, "Common").is_err(), "{bad}");
        }
    }
}
