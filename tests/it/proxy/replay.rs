//! `portcullis replay` agrees with `portcullis proxy` verdict for verdict: every request of a
//! sample corpus (attacks and ordinary requests in every zone, bodies framed by length and by
//! chunks, HTTP/1.0, absolute-form targets, upgrades, heads the proxy refuses) is replayed
//! in-process by the real binary and sent byte for byte to the real proxy in front of a real
//! upstream; the outcomes (blocked, passed, refused with the same status) must be the same.
//! A head that is not valid HTTP is blocked: the proxy answers it with the blocking page.

use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::proxy::{Proxy, Upstream};

const POLICY: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/policies/eval/generic-blocking.json"
);
const SAMPLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/replay/sample.jsonl"
);

/// Reads one response: the status and whether it is the engine's block page (or its 403).
async fn one_response(s: &mut tokio::net::TcpStream) -> Option<(u16, bool)> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = tokio::time::timeout(Duration::from_secs(5), s.read(&mut tmp))
            .await
            .ok()?
            .ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&tmp[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let status: u16 = head.split(' ').nth(1)?.parse().ok()?;
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + length {
        let n = tokio::time::timeout(Duration::from_secs(5), s.read(&mut tmp))
            .await
            .ok()?
            .ok()?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&tmp[..n]);
    }
    let body = String::from_utf8_lossy(&buf[head_end..]);
    Some((status, status == 403 || body.contains("Request Rejected")))
}

/// The outcome as `replay --results` names it.
async fn through_proxy(addr: std::net::SocketAddr, raw: &[u8]) -> String {
    let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
    s.write_all(raw).await.expect("write");
    match one_response(&mut s).await {
        Some((_, true)) => "blocked".into(),
        Some((status, false)) if status >= 400 => format!("rejected {status}"),
        Some(_) => "passed".into(),
        None => "no response".into(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_and_proxy_agree_request_by_request() {
    let dir = tempfile::tempdir().expect("tmp");
    let results = dir.path().join("results.jsonl");
    let out = Command::new(env!("CARGO_BIN_EXE_portcullis"))
        .args(["replay", "--policy", POLICY, SAMPLE, "--results"])
        .arg(&results)
        .output()
        .expect("run replay");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut replayed = BTreeMap::new();
    for line in std::fs::read_to_string(&results).expect("results").lines() {
        let r: serde_json::Value = serde_json::from_str(line).expect("json");
        let outcome = match r["outcome"].as_str().expect("outcome") {
            "rejected" => format!("rejected {}", r["status"]),
            o => o.to_string(),
        };
        replayed.insert(r["id"].as_str().expect("id").to_string(), outcome);
    }

    let upstream = Upstream::start().await;
    let policy = std::fs::read_to_string(POLICY).expect("policy");
    let proxy = Proxy::start(&[upstream.url()], &policy, &[]);
    let mut differ = Vec::new();
    let mut seen = BTreeMap::<String, usize>::new();
    for line in std::fs::read_to_string(SAMPLE).expect("sample").lines() {
        let rec = portcullis::cli::parse_replay_record(line).expect("record");
        let live = through_proxy(proxy.addr, &rec.raw).await;
        let offline = replayed.get(&rec.id).cloned().unwrap_or_default();
        if live != offline {
            differ.push(format!("{}: proxy {live}, replay {offline}", rec.id));
        }
        *seen
            .entry(live.split(' ').next().unwrap_or("").to_string())
            .or_default() += 1;
    }
    assert!(differ.is_empty(), "verdicts differ:\n{}", differ.join("\n"));
    assert_eq!(replayed.len(), 48, "every sample request replayed");
    // The sample exercises every outcome, so agreement means something. Heads that are not
    // valid HTTP are blocked (answered with the blocking page); only a size limit is refused
    // with its status alone.
    for (outcome, at_least) in [("blocked", 20), ("passed", 15), ("rejected", 1)] {
        assert!(
            seen.get(outcome).copied().unwrap_or(0) >= at_least,
            "{outcome}: {seen:?}"
        );
    }
}
