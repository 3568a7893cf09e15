//! Shared helpers of the central manager tests: spawn the real `portcullis central` and
//! `portcullis serve` binaries on loopback (any port, or a given one to restart a device in place),
//! and poll central manager tasks until they leave `STARTED`.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};

#[path = "../mgmt_common/mod.rs"]
mod mgmt_common;
pub use mgmt_common::{Api, PASS, Server};

/// Starts `portcullis <role>` with `--admin-listen 127.0.0.1:<port>` (0 = any).
pub fn spawn(role: &str, dir: &Path, port: u16, config: Option<&Path>) -> Server {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_portcullis"));
    cmd.arg(role)
        .arg("--admin-listen")
        .arg(format!("127.0.0.1:{port}"))
        .arg("--data-dir")
        .arg(dir);
    if let Some(c) = config {
        cmd.arg("--config").arg(c);
    }
    let mut child = cmd
        .env("PORTCULLIS_ADMIN_PASSWORD", PASS)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(mgmt_common::log_file(dir))
        .spawn()
        .expect("spawn portcullis");
    let out = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(out).lines();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut base = None;
    loop {
        assert!(Instant::now() < deadline, "portcullis {role} did not start");
        let Some(line) = lines.next() else {
            panic!("portcullis {role} exited: {}", mgmt_common::server_log(dir));
        };
        let line = line.expect("read line");
        if let Some(rest) = line.strip_prefix("portcullis: admin API listening on ") {
            base = Some(rest.trim_end_matches("/mgmt").to_string());
            if role != "central" {
                break;
            }
        }
        if line == "portcullis: central manager ready" {
            break;
        }
    }
    std::thread::spawn(move || for _ in lines {});
    Server {
        child,
        base: base.expect("listening line"),
    }
}

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

/// Trusts `device` from the central manager; returns the finished task.
pub async fn trust(cm: &Api, device: &Server, password: &str) -> Value {
    run_task(
        cm,
        "/mgmt/cm/global/tasks/device-trust",
        json!({"address": address(device), "userName": "admin", "password": password,
               "clusterName": "", "useBigiqSync": false, "name": format!("trust_{}", address(device))}),
        60,
    )
    .await
}

/// The `deviceReference` of a machine id.
pub fn device_ref(machine_id: &str) -> Value {
    json!({"link": format!("cm/system/machineid-resolver/{machine_id}")})
}

/// Sends a signal (`STOP`, `CONT`, `KILL`, ...) to a process with the `kill` command.
pub fn signal(pid: u32, sig: &str) {
    let st = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .status()
        .expect("kill");
    assert!(st.success());
}
