//! The task state machine through the real dispatcher, with test task kinds: a runner that
//! panics, one that works until it is canceled; one task per device, PATCH rules, retention,
//! DELETE, and a trust task left STARTED by a previous process.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Map, Value, json};

use crate::tasks::{self, Resume, Run, RunFuture, TaskKind};
use crate::{CallLimits, Central};
use portcullis_admin as admin;
use portcullis_admin::MgmtConfig;
use portcullis_admin::MgmtResult;
use portcullis_admin::Reply;
use portcullis_admin::Route;
use portcullis_admin::{Ctx, MgmtState};
use portcullis_controller::DetachedTopology;
use portcullis_controller::open;
use portcullis_store::Table;

fn prep(
    _: &Ctx<'_>,
    _: &Central,
    t: &mut Map<String, Value>,
    _: Option<&Map<String, Value>>,
) -> MgmtResult<Option<Value>> {
    t.insert("machineId".into(), json!("dev1"));
    Ok(None)
}

fn panics(_: Run) -> RunFuture {
    Box::pin(async { panic!("boom") })
}

fn works(r: Run) -> RunFuture {
    Box::pin(async move {
        loop {
            r.step("WORKING")?;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
}

static PANICS: TaskKind = TaskKind {
    collection: "/mgmt/cm/test/tasks/panics",
    kind: "cm:test:tasks:panics:itemstate",
    collection_kind: "cm:test:tasks:panics:collectionstate",
    prepare: prep,
    run: panics,
    resume: Resume::Rerun,
    exclusive: &[],
};

static WORKS: TaskKind = TaskKind {
    collection: "/mgmt/cm/test/tasks/works",
    kind: "cm:test:tasks:works:itemstate",
    collection_kind: "cm:test:tasks:works:collectionstate",
    prepare: prep,
    run: works,
    resume: Resume::Rerun,
    exclusive: &["/mgmt/cm/test/tasks/works"],
};

fn h_panics(ctx: &Ctx<'_>, body: &[u8]) -> MgmtResult<Reply> {
    super::handle(ctx, body, &PANICS)
}
fn h_works(ctx: &Ctx<'_>, body: &[u8]) -> MgmtResult<Reply> {
    super::handle(ctx, body, &WORKS)
}

static ROUTES: &[Route] = &[
    Route {
        path: "/mgmt/cm/test/tasks/panics",
        prefix: true,
        handler: h_panics,
    },
    Route {
        path: "/mgmt/cm/test/tasks/works",
        prefix: true,
        handler: h_works,
    },
];

async fn call(st: &Arc<MgmtState>, method: &str, path: &str, body: Value) -> (u16, Value) {
    let st = st.clone();
    let (method, path) = (method.to_string(), path.to_string());
    tokio::task::spawn_blocking(move || {
        let auth = base64::engine::general_purpose::STANDARD.encode("admin:pw");
        let req = http::Request::builder()
            .method(method.as_str())
            .uri(path.as_str())
            .header("authorization", format!("Basic {auth}"))
            .body(())
            .expect("request");
        let (parts, ()) = req.into_parts();
        let bytes = if body.is_null() {
            Vec::new()
        } else {
            body.to_string().into_bytes()
        };
        match admin::dispatch(&st, &parts, &bytes, "127.0.0.1") {
            Ok(r) => (r.status.as_u16(), r.body.unwrap_or(Value::Null)),
            Err(e) => (e.status.as_u16(), e.body()),
        }
    })
    .await
    .expect("dispatch")
}

async fn until_not_started(st: &Arc<MgmtState>, path: &str) -> Value {
    for _ in 0..200 {
        let (_, t) = call(st, "GET", path, Value::Null).await;
        if t["status"] != "STARTED" {
            return t;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{path} still STARTED");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_follow_the_state_machine() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = MgmtConfig {
        data_dir: dir.path().to_path_buf(),
        ..Default::default()
    };
    let (st, _) = open(cfg, Arc::new(DetachedTopology), Some("pw".into())).unwrap();
    crate::install_with(&st, CallLimits::default(), 2).unwrap();
    st.extend(ROUTES, &[]);

    // A panicking runner fails its task; the server goes on.
    let (s, t) = call(&st, "POST", PANICS.collection, json!({"name": "p1"})).await;
    assert_eq!((s, &t["status"]), (202, &json!("STARTED")), "{t}");
    let path = format!("{}/{}", PANICS.collection, t["id"].as_str().unwrap());
    let done = until_not_started(&st, &path).await;
    assert_eq!(done["status"], "FAILED");
    assert!(
        done["errorMessage"]
            .as_str()
            .unwrap()
            .contains("internal error"),
        "{done}"
    );

    // Retention (2 kept): the oldest ended task goes.
    for n in ["p2", "p3"] {
        let (_, t) = call(&st, "POST", PANICS.collection, json!({"name": n})).await;
        let p = format!("{}/{}", PANICS.collection, t["id"].as_str().unwrap());
        until_not_started(&st, &p).await;
    }
    let (_, l) = call(&st, "GET", PANICS.collection, Value::Null).await;
    let names: Vec<&str> = l["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["p2", "p3"]);
    assert_eq!(call(&st, "GET", &path, Value::Null).await.0, 404);

    // A working task: one per device, no restart while running, cancel, then re-run.
    let (s, w) = call(&st, "POST", WORKS.collection, json!({})).await;
    assert_eq!(s, 202);
    let wpath = format!("{}/{}", WORKS.collection, w["id"].as_str().unwrap());
    let (s, e) = call(&st, "POST", WORKS.collection, json!({})).await;
    assert_eq!(s, 409, "{e}");
    assert!(e["message"].as_str().unwrap().contains("dev1"));
    let (s, _) = call(&st, "PATCH", &wpath, json!({"status": "STARTED"})).await;
    assert_eq!(s, 409);
    let (s, _) = call(&st, "PATCH", &wpath, json!({"description": "x"})).await;
    assert_eq!(s, 400);
    let (s, _) = call(&st, "POST", WORKS.collection, json!({"status": "FINISHED"})).await;
    assert_eq!(s, 400);
    let (s, c) = call(&st, "PATCH", &wpath, json!({"status": "CANCELED"})).await;
    assert_eq!((s, &c["status"]), (200, &json!("CANCELED")));
    tokio::time::sleep(Duration::from_millis(100)).await;
    let (_, c) = call(&st, "GET", &wpath, Value::Null).await;
    assert_eq!(
        c["status"], "CANCELED",
        "the runner stopped and left it so: {c}"
    );
    let (s, r) = call(&st, "PATCH", &wpath, json!({"status": "STARTED"})).await;
    assert_eq!((s, &r["status"]), (200, &json!("STARTED")));
    let (s, _) = call(&st, "DELETE", &wpath, Value::Null).await;
    assert_eq!(s, 200);
    assert_eq!(call(&st, "GET", &wpath, Value::Null).await.0, 404);

    // A trust task a previous process left STARTED fails clearly at the next start.
    let key = "/mgmt/cm/global/tasks/device-trust/left-over";
    st.store
        .write(|tx| {
            tx.put(
                Table::Tasks,
                key,
                &json!({"id": "left-over", "status": "STARTED", "currentStep": "CONNECT"}),
            )
        })
        .unwrap();
    tasks::resume_all(&st).unwrap();
    let t = st.store.get(Table::Tasks, key).unwrap().unwrap();
    assert_eq!(t["status"], "FAILED");
    assert!(
        t["errorMessage"].as_str().unwrap().contains("restarted"),
        "{t}"
    );
}
