//! The task state machine every central manager task shares (spec part 3).
//!
//! A task is a JSON record in the `Tasks` table under `<collection>/<id>`. `POST` on the collection
//! validates the body (the kind's `prepare`), stores the record with `status: STARTED` and answers
//! **202** with it; a runner then works through the kind's steps, writing `currentStep` as it goes, and
//! ends the task `FINISHED` (`currentStep` `DONE`, or `PENDING_CONFLICTS` / `PENDING_CHILD_CONFLICTS`
//! when it waits for the user) or `FAILED` with `errorMessage`. `PATCH {status: STARTED}` resumes a
//! task waiting on conflicts or re-runs a finished or failed one (re-import); `PATCH {status:
//! CANCELED}` stops a running one; `DELETE` removes one. A runner is bounded by [`TASK_DEADLINE`],
//! isolated from panics, and never runs twice at once. At start-up [`resume_all`] re-runs the tasks a
//! previous process left `STARTED`, or fails them with a clear message when they cannot be re-run
//! (a trust task: its device password is never stored).
//! Imports: `mgmt::*`, `store`, `support`, `central::Central`.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use http::{Method, StatusCode};
use serde_json::{Map, Value, json};

use super::Central;
use crate::mgmt::error::{MgmtError, MgmtResult};
use crate::mgmt::ops::parse_object;
use crate::mgmt::reply::Reply;
use crate::mgmt::state::{Ctx, MgmtState};
use crate::store::{Table, WriteTx};
use crate::support::{iso8601_utc, now_micros, unix_seconds};

pub const STARTED: &str = "STARTED";
pub const FINISHED: &str = "FINISHED";
pub const FAILED: &str = "FAILED";
pub const CANCELED: &str = "CANCELED";
pub const DONE: &str = "DONE";
pub const PENDING_CONFLICTS: &str = "PENDING_CONFLICTS";
pub const PENDING_CHILD_CONFLICTS: &str = "PENDING_CHILD_CONFLICTS";

/// Tasks kept per collection by default (`central.max_tasks`); when a new one would exceed it,
/// the oldest ended tasks are removed.
pub const MAX_TASKS: usize = 1000;

/// The longest a task may run before it is failed (each outbound call has its own timeout).
pub const TASK_DEADLINE: Duration = Duration::from_secs(15 * 60);

/// What a runner returns: the fields to set on the finished task (`currentStep` defaults to
/// `DONE`), or the message it failed with.
pub type Outcome = Result<Map<String, Value>, String>;
pub type RunFuture = Pin<Box<dyn Future<Output = Outcome> + Send>>;
/// Starts the work of a task.
pub type RunFn = fn(Run) -> RunFuture;
/// Validates a POST body (`existing` = None) or a PATCH restart (`existing` = the stored task,
/// `task` = stored fields overlaid with the PATCH body); normalises `task` in place and removes
/// secrets from it, returning them for the runner (they are never stored).
pub type PrepareFn = fn(
    &Ctx<'_>,
    &Central,
    &mut Map<String, Value>,
    Option<&Map<String, Value>>,
) -> MgmtResult<Option<Value>>;

/// What to do with a task found `STARTED` when the central manager starts.
#[derive(Clone, Copy, Debug)]
pub enum Resume {
    /// Run it again from its first step (its steps are idempotent).
    Rerun,
    /// Fail it with this message.
    Fail(&'static str),
}

/// One kind of task.
pub struct TaskKind {
    /// The collection path (`/mgmt/cm/global/tasks/device-trust`).
    pub collection: &'static str,
    /// The item kind (`cm:global:tasks:device-trust:trusttaskitemstate`).
    pub kind: &'static str,
    pub collection_kind: &'static str,
    pub prepare: PrepareFn,
    pub run: RunFn,
    pub resume: Resume,
    /// Task collections (this one included) in which a `STARTED` task for the same device
    /// (`machineId` / `machineIds`) makes a new start of this kind answer 409.
    pub exclusive: &'static [&'static str],
}

/// A running task as its runner sees it.
pub struct Run {
    pub c: Arc<Central>,
    /// The store key (`<collection>/<id>`).
    pub key: String,
    /// What `prepare` took out of the request (passwords), when the task was started by a request.
    pub secret: Option<Value>,
}

impl Run {
    /// The stored task.
    pub fn record(&self) -> Result<Map<String, Value>, String> {
        match self.c.store.get(Table::Tasks, &self.key) {
            Ok(Some(Value::Object(m))) => Ok(m),
            Ok(_) => Err("the task was deleted".into()),
            Err(e) => Err(e.to_string()),
        }
    }

