//! The learning's safety goal on real traffic (ignored: it replays tens of thousands of requests;
//! run it by hand, see docs/asm.md "Tuning: verified on the development corpora"):
//!
//! ```text
//! PORTCULLIS_CORPORA=/path/dev.jsonl,/path/dev-crs.jsonl,/path/dev-blaze.jsonl.gz \
//! PORTCULLIS_CORPUS_POLICY=/path/eval-policy.json \
//!   cargo test --test it asm::learning_corpus -- --ignored --nocapture
//! ```
//!
//! Every request of the corpora (JSON lines: `method`, `path`, `headers`, `body`, `version`,
//! `expect`, or `raw_b64` for the exact bytes) goes byte for byte through a controller's virtual
//! server protected by the given policy (made to trust X-Forwarded-For, through which the requests
//! come from 64 sources), then: no suggestion disables a high-accuracy signature; none is proposed
//! from such attacks alone, and one with them in its evidence scores at most 5 and is never
//! auto-applicable; and with *every* suggestion accepted and applied, whatever its score, every
//! attack that a high-accuracy signature blocked is still blocked when replayed.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use portcullis::waf::signatures::{Level, SignatureDb};
use reqwest::Method;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Semaphore;

use crate::support::events::controller;
use crate::support::mgmt::upstream;
use crate::support::proxy::support_id;

/// One corpus request: its bytes (without the X-Forwarded-For the replay adds) and whether it is
/// an attack.
struct Case {
    bytes: Vec<u8>,
    attack: bool,
}

/// The requests of a JSON-lines corpus (gzip-compressed when its name ends in `.gz`).
fn cases(path: &str) -> Vec<Case> {
    use base64::Engine as _;
    use std::io::Read as _;
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut text = String::new();
    let read = if path.ends_with(".gz") {
        flate2::read::GzDecoder::new(file).read_to_string(&mut text)
    } else {
        std::io::BufReader::new(file).read_to_string(&mut text)
    };
    read.unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let r: Value = serde_json::from_str(l).expect("JSON line");
            let bytes = match r["raw_b64"].as_str() {
                Some(b) => base64::engine::general_purpose::STANDARD
                    .decode(b)
                    .expect("base64"),
                None => {
                    let mut out = format!(
                        "{} {} {}\r\n",
                        r["method"].as_str().unwrap_or("GET"),
                        r["path"].as_str().unwrap_or("/"),
                        r["version"].as_str().unwrap_or("HTTP/1.1")
                    );
                    for (k, v) in r["headers"].as_object().into_iter().flatten() {
                        out.push_str(&format!("{k}: {}\r\n", v.as_str().unwrap_or_default()));
                    }
                    out.push_str("\r\n");
                    out.push_str(r["body"].as_str().unwrap_or_default());
                    out.into_bytes()
                }
            };
            Case {
                bytes,
                attack: r["expect"] == "block",
            }
        })
        .collect()
}

/// The request with an X-Forwarded-For header (one of 64 sources) after its request line.
fn from_source(bytes: &[u8], n: usize) -> Vec<u8> {
    let at = bytes
        .windows(2)
        .position(|w| w == b"\r\n")
        .map_or(bytes.len(), |i| i + 2);
    let mut out = bytes[..at].to_vec();
    out.extend_from_slice(
        format!("X-Forwarded-For: 10.77.{}.{}\r\n", n % 64 / 8, n % 8 + 1).as_bytes(),
    );
    out.extend_from_slice(&bytes[at..]);
    out
}

/// Sends one request on its own connection; the support id of the block page, if blocked.
async fn send(port: u16, bytes: Vec<u8>) -> Option<String> {
    let work = async {
        let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .ok()?;
        s.write_all(&bytes).await.ok()?;
        let mut buf = Vec::new();
        let mut chunk = [0u8; 8192];
        loop {
            let n = s.read(&mut chunk).await.ok()?;
            if n == 0 {
                break;
            }
            buf.extend_from_slice(&chunk[..n]);
            if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
                let len = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse::<usize>().ok());
                if len.is_some_and(|l| buf.len() >= end + 4 + l) {
                    break;
                }
            }
        }
        Some(buf)
    };
    let buf = tokio::time::timeout(Duration::from_secs(10), work)
        .await
        .ok()??;
    let text = String::from_utf8_lossy(&buf);
    support_id(&text)
}

