//! The REST surface of the tuning loop, under the policy and the request it concerns:
//!
//! | method | path | |
//! | --- | --- | --- |
//! | GET | `/mgmt/tm/asm/policies/<id>/suggestions[/<sid>]` | suggestions, highest score first (`$filter`, `$select`, `$top`, `$skip`) |
//! | POST | `.../suggestions/<sid>/accept`, `.../suggestions/<sid>/dismiss` | one suggestion |
//! | POST | `.../suggestions/accept` `{ids: [...]}` or `{minScore: n}` | several, one apply |
//! | GET | `/mgmt/tm/asm/policies/<id>/readiness?hours=24` | readiness for blocking |
//! | GET / POST | `/mgmt/tm/asm/events/requests/<supportId>/accept` | preview / accept `{force?}` |
//!
//! Authentication, roles (reads for all, changes for administrators and resource administrators)
//! and error objects are the dispatcher's, as for every `/mgmt` route.

use std::collections::HashMap;

use http::Method;
use serde_json::{Map, Value, json};

use super::settings::Settings;
use super::{PolicyView, Version, accept, append_modifications, readiness, suggestions};
use crate::asm::apply::start_apply;
use crate::asm::policies::{POLICIES, full_path_field, object};
use portcullis_admin::Reply;
use portcullis_admin::parse_object;
use portcullis_admin::{Ctx, MgmtState};
use portcullis_admin::{MgmtError, MgmtResult};
use portcullis_support::now_micros;

fn method_not_allowed(ctx: &Ctx<'_>) -> MgmtError {
    MgmtError::method_not_allowed(ctx.method.as_str(), &ctx.path)
}

/// `/mgmt/tm/asm/policies/<id>/<sub>`.
pub fn policy_sub(ctx: &Ctx<'_>, id: &str, sub: &str, body: &[u8]) -> MgmtResult<Reply> {
    let obj = object(ctx.st, id)?;
    let full_path = full_path_field(&obj);
    let mut parts = sub.splitn(3, '/');
    match (parts.next(), parts.next(), parts.next()) {
        (Some("readiness"), None, None) => {
            if ctx.method != Method::GET {
                return Err(method_not_allowed(ctx));
            }
            let hours = match ctx.query.other.iter().find(|(k, _)| k == "hours") {
                Some((_, h)) => h
                    .parse::<u64>()
                    .ok()
                    .filter(|h| (1..=24 * 31).contains(h))
                    .ok_or_else(|| {
                        MgmtError::bad_request(format!(
                            "'hours' must be a number of hours from 1 to 744, not '{h}'."
                        ))
                    })?,
                None => 24,
            };
            Ok(Reply::json(readiness::readiness(
                ctx.st, &full_path, hours,
            )?))
        }
        (Some("suggestions"), None, None) if ctx.method == Method::GET => list(ctx, id, &full_path),
        (Some("suggestions"), Some("accept"), None) if ctx.method == Method::POST => {
            let req = parse_object(body)?;
            accept_many(ctx, id, &full_path, &req)
        }
        (Some("suggestions"), Some(sid), None) if ctx.method == Method::GET => {
            let view = settings_of(ctx.st, &full_path)?;
            let rec = one(ctx.st, id, sid)?;
            Ok(Reply::json(ctx.query.project(suggestions::item(
                &link(ctx.st, id, sid),
                &rec,
                &view,
                now_micros(),
            ))))
        }
        (Some("suggestions"), Some(sid), Some(action @ ("accept" | "dismiss")))
            if ctx.method == Method::POST =>
        {
            one(ctx.st, id, sid)?;
            if action == "accept" {
                accept_ids(ctx, id, &full_path, &[sid.to_string()])
            } else {
                suggestions::set_state(
                    &ctx.st.store,
                    id,
                    &[sid.to_string()],
                    "dismissed",
                    &ctx.user.name,
                )?;
                let rec = one(ctx.st, id, sid)?;
                let s = settings_of(ctx.st, &full_path)?;
                Ok(Reply::json(suggestions::item(
                    &link(ctx.st, id, sid),
                    &rec,
                    &s,
                    now_micros(),
                )))
            }
        }
        (Some("suggestions"), ..) => Err(method_not_allowed(ctx)),
        _ => Err(MgmtError::no_such_uri(&ctx.path)),
    }
}

fn link(st: &MgmtState, id: &str, sid: &str) -> String {
    st.link(&format!("{POLICIES}/{id}/suggestions/{sid}"))
}

fn settings_of(st: &MgmtState, full_path: &str) -> MgmtResult<Settings> {
    Ok(PolicyView::load(st, full_path, Version::Edited)?
        .map(|v| v.settings)
        .unwrap_or_default())
}

fn one(st: &MgmtState, id: &str, sid: &str) -> MgmtResult<Map<String, Value>> {
    suggestions::records(&st.store, id)?
        .into_iter()
        .find(|r| r.get("id").and_then(Value::as_str) == Some(sid))
        .ok_or_else(|| MgmtError::not_found("Suggestion", sid))
}

