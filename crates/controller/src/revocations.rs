//! `/mgmt/shared/access/revocations/<profile>`: fleet-wide revocations of API keys and token ids
//! in the shared store (Redis) an `api-access` profile names in `revocations`. Every node following
//! that store refuses a revoked credential within a second (see docs/access.md).
//!
//! | request | answer |
//! | --- | --- |
//! | `GET …/~Common~orders` | the revocations in force |
//! | `POST …/~Common~orders` `{"id": "key:partner-a", "ttlSeconds": 3600}` | the revocation |
//! | `DELETE …/~Common~orders/key:partner-a` | 200, or 404 when it was not revoked |

use std::time::Duration;

use http::{Method, StatusCode};
use serde_json::{Value, json};

use super::objects::api_access::{API_ACCESS, compile};
use portcullis_admin::Ctx;
use portcullis_admin::ObjName;
use portcullis_admin::Reply;
use portcullis_admin::parse_object;
use portcullis_admin::{MgmtError, MgmtResult};
use portcullis_engine::access::SharedStore;
use portcullis_proxy::access::{
    RevokeError, Revoked, check_revocation_id, list_revoked, revoke, unrevoke,
};
use portcullis_store::Table;

pub const PATH: &str = "/mgmt/shared/access/revocations";
const KIND: &str = "shared:access:revocations:revocationstate";
const COLLECTION_KIND: &str = "shared:access:revocations:revocationcollectionstate";
/// Longest revocation given a TTL (ten years); without `ttlSeconds` it has no end.
const MAX_TTL_SECS: u64 = 10 * 365 * 86_400;

/// The revocations store of profile `name`, or the error naming what is missing.
fn store_of(ctx: &Ctx<'_>, name: &ObjName) -> MgmtResult<SharedStore> {
    let full_path = name.full_path();
    let key = format!("{}/{}", API_ACCESS.path, name.tilde());
    let Some(Value::Object(obj)) = ctx.st.store.get(Table::Objects, &key)? else {
        return Err(MgmtError::not_found("Profile", &full_path));
    };
    compile(&obj, &full_path)?.revocations.ok_or_else(|| {
        MgmtError::bad_request(format!(
            "Access profile {full_path} has no revocations store; set its revocations.redis first."
        ))
    })
}

fn item(ctx: &Ctx<'_>, profile: &ObjName, r: &Revoked) -> Value {
    json!({
        "kind": KIND,
        "id": r.id,
        "profile": profile.full_path(),
        "until": r.until.map(|ms| portcullis_support::iso8601_utc(ms / 1000)),
        "untilMillis": r.until,
        "selfLink": ctx.st.link(&format!("{PATH}/{}/{}", profile.tilde(), r.id)),
    })
}

/// Runs a shared-store call from this blocking handler (its failure: [`revocation_error`]).
fn call<T>(f: impl Future<Output = Result<T, RevokeError>>) -> MgmtResult<T> {
    tokio::runtime::Handle::current()
        .block_on(f)
        .map_err(revocation_error)
}

/// The admin API's answer to a revocation that cannot be made: a bad id is the client's (400),
/// anything else is the shared store's (503, naming it).
fn revocation_error(e: RevokeError) -> MgmtError {
    match e {
        RevokeError::BadId(e) => MgmtError::bad_request(e.to_string()),
        e => MgmtError::new(StatusCode::SERVICE_UNAVAILABLE, format!("Shared store {e}")),
    }
}

pub fn handle(ctx: &Ctx<'_>, body: &[u8]) -> MgmtResult<Reply> {
    let rest = ctx.path[PATH.len()..].trim_start_matches('/');
    let (segment, id) = match rest.split_once('/') {
        Some((p, id)) => (p, Some(id)),
        None => (rest, None),
    };
    if segment.is_empty() {
        return Err(MgmtError::no_such_uri(&ctx.path));
    }
    let profile = ObjName::from_segment(segment)?;
    let store = store_of(ctx, &profile)?;
    let (url, prefix) = (store.url.as_str(), store.key_prefix.as_str());
    match (&ctx.method, id) {
        (&Method::GET, None) => {
            let all = call(list_revoked(url, prefix))?;
            let items: Vec<Value> = all.iter().map(|r| item(ctx, &profile, r)).collect();
            Ok(Reply::json(json!({
                "kind": COLLECTION_KIND,
                "selfLink": ctx.st.link(&format!("{PATH}/{}", profile.tilde())),
                "items": ctx.query.apply(items),
            })))
        }
        (&Method::POST, None) => {
            let b = parse_object(body)?;
            let id = b.get("id").and_then(Value::as_str).ok_or_else(|| {
                MgmtError::bad_request("'id' is required: key:<API key id> or jti:<token id>.")
            })?;
            check_revocation_id(id).map_err(|e| revocation_error(e.into()))?;
            let ttl = match b.get("ttlSeconds") {
                None | Some(Value::Null) => None,
                Some(v) => match v.as_u64() {
                    Some(s) if (1..=MAX_TTL_SECS).contains(&s) => Some(Duration::from_secs(s)),
                    _ => {
                        return Err(MgmtError::bad_request(format!(
                            "'ttlSeconds' must be a whole number from 1 to {MAX_TTL_SECS}."
                        )));
                    }
                },
            };
            let r = call(revoke(url, prefix, id, ttl))?;
            Ok(Reply::json(item(ctx, &profile, &r)))
        }
        (&Method::DELETE, Some(id)) => {
            check_revocation_id(id).map_err(|e| revocation_error(e.into()))?;
            if call(unrevoke(url, prefix, id))? {
                Ok(Reply::empty(StatusCode::OK))
            } else {
                Err(MgmtError::not_found("Revocation", id))
            }
        }
        _ => Err(MgmtError::method_not_allowed(
            ctx.method.as_str(),
            &ctx.path,
        )),
    }
}
