//! Pool members: `GET`/`POST .../pools/<uuid>/members`, `GET`/`DELETE .../members/<uuid>`.
//! POST records the member as `INSTALLING`, answers 202 at once, and licenses the device on the
//! central manager's runtime: `LICENSED` when the controller shows the key, `FAILED` with
//! `errorText` otherwise. DELETE is [`super::revoke`].
//! Unmanaged devices' credentials are used for the call and never stored.

use std::sync::Arc;

use http::{Method, StatusCode};
use serde_json::{Map, Value, json};

use super::grant::{self, Source, Target};
use super::{POOLS, pools};
use crate::{Central, devices};
use portcullis_admin::Reply;
use portcullis_admin::parse_object;
use portcullis_admin::{Ctx, MgmtState};
use portcullis_admin::{MgmtError, MgmtResult};
use portcullis_store::{Store, Table, WriteTx};
use portcullis_support::new_uuid;
use portcullis_support::now_micros;

const KIND: &str = "cm:shared:licensing:pools:licensepoolmemberstate";
const COLLECTION_KIND: &str = "cm:shared:licensing:pools:licensepoolmembercollectionstate";
/// Longest address, user name or password accepted for an unmanaged device.
const MAX_FIELD: usize = 1024;

pub fn prefix(pool: &str) -> String {
    format!("cm-license-member/{pool}/")
}

pub(super) fn key(pool: &str, member: &str) -> String {
    format!("{}{member}", prefix(pool))
}

/// Members holding or taking a seat.
pub(super) fn holds_seat(m: &Value) -> bool {
    matches!(m["state"].as_str(), Some("INSTALLING" | "LICENSED"))
}

/// Seats of `pool` taken (members installing or licensed).
pub fn seats_used(store: &Store, pool: &str) -> MgmtResult<u64> {
    Ok(store
        .list(Table::Objects, &prefix(pool))?
        .iter()
        .filter(|(_, m)| holds_seat(m))
        .count() as u64)
}

/// The members of `pool` inside a write transaction.
pub(super) fn members_tx(tx: &WriteTx<'_>, pool: &str) -> MgmtResult<Vec<Value>> {
    let mut out = Vec::new();
    for k in tx.keys(Table::Objects, &prefix(pool))? {
        out.extend(tx.get(Table::Objects, &k)?);
    }
    Ok(out)
}

pub(super) fn view(st: &MgmtState, pool: &str, mut m: Value) -> Value {
    let uuid = m["uuid"].as_str().unwrap_or_default().to_string();
    if let Some(o) = m.as_object_mut() {
        o.insert(
            "selfLink".into(),
            json!(st.link(&format!("{POOLS}/{pool}/members/{uuid}"))),
        );
    }
    m
}

pub(super) fn get(store: &Store, pool: &str, member: &str) -> MgmtResult<Value> {
    store
        .get(Table::Objects, &key(pool, member))?
        .ok_or_else(|| {
            MgmtError::new(
                StatusCode::NOT_FOUND,
                format!("Member {member} of licensing pool {pool} was not found."),
            )
        })
}

pub fn collection(ctx: &Ctx<'_>, pool: &str, body: &[u8]) -> MgmtResult<Reply> {
    let st = ctx.st;
    match ctx.method {
        Method::GET => {
            pools::get(&st.store, pool)?;
            let items: Vec<Value> = st
                .store
                .list(Table::Objects, &prefix(pool))?
                .into_iter()
                .map(|(_, m)| view(st, pool, m))
                .collect();
            Ok(Reply::json(json!({
                "kind": COLLECTION_KIND,
                "selfLink": st.link(&format!("{POOLS}/{pool}/members")),
                "totalItems": items.len(),
                "items": ctx.query.apply(items),
                "generation": 1,
                "lastUpdateMicros": now_micros(),
            })))
        }
        Method::POST => add(ctx, pool, body),
        _ => Err(MgmtError::method_not_allowed(
            ctx.method.as_str(),
            &ctx.path,
        )),
    }
}

pub(super) fn text_field<'a>(b: &'a Map<String, Value>, names: &[&str]) -> Option<&'a str> {
    names.iter().find_map(|n| b.get(*n)).and_then(Value::as_str)
}