    /// Records progress; fails when the task was canceled or deleted meanwhile (the runner stops).
    pub fn step(&self, step: &str) -> Result<(), String> {
        let mut m = Map::new();
        m.insert("currentStep".into(), json!(step));
        self.set(m)
    }

    /// Merges fields into the stored task while it is still running.
    pub fn set(&self, fields: Map<String, Value>) -> Result<(), String> {
        let r: MgmtResult<()> = self.c.store.write(|tx| {
            let Some(Value::Object(mut t)) = tx.get(Table::Tasks, &self.key)? else {
                return Err(MgmtError::bad_request("the task was deleted"));
            };
            if t.get("status").and_then(Value::as_str) != Some(STARTED) {
                return Err(MgmtError::bad_request("the task was canceled"));
            }
            t.extend(fields);
            touch(&mut t);
            tx.put(Table::Tasks, &self.key, &Value::Object(t))?;
            Ok(())
        });
        r.map_err(|e| e.message)
    }
}

fn touch(t: &mut Map<String, Value>) {
    let g = t.get("generation").and_then(Value::as_u64).unwrap_or(0) + 1;
    t.insert("generation".into(), json!(g));
    t.insert("lastUpdateMicros".into(), json!(now_micros()));
}

fn now_text() -> String {
    iso8601_utc(unix_seconds())
}

/// Registers a task kind so [`resume_all`] knows it.
pub fn register(c: &Central, kind: &'static TaskKind) {
    let mut k = c.kinds.write();
    if !k.iter().any(|x| std::ptr::eq(*x, kind)) {
        k.push(kind);
    }
}

/// Starts the runner of a stored task unless one is already live.
pub fn spawn(c: &Arc<Central>, kind: &'static TaskKind, key: String, secret: Option<Value>) {
    if !c.running.lock().insert(key.clone()) {
        return;
    }
    let c2 = c.clone();
    c.rt.spawn(async move {
        let run = Run {
            c: c2.clone(),
            key: key.clone(),
            secret,
        };
        let mut inner = tokio::spawn((kind.run)(run));
        let outcome = tokio::select! {
            r = &mut inner => match r {
                Ok(o) => o,
                Err(e) => Err(format!("internal error in the task runner: {e}")),
            },
            _ = tokio::time::sleep(TASK_DEADLINE) => {
                inner.abort();
                Err(format!("the task did not finish within {} s", TASK_DEADLINE.as_secs()))
            }
        };
        c2.running.lock().remove(&key);
        if let Err(e) = finish(&c2, &key, outcome) {
            tracing::error!(task = %key, error = %e.message, "recording the end of a task failed");
        }
    });
}

/// Writes the terminal state of a task that is still `STARTED`.
fn finish(c: &Central, key: &str, outcome: Outcome) -> MgmtResult<()> {
    c.store.write(|tx| {
        let Some(Value::Object(mut t)) = tx.get(Table::Tasks, key)? else {
            return Ok(());
        };
        if t.get("status").and_then(Value::as_str) != Some(STARTED) {
            return Ok(());
        }
        match outcome {
            Ok(fields) => {
                t.insert("currentStep".into(), json!(DONE));
                t.extend(fields);
                t.insert("status".into(), json!(FINISHED));
                t.remove("errorMessage");
            }
            Err(msg) => {
                tracing::warn!(task = %key, error = %msg, "central task failed");
                t.insert("status".into(), json!(FAILED));
                t.insert("errorMessage".into(), json!(msg));
            }
        }
        t.insert("endDateTime".into(), json!(now_text()));
        touch(&mut t);
        tx.put(Table::Tasks, key, &Value::Object(t))?;
        Ok(())
    })
}

/// Re-runs or fails every task a previous process left `STARTED` (called once by `install`).
pub fn resume_all(st: &MgmtState) -> MgmtResult<()> {
    let c = super::state(st)?;
    let kinds = c.kinds.read().clone();
    for (key, v) in st.store.list(Table::Tasks, "/mgmt/cm/")? {
        if v.get("status").and_then(Value::as_str) != Some(STARTED) {
            continue;
        }
        let Some(kind) = kinds
            .iter()
            .find(|k| key.starts_with(&format!("{}/", k.collection)))
        else {
            continue;
        };
        match kind.resume {
            Resume::Rerun => {
                tracing::info!(task = %key, "resuming a task interrupted by a restart");
                spawn(&c, kind, key, None);
            }
            Resume::Fail(msg) => finish(&c, &key, Err(msg.to_string()))?,
        }
    }
    Ok(())
}

/// The machine ids a task is about.
fn machines(t: &Map<String, Value>) -> Vec<String> {
    let mut out: Vec<String> = t
        .get("machineIds")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
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
    let id = crate::mgmt::seed::new_uuid();
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
