//! The task state machine every central manager task shares (`docs/central.md` lists the states).
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
//! (a trust task: its device password is never stored). The HTTP side is `task_api`.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::Central;
use portcullis_admin::MgmtResult;
use portcullis_admin::{Ctx, MgmtState};
use portcullis_store::Table;
use portcullis_support::task;
use portcullis_support::{iso8601_utc, now_micros, unix_seconds};

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

/// `pub static KINDS`: the three kinds (one per module: adc-core, asm, firewall) of a task at
/// `/mgmt/cm/<module>/tasks/<task>`, with the calling module's `prepare` and `run`. Only import
/// (`declare-mgmt-authority`) and deploy (`deploy-configuration`) are per-module, and on one
/// device they exclude each other within a module, hence the fixed `exclusive` pair.
macro_rules! module_task_kinds {
    ($task:literal, $item_state:literal, $collection_state:literal) => {
        pub static KINDS: &[&$crate::tasks::TaskKind] = &[
    &module_task_kinds!(@one "adc-core", $task, $item_state, $collection_state),
    &module_task_kinds!(@one "asm", $task, $item_state, $collection_state),
    &module_task_kinds!(@one "firewall", $task, $item_state, $collection_state),
        ];
    };
    (@one $cm:literal, $task:literal, $item_state:literal, $collection_state:literal) => {
        $crate::tasks::TaskKind {
            collection: concat!("/mgmt/cm/", $cm, "/tasks/", $task),
            kind: concat!("cm:", $cm, ":tasks:", $task, ":", $item_state),
            collection_kind: concat!("cm:", $cm, ":tasks:", $task, ":", $collection_state),
            prepare,
            run,
            resume: $crate::tasks::Resume::Rerun,
            exclusive: &[
                concat!("/mgmt/cm/", $cm, "/tasks/declare-mgmt-authority"),
                concat!("/mgmt/cm/", $cm, "/tasks/deploy-configuration"),
            ],
        }
    };
}
pub(crate) use module_task_kinds;

/// A running task as its runner sees it.
pub struct Run {
    pub c: Arc<Central>,
    /// The store key (`<collection>/<id>`).
    pub key: String,
    /// What `prepare` took out of the request (passwords), when the task was started by a request.
    pub secret: Option<Value>,
    /// The `taskWorkerGeneration` this run was started for: a PATCH that restarts the task makes
    /// an older run stop at its next step, and its end is not recorded.
    pub worker: u64,
}

/// The task field counting (re)starts, as the real system names it.
pub const WORKER: &str = "taskWorkerGeneration";

fn worker_of(t: &Map<String, Value>) -> u64 {
    t.get(WORKER).and_then(Value::as_u64).unwrap_or(0)
}

/// Why a runner must stop: its task is gone, was canceled or restarted, or cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum TaskStopped {
    #[error("the task was deleted")]
    Deleted,
    #[error("the task was canceled")]
    Canceled,
    #[error("the task was restarted")]
    Restarted,
    #[error(transparent)]
    Store(#[from] portcullis_store::StoreError),
}

/// A runner that stops fails its task with this text (the task record's message).
impl From<TaskStopped> for String {
    fn from(e: TaskStopped) -> String {
        e.to_string()
    }
}

impl Run {
    /// The stored task.
    pub fn record(&self) -> Result<Map<String, Value>, TaskStopped> {
        match self.c.store.get(Table::Tasks, &self.key)? {
            Some(Value::Object(m)) => Ok(m),
            _ => Err(TaskStopped::Deleted),
        }
    }

    /// Records progress; fails when the task was canceled or deleted meanwhile (the runner stops).
    pub fn step(&self, step: &str) -> Result<(), TaskStopped> {
        let mut m = Map::new();
        m.insert("currentStep".into(), json!(step));
        self.set(m)
    }

    /// Merges fields into the stored task while it is still running.
    pub fn set(&self, fields: Map<String, Value>) -> Result<(), TaskStopped> {
        self.c.store.write(|tx| {
            let Some(Value::Object(mut t)) = tx.get(Table::Tasks, &self.key)? else {
                return Err(TaskStopped::Deleted);
            };
            if t.get("status").and_then(Value::as_str) != Some(STARTED) {
                return Err(TaskStopped::Canceled);
            }
            if worker_of(&t) != self.worker {
                return Err(TaskStopped::Restarted);
            }
            t.extend(fields);
            touch(&mut t);
            tx.put(Table::Tasks, &self.key, &Value::Object(t))?;
            Ok(())
        })
    }
}

pub(super) fn touch(t: &mut Map<String, Value>) {
    let g = t.get("generation").and_then(Value::as_u64).unwrap_or(0) + 1;
    t.insert("generation".into(), json!(g));
    t.insert("lastUpdateMicros".into(), json!(now_micros()));
}

pub(super) fn now_text() -> String {
    iso8601_utc(unix_seconds())
}

/// Registers a task kind so [`resume_all`] knows it.
pub fn register(c: &Central, kind: &'static TaskKind) {
    let mut k = c.kinds.write();
    if !k.iter().any(|x| std::ptr::eq(*x, kind)) {
        k.push(kind);
    }
}

/// Starts the runner of a stored task. When an older run of it is still live (a PATCH restarted
/// it), the new run starts as soon as the old one has stopped (at its next step).
pub fn spawn(c: &Arc<Central>, kind: &'static TaskKind, key: String, secret: Option<Value>) {
    if !c.running.lock().insert(key.clone()) {
        let c2 = c.clone();
        task::spawn_on(&c.rt, async move {
            let deadline = tokio::time::Instant::now() + TASK_DEADLINE;
            while c2.running.lock().contains(&key) && tokio::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            spawn(&c2, kind, key, secret);
        });
        return;
    }
    let c2 = c.clone();
    task::spawn_on(&c.rt, async move {
        let worker = match c2.store.get(Table::Tasks, &key) {
            Ok(Some(Value::Object(t))) => worker_of(&t),
            _ => 0,
        };
        let run = Run {
            c: c2.clone(),
            key: key.clone(),
            secret,
            worker,
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
        if let Err(e) = finish(&c2, &key, Some(worker), outcome) {
            tracing::error!(task = %key, error = %e.message, "recording the end of a task failed");
        }
    });
}

/// Writes the terminal state of a task that is still `STARTED` (by run `worker`, when given).
fn finish(c: &Central, key: &str, worker: Option<u64>, outcome: Outcome) -> MgmtResult<()> {
    c.store.write(|tx| {
        let Some(Value::Object(mut t)) = tx.get(Table::Tasks, key)? else {
            return Ok(());
        };
        if t.get("status").and_then(Value::as_str) != Some(STARTED)
            || worker.is_some_and(|w| w != worker_of(&t))
        {
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
            Resume::Fail(msg) => finish(&c, &key, None, Err(msg.to_string()))?,
        }
    }
    Ok(())
}

pub use super::task_api::{handle, handle_any, required_str};
