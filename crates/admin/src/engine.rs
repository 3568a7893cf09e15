//! The generic object engine: collection GET (with `$filter`/`$select`/`$top`/`$skip` and
//! `expandSubcollections`), POST, object GET/PUT/PATCH/DELETE for every registered kind.
//! Every write is one store transaction (`ops.rs`, durable before the answer); data-plane kinds
//! re-apply the topology after the commit.

use http::{Method, StatusCode};
use serde_json::{Map, Value, json};

use super::error::{MgmtError, MgmtResult};
use super::kinds::{Coll, Target};
use super::names::ObjName;
use super::ops::{create_in, delete_in, parse_body, parse_object, touches_data_plane, update_in};
use super::reply::Reply;
use super::state::{Ctx, MgmtState};
use portcullis_store::Table;

/// Dispatches one request on a registered kind.
pub fn handle(ctx: &Ctx<'_>, target: Target, body: &[u8]) -> MgmtResult<Reply> {
    match (&ctx.method, target) {
        (&Method::GET, Target::Collection(c)) => list(ctx, &c),
        (&Method::POST, Target::Collection(c)) => create(ctx, &c, body),
        (&Method::PATCH | &Method::PUT, Target::Collection(c)) => match c.spec.collection_write {
            Some(msg) => Err(MgmtError::new(StatusCode::FORBIDDEN, msg).api(1)),
            None => Err(MgmtError::method_not_allowed(ctx.method.as_str(), &c.path)),
        },
        (&Method::DELETE, Target::Collection(c)) => match ctx.query.options.as_deref() {
            Some(glob) => delete_matching(ctx, &c, glob),
            None => Err(MgmtError::method_not_allowed("DELETE", &c.path)),
        },
        (&Method::GET, Target::Object(c, n)) => {
            let obj = load(ctx.st, &c, &n)?;
            Ok(Reply::json(ctx.query.project(output(ctx, &c, obj))))
        }
        (&Method::PUT, Target::Object(c, n)) => write(ctx, &c, &n, body, false),
        (&Method::PATCH, Target::Object(c, n)) => write(ctx, &c, &n, body, true),
        (&Method::DELETE, Target::Object(c, n)) => delete(ctx, &c, &n),
        (&Method::GET, Target::Stats(c, n)) => stats(ctx, &c, &n),
        (m, Target::Collection(c) | Target::Object(c, _) | Target::Stats(c, _)) => {
            Err(MgmtError::method_not_allowed(m.as_str(), &c.path))
        }
    }
}

/// Reads a stored object or answers the real 404.
pub fn load(st: &MgmtState, c: &Coll, n: &ObjName) -> MgmtResult<Map<String, Value>> {
    if let Some(p) = &c.parent
        && st.store.get(Table::Objects, &p.key)?.is_none()
    {
        return Err(MgmtError::not_found(p.spec.label, &p.name.full_path()));
    }
    match st.store.get(Table::Objects, &c.key(n))? {
        Some(Value::Object(m)) => Ok(m),
        _ => Err(MgmtError::not_found(c.spec.label, &c.full_path(n))),
    }
}

fn create(ctx: &Ctx<'_>, c: &Coll, body: &[u8]) -> MgmtResult<Reply> {
    let attrs = parse_object(body)?;
    let obj = ctx
        .st
        .store
        .write(|tx| create_in(ctx.st, tx, &ctx.user.name, c, attrs))?;
    after_write(ctx.st, c);
    Ok(Reply::json(output(ctx, c, obj)))
}

fn write(ctx: &Ctx<'_>, c: &Coll, n: &ObjName, body: &[u8], patch: bool) -> MgmtResult<Reply> {
    let attrs = parse_body(body, patch)?;
    let options = ctx.query.options.as_deref();
    let obj = ctx
        .st
        .store
        .write(|tx| update_in(ctx.st, tx, &ctx.user.name, c, n, attrs, patch, options))?;
    after_write(ctx.st, c);
    Ok(Reply::json(output(ctx, c, obj)))
}

fn delete(ctx: &Ctx<'_>, c: &Coll, n: &ObjName) -> MgmtResult<Reply> {
    ctx.st.store.write(|tx| delete_in(ctx.st, tx, c, n))?;
    after_write(ctx.st, c);
    Ok(Reply::empty(StatusCode::OK))
}

/// `DELETE <collection>?options=<glob>` (f5-sdk `delete_collection`): every object whose name
/// matches, in one transaction.
fn delete_matching(ctx: &Ctx<'_>, c: &Coll, glob: &str) -> MgmtResult<Reply> {
    let names: Vec<ObjName> = children(ctx.st, &c.path)?
        .iter()
        .filter(|o| {
            o.get("name")
                .and_then(Value::as_str)
                .is_some_and(|n| super::query::glob(glob, n))
        })
        .filter_map(|o| {
            o.get("fullPath")
                .and_then(Value::as_str)
                .and_then(|full_path| {
                    c.name_of(&full_path.replace('/', "~"))
                        .ok()
                        .or_else(|| c.name_of(full_path).ok())
                })
        })
        .collect();
    ctx.st.store.write(|tx| {
        for n in &names {
            delete_in(ctx.st, tx, c, n)?;
        }
        Ok::<_, MgmtError>(())
    })?;
    if !names.is_empty() {
        after_write(ctx.st, c);
    }
    Ok(Reply::empty(StatusCode::OK))
}

