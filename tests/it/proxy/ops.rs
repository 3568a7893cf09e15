//! Operations against the real binary: SIGHUP policy swaps under load, SIGTERM draining,
//! metrics, and the block responses once the policy engine is in.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use crate::support::free_addr;
use crate::support::proxy::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_under_load_fails_no_request() {
    let up = Upstream::start().await;
    let proxy = Proxy::start(&[up.url()], PASS_POLICY, &[]);
    let stop = Arc::new(AtomicBool::new(false));
    let (ok, failed) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let mut workers = Vec::new();
    for _ in 0..4 {
        let (stop, ok, failed) = (stop.clone(), ok.clone(), failed.clone());
        let uri: http::Uri = proxy.url("/echo").parse().expect("uri");
        workers.push(tokio::spawn(async move {
            let client = h1_client();
            while !stop.load(Ordering::Relaxed) {
                match client.get(uri.clone()).await {
                    Ok(r) if r.status() == 200 => ok.fetch_add(1, Ordering::Relaxed),
                    _ => failed.fetch_add(1, Ordering::Relaxed),
                };
            }
        }));
    }
    for i in 0..5 {
        tokio::time::sleep(Duration::from_millis(150)).await;
        // Alternate a valid new policy with a broken one: the broken one must keep the old.
        let doc = if i % 2 == 0 {
            PASS_POLICY.replace("pass_all", "pass_all_v2")
        } else {
            "{ nope".to_string()
        };
        std::fs::write(proxy.policy_path(), doc).expect("policy");
        proxy.signal("HUP");
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        w.await.expect("worker");
    }
    assert_eq!(failed.load(Ordering::Relaxed), 0);
    assert!(
        ok.load(Ordering::Relaxed) > 50,
        "too little load: {}",
        ok.load(Ordering::Relaxed)
    );
    let log = proxy.stderr();
    assert!(log.contains("policy reloaded"), "{log}");
    assert!(log.contains("keeping the old policy"), "{log}");
}

#[tokio::test]
async fn sigterm_drains_in_flight_requests_then_exits() {
    let up = Upstream::start().await;
    let mut proxy = Proxy::start(&[up.url()], PASS_POLICY, &[]);
    let uri: http::Uri = proxy.url("/slow").parse().expect("uri");
    let slow = tokio::spawn(async move { h1_client().get(uri).await.map(|r| r.status()) });
    tokio::time::sleep(Duration::from_millis(300)).await;
    proxy.signal("TERM");
    let status = slow
        .await
        .expect("task")
        .expect("in-flight request completes");
    assert_eq!(status, 200);
    let mut exited = None;
    for _ in 0..100 {
        if let Some(s) = proxy.child.try_wait().expect("wait") {
            exited = Some(s);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(exited.expect("proxy exits after draining").success());
}

#[tokio::test]
async fn metrics_are_served_as_prometheus_text() {
    let up = Upstream::start().await;
    let maddr = free_addr();
    let proxy = Proxy::start(
        &[up.url()],
        PASS_POLICY,
        &["--metrics-listen", &maddr.to_string()],
    );
    let client = h1_client();
    for _ in 0..3 {
        let r = client
            .get(proxy.url("/m").parse().expect("uri"))
            .await
            .expect("GET");
        assert_eq!(r.status(), 200);
    }
    let res = client
        .get(format!("http://{maddr}/metrics").parse().expect("uri"))
        .await
        .expect("metrics");
    let (_, _, body, _) = collect(res).await;
    let text = String::from_utf8_lossy(&body);
    assert!(
        text.contains("portcullis_requests_total{listener=\"proxy\",status=\"2xx\"} 3"),
        "{text}"
    );
    assert!(
        text.contains("portcullis_request_duration_seconds_bucket"),
        "{text}"
    );
}

#[tokio::test]
async fn a_broken_policy_file_stops_startup_with_a_clear_error() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_portcullis"))
        .args([
            "proxy",
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            "http://127.0.0.1:1",
        ])
        .args(["--policy", "/nonexistent/policy.json"])
        .output()
        .expect("run");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent/policy.json"), "{err}");
}

/// An API-security policy whose only URL is `/api/allowed`.
const API_POLICY: &str = r#"{"policy":{"name":"api_block","template":{"name":"POLICY_TEMPLATE_API_SECURITY"},
  "enforcementMode":"blocking",
  "urls":[{"name":"*","type":"wildcard","$action":"delete"},{"name":"/api/allowed","method":"*"}],
  "blocking-settings":{"violations":[{"name":"VIOL_URL","alarm":true,"block":true}]}}}"#;

