//! Apply under load (the benchmark of docs/asm.md): clients hammer a virtual server while the
//! demo policy (policies/demo: API-security policy + OpenAPI spec + gRPC IDL, imported from
//! uploaded files) and a permissive version of it are applied in turn. Reports failed requests
//! (goal 0) and the time from the apply POST to the first response showing the new policy
//! (goal < 100 ms for the demo policy).
//!
//! `cargo test --profile dist --test it asm::apply_load -- --ignored --nocapture`

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use serde_json::{Value, json};

use crate::support::asm::{attach, import, policy_link, run_task, status, upload};
use crate::support::mgmt::{Api, start, virtual_server};

const CLIENTS: usize = 8;
const ROUNDS: usize = 3;

/// One request: when it started and ended, and its status (None: transport error).
type Sample = (Instant, Instant, Option<u16>);

async fn load(port: u16, stop: Arc<AtomicBool>, log: Arc<Mutex<Vec<Sample>>>) {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .expect("client");
    let url = format!("http://127.0.0.1:{port}/not-in-the-spec");
    while !stop.load(Ordering::Relaxed) {
        let t0 = Instant::now();
        let r = client.get(&url).send().await;
        let st = match r {
            Ok(r) => {
                let s = r.status().as_u16();
                r.bytes().await.ok().map(|_| s)
            }
            Err(_) => None,
        };
        log.lock().push((t0, Instant::now(), st));
    }
}

/// Applies `link` and returns (ms from the POST to the first response with `want`, ms to COMPLETED).
async fn apply_and_measure(
    api: &Api,
    link: &str,
    want: u16,
    log: &Mutex<Vec<Sample>>,
) -> (f64, f64) {
    let t0 = Instant::now();
    let task = run_task(
        api,
        "/mgmt/tm/asm/tasks/apply-policy",
        json!({"policyReference": {"link": link}}),
        "application/json",
    )
    .await;
    let done = t0.elapsed().as_secs_f64() * 1e3;
    assert_eq!(task["status"], "COMPLETED", "{task}");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let first = log
            .lock()
            .iter()
            .filter(|s| s.1 >= t0 && s.2 == Some(want))
            .map(|s| s.1)
            .min();
        if let Some(t) = first {
            return ((t - t0).as_secs_f64() * 1e3, done);
        }
        assert!(
            Instant::now() < deadline,
            "the new policy never showed in traffic"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "benchmark: run with --ignored --nocapture"]
async fn bench_apply_under_load() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), None);
    let api = Api::new(&server);
    let port = virtual_server(&api).await;
    let demo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("policies/demo");
    for f in ["policy.json", "demo-api.yaml", "demo.proto"] {
        upload(&api, f, &std::fs::read(demo.join(f)).unwrap(), 512 * 1024).await;
    }
    let permissive =
        json!({"policy": {"name": "demo_api_policy", "enforcementMode": "transparent"}});
    let t = import(
        &api,
        json!({"file": permissive.to_string(), "policy": {"fullPath": "/Common/demo"}}),
    )
    .await;
    let link = policy_link(&t);
    let id = link
        .split('?')
        .next()
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap()
        .to_string();
    attach(&api, &id).await;
    assert_eq!(status(port, "/not-in-the-spec").await, 200);

    let stop = Arc::new(AtomicBool::new(false));
    let log = Arc::new(Mutex::new(Vec::new()));
    let workers: Vec<_> = (0..CLIENTS)
        .map(|_| tokio::spawn(load(port, stop.clone(), log.clone())))
        .collect();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut block_ms = Vec::new();
    let mut rows = Vec::new();
    for round in 0..ROUNDS {
        let t = import(
            &api,
            json!({"filename": "policy.json", "policy": {"fullPath": "/Common/demo"}}),
        )
        .await;
        assert_eq!(t["status"], "COMPLETED", "{t}");
        let (enforced, done) = apply_and_measure(&api, &link, 403, &log).await;
        block_ms.push(enforced);
        rows.push(format!("round {round}: demo policy       enforced after {enforced:7.1} ms (task COMPLETED seen after {done:7.1} ms)"));
        tokio::time::sleep(Duration::from_millis(300)).await;
        let t = import(
            &api,
            json!({"file": permissive.to_string(), "policy": {"fullPath": "/Common/demo"}}),
        )
        .await;
        assert_eq!(t["status"], "COMPLETED", "{t}");
        let (enforced, done) = apply_and_measure(&api, &link, 200, &log).await;
        rows.push(format!("round {round}: permissive policy enforced after {enforced:7.1} ms (task COMPLETED seen after {done:7.1} ms)"));
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        w.await.unwrap();
    }
    let log = log.lock();
    let failed = log
        .iter()
        .filter(|s| !matches!(s.2, Some(200 | 403)))
        .count();
    let blocked = log.iter().filter(|s| s.2 == Some(403)).count();
    let span = log.last().unwrap().1 - log[0].0;
    println!(
        "apply under load: {CLIENTS} clients, {} requests in {:.1} s ({:.0}/s), {blocked} blocked, {failed} failed",
        log.len(),
        span.as_secs_f64(),
        log.len() as f64 / span.as_secs_f64()
    );
    for r in &rows {
        println!("  {r}");
    }
    let max = block_ms.iter().cloned().fold(0.0, f64::max);
    println!("  demo policy: apply → enforcement max {max:.1} ms over {ROUNDS} rounds");
    let doc: Value =
        serde_json::from_slice(&std::fs::read(demo.join("policy.json")).unwrap()).unwrap();
    assert_eq!(doc["policy"]["name"], "demo_api_policy");
    assert_eq!(failed, 0, "requests failed during applies");
}
