//! Firewall policies at `/mgmt/tm/asm/policies/<id>`, id = URL-safe base64 of MD5(fullPath)
//! without `=`. Each policy keeps three records in the store, written together:
//! the object clients read (`.../<id>`), the edited document (`.../<id>/edited`) and the applied
//! one (`.../<id>/applied`); a change reaches traffic only through an apply.
//! Attaching (`virtualServers`) is configuration of the virtual and takes effect at once with the
//! policy's applied version.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::{Method, StatusCode};
use md5::{Digest as _, Md5};
use serde_json::{Map, Value, json};

use super::apply::{publish_running, template_title};
use super::compile::{CompileError, Stored, compile_fetching, compile_stored, remember};
use portcullis_admin::Reply;
use portcullis_admin::children;
use portcullis_admin::parse_object;
use portcullis_admin::{Ctx, MgmtState};
use portcullis_admin::{MgmtError, MgmtResult};
use portcullis_admin::{ObjName, full_path_of};
use portcullis_engine::policy::{Loaded, Summary};
use portcullis_store::{Table, WriteTx};
use portcullis_support::{iso8601_utc, now_micros, unix_seconds};

pub const POLICIES: &str = "/mgmt/tm/asm/policies";
const KIND: &str = "tm:asm:policies:policystate";

/// The policy id of a full path: `/Common/ansible1` → `u-6T62j_f0XMkjJ_s_Z-gg`.
pub fn policy_id(full_path: &str) -> String {
    URL_SAFE_NO_PAD.encode(Md5::digest(full_path.as_bytes()))
}

pub(super) fn object_key(id: &str) -> String {
    format!("{POLICIES}/{id}")
}
pub fn edited_key(id: &str) -> String {
    format!("{POLICIES}/{id}/edited")
}
pub fn applied_key(id: &str) -> String {
    format!("{POLICIES}/{id}/applied")
}

/// `/Common/p`, `p` (= `/Common/p`) or `/P/sub/p`, checked.
pub fn normalize(full_path: &str) -> MgmtResult<String> {
    full_path_of(full_path)
}

fn not_found(what: &str) -> MgmtError {
    MgmtError::not_found("Policy", what)
}

/// A policy object by id.
pub fn object(st: &MgmtState, id: &str) -> MgmtResult<Map<String, Value>> {
    match st.store.get(Table::Objects, &object_key(id))? {
        Some(Value::Object(m)) => Ok(m),
        _ => Err(not_found(id)),
    }
}

/// A policy object by full path.
pub fn by_path(st: &MgmtState, full_path: &str) -> MgmtResult<Map<String, Value>> {
    let canonical = normalize(full_path)?;
    object(st, &policy_id(&canonical)).map_err(|_| not_found(&canonical))
}

/// The edited or applied document of a policy.
pub fn stored(st: &MgmtState, key: &str) -> MgmtResult<Option<Stored>> {
    match st.store.get(Table::Objects, key)? {
        Some(v) => serde_json::from_value(v)
            .map(Some)
            .map_err(|e| MgmtError::internal(format!("{key}: {e}"))),
        None => Ok(None),
    }
}

