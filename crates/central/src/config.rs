//! The central manager's copies of imported objects, per module:
//! - `working-config`: the central copy, the one users edit (PATCH/PUT) and deploy tasks push;
//! - `current-config`: the device's configuration as the last import read it.
//!
//! Both are served at `/mgmt/cm/<module>/<area>[/<type path>][/<id>]` (for example
//! `/mgmt/cm/adc-core/working-config/ltm/pool/<id>`), with `$filter` (e.g.
//! `deviceReference/link eq '*<machineId>*'`). An object has the same `id` in both areas:
//! a deterministic UUID of (machine id, device path), stable across re-imports.
//! Stored in the `Objects` table under `cm-config/<module>/<area>/<id>`.

use http::{Method, StatusCode};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::modules::{self, Found, Module};
use portcullis_admin::Ctx;
use portcullis_admin::Reply;
use portcullis_admin::parse_object;
use portcullis_admin::{MgmtError, MgmtResult};
use portcullis_store::{Store, Table, WriteTx};
use portcullis_support::now_micros;

pub const WORKING: &str = "working-config";
pub const CURRENT: &str = "current-config";

/// Identity keys a PATCH/PUT of a central copy cannot change.
const IDENTITY: &[&str] = &["kind", "name", "partition", "subPath", "fullPath"];

