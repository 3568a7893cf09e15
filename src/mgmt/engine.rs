//! The generic object engine: collection GET (with `$filter`/`$select`/`$top`/`$skip` and
//! `expandSubcollections`), POST, object GET/PUT/PATCH/DELETE for every registered kind.
//! Every write is one store transaction (durable before the answer); data-plane kinds re-apply
//! the topology after the commit. Imports: `store`, `mgmt::{error,kinds,names,reply,state}`.

use http::{Method, StatusCode};
use serde_json::{Map, Value, json};

use super::error::{MgmtError, MgmtResult};
use super::kinds::{Coll, Prep, Target, str_field};
use super::names::ObjName;
use super::reply::Reply;
use super::state::{Ctx, MgmtState};
use crate::store::{Table, WriteTx};

/// Keys a client may send back (f5-sdk PUTs the whole object) but never sets.
const READ_ONLY: &[&str] = &[
    "kind",
    "selfLink",
    "generation",
    "fullPath",
    "lastUpdateMicros",
];

/// Dispatches one request on a registered kind.
pub fn handle(ctx: &Ctx<'_>, target: Target, body: &[u8]) -> MgmtResult<Reply> {
    match (&ctx.method, target) {
        (&Method::GET, Target::Collection(c)) => list(ctx, &c),
        (&Method::POST, Target::Collection(c)) => create(ctx, &c, body),
        (&Method::PATCH | &Method::PUT, Target::Collection(c)) => match c.spec.collection_write {
            Some(msg) => Err(MgmtError::new(StatusCode::FORBIDDEN, msg).api(1)),
            None => Err(MgmtError::method_not_allowed(ctx.method.as_str(), &c.path)),
        },
        (&Method::GET, Target::Object(c, n)) => {
            let obj = load(ctx.st, &c, &n)?;
            Ok(Reply::json(ctx.query.project(output(ctx, &c, obj))))
        }
        (&Method::PUT, Target::Object(c, n)) => write(ctx, &c, &n, body, false),
        (&Method::PATCH, Target::Object(c, n)) => write(ctx, &c, &n, body, true),
        (&Method::DELETE, Target::Object(c, n)) => delete(ctx, &c, &n),
        (m, Target::Collection(c) | Target::Object(c, _)) => {
            Err(MgmtError::method_not_allowed(m.as_str(), &c.path))
        }
    }
}

/// Parses a JSON object body; anything else is the part-7 invalid-JSON 400.
pub fn parse_object(body: &[u8]) -> MgmtResult<Map<String, Value>> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(m)) => Ok(m),
        _ => Err(MgmtError::invalid_json()),
    }
}

/// Boolean pairs of which a client sends only one (`disabled: true` replaces `enabled: true`).
const PAIRS: &[(&str, &str)] = &[
    ("enabled", "disabled"),
    ("online", "offline"),
    ("vlansEnabled", "vlansDisabled"),
];

/// Merges `incoming` over `base`, dropping the partner of any boolean pair `incoming` sets.
fn merge(mut base: Map<String, Value>, incoming: Map<String, Value>) -> Map<String, Value> {
    for (a, b) in PAIRS {
        if incoming.contains_key(*a) {
            base.remove(*b);
        }
        if incoming.contains_key(*b) {
            base.remove(*a);
        }
    }
    base.extend(incoming);
    base
}

fn strip_read_only(m: &mut Map<String, Value>) {
    m.retain(|k, v| {
        let link_only =
            k.ends_with("Reference") && v.get("items").is_none() && v.get("link").is_some();
        !(READ_ONLY.contains(&k.as_str()) || link_only)
    });
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

/// The next configuration generation (durable, monotonic).
pub fn next_generation(tx: &mut WriteTx<'_>) -> MgmtResult<u64> {
    let g = tx
        .get(Table::Meta, "generation")?
        .and_then(|v| v.as_u64())
        .unwrap_or(0)
        + 1;
    tx.put(Table::Meta, "generation", &json!(g))?;
    Ok(g)
}

/// Builds the stored form: identity keys first, then the attributes.
fn identity(
    st: &MgmtState,
    c: &Coll,
    n: &ObjName,
    generation: u64,
    attrs: Map<String, Value>,
) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("kind".into(), json!(c.item_kind()));
    m.insert("name".into(), json!(n.name));
    if c.spec.partitioned {
        m.insert("partition".into(), json!(n.partition));
        if let Some(s) = &n.sub_path {
            m.insert("subPath".into(), json!(s));
        }
    }
    m.insert("fullPath".into(), json!(c.full_path(n)));
    m.insert("generation".into(), json!(generation));
    m.insert("selfLink".into(), json!(st.link(&c.key(n))));
    for (k, v) in attrs {
        if !matches!(k.as_str(), "name" | "partition" | "subPath") {
            m.insert(k, v);
        }
    }
    m
}