/// The `fullPath` of a policy object.
pub fn full_path_field(obj: &Map<String, Value>) -> String {
    obj.get("fullPath")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// The virtual servers a policy object is attached to.
pub fn virtuals_of(obj: &Map<String, Value>) -> Vec<String> {
    portcullis_support::json_strings(obj.get("virtualServers"))
}

/// Creates or replaces the policy `full_path` from a declarative document (`{"policy": {...}}`):
/// pulls its links, checks that it compiles (400 naming the problem otherwise), stores it as
/// the edited version and returns the policy object as GET shows it. Does not apply.
pub fn put_policy(st: &MgmtState, full_path: &str, doc: &Value) -> MgmtResult<Value> {
    put_policy_linked(st, full_path, doc, "")
}

/// [`put_policy`] for a document pulled from `base`, against which its relative links resolve.
pub fn put_policy_linked(
    st: &MgmtState,
    full_path: &str,
    doc: &Value,
    base: &str,
) -> MgmtResult<Value> {
    let canonical = normalize(full_path)?;
    let (loaded, stored) =
        compile_fetching(st, doc, base).map_err(|e| compile_error(&canonical, &e))?;
    let Loaded {
        policy, summary, ..
    } = loaded;
    remember(&stored, policy);
    store_edited(st, &canonical, &summary, stored, None).map(Value::Object)
}

/// The admin API's answer to a policy that does not compile: 400 whatever the cause (the
/// document, a link, the stored record), which the message names.
pub(super) fn compile_error(full_path: &str, e: &CompileError) -> MgmtError {
    MgmtError::bad_request(format!(
        "The security policy {full_path} cannot be compiled: {e}"
    ))
}

/// Writes the edited version (and the object) in one transaction; `attach` replaces the
/// virtual-server list of a new or existing policy.
fn store_edited(
    st: &MgmtState,
    full_path: &str,
    s: &Summary,
    stored: Stored,
    attach: Option<&[String]>,
) -> MgmtResult<Map<String, Value>> {
    let n = ObjName::from_body(full_path, None, None)?;
    let id = policy_id(full_path);
    let body = stored.doc.get("policy").cloned().unwrap_or(Value::Null);
    let now = iso8601_utc(unix_seconds());
    let record = serde_json::to_value(&stored).map_err(|e| MgmtError::internal(e.to_string()))?;
    st.store.write(|tx| {
        let mut obj = match tx.get(Table::Objects, &object_key(&id))? {
            Some(Value::Object(m)) => m,
            _ => fresh(st, &n, &id, &now),
        };
        let applied = tx.get(Table::Objects, &applied_key(&id))?;
        obj.insert("enforcementMode".into(), json!(s.mode));
        obj.insert(
            "description".into(),
            body.get("description").cloned().unwrap_or(json!("")),
        );
        obj.insert(
            "applicationLanguage".into(),
            body.get("applicationLanguage")
                .cloned()
                .unwrap_or(json!("utf-8")),
        );
        obj.insert(
            "templateReference".into(),
            json!({
                "link": st.link(&format!("{}/{}", super::templates::TEMPLATES, policy_id(&s.template))),
                "name": s.template,
                "title": template_title(&s.template),
            }),
        );
        obj.insert(
            "isModified".into(),
            json!(applied.as_ref().is_none_or(|a| a != &record)),
        );
        obj.insert("versionDatetime".into(), json!(now));
        obj.insert("lastUpdateMicros".into(), json!(now_micros() as f64));
        if let Some(vs) = attach {
            obj.insert("virtualServers".into(), json!(vs));
        }
        tx.put(Table::Objects, &object_key(&id), &Value::Object(obj.clone()))?;
        tx.put(Table::Objects, &edited_key(&id), &record)?;
        Ok::<_, MgmtError>(obj)
    })
}

fn fresh(st: &MgmtState, n: &ObjName, id: &str, now: &str) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("kind".into(), json!(KIND));
    m.insert("selfLink".into(), json!(st.link(&object_key(id))));
    m.insert("id".into(), json!(id));
    m.insert("name".into(), json!(n.name));
    m.insert("partition".into(), json!(n.partition));
    if let Some(s) = &n.sub_path {
        m.insert("subPath".into(), json!(s));
    }
    m.insert("fullPath".into(), json!(n.full_path()));
    m.insert("type".into(), json!("security"));
    m.insert("active".into(), json!(false));
    m.insert("hasParent".into(), json!(false));
    m.insert("caseInsensitive".into(), json!(false));
    m.insert("protocolIndependent".into(), json!(false));
    m.insert("virtualServers".into(), json!([]));
    m.insert("manualVirtualServers".into(), json!([]));
    m.insert("createdDatetime".into(), json!(now));
    m
}

/// Attaches the policy to exactly `virtuals` (full paths or names of existing virtual servers),
/// detaching them from any other policy. Takes effect at once: attached virtuals run this
/// policy's applied version (allow-all if it was never applied), detached ones allow all.
pub fn attach_policy(st: &MgmtState, full_path: &str, virtuals: &[String]) -> MgmtResult<()> {
    let canonical = normalize(full_path)?;
    let id = policy_id(&canonical);
    let mut list: Vec<String> = Vec::new();
    for v in virtuals {
        let vfp = full_path_of(v)?;
        let key = format!("/mgmt/tm/ltm/virtual/{}", vfp.replace('/', "~"));
        if st.store.get(Table::Objects, &key)?.is_none() {
            return Err(MgmtError::not_found("Virtual Server", &vfp));
        }
        if !list.contains(&vfp) {
            list.push(vfp);
        }
    }
    let before = st.store.write(|tx| {
        let mut obj = match tx.get(Table::Objects, &object_key(&id))? {
            Some(Value::Object(m)) => m,
            _ => return Err(not_found(&canonical)),
        };
        for other in policy_objects_tx(tx)? {
            let other_full_path = full_path_field(&other);
            if other_full_path == canonical {
                continue;
            }
            let vs = virtuals_of(&other);
            if vs.iter().any(|v| list.contains(v)) {
                let mut other = other;
                let kept: Vec<String> = vs.into_iter().filter(|v| !list.contains(v)).collect();
                other.insert("virtualServers".into(), json!(kept));
                tx.put(
                    Table::Objects,
                    &object_key(&policy_id(&other_full_path)),
                    &Value::Object(other),
                )?;
            }
        }
        let before = virtuals_of(&obj);
        obj.insert("virtualServers".into(), json!(list));
        tx.put(Table::Objects, &object_key(&id), &Value::Object(obj))?;
        Ok::<_, MgmtError>(before)
    })?;
    let detached: Vec<String> = before.into_iter().filter(|v| !list.contains(v)).collect();
    publish_running(st, &canonical, &list, &detached)
}

