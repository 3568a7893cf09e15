//! Asynchronous ASM task records (import-policy, apply-policy, export-policy): the POST answers
//! the task with status NEW; a worker thread moves it to STARTED, runs it, and ends it in
//! COMPLETED (with `result`) or FAILURE (with `result.message` saying why). Records live in the
//! store's task table, so they survive restarts; tasks a restart interrupted end in FAILURE.
//! Finished tasks are kept up to `asm_tasks_kept` per type (oldest dropped first); at most
//! [`MAX_RUNNING`] tasks run at once (503 beyond).

use std::sync::atomic::{AtomicUsize, Ordering};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::{Method, StatusCode};
use rand::RngExt as _;
use serde_json::{Map, Value, json};

use portcullis_admin::Reply;
use portcullis_admin::{Ctx, MgmtState};
use portcullis_admin::{MgmtError, MgmtResult};
use portcullis_store::Table;
use portcullis_support::{iso8601_utc, now_micros, unix_seconds};

/// Most tasks running at the same time (each runs on its own thread).
pub const MAX_RUNNING: usize = 16;
static RUNNING: AtomicUsize = AtomicUsize::new(0);

/// One task type: its collection path and `kind` names.
pub struct TaskType {
    pub path: &'static str,
    /// `tm:asm:tasks:import-policy:import-policy-task` (+ `state` / `collectionstate`).
    pub kind: &'static str,
}

/// What a task's work returns: fields merged into the task on success, or the failure message
/// the task record carries (the text users read, made by the work itself).
pub type TaskOutcome = Result<Map<String, Value>, String>;

fn key(tt: &TaskType, id: &str) -> String {
    format!("{}/{id}", tt.path)
}

fn now_fields(task: &mut Map<String, Value>) {
    task.insert("lastUpdateMicros".into(), json!(now_micros() as f64));
}

fn stamp() -> String {
    iso8601_utc(unix_seconds())
}

fn finished(t: &Value) -> bool {
    matches!(t["status"].as_str(), Some("COMPLETED" | "FAILURE"))
}

/// Records a new task (status NEW) with `fields` (the request's echo: `filename`,
/// `policyReference`, ...), and drops the oldest finished tasks beyond the retention.
pub fn create(
    st: &MgmtState,
    tt: &TaskType,
    fields: Map<String, Value>,
) -> MgmtResult<Map<String, Value>> {
    let bytes: [u8; 16] = rand::rng().random();
    let id = URL_SAFE_NO_PAD.encode(bytes);
    let mut task = Map::new();
    task.insert("kind".into(), json!(format!("{}state", tt.kind)));
    task.insert("selfLink".into(), json!(st.link(&key(tt, &id))));
    task.insert("id".into(), json!(id));
    task.insert("status".into(), json!("NEW"));
    task.insert("startTime".into(), json!(stamp()));
    now_fields(&mut task);
    task.extend(fields);
    let prefix = format!("{}/", tt.path);
    let keep = st.cfg.asm_tasks_kept;
    st.store.write(|tx| {
        tx.put(Table::Tasks, &key(tt, &id), &Value::Object(task.clone()))?;
        let mut done: Vec<(f64, String)> = Vec::new();
        for k in tx.keys(Table::Tasks, &prefix)? {
            if let Some(t) = tx.get(Table::Tasks, &k)?
                && finished(&t)
            {
                done.push((t["lastUpdateMicros"].as_f64().unwrap_or(0.0), k));
            }
        }
        if done.len() > keep {
            done.sort_by(|a, b| a.0.total_cmp(&b.0));
            for (_, k) in &done[..done.len() - keep] {
                tx.delete(Table::Tasks, k)?;
            }
        }
        Ok::<_, MgmtError>(())
    })?;
    Ok(task)
}

