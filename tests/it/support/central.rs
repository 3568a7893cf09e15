//! The central manager's side of the tests: a `portcullis central` with its outbound timeouts
//! configured, trusting devices, and polling central manager tasks until they leave `STARTED`.

use std::path::Path;
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};

use super::mgmt::{Api, Server, spawn};

/// A central manager whose outbound calls time out after `timeout_secs` with one retry, keeping
/// `max_tasks` tasks per collection.
pub fn central(dir: &Path, timeout_secs: u64, max_tasks: usize) -> Server {
    std::fs::create_dir_all(dir).unwrap();
    let cfg = dir.join("central.json");
    std::fs::write(
        &cfg,
        json!({"central": {"timeout_secs": timeout_secs, "retries": 1, "backoff_ms": 100, "max_tasks": max_tasks}})
            .to_string(),
    )
    .unwrap();
    spawn("central", &dir.join("data"), 0, Some(&cfg))
}

/// `127.0.0.1:<port>` of a server.
pub fn address(s: &Server) -> String {
    s.base.trim_start_matches("https://").to_string()
}

/// The selfLink path of a task.
pub fn path_of(task: &Value) -> String {
    let link = task["selfLink"].as_str().expect("selfLink");
    link.trim_start_matches("https://localhost")
        .split('?')
        .next()
        .unwrap()
        .to_string()
}

/// Polls a task until its status is no longer STARTED (within `secs`); returns it.
pub async fn wait(api: &Api, task: &Value, secs: u64) -> Value {
    let path = path_of(task);
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let (st, t) = api.req(Method::GET, &path, None).await;
        assert_eq!(st, 200, "{t}");
        if t["status"] != "STARTED" {
            return t;
        }
        assert!(
            Instant::now() < deadline,
            "task still STARTED after {secs} s: {t}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// POSTs a task (which must answer 202 with status STARTED) and waits for its end.
pub async fn run_task(api: &Api, path: &str, body: Value, secs: u64) -> Value {
    let (st, t) = api.req(Method::POST, path, Some(body)).await;
    assert_eq!(st, 202, "{t}");
    assert_eq!(t["status"], "STARTED", "{t}");
    wait(api, &t, secs).await
}

/// Resumes (re-runs) a finished task by PATCHing `body` onto it (which must answer 200) and waits
/// for its end.
pub async fn patch_task(api: &Api, task: &Value, body: Value, secs: u64) -> Value {
    let (st, t) = api.req(Method::PATCH, &path_of(task), Some(body)).await;
    assert_eq!(st, 200, "{t}");
    assert_eq!(t["status"], "STARTED", "{t}");
    wait(api, &t, secs).await
}

/// Trusts `device` from the central manager; returns the finished task.
pub async fn trust(cm: &Api, device: &Server, password: &str) -> Value {
    trust_address(cm, &address(device), password).await
}

/// Trusts the controller at `address` (`host:port`, which may be a relay in front of it); returns
/// the finished task.
pub async fn trust_address(cm: &Api, address: &str, password: &str) -> Value {
    run_task(
        cm,
        "/mgmt/cm/global/tasks/device-trust",
        json!({"address": address, "userName": "admin", "password": password,
               "clusterName": "", "useBigiqSync": false, "name": format!("trust_{address}")}),
        60,
    )
    .await
}

/// The `deviceReference` of a machine id.
pub fn device_ref(machine_id: &str) -> Value {
    json!({"link": format!("cm/system/machineid-resolver/{machine_id}")})
}
