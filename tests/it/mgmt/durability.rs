//! Durability and speed: kill -9 during a burst of writes loses nothing acknowledged; the
//! (ignored) benchmark of durable creates per second and GET latency.

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::json;

use crate::support::mgmt::{Api, PASS, start};

#[tokio::test]
async fn kill_9_during_a_burst_of_writes_loses_nothing_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = start(dir.path(), None);
    let api = Api::new(&s);
    let acked = std::sync::Arc::new(parking_lot::Mutex::new(Vec::new()));
    let mut tasks = Vec::new();
    for w in 0..4 {
        let (c, base, acked) = (api.c.clone(), s.base.clone(), acked.clone());
        tasks.push(tokio::spawn(async move {
            for i in 0..10_000 {
                let name = format!("p{w}_{i}");
                let r = c
                    .post(format!("{base}/mgmt/tm/ltm/pool"))
                    .basic_auth("admin", Some(PASS))
                    .json(&json!({"name": name, "description": "burst"}))
                    .send()
                    .await;
                match r {
                    Ok(r) if r.status() == 200 => acked.lock().push(name),
                    _ => return,
                }
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(2500)).await;
    s.child.kill().expect("kill -9");
    let _ = s.child.wait();
    for t in tasks {
        let _ = t.await;
    }
    let acked = acked.lock().clone();
    assert!(acked.len() > 10, "only {} writes acknowledged", acked.len());
    drop(s);
    let s2 = start(dir.path(), None);
    let api2 = Api::new(&s2);
    let (_, b) = api2
        .req(Method::GET, "/mgmt/tm/ltm/pool?$select=name", None)
        .await;
    let names: std::collections::HashSet<String> = b["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap().to_string())
        .collect();
    for n in &acked {
        assert!(
            names.contains(n),
            "acknowledged pool {n} lost after kill -9"
        );
    }
}

/// Benchmark (run explicitly): durable creations per second with 8 concurrent clients, then
/// GET latency percentiles of one object. `cargo test --profile dist --test it mgmt::durability -- --ignored --nocapture bench_`
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore]
async fn bench_durable_creates_and_get_latency() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path(), None);
    let api = Api::new(&s);
    let (st, _) = api.req(Method::GET, "/mgmt/tm/sys", None).await;
    assert_eq!(st, 200);
    let t0 = Instant::now();
    let per = 250;
    let mut tasks = Vec::new();
    for w in 0..8 {
        let (c, base) = (api.c.clone(), s.base.clone());
        tasks.push(tokio::spawn(async move {
            for i in 0..per {
                let r = c
                    .post(format!("{base}/mgmt/tm/ltm/pool"))
                    .basic_auth("admin", Some(PASS))
                    .json(
                        &json!({"name": format!("b{w}_{i}"), "members": [{"name": "10.0.0.1:80"}]}),
                    )
                    .send()
                    .await
                    .unwrap();
                assert_eq!(r.status(), 200);
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let secs = t0.elapsed().as_secs_f64();
    println!(
        "durable creates: {} in {secs:.2} s = {:.0}/s (8 clients, pool + 1 member each)",
        8 * per,
        f64::from(8 * per) / secs
    );
    let mut lat = Vec::new();
    for _ in 0..2000 {
        let t = Instant::now();
        let r = api
            .c
            .get(format!("{}/mgmt/tm/ltm/pool/~Common~b0_1", s.base))
            .basic_auth("admin", Some(PASS))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let _ = r.bytes().await.unwrap();
        lat.push(t.elapsed().as_micros());
    }
    lat.sort_unstable();
    println!(
        "GET object latency (sequential, keep-alive): p50 {} us, p99 {} us, max {} us",
        lat[lat.len() / 2],
        lat[lat.len() * 99 / 100],
        lat[lat.len() - 1]
    );
}

/// Runs `portcullis serve` on `dir` expecting it to refuse to start; returns its stderr.
fn refused_start(dir: &std::path::Path) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_portcullis"))
        .args(["serve", "--admin-listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir)
        .env("PORTCULLIS_ADMIN_PASSWORD", PASS)
        .output()
        .expect("serve");
    assert!(!out.status.success(), "it started");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("created user"), "{stdout}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[tokio::test]
async fn a_store_truncated_to_nothing_stops_the_server_instead_of_being_replaced() {
    let dir = tempfile::tempdir().unwrap();
    {
        let s = start(dir.path(), None);
        let api = Api::new(&s);
        let (st, _) = api
            .req(
                Method::POST,
                "/mgmt/tm/ltm/pool",
                Some(json!({"name": "kept"})),
            )
            .await;
        assert_eq!(st, 200);
    }
    let store = dir.path().join("portcullis.redb");
    let saved = std::fs::read(&store).unwrap();
    std::fs::write(&store, b"").unwrap();
    let stderr = refused_start(dir.path());
    assert!(
        stderr.contains(&store.display().to_string()) && stderr.contains("empty"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::metadata(&store).unwrap().len(),
        0,
        "it was replaced"
    );
    // Garbage in its place: named, and not the raw IO error.
    std::fs::write(&store, &saved[..saved.len() / 3]).unwrap();
    let stderr = refused_start(dir.path());
    assert!(stderr.contains(&store.display().to_string()), "{stderr}");
    assert!(!stderr.contains("failed to fill whole buffer"), "{stderr}");
    // Restored, everything is there.
    std::fs::write(&store, &saved).unwrap();
    let s = start(dir.path(), None);
    let (st, _) = Api::new(&s)
        .req(Method::GET, "/mgmt/tm/ltm/pool/kept", None)
        .await;
    assert_eq!(st, 200);
}

#[test]
fn a_broken_admin_certificate_or_key_is_named_with_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    drop(start(dir.path(), None));
    let cert = dir.path().join("admin-cert.pem");
    let key = dir.path().join("admin-key.pem");
    let (good_cert, good_key) = (std::fs::read(&cert).unwrap(), std::fs::read(&key).unwrap());
    std::fs::write(&cert, b"this is not a certificate\n").unwrap();
    let stderr = refused_start(dir.path());
    assert!(
        stderr.contains(&cert.display().to_string()) && stderr.contains("no certificate"),
        "{stderr}"
    );
    assert!(!stderr.contains("peer sent no certificates"), "{stderr}");
    std::fs::write(&cert, &good_cert).unwrap();
    std::fs::write(&key, &good_key[..good_key.len() / 2]).unwrap();
    let stderr = refused_start(dir.path());
    assert!(stderr.contains(&key.display().to_string()), "{stderr}");
}