/// Changes a stored task.
fn update(st: &MgmtState, tt: &TaskType, id: &str, f: impl FnOnce(&mut Map<String, Value>)) {
    let k = key(tt, id);
    let r = st.store.write(|tx| {
        if let Some(Value::Object(mut t)) = tx.get(Table::Tasks, &k)? {
            f(&mut t);
            now_fields(&mut t);
            tx.put(Table::Tasks, &k, &Value::Object(t))?;
        }
        Ok::<_, MgmtError>(())
    });
    if let Err(e) = r {
        tracing::error!(task = %k, error = %e.message, "cannot update the task");
    }
}

/// Runs `work` for the task `task` on a worker thread: STARTED, then COMPLETED or FAILURE.
pub fn spawn(
    st: &MgmtState,
    tt: &'static TaskType,
    task: &Map<String, Value>,
    work: impl FnOnce(&MgmtState) -> TaskOutcome + Send + 'static,
) -> MgmtResult<()> {
    let id = task
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let Some(state) = st.this.upgrade() else {
        return Err(MgmtError::internal("the management state is shutting down"));
    };
    if RUNNING.fetch_add(1, Ordering::SeqCst) >= MAX_RUNNING {
        RUNNING.fetch_sub(1, Ordering::SeqCst);
        update(st, tt, &id, |t| {
            fail(t, "Too many tasks are running; retry later.")
        });
        return Err(MgmtError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("{MAX_RUNNING} ASM tasks are already running; retry when one finishes."),
        ));
    }
    let run = move || {
        update(&state, tt, &id, |t| {
            t.insert("status".into(), json!("STARTED"));
            t.insert("executionStartTime".into(), json!(stamp()));
        });
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(&state)))
            .unwrap_or_else(|_| Err("The task failed unexpectedly.".into()));
        update(&state, tt, &id, |t| match outcome {
            Ok(fields) => {
                t.extend(fields);
                t.insert("status".into(), json!("COMPLETED"));
                t.insert("endTime".into(), json!(stamp()));
            }
            Err(msg) => fail(t, &msg),
        });
        RUNNING.fetch_sub(1, Ordering::SeqCst);
    };
    if let Err(e) = std::thread::Builder::new()
        .name("asm-task".into())
        .spawn(run)
    {
        RUNNING.fetch_sub(1, Ordering::SeqCst);
        return Err(MgmtError::internal(format!("cannot start the task: {e}")));
    }
    Ok(())
}

fn fail(t: &mut Map<String, Value>, msg: &str) {
    t.insert("status".into(), json!("FAILURE"));
    t.insert("endTime".into(), json!(stamp()));
    let result = t.entry("result").or_insert_with(|| json!({}));
    if !result.is_object() {
        *result = json!({});
    }
    result["message"] = json!(msg);
}

/// GET of the collection or of one task.
pub fn get(ctx: &Ctx<'_>, tt: &TaskType) -> MgmtResult<Reply> {
    if ctx.method != Method::GET {
        return Err(MgmtError::method_not_allowed(
            ctx.method.as_str(),
            &ctx.path,
        ));
    }
    let rest = ctx.path[tt.path.len()..].trim_start_matches('/');
    if rest.is_empty() {
        let items: Vec<Value> = ctx
            .st
            .store
            .list(Table::Tasks, &format!("{}/", tt.path))?
            .into_iter()
            .map(|(_, v)| v)
            .collect();
        let items = ctx.query.apply(items);
        return Ok(Reply::json(json!({
            "kind": format!("{}collectionstate", tt.kind),
            "selfLink": ctx.st.link(tt.path),
            "totalItems": items.len(),
            "items": items,
        })));
    }
    match ctx.st.store.get(Table::Tasks, &key(tt, rest))? {
        Some(t) if !rest.contains('/') => Ok(Reply::json(ctx.query.project(t))),
        _ => Err(MgmtError::new(
            StatusCode::NOT_FOUND,
            format!("The task {rest} was not found."),
        )),
    }
}