/// The device a POST names: `deviceReference` (a trusted device) or `deviceAddress` + `username` +
/// `password` (an unmanaged one), never both.
fn target_of(store: &Store, b: &Map<String, Value>) -> MgmtResult<Target> {
    let address = text_field(b, &["deviceAddress", "address"]);
    match (b.contains_key("deviceReference"), address) {
        (true, Some(_)) => Err(MgmtError::bad_request(
            "Give either deviceReference (a trusted device) or deviceAddress with username and password, not both.",
        )),
        (true, None) => Ok(Target::Managed(Box::new(devices::from_reference(
            store, b,
        )?))),
        (false, Some(address)) => {
            let user = text_field(b, &["username", "userName"]);
            let password = text_field(b, &["password"]);
            let ok = |s: &str| !s.is_empty() && s.len() <= MAX_FIELD;
            let address = address.trim();
            let (Some(user), Some(password)) = (user, password) else {
                return Err(MgmtError::bad_request(
                    "An unmanaged device needs deviceAddress, username and password.",
                ));
            };
            if !ok(address)
                || address.contains(|c: char| c.is_whitespace() || c == '/' || c == '@')
                || !ok(user)
                || !ok(password)
            {
                return Err(MgmtError::bad_request(format!(
                    "deviceAddress (host or host:port), username and password must be non-empty strings of at most {MAX_FIELD} characters."
                )));
            }
            Ok(Target::Unmanaged {
                address: address.to_string(),
                user: user.to_string(),
                password: password.to_string(),
                pin: None,
            })
        }
        (false, None) => Err(MgmtError::bad_request(
            "A pool member needs deviceReference.link (a trusted device) or deviceAddress, username and password (an unmanaged device).",
        )),
    }
}

/// POST: records the member as INSTALLING (seat and duplicate checks in the same transaction)
/// and starts the grant.
fn add(ctx: &Ctx<'_>, pool_uuid: &str, body: &[u8]) -> MgmtResult<Reply> {
    let st = ctx.st;
    let c = crate::state(st)?;
    let b = parse_object(body)?;
    let pool = pools::get(&st.store, pool_uuid)?;
    let target = target_of(&st.store, &b)?;
    let uuid = new_uuid();
    let mut record = json!({
        "uuid": uuid,
        "id": uuid,
        "kind": KIND,
        "state": "INSTALLING",
        "generation": 1,
        "lastUpdateMicros": now_micros(),
    });
    if let Some(o) = record.as_object_mut() {
        match &target {
            Target::Managed(d) => {
                o.insert("deviceReference".into(), json!({"link": d.reference()}));
                o.insert("deviceAddress".into(), json!(d.endpoint()));
                o.insert("deviceMachineId".into(), json!(d.machine_id));
                o.insert("deviceName".into(), json!(d.hostname));
            }
            Target::Unmanaged { address, .. } => {
                o.insert("deviceAddress".into(), json!(address));
            }
        }
    }
    st.store.write(|tx| {
        if tx.get(Table::Objects, &pools::key(pool_uuid))?.is_none() {
            return Err(MgmtError::new(
                StatusCode::NOT_FOUND,
                format!("Licensing pool {pool_uuid} was not found."),
            ));
        }
        let members = members_tx(tx, pool_uuid)?;
        let used = members.iter().filter(|m| holds_seat(m)).count() as u64;
        let total = pool["totalDeviceLicenses"].as_u64().unwrap_or(0);
        if used >= total {
            return Err(MgmtError::new(
                StatusCode::CONFLICT,
                format!(
                    "Licensing pool '{}' has no free device license ({used} of {total} in use).",
                    pool["name"].as_str().unwrap_or_default()
                ),
            ));
        }
        if let Some(dup) = members
            .iter()
            .filter(|m| holds_seat(m))
            .find(|m| same_device(m, &record))
        {
            return Err(MgmtError::new(
                StatusCode::CONFLICT,
                format!(
                    "Device {} already has a license from this pool (member {}).",
                    record["deviceAddress"].as_str().unwrap_or_default(),
                    dup["uuid"].as_str().unwrap_or_default()
                ),
            ));
        }
        tx.put(Table::Objects, &key(pool_uuid, &uuid), &record)?;
        Ok(())
    })?;
    spawn_grant(c, pool, uuid, target);
    Ok(Reply::json(view(st, pool_uuid, record)).status(StatusCode::ACCEPTED))
}

fn same_device(a: &Value, b: &Value) -> bool {
    let same = |k: &str| {
        a[k].as_str()
            .is_some_and(|x| !x.is_empty() && Some(x) == b[k].as_str())
    };
    same("deviceMachineId") || same("deviceAddress")
}