/// The id of an object of a device: a UUID-shaped SHA-256 of machine id and device path.
pub fn object_id(machine_id: &str, device_path: &str) -> String {
    let d = Sha256::digest(format!("{machine_id}|{device_path}").as_bytes());
    let h: String = d.iter().take(16).map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

fn key(m: &Module, area: &str, id: &str) -> String {
    format!("cm-config/{}/{area}/{id}", m.cm)
}

/// One stored copy.
pub fn record(machine_id: &str, f: &Found) -> Value {
    json!({
        "id": object_id(machine_id, &f.device_path),
        "machineId": machine_id,
        "devicePath": f.device_path,
        "collection": f.collection,
        "parent": f.parent,
        "object": f.object,
        "lastUpdateMicros": now_micros(),
    })
}

/// Every stored copy of `area` for module `m` (all devices when `machine_id` is None).
pub fn list(
    store: &Store,
    m: &Module,
    area: &str,
    machine_id: Option<&str>,
) -> MgmtResult<Vec<Value>> {
    Ok(store
        .list(Table::Objects, &format!("cm-config/{}/{area}/", m.cm))?
        .into_iter()
        .map(|(_, v)| v)
        .filter(|v| machine_id.is_none_or(|id| v["machineId"] == id))
        .collect())
}

pub fn get(store: &Store, m: &Module, area: &str, id: &str) -> MgmtResult<Option<Value>> {
    Ok(store.get(Table::Objects, &key(m, area, id))?)
}

pub fn put(tx: &mut WriteTx<'_>, m: &Module, area: &str, rec: &Value) -> MgmtResult<()> {
    let id = rec["id"].as_str().unwrap_or_default();
    tx.put(Table::Objects, &key(m, area, id), rec)?;
    Ok(())
}

pub fn remove(tx: &mut WriteTx<'_>, m: &Module, area: &str, id: &str) -> MgmtResult<()> {
    tx.delete(Table::Objects, &key(m, area, id))?;
    Ok(())
}

/// The REST view of a stored copy.
pub fn view(m: &Module, area: &str, rec: &Value) -> Value {
    let coll = rec["collection"].as_str().unwrap_or_default();
    let tail = coll.trim_start_matches("/mgmt/tm/");
    let last = tail.rsplit('/').next().unwrap_or_default();
    let id = rec["id"].as_str().unwrap_or_default();
    let mut v = match &rec["object"] {
        Value::Object(o) => o.clone(),
        _ => Map::new(),
    };
    v.insert("id".into(), json!(id));
    v.insert(
        "kind".into(),
        json!(format!(
            "cm:{}:{area}:{}:{last}state",
            m.cm,
            tail.replace('/', ":")
        )),
    );
    if let Some(k) = rec["object"].get("kind") {
        v.insert("deviceKind".into(), k.clone());
    }
    v.insert("devicePath".into(), rec["devicePath"].clone());
    v.insert(
        "deviceReference".into(),
        json!({"link": format!("https://localhost/mgmt/cm/system/machineid-resolver/{}", rec["machineId"].as_str().unwrap_or_default())}),
    );
    if let Some(p) = rec["parent"].as_str() {
        v.insert(
            "parentReference".into(),
            json!({"link": link(m, area, &object_id(rec["machineId"].as_str().unwrap_or_default(), p), coll.rsplit_once('/').map(|x| x.0).unwrap_or(coll))}),
        );
    }
    v.insert("lastUpdateMicros".into(), rec["lastUpdateMicros"].clone());
    v.insert("selfLink".into(), json!(link(m, area, id, coll)));
    Value::Object(v)
}

/// `https://localhost/mgmt/cm/<module>/<area>/<type path>/<id>`.
pub fn link(m: &Module, area: &str, id: &str, collection: &str) -> String {
    format!(
        "https://localhost/mgmt/cm/{}/{area}/{}/{id}",
        m.cm,
        collection.trim_start_matches("/mgmt/tm/")
    )
}

/// `/mgmt/cm/<module>/{working,current}-config...`.
pub fn handle(ctx: &Ctx<'_>, body: &[u8]) -> MgmtResult<Reply> {
    let m = modules::by_cm_path(&format!("{}/", ctx.path))
        .ok_or_else(|| MgmtError::no_such_uri(&ctx.path))?;
    let after = &ctx.path[format!("/mgmt/cm/{}/", m.cm).len()..];
    let (area, rest) = after.split_once('/').unwrap_or((after, ""));
    let area = if area == WORKING { WORKING } else { CURRENT };
    let segs: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
    let st = &ctx.st.store;
    let item = match segs.last() {
        Some(id) => get(st, m, area, id)?,
        None => None,
    };
    let Some(rec) = item else {
        if ctx.method != Method::GET {
            return Err(match segs.last() {
                Some(id) => MgmtError::new(
                    StatusCode::NOT_FOUND,
                    format!("Object {id} does not exist in the {area} of {}.", m.cm),
                ),
                None => MgmtError::method_not_allowed(ctx.method.as_str(), &ctx.path),
            });
        }
        let want = format!("/mgmt/tm/{}", segs.join("/"));
        let items: Vec<Value> = list(st, m, area, None)?
            .iter()
            .filter(|r| segs.is_empty() || r["collection"] == want.as_str())
            .map(|r| view(m, area, r))
            .collect();
        return Ok(Reply::json(json!({
            "kind": format!("cm:{}:{area}:collectionstate", m.cm),
            "selfLink": format!("https://localhost{}", ctx.path),
            "items": ctx.query.apply(items),
        })));
    };
    match ctx.method {
        Method::GET => Ok(Reply::json(ctx.query.project(view(m, area, &rec)))),
        Method::PATCH | Method::PUT if area == WORKING => {
            let b = parse_object(body)?;
            let out = ctx.st.store.write(|tx| {
                let Some(mut cur) = get_in(tx, m, area, rec["id"].as_str().unwrap_or_default())?
                else {
                    return Err(MgmtError::new(
                        StatusCode::NOT_FOUND,
                        "The object was removed.",
                    ));
                };
                let old = match &cur["object"] {
                    Value::Object(o) => o.clone(),
                    _ => Map::new(),
                };
                let mut obj = if ctx.method == Method::PATCH {
                    old.clone()
                } else {
                    old.iter()
                        .filter(|(k, _)| IDENTITY.contains(&k.as_str()))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect()
                };
                for (k, v) in b {
                    if !IDENTITY.contains(&k.as_str()) {
                        obj.insert(k, v);
                    }
                }
                cur["object"] = Value::Object(modules::normalize(&obj));
                cur["lastUpdateMicros"] = json!(now_micros());
                put(tx, m, area, &cur)?;
                Ok(cur)
            })?;
            Ok(Reply::json(view(m, area, &out)))
        }
        Method::DELETE if area == WORKING => {
            ctx.st
                .store
                .write(|tx| remove(tx, m, area, rec["id"].as_str().unwrap_or_default()))?;
            Ok(Reply::empty(StatusCode::OK))
        }
        _ => Err(MgmtError::method_not_allowed(
            ctx.method.as_str(),
            &ctx.path,
        )),
    }
}

fn get_in(tx: &WriteTx<'_>, m: &Module, area: &str, id: &str) -> MgmtResult<Option<Value>> {
    Ok(tx.get(Table::Objects, &key(m, area, id))?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_stable_and_distinct() {
        let a = object_id("m1", "/mgmt/tm/ltm/pool/~Common~p");
        assert_eq!(a, object_id("m1", "/mgmt/tm/ltm/pool/~Common~p"));
        assert_ne!(a, object_id("m2", "/mgmt/tm/ltm/pool/~Common~p"));
        assert_eq!(a.len(), 36);
        assert_eq!(
            link(&modules::ADC_CORE, WORKING, &a, "/mgmt/tm/ltm/pool"),
            format!("https://localhost/mgmt/cm/adc-core/working-config/ltm/pool/{a}")
        );
    }
}