/// The items of a policy's suggestions, highest score first.
pub fn items(st: &MgmtState, id: &str, full_path: &str) -> MgmtResult<Vec<Value>> {
    let s = settings_of(st, full_path)?;
    let now = now_micros();
    let mut items: Vec<Value> = suggestions::records(&st.store, id)?
        .iter()
        .map(|r| {
            let sid = r.get("id").and_then(Value::as_str).unwrap_or_default();
            suggestions::item(&link(st, id, sid), r, &s, now)
        })
        .collect();
    items.sort_by(|a, b| {
        let k = |v: &Value| {
            (
                v["learningScore"].as_u64().unwrap_or(0),
                v["evidence"]["requests"].as_u64().unwrap_or(0),
            )
        };
        k(b).cmp(&k(a))
    });
    Ok(items)
}

fn list(ctx: &Ctx<'_>, id: &str, full_path: &str) -> MgmtResult<Reply> {
    let items = ctx.query.apply(items(ctx.st, id, full_path)?);
    Ok(Reply::json(json!({
        "kind": "tm:asm:policies:suggestions:suggestioncollectionstate",
        "selfLink": ctx.st.link(&format!("{POLICIES}/{id}/suggestions")),
        "totalItems": items.len(),
        "items": items,
    })))
}

fn accept_many(
    ctx: &Ctx<'_>,
    id: &str,
    full_path: &str,
    req: &Map<String, Value>,
) -> MgmtResult<Reply> {
    let ids: Vec<String> = match (req.get("ids"), req.get("minScore")) {
        (Some(Value::Array(a)), None) => a
            .iter()
            .map(|v| v.as_str().map(str::to_string))
            .collect::<Option<_>>()
            .ok_or_else(|| MgmtError::bad_request("'ids' must be an array of suggestion ids."))?,
        (None, Some(m)) => {
            let min = m.as_u64().filter(|m| *m <= 100).ok_or_else(|| {
                MgmtError::bad_request("'minScore' must be a number from 0 to 100.")
            })?;
            items(ctx.st, id, full_path)?
                .into_iter()
                .filter(|i| {
                    i["status"] == "pending" && i["learningScore"].as_u64().unwrap_or(0) >= min
                })
                .filter_map(|i| i["id"].as_str().map(str::to_string))
                .collect()
        }
        _ => {
            return Err(MgmtError::bad_request(
                "Give either 'ids' (an array of suggestion ids) or 'minScore' (0 to 100).",
            ));
        }
    };
    accept_ids(ctx, id, full_path, &ids)
}

/// Appends the modifications of suggestions `ids`, marks them accepted and starts one apply.
fn accept_ids(ctx: &Ctx<'_>, id: &str, full_path: &str, ids: &[String]) -> MgmtResult<Reply> {
    let records = suggestions::records(&ctx.st.store, id)?;
    let by_id: HashMap<&str, &Map<String, Value>> = records
        .iter()
        .filter_map(|r| Some((r.get("id")?.as_str()?, r)))
        .collect();
    let mut mods = Vec::new();
    for sid in ids {
        let rec = by_id
            .get(sid.as_str())
            .ok_or_else(|| MgmtError::not_found("Suggestion", sid))?;
        mods.push(suggestions::modification(rec));
    }
    let task = if mods.is_empty() {
        Value::Null
    } else {
        append_modifications(ctx.st, full_path, &mods)?;
        suggestions::set_state(&ctx.st.store, id, ids, "accepted", &ctx.user.name)?;
        Value::Object(start_apply(ctx.st, &Value::Object(object(ctx.st, id)?))?)
    };
    Ok(Reply::json(json!({
        "kind": "tm:asm:policies:suggestions:acceptstate",
        "accepted": ids,
        "modifications": mods,
        "applyTask": task,
    })))
}

/// `/mgmt/tm/asm/events/requests/<supportId>/accept`: GET previews, POST accepts.
pub fn request_accept(ctx: &Ctx<'_>, support_id: &str, body: &[u8]) -> MgmtResult<Reply> {
    match ctx.method {
        Method::GET => Ok(Reply::json(
            accept::plan(ctx.st, support_id)?.preview(ctx.st),
        )),
        Method::POST => {
            let req = if body.iter().all(u8::is_ascii_whitespace) {
                Map::new()
            } else {
                parse_object(body)?
            };
            let force = match req.get("force") {
                None => false,
                Some(Value::Bool(b)) => *b,
                Some(_) => return Err(MgmtError::bad_request("'force' must be true or false.")),
            };
            let (plan, task) = accept::accept(ctx.st, support_id, force)?;
            let mut out = plan.preview(ctx.st);
            out["kind"] = json!("tm:asm:events:requests:acceptstate");
            out["applyTask"] = task.unwrap_or(Value::Null);
            Ok(Reply::json(out))
        }
        _ => Err(method_not_allowed(ctx)),
    }
}