/// Runs the grant on the central manager's runtime and records the outcome.
fn spawn_grant(c: Arc<Central>, pool: Value, member: String, target: Target) {
    // The client's retry loop holds async closures whose futures are not provably `Send` for every
    // lifetime, so the grant runs on a blocking-pool thread that drives it with `block_on`.
    let rt = c.rt.clone();
    rt.spawn_blocking(move || {
        let pool_uuid = pool["uuid"].as_str().unwrap_or_default().to_string();
        let outcome = c.rt.block_on(run_grant(&c, &pool, &member, &target));
        let store = c.store.clone();
        let k = key(&pool_uuid, &member);
        let r = store.write(|tx| {
            let Some(mut m) = tx.get(Table::Objects, &k)? else { return Ok(()) };
            if let Some(o) = m.as_object_mut() {
                match outcome {
                    Ok(fields) => {
                        o.extend(fields);
                        o.insert("state".into(), json!("LICENSED"));
                        o.remove("errorText");
                    }
                    Err(e) => {
                        o.insert("state".into(), json!("FAILED"));
                        o.insert("errorText".into(), json!(e));
                    }
                }
                let g = o.get("generation").and_then(Value::as_u64).unwrap_or(0) + 1;
                o.insert("generation".into(), json!(g));
                o.insert("lastUpdateMicros".into(), json!(now_micros()));
            }
            tx.put(Table::Objects, &k, &m)?;
            Ok::<_, MgmtError>(())
        });
        if let Err(e) = r {
            tracing::error!(member = %member, error = %e.message, "licensing: recording the grant failed");
        }
    });
}

/// Identifies the device, refuses one this pool already licenses under another member, installs.
async fn run_grant(
    c: &Central,
    pool: &Value,
    member: &str,
    target: &Target,
) -> Result<Map<String, Value>, String> {
    let pool_uuid = pool["uuid"].as_str().unwrap_or_default();
    let (client, mut fields) = grant::identify(target, c.limits)
        .await
        .map_err(|e| e.to_string())?;
    let machine_id = fields["deviceMachineId"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let others = c
        .store
        .list(Table::Objects, &prefix(pool_uuid))
        .map_err(|e| e.to_string())?;
    if let Some((_, dup)) = others.iter().find(|(_, m)| {
        m["uuid"] != member && holds_seat(m) && m["deviceMachineId"] == machine_id.as_str()
    }) {
        return Err(format!(
            "device {} (machine id {machine_id}) already has a license from this pool (member {})",
            client.address(),
            dup["uuid"].as_str().unwrap_or_default()
        ));
    }
    let src = Source {
        reg_key: pool["baseRegKey"].as_str().unwrap_or_default(),
        pool_uuid,
        pool_name: pool["name"].as_str().unwrap_or_default(),
        member_uuid: member,
        central: &c.machine_id,
    };
    let licensed = grant::install(&client, &src)
        .await
        .map_err(|e| e.to_string())?;
    fields.insert("licensedDate".into(), json!(licensed));
    Ok(fields)
}

pub fn item(ctx: &Ctx<'_>, pool: &str, member: &str, body: &[u8]) -> MgmtResult<Reply> {
    let st = ctx.st;
    match ctx.method {
        Method::GET => Ok(Reply::json(ctx.query.project(view(
            st,
            pool,
            get(&st.store, pool, member)?,
        )))),
        Method::DELETE => super::revoke::revoke(ctx, pool, member, body),
        _ => Err(MgmtError::method_not_allowed(
            ctx.method.as_str(),
            &ctx.path,
        )),
    }
}

/// After a restart: grants left INSTALLING run again for trusted devices; unmanaged ones fail
/// (their credentials were never stored).
pub fn resume(st: &MgmtState) -> MgmtResult<()> {
    let c = crate::state(st)?;
    for (k, m) in st.store.list(Table::Objects, "cm-license-member/")? {
        if m["state"] != "INSTALLING" {
            continue;
        }
        let pool_uuid = k
            .trim_start_matches("cm-license-member/")
            .split('/')
            .next()
            .unwrap_or_default();
        let pool = pools::get(&st.store, pool_uuid)?;
        let member = m["uuid"].as_str().unwrap_or_default().to_string();
        let device = match m.get("deviceReference") {
            Some(_) => devices::get(&st.store, m["deviceMachineId"].as_str().unwrap_or_default())?,
            None => None,
        };
        match device {
            Some(d) => spawn_grant(c.clone(), pool, member, Target::Managed(Box::new(d))),
            None => {
                let mut failed = m.clone();
                failed["state"] = json!("FAILED");
                failed["errorText"] = json!(
                    "The grant was interrupted by a restart of the central manager; the device's credentials are not stored, so add the member again."
                );
                failed["lastUpdateMicros"] = json!(now_micros());
                st.store.write(|tx| tx.put(Table::Objects, &k, &failed))?;
            }
        }
    }
    Ok(())
}