fn create(ctx: &Ctx<'_>, c: &Coll, body: &[u8]) -> MgmtResult<Reply> {
    let mut attrs = parse_object(body)?;
    strip_read_only(&mut attrs);
    let raw_name = str_field(&attrs, "name")?
        .ok_or_else(|| MgmtError::bad_request("The 'name' property is required."))?
        .to_string();
    let n = if c.spec.partitioned {
        ObjName::from_body(
            &raw_name,
            str_field(&attrs, "partition")?,
            str_field(&attrs, "subPath")?,
        )?
    } else {
        c.name_of(&raw_name)?
    };
    let key = c.key(&n);
    let st = ctx.st;
    let obj = st.store.write(|tx| {
        if let Some(p) = &c.parent
            && tx.get(Table::Objects, &p.key)?.is_none()
        {
            return Err(MgmtError::not_found(p.spec.label, &p.name.full_path()));
        }
        if tx.get(Table::Objects, &key)?.is_some() {
            return Err(MgmtError::exists(
                c.spec.label,
                &c.full_path(&n),
                &n.partition,
            ));
        }
        let merged = merge(defaults(c), attrs);
        commit(st, tx, c, &n, &key, merged, true, &ctx.user.name)
    })?;
    after_write(st, c);
    Ok(Reply::json(output(ctx, c, obj)))
}

fn write(ctx: &Ctx<'_>, c: &Coll, n: &ObjName, body: &[u8], patch: bool) -> MgmtResult<Reply> {
    let mut attrs = if body.iter().all(u8::is_ascii_whitespace) && patch {
        Map::new()
    } else {
        parse_object(body)?
    };
    strip_read_only(&mut attrs);
    let key = c.key(n);
    let st = ctx.st;
    let options = ctx.query.options.clone();
    let obj = st.store.write(|tx| {
        let Some(Value::Object(existing)) = tx.get(Table::Objects, &key)? else {
            return Err(MgmtError::not_found(c.spec.label, &c.full_path(n)));
        };
        let merged = if patch {
            let custom = match c.spec.patch {
                Some(f) => {
                    let mut probe = existing.clone();
                    let prep = Prep {
                        st,
                        tx: &mut *tx,
                        obj: &mut probe,
                        name: n,
                        user: &ctx.user.name,
                        key: &key,
                        parent: c.parent.as_ref(),
                        created: false,
                    };
                    f(&prep, &attrs, options.as_deref())?
                }
                None => None,
            };
            match custom {
                Some(m) => m,
                None => merge(existing, attrs),
            }
        } else {
            merge(defaults(c), attrs)
        };
        let mut merged = merged;
        strip_read_only(&mut merged);
        commit(st, tx, c, n, &key, merged, false, &ctx.user.name)
    })?;
    after_write(st, c);
    Ok(Reply::json(output(ctx, c, obj)))
}

/// Runs the kind's `prepare`, stamps identity and generation, and stores the object.
#[allow(clippy::too_many_arguments)]
pub fn commit(
    st: &MgmtState,
    tx: &mut WriteTx<'_>,
    c: &Coll,
    n: &ObjName,
    key: &str,
    mut attrs: Map<String, Value>,
    created: bool,
    user: &str,
) -> MgmtResult<Map<String, Value>> {
    (c.spec.prepare)(&mut Prep {
        st,
        tx: &mut *tx,
        obj: &mut attrs,
        name: n,
        user,
        key,
        parent: c.parent.as_ref(),
        created,
    })?;
    let generation = next_generation(tx)?;
    let obj = identity(st, c, n, generation, attrs);
    tx.put(Table::Objects, key, &Value::Object(obj.clone()))?;
    Ok(obj)
}

fn delete(ctx: &Ctx<'_>, c: &Coll, n: &ObjName) -> MgmtResult<Reply> {
    let key = c.key(n);
    let st = ctx.st;
    st.store.write(|tx| {
        if tx.get(Table::Objects, &key)?.is_none() {
            return Err(MgmtError::not_found(c.spec.label, &c.full_path(n)));
        }
        (c.spec.before_delete)(st, tx, n)?;
        for k in tx.keys(Table::Objects, &format!("{key}/"))? {
            tx.delete(Table::Objects, &k)?;
        }
        tx.delete(Table::Objects, &key)?;
        next_generation(tx)?;
        Ok::<_, MgmtError>(())
    })?;
    after_write(st, c);
    Ok(Reply::empty(StatusCode::OK))
}

fn defaults(c: &Coll) -> Map<String, Value> {
    match (c.spec.defaults)() {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

fn after_write(st: &MgmtState, c: &Coll) {
    if c.spec.data_plane || c.parent.as_ref().is_some_and(|p| p.spec.data_plane) {
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
