//! Licensing pool records and their handlers: `GET`/`POST /mgmt/cm/shared/licensing/pools`,
//! `GET`/`DELETE .../pools/<uuid>`. A pool is made from one base registration key (unique across
//! pools) and offers `totalDeviceLicenses` seats; `freeDeviceLicenses` counts the seats left.
//! There is no vendor activation server here, so a pool is `LICENSED` as soon as it is created.

use http::{Method, StatusCode};
use serde_json::{Value, json};

use super::POOLS;
use super::members;
use portcullis_admin::Reply;
use portcullis_admin::parse_object;
use portcullis_admin::{Ctx, MgmtState};
use portcullis_admin::{MgmtError, MgmtResult};
use portcullis_store::{Store, Table};
use portcullis_support::new_uuid;
use portcullis_support::{iso8601_utc, now_micros, parse_regkey, unix_seconds};

const PREFIX: &str = "cm-license-pool/";
/// Seats of a pool when the request does not say.
pub const DEFAULT_SEATS: u64 = 100;
/// Most seats one pool may offer.
pub const MAX_SEATS: u64 = 100_000;
/// Longest pool name.
const MAX_NAME: usize = 255;

pub const KIND: &str = "cm:shared:licensing:pools:licensepoolworkerstate";
const COLLECTION_KIND: &str = "cm:shared:licensing:pools:licensepoolworkercollectionstate";

pub fn key(uuid: &str) -> String {
    format!("{PREFIX}{uuid}")
}

/// The stored pool, or the 404 naming it.
pub fn get(store: &Store, uuid: &str) -> MgmtResult<Value> {
    store.get(Table::Objects, &key(uuid))?.ok_or_else(|| {
        MgmtError::new(
            StatusCode::NOT_FOUND,
            format!("Licensing pool {uuid} was not found."),
        )
    })
}

/// A pool as answered: the stored record with its links and free seats.
fn view(st: &MgmtState, mut pool: Value) -> MgmtResult<Value> {
    let uuid = pool["uuid"].as_str().unwrap_or_default().to_string();
    let used = members::seats_used(&st.store, &uuid)?;
    let total = pool["totalDeviceLicenses"].as_u64().unwrap_or(0);
    if let Some(m) = pool.as_object_mut() {
        m.insert(
            "freeDeviceLicenses".into(),
            json!(total.saturating_sub(used)),
        );
        m.insert(
            "selfLink".into(),
            json!(st.link(&format!("{POOLS}/{uuid}"))),
        );
        m.insert(
            "membersReference".into(),
            json!({"link": st.link(&format!("{POOLS}/{uuid}/members")), "isSubcollection": true}),
        );
    }
    Ok(pool)
}

pub fn collection(ctx: &Ctx<'_>, body: &[u8]) -> MgmtResult<Reply> {
    let st = ctx.st;
    match ctx.method {
        Method::GET => {
            let mut items = Vec::new();
            for (_, p) in st.store.list(Table::Objects, PREFIX)? {
                items.push(view(st, p)?);
            }
            Ok(Reply::json(json!({
                "kind": COLLECTION_KIND,
                "selfLink": st.link(POOLS),
                "totalItems": items.len(),
                "items": ctx.query.apply(items),
                "generation": 1,
                "lastUpdateMicros": now_micros(),
            })))
        }
        Method::POST => create(ctx, body),
        _ => Err(MgmtError::method_not_allowed(
            ctx.method.as_str(),
            &ctx.path,
        )),
    }
}