/// A default (non-API) policy whose only URL is `/allowed`.
const PAGE_POLICY: &str = r#"{"policy":{"name":"page_block","template":{"name":"POLICY_TEMPLATE_NGINX_BASE"},
  "enforcementMode":"blocking",
  "urls":[{"name":"*","type":"wildcard","$action":"delete"},{"name":"/allowed","method":"*"}],
  "blocking-settings":{"violations":[{"name":"VIOL_URL","alarm":true,"block":true}]}}}"#;

fn support_id_in(text: &str) -> String {
    text.chars()
        .skip_while(|c| !c.is_ascii_digit())
        .take_while(char::is_ascii_digit)
        .collect()
}

#[tokio::test]
async fn api_block_response_is_byte_exact_and_logged() {
    let up = Upstream::start().await;
    let proxy = Proxy::start(&[up.url()], API_POLICY, &[]);
    let out = raw(
        proxy.addr,
        b"GET /api/secret HTTP/1.1\r\nHost: a\r\n\r\n",
        Duration::from_secs(5),
    )
    .await;
    let id = support_id_in(out.split("\r\n\r\n").nth(1).unwrap_or(""));
    assert!(id.len() >= 19, "{out}");
    let expected = format!(
        "HTTP/1.1 403 Forbidden\r\ncontent-type: application/json; charset=utf-8\r\n\
         cache-control: no-cache\r\npragma: no-cache\r\nconnection: close\r\n\
         content-length: {}\r\n\r\n{{\"supportID\":\"{id}\"}}",
        16 + id.len()
    );
    assert_eq!(out, expected);
    assert_eq!(up.hits(), 0);
    let events = proxy.events_containing(&format!("\"supportId\":\"{id}\""));
    assert!(
        events.contains(&format!("\"supportId\":\"{id}\"")),
        "{events}"
    );
    assert!(events.contains("VIOL_URL"), "{events}");
}

#[tokio::test]
async fn default_block_page_is_byte_exact() {
    let up = Upstream::start().await;
    let proxy = Proxy::start(&[up.url()], PAGE_POLICY, &[]);
    let out = raw(
        proxy.addr,
        b"GET /secret HTTP/1.1\r\nHost: a\r\n\r\n",
        Duration::from_secs(5),
    )
    .await;
    let (head, body) = out.split_once("\r\n\r\n").expect("head");
    let id = support_id_in(body.split("support ID is: ").nth(1).unwrap_or(""));
    let page = portcullis::waf::response::default_page(portcullis::support::SupportId(
        id.parse().expect("id"),
    ));
    assert_eq!(body, page);
    assert_eq!(
        head,
        format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncache-control: no-cache\r\n\
             pragma: no-cache\r\nconnection: close\r\ncontent-length: {}",
            page.len()
        )
    );
    assert_eq!(up.hits(), 0);
}

/// An HTTP/2 request whose headers are blocked while its body is still on the way gets its block
/// page every time: the stream is not reset before the answer is out (curl, prior knowledge).
#[tokio::test]
async fn an_http2_request_blocked_before_its_body_is_read_gets_its_block_page() {
    let up = Upstream::start().await;
    let proxy = Proxy::start(&[up.url()], GENERIC_POLICY, &[]);
    let body = proxy.dir.path().join("body.bin");
    std::fs::write(&body, vec![b'a'; 256 * 1024]).expect("body");
    let url = proxy.url("/upload?q=%3Cscript%3Ealert(1)%3C/script%3E");
    let mut failures = Vec::new();
    for i in 0..30 {
        let (body, url) = (body.clone(), url.clone());
        let out = tokio::task::spawn_blocking(move || {
            std::process::Command::new("curl")
                .args(["-sS", "--http2-prior-knowledge", "--max-time", "10"])
                .arg("--data-binary")
                .arg(format!("@{}", body.display()))
                .arg(&url)
                .output()
        })
        .await
        .expect("task")
        .expect("curl");
        let page = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() || !page.contains("Request Rejected") {
            failures.push(format!(
                "try {i}: {} {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of 30 failed: {failures:?}",
        failures.len()
    );
    assert_eq!(up.hits(), 0);
}
