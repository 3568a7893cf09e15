//! `GET /mgmt/tm/asm/events/requests` (newest first, `$filter`/`$top`/`$skip`/`$select`,
//! `totalItems`) and `GET /mgmt/tm/asm/events/requests/<id>`: the stored request events in the
//! shape of the real request log (see docs/events.md). `$filter=supportId eq '<id>'` (or `id`)
//! is answered from the index; other filters scan the retained events.
//! Imports: `mgmt::{error,query,reply,state}`, `super::{local,syslog}`.

use http::Method;
use serde_json::{Map, Value, json};

use super::local;
use super::syslog::{policy_path, split_uri};
use crate::mgmt::asm::policy_id;
use crate::mgmt::error::{MgmtError, MgmtResult};
use crate::mgmt::query::{Filter, Lit};
use crate::mgmt::reply::Reply;
use crate::mgmt::state::{Ctx, MgmtState};

pub const PATH: &str = "/mgmt/tm/asm/events/requests";
const ITEM_KIND: &str = "tm:asm:events:requests:requeststate";
const COLLECTION_KIND: &str = "tm:asm:events:requests:requestcollectionstate";

/// The REST item of one stored event.
pub fn item(st: &MgmtState, e: &Value) -> Value {
    let s = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or_default();
    let id = s("supportId");
    let uri = s("uri");
    let (url, query) = split_uri(uri);
    let blocked = s("action") == "block";
    let rating = e.get("rating").cloned().unwrap_or(json!(0));
    let policy = match e.get("policyFullPath").and_then(Value::as_str) {
        Some(fp) => fp.to_string(),
        None => policy_path(s("policy"), None),
    };
    let policy_ref =
        json!({"link": st.link(&format!("/mgmt/tm/asm/policies/{}", policy_id(&policy)))});
    let violations: Vec<Value> = e
        .get("violations")
        .and_then(Value::as_array)
        .map(|a| a.iter().map(|v| violation(st, v, blocked)).collect())
        .unwrap_or_default();
    let mut m = Map::new();
    m.insert("kind".into(), json!(ITEM_KIND));
    m.insert("id".into(), json!(id));
    m.insert("selfLink".into(), json!(st.link(&format!("{PATH}/{id}"))));
    m.insert("supportId".into(), json!(id));
    m.insert("requestDatetime".into(), json!(s("time")));
    m.insert(
        "timeMicros".into(),
        e.get("timeMicros").cloned().unwrap_or(json!(0)),
    );
    m.insert("clientIp".into(), json!(s("clientIp")));
    m.insert("method".into(), json!(s("method")));
    m.insert("protocol".into(), json!(s("protocol")));
    m.insert("uri".into(), json!(uri));
    m.insert("url".into(), json!(url));
    m.insert("queryString".into(), json!(query));
    m.insert(
        "requestStatus".into(),
        json!(if blocked { "blocked" } else { "alerted" }),
    );
    m.insert("action".into(), json!(s("action")));
    m.insert(
        "responseCode".into(),
        e.get("responseCode").cloned().unwrap_or(json!(0)),
    );
    m.insert("violationRating".into(), rating.clone());
    m.insert(
        "enforcementState".into(),
        json!({"isBlocked": blocked, "isAlarmed": !blocked, "hasViolations": !violations.is_empty(), "rating": rating}),
    );
    m.insert("virtualServerName".into(), json!(s("virtualServerName")));
    m.insert("policyName".into(), json!(policy));
    m.insert("policyReference".into(), policy_ref.clone());
    m.insert("requestPolicyReference".into(), policy_ref);
    m.insert("violations".into(), Value::Array(violations));
    Value::Object(m)
}

fn violation(st: &MgmtState, v: &Value, blocked: bool) -> Value {
    let name = v.get("kind").and_then(Value::as_str).unwrap_or_default();
    let mut m = Map::new();
    m.insert("name".into(), json!(name));
    m.insert(
        "violationReference".into(),
        json!({"link": st.link(&format!("/mgmt/tm/asm/violations/{name}"))}),
    );
    m.insert(
        "context".into(),
        v.get("context").cloned().unwrap_or(Value::Null),
    );
    let mut observed = Map::new();
    if let Some(n) = v.get("name") {
        observed.insert("name".into(), n.clone());
    }
    if let Some(s) = v.get("snippet") {
        observed.insert("value".into(), s.clone());
    }
    m.insert("observedEntity".into(), Value::Object(observed));
    m.insert(
        "details".into(),
        v.get("detail").cloned().unwrap_or(json!("")),
    );
    m.insert(
        "signatureIds".into(),
        v.get("signatureIds")
            // Events stored before the field was renamed.
            .or_else(|| v.get("signature_ids"))
            .cloned()
            .unwrap_or(json!([])),
    );
    // A violation of an entity in staging is reported, never enforced.
    let staged = v.get("staged").and_then(Value::as_bool).unwrap_or(false);
    m.insert(
        "enforcementState".into(),
        json!({"isBlocked": blocked && !staged, "isAlarmed": !blocked || staged, "isInStaging": staged}),
    );
    Value::Object(m)
}

/// `supportId eq '<id>'` / `id eq '<id>'` without wildcards: the id to look up.
fn exact_id(f: &Filter) -> Option<&str> {
    match f {
        Filter::Eq(field, Lit::Str(v))
            if (field == "supportId" || field == "id") && !v.contains('*') =>
        {
            Some(v)
        }
        _ => None,
    }
}

/// The route handler.
pub fn handle(ctx: &Ctx<'_>, _body: &[u8]) -> MgmtResult<Reply> {
    if ctx.method != Method::GET {
        return Err(MgmtError::method_not_allowed(
            ctx.method.as_str(),
            &ctx.path,
        ));
    }
    let st = ctx.st;
    let store = &st.store;
    if let Some(id) = ctx
        .path
        .strip_prefix(PATH)
        .and_then(|r| r.strip_prefix('/'))
    {
        if id.contains('/') {
            return Err(MgmtError::no_such_uri(&ctx.path));
        }
        return match local::get(store, id)? {
            Some(e) => Ok(Reply::json(ctx.query.project(item(st, &e)))),
            None => Err(MgmtError::not_found("Request", id)),
        };
    }
    let q = &ctx.query;
    let mut total = 0usize;
    let mut items = Vec::new();
    let top = q.top.unwrap_or(usize::MAX);
    let mut take = |it: Value| {
        if q.filter.as_ref().is_none_or(|f| f.matches(&it)) {
            if total >= q.skip && items.len() < top {
                items.push(q.project(it));
            }
            total += 1;
        }
    };
    match q.filter.as_ref().and_then(exact_id) {
        Some(id) => {
            if let Some(e) = local::get(store, id)? {
                take(item(st, &e));
            }
        }
        None => local::newest_first(store, |_, e| {
            take(item(st, &e));
            true
        })?,
    }
    Ok(Reply::json(json!({
        "kind": COLLECTION_KIND,
        "selfLink": st.link(PATH),
        "totalItems": total,
        "items": items,
    })))
}