fn create(ctx: &Ctx<'_>, body: &[u8]) -> MgmtResult<Reply> {
    let b = parse_object(body)?;
    let raw_key = b
        .get("baseRegKey")
        .or_else(|| b.get("registrationKey"))
        .and_then(Value::as_str)
        .ok_or_else(|| {
            MgmtError::bad_request("baseRegKey (the pool's base registration key) is required.")
        })?;
    let reg_key =
        parse_regkey(raw_key).map_err(|e| MgmtError::bad_request(format!("baseRegKey: {e}.")))?;
    let name = match b.get("name") {
        None | Some(Value::Null) => reg_key.clone(),
        Some(Value::String(n))
            if !n.trim().is_empty() && n.len() <= MAX_NAME && !n.chars().any(char::is_control) =>
        {
            n.trim().to_string()
        }
        Some(_) => {
            return Err(MgmtError::bad_request(format!(
                "name must be a non-empty string of at most {MAX_NAME} characters."
            )));
        }
    };
    let seats = match b.get("totalDeviceLicenses") {
        None | Some(Value::Null) => DEFAULT_SEATS,
        Some(v) => v
            .as_u64()
            .filter(|n| (1..=MAX_SEATS).contains(n))
            .ok_or_else(|| {
                MgmtError::bad_request(format!(
                    "totalDeviceLicenses must be an integer from 1 to {MAX_SEATS}."
                ))
            })?,
    };
    let method = match b.get("method").and_then(Value::as_str) {
        None => "AUTOMATIC",
        Some(m) if m.eq_ignore_ascii_case("AUTOMATIC") => "AUTOMATIC",
        Some(m) if m.eq_ignore_ascii_case("MANUAL") => "MANUAL",
        Some(m) => {
            return Err(MgmtError::bad_request(format!(
                "method must be AUTOMATIC or MANUAL, not '{m}'."
            )));
        }
    };
    let uuid = new_uuid();
    let now = unix_seconds();
    let record = json!({
        "uuid": uuid,
        "id": uuid,
        "name": name,
        "baseRegKey": reg_key,
        "method": method,
        "state": "LICENSED",
        "totalDeviceLicenses": seats,
        "licensedDate": iso8601_utc(now),
        "kind": KIND,
        "generation": 1,
        "lastUpdateMicros": now_micros(),
    });
    ctx.st.store.write(|tx| {
        for k in tx.keys(Table::Objects, PREFIX)? {
            let Some(p) = tx.get(Table::Objects, &k)? else { continue };
            if p["name"] == record["name"] {
                return Err(MgmtError::new(StatusCode::CONFLICT, format!("A licensing pool named '{name}' already exists.")));
            }
            if p["baseRegKey"] == record["baseRegKey"] {
                return Err(MgmtError::new(
                    StatusCode::CONFLICT,
                    format!("Registration key {reg_key} is already the base key of licensing pool '{}'.", p["name"].as_str().unwrap_or_default()),
                ));
            }
        }
        tx.put(Table::Objects, &key(&uuid), &record)?;
        Ok(())
    })?;
    Ok(Reply::json(view(ctx.st, record)?))
}

pub fn item(ctx: &Ctx<'_>, uuid: &str) -> MgmtResult<Reply> {
    let st = ctx.st;
    match ctx.method {
        Method::GET => Ok(Reply::json(
            ctx.query.project(view(st, get(&st.store, uuid)?)?),
        )),
        Method::DELETE => {
            let pool = get(&st.store, uuid)?;
            let view_before = view(st, pool.clone())?;
            // The seat check and the removal share one transaction: no grant can slip in between.
            st.store.write(|tx| {
                let members = members::members_tx(tx, uuid)?;
                let used = members.iter().filter(|m| members::holds_seat(m)).count();
                if used > 0 {
                    return Err(MgmtError::new(
                        StatusCode::CONFLICT,
                        format!(
                            "Licensing pool '{}' still licenses {used} device(s); revoke its members first.",
                            pool["name"].as_str().unwrap_or_default()
                        ),
                    ));
                }
                for k in tx.keys(Table::Objects, &members::prefix(uuid))? {
                    tx.delete(Table::Objects, &k)?;
                }
                tx.delete(Table::Objects, &key(uuid))?;
                Ok(())
            })?;
            Ok(Reply::json(view_before))
        }
        _ => Err(MgmtError::method_not_allowed(
            ctx.method.as_str(),
            &ctx.path,
        )),
    }
}
