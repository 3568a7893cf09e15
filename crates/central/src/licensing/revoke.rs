//! `DELETE /mgmt/cm/shared/licensing/pools/<uuid>/members/<uuid>`: revokes the member's license on
//! the device (trusted device: its account and pinned certificate; unmanaged: the credentials in
//! the body and the fingerprint pinned at the grant), then forgets the member.

use http::StatusCode;
use serde_json::{Map, Value, json};

use super::grant::{self, Target};
use super::members::{get, key, text_field, view};
use super::pools;
use crate::devices;
use portcullis_admin::Ctx;
use portcullis_admin::Reply;
use portcullis_admin::parse_object;
use portcullis_admin::{MgmtError, MgmtResult};
use portcullis_store::{Store, Table};

/// DELETE: revokes the license on the device (unless `localOnly: true`), then removes the member.
/// An unmanaged device needs `username` and `password` in the body, as for the grant.
pub fn revoke(ctx: &Ctx<'_>, pool_uuid: &str, member: &str, body: &[u8]) -> MgmtResult<Reply> {
    let st = ctx.st;
    let pool = pools::get(&st.store, pool_uuid)?;
    let m = get(&st.store, pool_uuid, member)?;
    let b = if body.iter().all(u8::is_ascii_whitespace) {
        Map::new()
    } else {
        parse_object(body)?
    };
    let local_only = b.get("localOnly").and_then(Value::as_bool).unwrap_or(false);
    match m["state"].as_str() {
        Some("INSTALLING") => {
            return Err(MgmtError::new(
                StatusCode::CONFLICT,
                format!(
                    "Member {member} is still being licensed; revoke it once it is LICENSED or FAILED."
                ),
            ));
        }
        Some("LICENSED") if !local_only => {
            let c = crate::state(st)?;
            let target = revoke_target(&st.store, &m, &b)?;
            let reg_key = pool["baseRegKey"].as_str().unwrap_or_default();
            c.rt.block_on(grant::revoke(&target, c.limits, reg_key)).map_err(|e| {
                MgmtError::new(
                    StatusCode::BAD_GATEWAY,
                    format!("Revoking the license of member {member} failed: {e}. The member is kept; DELETE with {{\"localOnly\": true}} forgets it without contacting the device."),
                )
            })?;
        }
        _ => {}
    }
    st.store
        .write(|tx| tx.delete(Table::Objects, &key(pool_uuid, member)))?;
    let mut out = view(st, pool_uuid, m);
    out["state"] = json!("REVOKED");
    Ok(Reply::json(out))
}

fn revoke_target(store: &Store, m: &Value, b: &Map<String, Value>) -> MgmtResult<Target> {
    if m.get("deviceReference").is_some() {
        let id = m["deviceMachineId"].as_str().unwrap_or_default();
        return devices::get(store, id)?.map(|d| Target::Managed(Box::new(d))).ok_or_else(|| {
            MgmtError::new(
                StatusCode::CONFLICT,
                format!("Device {id} is no longer trusted, so its license cannot be revoked on it; DELETE with {{\"localOnly\": true}} forgets the member."),
            )
        });
    }
    let (Some(user), Some(password)) = (
        text_field(b, &["username", "userName"]),
        text_field(b, &["password"]),
    ) else {
        return Err(MgmtError::bad_request(
            "Revoking the license of an unmanaged device needs username and password in the DELETE body.",
        ));
    };
    Ok(Target::Unmanaged {
        address: m["deviceAddress"].as_str().unwrap_or_default().to_string(),
        user: user.to_string(),
        password: password.to_string(),
        pin: m["deviceFingerprint"].as_str().map(str::to_string),
    })
}