/// Ends, as FAILURE, every task a previous run left NEW or STARTED.
pub fn fail_interrupted(st: &MgmtState) {
    let r = st.store.write(|tx| {
        for k in tx.keys(Table::Tasks, "/mgmt/tm/asm/tasks/")? {
            if let Some(Value::Object(mut t)) = tx.get(Table::Tasks, &k)?
                && !finished(&Value::Object(t.clone()))
            {
                fail(
                    &mut t,
                    "The task was interrupted by a restart of the controller.",
                );
                now_fields(&mut t);
                tx.put(Table::Tasks, &k, &Value::Object(t))?;
            }
        }
        Ok::<_, MgmtError>(())
    });
    if let Err(e) = r {
        tracing::error!(error = %e.message, "cannot close interrupted ASM tasks");
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use super::*;
    use crate::apply::DetachedTopology;
    use portcullis_admin::MgmtConfig;

    static TEST: TaskType = TaskType {
        path: "/mgmt/tm/asm/tasks/test-task",
        kind: "tm:asm:tasks:test-task:test-task-task",
    };

    fn wait(st: &MgmtState, id: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let t = st
                .store
                .get(Table::Tasks, &key(&TEST, id))
                .expect("get")
                .expect("task");
            if finished(&t) {
                return t;
            }
            assert!(Instant::now() < deadline, "task never finished: {t}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn tasks_run_to_an_end_and_finished_ones_are_kept_up_to_the_limit() {
        let dir = tempfile::tempdir().expect("tmp");
        let cfg = MgmtConfig {
            data_dir: dir.path().to_path_buf(),
            asm_tasks_kept: 3,
            ..Default::default()
        };
        let (st, _) =
            crate::open(cfg, Arc::new(DetachedTopology), Some("pw-tasks-1".into())).expect("open");
        let mut ids = Vec::new();
        for i in 0..6 {
            let t = create(&st, &TEST, Map::new()).expect("create");
            assert_eq!(t["status"], "NEW");
            assert!(t["lastUpdateMicros"].is_f64());
            let id = t["id"].as_str().expect("id").to_string();
            assert_eq!(id.len(), 22);
            spawn(&st, &TEST, &t, move |_| {
                if i % 2 == 0 {
                    Ok(Map::from_iter([(
                        "result".into(),
                        json!({"message": "done"}),
                    )]))
                } else {
                    Err("it failed".into())
                }
            })
            .expect("spawn");
            let done = wait(&st, &id);
            let want = if i % 2 == 0 {
                ("COMPLETED", "done")
            } else {
                ("FAILURE", "it failed")
            };
            assert_eq!(
                (done["status"].as_str(), done["result"]["message"].as_str()),
                (Some(want.0), Some(want.1))
            );
            assert!(done["executionStartTime"].is_string() && done["endTime"].is_string());
            ids.push(id);
        }
        let kept: Vec<String> = st
            .store
            .list(Table::Tasks, &format!("{}/", TEST.path))
            .expect("list")
            .into_iter()
            .map(|(k, _)| k.rsplit('/').next().unwrap_or_default().to_string())
            .collect();
        assert_eq!(kept.len(), 4, "3 finished kept + the newest: {kept:?}");
        assert!(
            !kept.contains(&ids[0]) && !kept.contains(&ids[1]),
            "oldest dropped first"
        );

        let stuck = json!({"id": "x", "status": "STARTED"});
        st.store
            .write(|tx| tx.put(Table::Tasks, "/mgmt/tm/asm/tasks/import-policy/x", &stuck))
            .expect("put");
        fail_interrupted(&st);
        let t = st
            .store
            .get(Table::Tasks, "/mgmt/tm/asm/tasks/import-policy/x")
            .expect("get")
            .expect("t");
        assert_eq!(t["status"], "FAILURE");
        assert!(
            t["result"]["message"]
                .as_str()
                .expect("msg")
                .contains("restart")
        );
    }
}