fn policy_objects_tx(tx: &WriteTx<'_>) -> MgmtResult<Vec<Map<String, Value>>> {
    let prefix = format!("{POLICIES}/");
    let mut out = Vec::new();
    for k in tx.keys(Table::Objects, &prefix)? {
        if k[prefix.len()..].contains('/') {
            continue;
        }
        if let Some(Value::Object(m)) = tx.get(Table::Objects, &k)? {
            out.push(m);
        }
    }
    Ok(out)
}

/// Deletes a policy and its documents; its virtual servers go back to allowing all traffic.
pub fn delete_policy(st: &MgmtState, full_path: &str) -> MgmtResult<()> {
    let obj = by_path(st, full_path)?;
    let canonical = full_path_field(&obj);
    let id = policy_id(&canonical);
    st.store.write(|tx| {
        for k in [object_key(&id), edited_key(&id), applied_key(&id)] {
            tx.delete(Table::Objects, &k)?;
        }
        // Its learning goes with it.
        use super::learn::suggestions::{prefix, sources_prefix};
        for prefix in [prefix(&id), sources_prefix(&id)] {
            for k in tx.keys(Table::Events, &prefix)? {
                tx.delete(Table::Events, &k)?;
            }
        }
        Ok::<_, MgmtError>(())
    })?;
    publish_running(st, &canonical, &[], &virtuals_of(&obj))
}

/// `/mgmt/tm/asm/policies[/<id>]`: GET (with `$filter`/`$select`/`$top`/`$skip`), POST (a new
/// policy from a template), PATCH/PUT (`virtualServers`, `enforcementMode`, `description`), DELETE.
pub fn handle(ctx: &Ctx<'_>, body: &[u8]) -> MgmtResult<Reply> {
    let rest = ctx.path[POLICIES.len()..].trim_start_matches('/');
    let st = ctx.st;
    match (&ctx.method, rest) {
        (&Method::GET, "") => {
            let items: Vec<Value> = children(st, POLICIES)?
                .into_iter()
                .map(Value::Object)
                .collect();
            let items = ctx.query.apply(items);
            Ok(Reply::json(json!({
                "kind": "tm:asm:policies:policycollectionstate",
                "selfLink": st.link(POLICIES),
                "totalItems": items.len(),
                "items": items,
            })))
        }
        (&Method::POST, "") => create(st, body),
        (_, "") => Err(MgmtError::method_not_allowed(ctx.method.as_str(), POLICIES)),
        (m, id) if !id.contains('/') => match *m {
            Method::GET => Ok(Reply::json(
                ctx.query.project(Value::Object(object(st, id)?)),
            )),
            Method::PATCH | Method::PUT => modify(st, id, body).map(Reply::json),
            Method::DELETE => {
                delete_policy(st, &full_path_field(&object(st, id)?))?;
                Ok(Reply::empty(StatusCode::OK))
            }
            _ => Err(MgmtError::method_not_allowed(m.as_str(), &ctx.path)),
        },
        (_, rest) => match rest.split_once('/') {
            Some((id, sub)) => super::learn::routes::policy_sub(ctx, id, sub, body),
            None => Err(MgmtError::no_such_uri(&ctx.path)),
        },
    }
}

