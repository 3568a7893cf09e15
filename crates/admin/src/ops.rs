//! Object writes inside one store write transaction: create, replace (PUT), patch, delete, with
//! the identity stamping, generation counter, read-only-key and boolean-pair rules. The HTTP
//! engine runs one op per transaction; `/mgmt/tm/transaction` runs many in one.

use serde_json::{Map, Value, json};

use super::error::{MgmtError, MgmtResult};
use super::kinds::{Coll, PendingWrite, str_field};
use super::names::ObjName;
use super::state::MgmtState;
use portcullis_store::{Table, WriteTx};

/// Keys a client may send back (f5-sdk PUTs the whole object) but never sets.
const READ_ONLY: &[&str] = &[
    "kind",
    "selfLink",
    "generation",
    "fullPath",
    "lastUpdateMicros",
];

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

pub fn strip_read_only(m: &mut Map<String, Value>) {
    m.retain(|k, v| {
        let link_only =
            k.ends_with("Reference") && v.get("items").is_none() && v.get("link").is_some();
        !(READ_ONLY.contains(&k.as_str()) || link_only)
    });
}

/// Parses a JSON object body; anything else is the invalid-JSON 400 (apiError 1).
pub fn parse_object(body: &[u8]) -> MgmtResult<Map<String, Value>> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(m)) => Ok(m),
        _ => Err(MgmtError::invalid_json()),
    }
}

/// A PATCH body may be empty (`?options=` forms); others must be a JSON object.
pub fn parse_body(body: &[u8], patch: bool) -> MgmtResult<Map<String, Value>> {
    if patch && body.iter().all(u8::is_ascii_whitespace) {
        Ok(Map::new())
    } else {
        parse_object(body)
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

fn defaults(c: &Coll) -> Map<String, Value> {
    match (c.spec.defaults)() {
        Value::Object(m) => m,
        _ => Map::new(),
    }
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

/// What a kind's hooks see of a write of `n` in `c`: `obj` is the object as it would be stored.
#[allow(clippy::too_many_arguments)]
fn pending<'a, 'b>(
    st: &'a MgmtState,
    tx: &'a mut WriteTx<'b>,
    c: &'a Coll,
    n: &'a ObjName,
    key: &'a str,
    user: &'a str,
    obj: &'a mut Map<String, Value>,
    created: bool,
) -> PendingWrite<'a, 'b> {
    PendingWrite {
        st,
        tx,
        obj,
        name: n,
        user,
        key,
        parent: c.parent.as_ref(),
        created,
    }
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
    (c.spec.prepare)(&mut pending(st, tx, c, n, key, user, &mut attrs, created))?;
    let generation = next_generation(tx)?;
    let obj = identity(st, c, n, generation, attrs);
    tx.put(Table::Objects, key, &Value::Object(obj.clone()))?;
    Ok(obj)
}

fn parent_exists(tx: &WriteTx<'_>, c: &Coll) -> MgmtResult<()> {
    match &c.parent {
        Some(p) if tx.get(Table::Objects, &p.key)?.is_none() => {
            Err(MgmtError::not_found(p.spec.label, &p.name.full_path()))
        }
        _ => Ok(()),
    }
}

/// POST on a collection.
pub fn create_in(
    st: &MgmtState,
    tx: &mut WriteTx<'_>,
    user: &str,
    c: &Coll,
    mut attrs: Map<String, Value>,
) -> MgmtResult<Map<String, Value>> {
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
    parent_exists(tx, c)?;
    if tx.get(Table::Objects, &key)?.is_some() {
        return Err(MgmtError::exists(
            c.spec.label,
            &c.full_path(&n),
            &n.partition,
        ));
    }
    let merged = merge(defaults(c), attrs);
    commit(st, tx, c, &n, &key, merged, true, user)
}

/// PUT (`patch == false`) or PATCH of an object.
#[allow(clippy::too_many_arguments)]
pub fn update_in(
    st: &MgmtState,
    tx: &mut WriteTx<'_>,
    user: &str,
    c: &Coll,
    n: &ObjName,
    mut attrs: Map<String, Value>,
    patch: bool,
    options: Option<&str>,
) -> MgmtResult<Map<String, Value>> {
    strip_read_only(&mut attrs);
    let key = c.key(n);
    parent_exists(tx, c)?;
    let Some(Value::Object(existing)) = tx.get(Table::Objects, &key)? else {
        return Err(MgmtError::not_found(c.spec.label, &c.full_path(n)));
    };
    let mut merged = if patch {
        let custom = match c.spec.patch {
            Some(f) => {
                let mut probe = existing.clone();
                let prep = pending(st, tx, c, n, &key, user, &mut probe, false);
                f(&prep, &attrs, options)?
            }
            None => None,
        };
        custom.unwrap_or_else(|| merge(existing, attrs))
    } else {
        merge(defaults(c), attrs)
    };
    strip_read_only(&mut merged);
    commit(st, tx, c, n, &key, merged, false, user)
}

/// DELETE of an object and its sub-collections.
pub fn delete_in(st: &MgmtState, tx: &mut WriteTx<'_>, c: &Coll, n: &ObjName) -> MgmtResult<()> {
    let key = c.key(n);
    parent_exists(tx, c)?;
    if tx.get(Table::Objects, &key)?.is_none() {
        return Err(MgmtError::not_found(c.spec.label, &c.full_path(n)));
    }
    (c.spec.before_delete)(st, tx, n)?;
    for k in tx.keys(Table::Objects, &format!("{key}/"))? {
        tx.delete(Table::Objects, &k)?;
    }
    tx.delete(Table::Objects, &key)?;
    next_generation(tx)?;
    Ok(())
}

/// Whether a write to this collection changes the data plane.
pub fn touches_data_plane(c: &Coll) -> bool {
    c.spec.data_plane || c.parent.as_ref().is_some_and(|p| p.spec.data_plane)
}