/// Replays `cases` with 16 at a time; the support id of each (None: passed).
async fn replay(port: u16, cases: &[(usize, Vec<u8>)]) -> Vec<Option<String>> {
    let gate = Arc::new(Semaphore::new(16));
    let mut tasks = Vec::with_capacity(cases.len());
    for (n, bytes) in cases {
        let permit = gate.clone().acquire_owned().await.unwrap();
        let bytes = from_source(bytes, *n);
        tasks.push(tokio::spawn(async move {
            let r = send(port, bytes).await;
            drop(permit);
            r
        }));
    }
    let mut out = Vec::with_capacity(tasks.len());
    for t in tasks {
        out.push(t.await.unwrap());
    }
    out
}

fn high_accuracy(id: u64) -> bool {
    SignatureDb::builtin()
        .get(id as u32)
        .is_some_and(|s| s.accuracy == Level::High)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "replays the development corpora (minutes); run by hand"]
async fn corpus_suggestions_never_relax_a_check_for_a_high_accuracy_block() {
    let corpora = std::env::var("PORTCULLIS_CORPORA")
        .expect("PORTCULLIS_CORPORA: comma-separated JSONL files");
    let policy_file =
        std::env::var("PORTCULLIS_CORPUS_POLICY").expect("PORTCULLIS_CORPUS_POLICY: the policy");
    let mut all = Vec::new();
    for f in corpora.split(',') {
        all.extend(cases(f));
    }
    let c = controller(|cfg| {
        cfg.events_max_count = 1_000_000;
        cfg.events_queue = 1 << 17;
    })
    .await;
    let api = &c.api;
    let member = upstream().await;
    let port = crate::support::free_port();
    for (path, body) in [
        (
            "/mgmt/tm/ltm/pool",
            json!({"name": "web", "members": [{"name": member.to_string()}]}),
        ),
        (
            "/mgmt/tm/ltm/virtual",
            json!({"name": "vs", "destination": format!("127.0.0.1:{port}"), "pool": "/Common/web"}),
        ),
    ] {
        let (s, b) = api.req(Method::POST, path, Some(body)).await;
        assert_eq!(s, 200, "{b}");
    }
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(&policy_file).unwrap()).unwrap();
    doc["policy"]["name"] = json!("corpus");
    doc["policy"]["general"] = json!({"trustXff": true});
    // Most corpus requests come from tools; learn from them all so the check covers every fix.
    doc["policy"]["policy-builder"] = json!({"learnOnlyFromNonBotTraffic": false});
    let obj =
        portcullis::mgmt::asm::put_policy(&c.st, "/Common/corpus", &doc).expect("policy compiles");
    let pid = obj["id"].as_str().unwrap().to_string();
    portcullis::mgmt::asm::attach_policy(&c.st, "/Common/corpus", &["/Common/vs".into()]).unwrap();
    portcullis::mgmt::asm::apply_policy(&c.st, "/Common/corpus").unwrap();

    let t0 = Instant::now();
    let indexed: Vec<(usize, Vec<u8>)> = all
        .iter()
        .enumerate()
        .map(|(i, c)| (i, c.bytes.clone()))
        .collect();
    let first = replay(port, &indexed).await;
    let blocked = first.iter().filter(|r| r.is_some()).count();
    println!(
        "replayed {} requests ({} attacks) in {:.1} s: {blocked} blocked",
        all.len(),
        all.iter().filter(|c| c.attack).count(),
        t0.elapsed().as_secs_f64()
    );

    // The stored events of the blocked attacks: which carried an enforced high-accuracy signature.
    let mut ha_blocked: Vec<usize> = Vec::new();
    for (i, id) in first.iter().enumerate() {
        let Some(id) = id else { continue };
        if !all[i].attack {
            continue;
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        let e = loop {
            match portcullis::mgmt::events::stored_event(&c.st.store, id).unwrap() {
                Some(e) => break e,
                None if Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(20)).await
                }
                None => panic!("event {id} never stored"),
            }
        };
        let ha = e["violations"].as_array().into_iter().flatten().any(|v| {
            v["staged"] != true && portcullis::mgmt::events::signature_ids(v).any(high_accuracy)
        });
        if ha {
            ha_blocked.push(i);
        }
    }

    // The learner has seen everything once the suggestions stop changing.
    let mut last = Value::Null;
    let suggestions = loop {
        tokio::time::sleep(Duration::from_secs(2)).await;
        let (s, b) = api
            .req(
                Method::GET,
                &format!("/mgmt/tm/asm/policies/{pid}/suggestions"),
                None,
            )
            .await;
        assert_eq!(s, 200);
        let items = b["items"].clone();
        if items == last {
            break items;
        }
        last = items;
    };
    let items = suggestions.as_array().unwrap();
    let ripe = items
        .iter()
        .filter(|i| i["learningScore"].as_u64().unwrap() >= 50)
        .count();
    let mut kinds: std::collections::BTreeMap<&str, usize> = Default::default();
    for i in items {
        *kinds
            .entry(i["action"].as_str().unwrap_or_default())
            .or_default() += 1;
    }
    println!(
        "{} suggestions ({ripe} scoring 50 or more) {kinds:?}; {} blocked attacks carried a high-accuracy signature",
        items.len(),
        ha_blocked.len()
    );
    // The support ids of the attacks a high-accuracy signature blocked.
    let ha_ids: HashSet<&str> = ha_blocked
        .iter()
        .filter_map(|&i| first[i].as_deref())
        .collect();
    let mut with_attacks = 0;
    for i in items {
        if let Some(id) = i["signatureId"].as_u64() {
            assert!(
                !high_accuracy(id),
                "a suggestion disables high-accuracy signature {id}: {i:#}"
            );
        }
        let ev = &i["evidence"];
        let (requests, attacks) = (
            ev["requests"].as_u64().unwrap(),
            ev["attackRequests"].as_u64().unwrap(),
        );
        // Nothing is proposed from such attacks alone; with them in its evidence a suggestion
        // scores at most 5 and is never applied automatically.
        assert!(requests > attacks, "proposed from attacks alone: {i:#}");
        if attacks > 0 {
            with_attacks += 1;
            assert!(
                i["learningScore"].as_u64().unwrap() <= 5 && i["autoApplicable"] == false,
                "{i:#}"
            );
        }
        // The learner's attack count agrees with what the replay saw: evidence naming one of
        // those attacks counts it.
        let named = ev["events"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .any(|id| ha_ids.contains(id));
        assert!(
            !named || attacks > 0,
            "a high-accuracy attack in the evidence, not counted: {i:#}"
        );
    }
    println!(
        "{with_attacks} suggestions carry high-accuracy attacks in their evidence (all scored 5 or less, none auto-applicable)"
    );

    // Accept every suggestion, whatever its score; apply; the attacks are still blocked.
    let ids: Vec<&str> = items.iter().filter_map(|i| i["id"].as_str()).collect();
    let unique: HashSet<&str> = ids.iter().copied().collect();
    assert_eq!(unique.len(), ids.len());
    let t0 = Instant::now();
    let (s, b) = api
        .req(
            Method::POST,
            &format!("/mgmt/tm/asm/policies/{pid}/suggestions/accept"),
            Some(json!({"ids": ids})),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    let accepted = t0.elapsed();
    if b["applyTask"].is_object() {
        let t = crate::support::asm::wait_task(api, &b["applyTask"]).await;
        assert_eq!(t["status"], "COMPLETED", "{t}");
    }
    println!(
        "accepted {} suggestions in {:.1} s, applied in {:.1} s more",
        ids.len(),
        accepted.as_secs_f64(),
        (t0.elapsed() - accepted).as_secs_f64()
    );
    let again: Vec<(usize, Vec<u8>)> = ha_blocked
        .iter()
        .map(|&i| (i, all[i].bytes.clone()))
        .collect();
    let second = replay(port, &again).await;
    let through: Vec<usize> = again
        .iter()
        .zip(&second)
        .filter(|(_, r)| r.is_none())
        .map(|((i, _), _)| *i)
        .collect();
    println!(
        "after accepting all {} suggestions: {} of {} attacks blocked by a high-accuracy signature still blocked",
        ids.len(),
        second.iter().filter(|r| r.is_some()).count(),
        again.len()
    );
    for i in through.iter().take(5) {
        println!(
            "let through: {}",
            String::from_utf8_lossy(&all[*i].bytes)
                .lines()
                .next()
                .unwrap_or_default()
        );
    }
    assert!(through.is_empty(), "{} attacks got through", through.len());
}
