//! `portcullis demo` started through its library entry point on a free port.

mod proxy_support;

use bytes::Bytes;
use http::Request;
use http_body_util::Full;
use proxy_support::*;

async fn demo() -> portcullis::demo::Demo {
    let _ = rustls::crypto::ring::default_provider().install_default();
    // On free ports; the events are not read here (tests/demo_walkthrough.rs reads them).
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
