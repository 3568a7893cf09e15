//! The HTTP side of the central manager's tasks (see `tasks` for the state machine): `GET`/`POST`
//! on a task collection, `GET`/`PATCH`/`DELETE` on a task, with the checks done inside the store
//! write that starts a task (one task per device where the kind says so, bounded retention).

use std::sync::Arc;

use http::{Method, StatusCode};
use serde_json::{Map, Value, json};

use super::Central;
use super::tasks::{CANCELED, STARTED, TaskKind, WORKER, now_text, spawn, touch};
use portcullis_admin::Ctx;
use portcullis_admin::Reply;
use portcullis_admin::parse_object;
use portcullis_admin::{MgmtError, MgmtResult};
use portcullis_store::{Table, WriteTx};
use portcullis_support::now_micros;

/// The machine ids a task is about.
fn machines(t: &Map<String, Value>) -> Vec<String> {
    let mut out = portcullis_support::json_strings(t.get("machineIds"));
    if let Some(m) = t.get("machineId").and_then(Value::as_str) {
        out.push(m.to_string());
    }
    out
}

/// Inside the write that starts `t`: 409 when another task of the `exclusive` collections is
/// running for one of its devices.
fn check_exclusive(
    tx: &WriteTx<'_>,
    kind: &TaskKind,
    key: &str,
    t: &Map<String, Value>,
) -> MgmtResult<()> {
    let mine = machines(t);
    if mine.is_empty() {
        return Ok(());
    }
    for coll in kind.exclusive {
        for k in tx.keys(Table::Tasks, &format!("{coll}/"))? {
            if k == key {
                continue;
            }
            let Some(Value::Object(o)) = tx.get(Table::Tasks, &k)? else {
                continue;
            };
            if o.get("status").and_then(Value::as_str) != Some(STARTED) {
                continue;
            }
            if let Some(m) = machines(&o).into_iter().find(|m| mine.contains(m)) {
                return Err(MgmtError::new(
                    StatusCode::CONFLICT,
                    format!(
                        "Task {} is already working on device {m}; wait until it is FINISHED or FAILED.",
                        o.get("selfLink").and_then(Value::as_str).unwrap_or(&k)
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Inside the write that adds a task: removes the oldest ended tasks beyond `max`.
fn prune(tx: &mut WriteTx<'_>, kind: &TaskKind, max: usize) -> MgmtResult<()> {
    let keys = tx.keys(Table::Tasks, &format!("{}/", kind.collection))?;
    if keys.len() < max {
        return Ok(());
    }
    let mut ended = Vec::new();
    for k in keys.iter() {
        if let Some(Value::Object(o)) = tx.get(Table::Tasks, k)?
            && o.get("status").and_then(Value::as_str) != Some(STARTED)
        {
            ended.push((
                o.get("startMicros").and_then(Value::as_u64).unwrap_or(0),
                k.clone(),
            ));
        }
    }
    ended.sort();
    let excess = keys.len() + 1 - max;
    if ended.len() < excess {
        return Err(MgmtError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "{max} tasks are running in {}; wait for some to end.",
                kind.collection
            ),
        ));
    }
    for (_, k) in ended.into_iter().take(excess) {
        tx.delete(Table::Tasks, &k)?;
    }
    Ok(())
}

fn not_found(id: &str) -> MgmtError {
    MgmtError::new(StatusCode::NOT_FOUND, format!("Task {id} does not exist."))
}

/// Keys a PATCH may not change.
const IDENTITY: &[&str] = &[
    "id",
    WORKER,
    "kind",
    "selfLink",
    "generation",
    "lastUpdateMicros",
    "startDateTime",
    "endDateTime",
    "username",
    "userReference",
    "errorMessage",
];

/// Serves a task collection and its items for `kind`.
pub fn handle(ctx: &Ctx<'_>, body: &[u8], kind: &'static TaskKind) -> MgmtResult<Reply> {
    let c = super::state(ctx.st)?;
    let rest = ctx.path[kind.collection.len()..].trim_start_matches('/');
    if rest.contains('/') {
        return Err(MgmtError::no_such_uri(&ctx.path));
    }
    match (&ctx.method, rest.is_empty()) {
        (&Method::GET, true) => list(ctx, kind),
        (&Method::POST, true) => create(ctx, &c, kind, body),
        (&Method::GET, false) => {
            let t = load(&c, kind, rest)?;
            Ok(Reply::json(ctx.query.project(Value::Object(t))))
        }
        (&Method::PATCH, false) => patch(ctx, &c, kind, rest, body),
        (&Method::DELETE, false) => {
            let key = format!("{}/{rest}", kind.collection);
            let existed = c.store.write(|tx| tx.delete(Table::Tasks, &key))?;
            if !existed {
                return Err(not_found(rest));
            }
            Ok(Reply::empty(StatusCode::OK))
        }
        (m, _) => Err(MgmtError::method_not_allowed(m.as_str(), &ctx.path)),
    }
}

/// Serves whichever of `kinds` the request path is under (one module's kind of several).
pub fn handle_any(ctx: &Ctx<'_>, body: &[u8], kinds: &[&'static TaskKind]) -> MgmtResult<Reply> {
    let kind = kinds
        .iter()
        .find(|k| ctx.path == k.collection || ctx.path.starts_with(&format!("{}/", k.collection)))
        .ok_or_else(|| MgmtError::no_such_uri(&ctx.path))?;
    handle(ctx, body, kind)
}

/// The stored task `id` of `kind`, or the 404.
pub fn load(c: &Central, kind: &TaskKind, id: &str) -> MgmtResult<Map<String, Value>> {
    match c
        .store
        .get(Table::Tasks, &format!("{}/{id}", kind.collection))?
    {
        Some(Value::Object(m)) => Ok(m),
        _ => Err(not_found(id)),
    }
}

fn list(ctx: &Ctx<'_>, kind: &TaskKind) -> MgmtResult<Reply> {
    let prefix = format!("{}/", kind.collection);
    let mut items: Vec<Value> = ctx
        .st
        .store
        .list(Table::Tasks, &prefix)?
        .into_iter()
        .map(|(_, v)| v)
        .collect();
    items.sort_by_key(|v| v.get("startMicros").and_then(Value::as_u64).unwrap_or(0));
    Ok(Reply::json(json!({
        "kind": kind.collection_kind,
        "selfLink": format!("https://localhost{}", kind.collection),
        "items": ctx.query.apply(items),
        "generation": 0,
        "lastUpdateMicros": now_micros(),
    })))
}

fn create(
    ctx: &Ctx<'_>,
    c: &Arc<Central>,
    kind: &'static TaskKind,
    body: &[u8],
) -> MgmtResult<Reply> {
    let mut t = parse_object(body)?;
    match t.get("status").and_then(Value::as_str) {
        None | Some(STARTED) => {}
        Some(other) => {
            return Err(MgmtError::bad_request(format!(
                "A new task starts with status STARTED, not '{other}'."
            )));
        }
    }
    for k in IDENTITY {
        t.remove(*k);
    }
    let secret = (kind.prepare)(ctx, c, &mut t, None)?;
    let id = portcullis_support::new_uuid();
    let now = now_micros();
    let mut rec = Map::new();
    rec.insert("id".into(), json!(id));
    rec.insert("kind".into(), json!(kind.kind));
    rec.insert(
        "selfLink".into(),
        json!(format!("https://localhost{}/{id}", kind.collection)),
    );
    rec.extend(t);
    rec.insert("status".into(), json!(STARTED));
    rec.entry("currentStep").or_insert(json!(STARTED));
    rec.insert("startDateTime".into(), json!(now_text()));
    rec.insert("startMicros".into(), json!(now));
    rec.insert("username".into(), json!(ctx.user.name));
    rec.insert(
        "userReference".into(),
        json!({"link": format!("https://localhost/mgmt/shared/authz/users/{}", ctx.user.name)}),
    );
    rec.insert("generation".into(), json!(1));
    rec.insert(WORKER.into(), json!(1));
    rec.insert("lastUpdateMicros".into(), json!(now));
    let key = format!("{}/{id}", kind.collection);
    c.store.write(|tx| {
        check_exclusive(tx, kind, &key, &rec)?;
        prune(tx, kind, c.max_tasks)?;
        tx.put(Table::Tasks, &key, &Value::Object(rec.clone()))?;
        Ok::<_, MgmtError>(())
    })?;
    spawn(c, kind, key, secret);
    Ok(Reply::json(Value::Object(rec)).status(StatusCode::ACCEPTED))
}

fn patch(
    ctx: &Ctx<'_>,
    c: &Arc<Central>,
    kind: &'static TaskKind,
    id: &str,
    body: &[u8],
) -> MgmtResult<Reply> {
    let b = parse_object(body)?;
    let existing = load(c, kind, id)?;
    let key = format!("{}/{id}", kind.collection);
    let current = existing.get("status").and_then(Value::as_str).unwrap_or("");
    let step = existing
        .get("currentStep")
        .and_then(Value::as_str)
        .unwrap_or("");
    match b.get("status").and_then(Value::as_str) {
        Some(CANCELED) | Some("CANCEL") => {
            if current != STARTED {
                return Err(MgmtError::bad_request(format!(
                    "Task {id} is {current}; only a STARTED task can be canceled."
                )));
            }
            let mut t = existing;
            t.insert("status".into(), json!(CANCELED));
            t.insert("endDateTime".into(), json!(now_text()));
            touch(&mut t);
            c.store
                .write(|tx| tx.put(Table::Tasks, &key, &Value::Object(t.clone())))?;
            Ok(Reply::json(Value::Object(t)))
        }
        Some(STARTED) => {
            if current == STARTED {
                return Err(MgmtError::new(
                    StatusCode::CONFLICT,
                    format!(
                        "Task {id} is already running (currentStep {step}); wait until it is FINISHED or FAILED."
                    ),
                ));
            }
            let mut t = existing.clone();
            for (k, v) in b {
                if !IDENTITY.contains(&k.as_str()) {
                    t.insert(k, v);
                }
            }
            let secret = (kind.prepare)(ctx, c, &mut t, Some(&existing))?;
            t.insert("status".into(), json!(STARTED));
            let worker = existing.get(WORKER).and_then(Value::as_u64).unwrap_or(0) + 1;
            t.insert(WORKER.into(), json!(worker));
            t.remove("errorMessage");
            t.remove("endDateTime");
            t.insert("startDateTime".into(), json!(now_text()));
            touch(&mut t);
            c.store.write(|tx| {
                let now = tx.get(Table::Tasks, &key)?;
                if now
                    .as_ref()
                    .and_then(|v| v.get("status"))
                    .and_then(Value::as_str)
                    == Some(STARTED)
                {
                    return Err(MgmtError::new(
                        StatusCode::CONFLICT,
                        format!("Task {id} is already running."),
                    ));
                }
                check_exclusive(tx, kind, &key, &t)?;
                tx.put(Table::Tasks, &key, &Value::Object(t.clone()))?;
                Ok::<_, MgmtError>(())
            })?;
            spawn(c, kind, key, secret);
            Ok(Reply::json(Value::Object(t)))
        }
        Some(other) => Err(MgmtError::bad_request(format!(
            "A task PATCH sets status STARTED (resume or re-run) or CANCELED, not '{other}'."
        ))),
        None => Err(MgmtError::bad_request(
            "A task PATCH needs status STARTED (resume or re-run) or CANCELED.",
        )),
    }
}

/// A required non-empty string field of a task body, or the 400 naming it.
pub fn required_str(t: &Map<String, Value>, key: &str) -> MgmtResult<String> {
    match t.get(key) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.trim().to_string()),
        _ => Err(MgmtError::bad_request(format!(
            "The task property '{key}' is required (a non-empty string)."
        ))),
    }
}

#[cfg(test)]
#[path = "task_api_tests.rs"]
mod tests;
