//! `portcullis demo` started through its library entry point on a free port.

use bytes::Bytes;
use http::Request;
use http_body_util::Full;

use crate::support::proxy::*;

async fn demo() -> portcullis::demo::Demo {
    let _ = rustls::crypto::ring::default_provider().install_default();
    // On free ports; the events are not read here (tests/it/cli/demo_walkthrough.rs reads them).
    portcullis::demo::start(&portcullis::demo::DemoOptions {
        listen: "127.0.0.1:0".parse().expect("addr"),
        admin_listen: "127.0.0.1:0".parse().expect("addr"),
        event_log: Some("/dev/null".into()),
    })
    .await
    .expect("demo starts")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_api_answers_through_the_proxy() {
    let d = demo().await;
    assert_ne!(d.proxy.port(), 0);
    let client = h1_client();
    let res = client
        .get(
            format!("http://{}/api/users/1", d.proxy)
                .parse()
                .expect("uri"),
        )
        .await
        .expect("GET");
    let (status, headers, body, _) = collect(res).await;
    assert_eq!(status, 200);
    assert_eq!(headers["content-type"], "application/json");
    let user: serde_json::Value = serde_json::from_slice(&body).expect("json");
    assert_eq!(user["name"], "Ada Lovelace");

    let req = Request::post(format!("http://{}/api/orders", d.proxy))
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from_static(
            br#"{"userId":1,"item":"book","quantity":2}"#,
        )))
        .expect("req");
    let (status, _, body, _) = collect(client.request(req).await.expect("POST")).await;
    assert_eq!(status, 201);
    assert!(String::from_utf8_lossy(&body).contains("\"item\":\"book\""));

    let banner = portcullis::demo::banner(&d);
    assert!(
        banner.contains(&format!("curl -i http://{}/api/users/1", d.proxy)),
        "{banner}"
    );
    assert!(
        banner.contains(&format!("curl -i http://{}/api/admin", d.proxy)),
        "{banner}"
    );
    d.dataplane.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_blocks_a_url_outside_the_spec() {
    let d = demo().await;
    let res = h1_client()
        .get(
            format!("http://{}/api/admin", d.proxy)
                .parse()
                .expect("uri"),
        )
        .await
        .expect("GET");
    let (status, headers, body, _) = collect(res).await;
    assert_eq!(status, 403);
    assert_eq!(headers["content-type"], "application/json; charset=utf-8");
    let v: serde_json::Value = serde_json::from_slice(&body).expect("json");
    assert!(
        v["supportID"].as_str().is_some_and(|s| s.len() >= 19),
        "{v}"
    );
    d.dataplane.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_blocks_a_body_that_breaks_the_spec() {
    let d = demo().await;
    let req = Request::post(format!("http://{}/api/orders", d.proxy))
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from_static(br#"{"userId":"x"}"#)))
        .expect("req");
    let res = h1_client().request(req).await.expect("POST");
    assert_eq!(res.status(), 403);
    d.dataplane.shutdown().await;
}

/// The demo policy's order schema refuses `isAdmin`; a megabyte of padding after the document
/// (past the inspection limit) must not carry it through.
#[tokio::test]
async fn the_demo_schema_is_not_bypassed_by_padding_past_the_inspection_limit() {
    let up = Upstream::start().await;
    let policy = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("policies/demo/policy.json");
    let proxy = Proxy::start_with_file(&[up.url()], &policy, &[]);
    let order = r#"{"userId":1,"item":"x","quantity":1,"isAdmin":true}"#;
    let padded = format!("{order}{}", " ".repeat(1_150_000));
    for body in [order.to_string(), padded] {
        let head = format!(
            "POST /api/orders HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(body.as_bytes());
        let out = raw(proxy.addr, &bytes, std::time::Duration::from_secs(10)).await;
        assert!(
            out.starts_with("HTTP/1.1 403 "),
            "{} bytes: {out}",
            body.len()
        );
        assert!(out.contains("supportID"), "{out}");
    }
    assert_eq!(up.hits(), 0, "neither order reaches the upstream");
    let events = proxy.events_containing("VIOL_REQUEST_MAX_LENGTH");
    assert!(events.contains("VIOL_REQUEST_MAX_LENGTH"), "{events}");
}