fn after_write(st: &MgmtState, c: &Coll) {
    if touches_data_plane(c) {
        st.reapply();
    }
}

/// Direct children of a collection, in key order.
pub fn children(st: &MgmtState, coll_path: &str) -> MgmtResult<Vec<Map<String, Value>>> {
    let prefix = format!("{coll_path}/");
    Ok(st
        .store
        .list(Table::Objects, &prefix)?
        .into_iter()
        .filter(|(k, _)| !k[prefix.len()..].contains('/'))
        .filter_map(|(_, v)| match v {
            Value::Object(m) => Some(m),
            _ => None,
        })
        .collect())
}

fn list(ctx: &Ctx<'_>, c: &Coll) -> MgmtResult<Reply> {
    if let Some(p) = &c.parent
        && ctx.st.store.get(Table::Objects, &p.key)?.is_none()
    {
        return Err(MgmtError::not_found(p.spec.label, &p.name.full_path()));
    }
    let items: Vec<Value> = children(ctx.st, &c.path)?
        .into_iter()
        .map(|o| output(ctx, c, o))
        .collect();
    Ok(Reply::json(json!({
        "kind": c.collection_kind(),
        "selfLink": ctx.st.link(&c.path),
        "items": ctx.query.apply(items),
    })))
}

/// The outgoing form: sub-collection references (expanded on request) and computed fields.
pub fn output(ctx: &Ctx<'_>, c: &Coll, mut obj: Map<String, Value>) -> Value {
    let Some(name) = obj
        .get("fullPath")
        .and_then(Value::as_str)
        .map(str::to_string)
    else {
        return Value::Object(obj);
    };
    let seg = if c.spec.partitioned {
        name.replace('/', "~")
    } else {
        name
    };
    let key = format!("{}/{seg}", c.path);
    for sub in c.spec.subs {
        let sub_path = format!("{key}/{}", sub.path);
        let mut r = json!({"link": ctx.st.link(&sub_path), "isSubcollection": true});
        if ctx.query.expand {
            let items: Vec<Value> = children(ctx.st, &sub_path)
                .unwrap_or_default()
                .into_iter()
                .map(Value::Object)
                .collect();
            r["items"] = Value::Array(items);
        }
        obj.insert(format!("{}Reference", camel(sub.path)), r);
    }
    (c.spec.decorate)(ctx.st, &mut obj);
    Value::Object(obj)
}

/// `GET <object>/stats`: the object's status as `nestedStats` entries (bigrest `show`, f5-sdk
/// `stats.load()`): `tmName`, `status.*` from the listener or monitor state, member counts for pools.
fn stats(ctx: &Ctx<'_>, c: &Coll, n: &ObjName) -> MgmtResult<Reply> {
    let obj = load(ctx.st, c, n)?;
    let out = output(ctx, c, obj);
    let key = c.key(n);
    let last = c.kind_base.rsplit(':').next().unwrap_or_default();
    let mut entries = serde_json::Map::new();
    entries.insert("tmName".into(), json!({"description": c.full_path(n)}));
    if let Some(st) = out.get("status").and_then(Value::as_object) {
        for (k, v) in st {
            entries.insert(format!("status.{k}"), json!({"description": v}));
        }
    }
    if let Some(msub) = c.spec.subs.iter().find(|s| s.path == "members") {
        let members: Vec<Value> = children(ctx.st, &format!("{key}/members"))?
            .into_iter()
            .map(|m| {
                output(
                    ctx,
                    &Coll {
                        spec: msub,
                        path: format!("{key}/members"),
                        kind_base: format!("{}:members", c.kind_base),
                        parent: None,
                    },
                    m,
                )
            })
            .collect();
        let active = members
            .iter()
            .filter(|m| {
                m["state"] != "down" && m["state"] != "user-down" && m["session"] != "user-disabled"
            })
            .count();
        entries.insert("memberCnt".into(), json!({"value": members.len()}));
        entries.insert("activeMemberCnt".into(), json!({"value": active}));
        let avail = if members.is_empty() {
            "unknown"
        } else if active > 0 {
            "available"
        } else {
            "offline"
        };
        entries.insert(
            "status.availabilityState".into(),
            json!({"description": avail}),
        );
    }
    let link = format!("https://localhost{key}/stats");
    Ok(Reply::json(json!({
        "kind": format!("{}:{last}stats", c.kind_base),
        "generation": out.get("generation").cloned().unwrap_or(json!(0)),
        "selfLink": ctx.st.link(&format!("{key}/stats")),
        "entries": {link: {"nestedStats": {"entries": entries}}},
    })))
}

fn camel(s: &str) -> String {
    let mut out = String::new();
    let mut up = false;
    for ch in s.chars() {
        if ch == '-' {
            up = true;
        } else if up {
            out.extend(ch.to_uppercase());
            up = false;
        } else {
            out.push(ch);
        }
    }
    out
}