fn create(st: &MgmtState, body: &[u8]) -> MgmtResult<Reply> {
    let attrs = parse_object(body)?;
    let name = attrs
        .get("fullPath")
        .or_else(|| attrs.get("name"))
        .and_then(Value::as_str)
        .ok_or_else(|| MgmtError::bad_request("A policy needs a 'name' (or 'fullPath')."))?;
    let part = attrs.get("partition").and_then(Value::as_str);
    let full_path = ObjName::from_body(name, part, None)?.full_path();
    if object(st, &policy_id(&full_path)).is_ok() {
        let partition = full_path.split('/').nth(1).unwrap_or("Common");
        return Err(MgmtError::exists("Policy", &full_path, partition));
    }
    let short = full_path.rsplit('/').next().unwrap_or_default();
    let mut policy = json!({"name": short});
    let by_link = match attrs.get("templateReference").and_then(|t| t.get("link")) {
        Some(l) => Some(
            l.as_str()
                .and_then(super::templates::name_of)
                .ok_or_else(|| {
                    MgmtError::bad_request(format!(
                        "'templateReference.link' {l} names no policy template."
                    ))
                })?,
        ),
        None => None,
    };
    let template = attrs
        .get("templateName")
        .or_else(|| attrs.get("template").and_then(|t| t.get("name")))
        .or_else(|| attrs.get("templateReference").and_then(|t| t.get("name")))
        .cloned()
        .or_else(|| by_link.map(|n| json!(n)));
    if let Some(t) = template {
        policy["template"] = json!({ "name": t });
    }
    for k in ["enforcementMode", "description", "applicationLanguage"] {
        if let Some(v) = attrs.get(k) {
            policy[k] = v.clone();
        }
    }
    put_policy(st, &full_path, &json!({ "policy": policy }))?;
    if let Some(vs) = attrs.get("virtualServers") {
        attach_policy(st, &full_path, &string_list(vs)?)?;
    }
    Ok(Reply::json(Value::Object(by_path(st, &full_path)?)))
}

fn string_list(v: &Value) -> MgmtResult<Vec<String>> {
    let bad =
        || MgmtError::bad_request("'virtualServers' must be an array of virtual server names.");
    v.as_array()
        .ok_or_else(bad)?
        .iter()
        .map(|x| x.as_str().map(str::to_string).ok_or_else(bad))
        .collect()
}

/// PATCH/PUT of a policy: `virtualServers` attaches at once; `enforcementMode` and
/// `description` edit the document (applied with the next apply); read-only keys are ignored.
fn modify(st: &MgmtState, id: &str, body: &[u8]) -> MgmtResult<Value> {
    let attrs = parse_object(body)?;
    let obj = object(st, id)?;
    let full_path = full_path_field(&obj);
    let mut edits = Map::new();
    for (k, v) in &attrs {
        match k.as_str() {
            "virtualServers" => {}
            "enforcementMode" | "description" | "applicationLanguage" => {
                if obj.get(k) != Some(v) {
                    edits.insert(k.clone(), v.clone());
                }
            }
            _ if obj.get(k) == Some(v) || READ_ONLY.contains(&k.as_str()) => {}
            _ => {
                return Err(MgmtError::bad_request(format!(
                    "The property '{k}' of policy {full_path} cannot be changed here; import a new policy document instead."
                )));
            }
        }
    }
    if !edits.is_empty() {
        edit_document(st, &full_path, |doc| {
            if let Some(Value::Object(p)) = doc.get_mut("policy") {
                p.extend(edits);
            }
            Ok(())
        })?;
    }
    if let Some(vs) = attrs.get("virtualServers")
        && obj.get("virtualServers") != Some(vs)
    {
        attach_policy(st, &full_path, &string_list(vs)?)?;
    }
    object(st, id).map(Value::Object)
}

/// Changes the edited document of policy `full_path` with `f`; the result must compile (400
/// naming the problem otherwise, and nothing is stored). Applied with the next apply.
pub fn edit_document(
    st: &MgmtState,
    full_path: &str,
    f: impl FnOnce(&mut Value) -> MgmtResult<()>,
) -> MgmtResult<Map<String, Value>> {
    let canonical = full_path_field(&by_path(st, full_path)?);
    let mut s =
        stored(st, &edited_key(&policy_id(&canonical)))?.ok_or_else(|| not_found(&canonical))?;
    f(&mut s.doc)?;
    let Loaded {
        policy, summary, ..
    } = compile_stored(&s).map_err(|e| compile_error(&canonical, &e))?;
    remember(&s, policy);
    store_edited(st, &canonical, &summary, s, None)
}

const READ_ONLY: &[&str] = &[
    "kind",
    "selfLink",
    "id",
    "name",
    "partition",
    "subPath",
    "fullPath",
    "generation",
    "lastUpdateMicros",
    "versionDatetime",
    "createdDatetime",
    "isModified",
    "active",
    "templateReference",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_match_real_systems() {
        assert_eq!(policy_id("/Common/ansible1"), "u-6T62j_f0XMkjJ_s_Z-gg");
        assert_eq!(
            policy_id("/Common/WebScrapingPolicy"),
            "r3deT9IMy0gBkM65PTVlzA"
        );
        assert_eq!(policy_id("/Common/testraviawaf"), "Xnm5-sgcAnOxSsK2uDZTkQ");
    }
}
