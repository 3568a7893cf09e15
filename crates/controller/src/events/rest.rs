//! `GET /mgmt/tm/asm/events/requests` (newest first, `$filter`/`$top`/`$skip`/`$select`,
//! `totalItems`) and `GET /mgmt/tm/asm/events/requests/<id>`: the stored request events in the
//! shape of the real request log (see docs/events.md). `$filter=supportId eq '<id>'` (or `id`)
//! is answered from the index; other filters scan the retained events.

use http::Method;
use serde_json::{Map, Value, json};

use super::local;
use super::search::{self, Criteria};
use super::syslog::{policy_path, split_uri};
use crate::asm::policy_id;
use portcullis_admin::Reply;
use portcullis_admin::{Ctx, MgmtState};
use portcullis_admin::{Filter, Lit, Query};
use portcullis_admin::{MgmtError, MgmtResult};

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
        Some(full_path) => full_path.to_string(),
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
    let headers: Vec<(&str, &str)> = e
        .get("headers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| Some((p.get(0)?.as_str()?, p.get(1)?.as_str()?)))
        .collect();
    m.insert(
        "headers".into(),
        headers
            .iter()
            .map(|(n, v)| json!({"name": n, "value": v}))
            .collect(),
    );
    let mut raw = format!("{} {} {}\r\n", s("method"), masked_uri(uri), s("protocol"));
    for (n, v) in &headers {
        raw.push_str(&format!("{n}: {v}\r\n"));
    }
    m.insert("rawRequest".into(), json!({"httpRequest": raw}));
    Value::Object(m)
}

/// Query-string parameters whose values the request log masks: names that say they carry a
/// secret (`password`, the default sensitive parameter, and its usual kin).
fn sensitive(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    [
        "pass", "pwd", "secret", "token", "apikey", "api_key", "session",
    ]
    .iter()
    .any(|w| n.contains(w))
}

/// The request target with the values of sensitive query parameters masked.
pub fn masked_uri(uri: &str) -> String {
    let query = split_uri(uri).1;
    if query.is_empty() {
        return uri.to_string();
    }
    let prefix = &uri[..uri.len() - query.len()];
    let parts: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((n, _)) if sensitive(n) => format!("{n}=********"),
            _ => pair.to_string(),
        })
        .collect();
    format!("{prefix}{}", parts.join("&"))
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

/// The indexed search a `$filter` asks for, when it is a conjunction of `supportId`/`id`,
/// `clientIp`, `url`, `policyName` or `requestStatus` equalities (without wildcards) and
/// `contains(violations,'VIOL_…')`; None for any other filter (answered by a scan).
fn criteria_of(f: &Filter) -> Option<Criteria> {
    let mut c = Criteria::default();
    fn add(f: &Filter, c: &mut Criteria) -> Option<()> {
        match f {
            Filter::And(a, b) => {
                add(a, c)?;
                add(b, c)
            }
            Filter::Eq(field, Lit::Str(v)) if !v.contains('*') => {
                let slot = match field.as_str() {
                    "supportId" | "id" => &mut c.support_id,
                    "clientIp" => &mut c.client,
                    "url" => &mut c.url,
                    "policyName" => &mut c.policy,
                    "requestStatus" => &mut c.status,
                    _ => return None,
                };
                // Two different values of one field match nothing; keep the scan's answer.
                if slot.as_ref().is_some_and(|old| old != v) {
                    return None;
                }
                *slot = Some(v.clone());
                Some(())
            }
            Filter::Contains(field, v) if field == "violations" && v.starts_with("VIOL_") => {
                if c.violation.as_ref().is_some_and(|old| old != v) {
                    return None;
                }
                c.violation = Some(v.clone());
                Some(())
            }
            _ => None,
        }
    }
    add(f, &mut c)?;
    Some(c)
}

/// The route handler.
pub fn handle(ctx: &Ctx<'_>, body: &[u8]) -> MgmtResult<Reply> {
    if let Some(id) = ctx
        .path
        .strip_prefix(PATH)
        .and_then(|r| r.strip_prefix('/'))
        .and_then(|r| r.strip_suffix("/accept"))
        .filter(|id| !id.contains('/'))
    {
        return crate::asm::learn::routes::request_accept(ctx, id, body);
    }
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
    let top = q.top.unwrap_or(usize::MAX);
    let (total, items) = match &q.filter {
        // No filter: the count is kept, and only the requested page is read.
        None => {
            let mut items = Vec::new();
            let mut seen = 0usize;
            local::newest_first(store, |_, e| {
                if seen >= q.skip {
                    items.push(q.project(item(st, &e)));
                }
                seen += 1;
                items.len() < top
            })?;
            (local::count(store)?, items)
        }
        Some(f) => match criteria_of(f) {
            Some(c) => indexed(st, q, &c, top)?,
            None => scanned(st, q, f, top)?,
        },
    };
    Ok(Reply::json(json!({
        "kind": COLLECTION_KIND,
        "selfLink": st.link(PATH),
        "totalItems": total,
        "items": items,
    })))
}

/// A filter the indexes answer: pages of the search up to `$skip + $top`, and its count.
fn indexed(st: &MgmtState, q: &Query, c: &Criteria, top: usize) -> MgmtResult<(usize, Vec<Value>)> {
    let want = q.skip.saturating_add(top);
    let mut found = Vec::new();
    let mut cursor: Option<String> = None;
    let mut total = None;
    loop {
        let page = search::search(&st.store, c, cursor.as_deref(), 500)?;
        found.extend(page.items);
        cursor = page.next;
        if cursor.is_none() {
            total = Some(found.len());
            break;
        }
        if found.len() >= want {
            break;
        }
    }
    let total = match total {
        Some(n) => n,
        None => match search::total(&st.store, c)? {
            search::Total::Exact(n) => n,
            // Not countable from an index alone: count the rest of the matches.
            _ => {
                let mut n = found.len();
                while let Some(cur) = cursor {
                    let page = search::search(&st.store, c, Some(&cur), 500)?;
                    n += page.items.len();
                    cursor = page.next;
                }
                n
            }
        },
    };
    let items = found
        .into_iter()
        .skip(q.skip)
        .take(top)
        .map(|e| q.project(item(st, &e)))
        .collect();
    Ok((total, items))
}

/// Any other filter: every stored event is turned into its item and tested.
fn scanned(st: &MgmtState, q: &Query, f: &Filter, top: usize) -> MgmtResult<(usize, Vec<Value>)> {
    let mut total = 0usize;
    let mut items = Vec::new();
    local::newest_first(&st.store, |_, e| {
        let it = item(st, &e);
        if f.matches(&it) {
            if total >= q.skip && items.len() < top {
                items.push(q.project(it));
            }
            total += 1;
        }
        true
    })?;
    Ok((total, items))
}
