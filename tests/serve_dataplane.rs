//! A virtual server and pool created through `/mgmt` on the real `portcullis serve` binary carry
//! traffic to the pool member; deleting the virtual stops its listener.

mod mgmt_common;

use std::time::Duration;

use mgmt_common::{Api, start};
use reqwest::Method;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A tiny HTTP/1.1 upstream answering every request with `hello from upstream`.
async fn upstream() -> std::net::SocketAddr {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                let mut seen = Vec::new();
                while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => seen.extend_from_slice(&buf[..n]),
                    }
                }
                let body = "hello from upstream";
                let resp = format!(
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = s.write_all(resp.as_bytes()).await;
            });
        }
    });
    addr
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

async fn get(url: &str) -> Result<(u16, String), reqwest::Error> {
    let r = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()?
        .get(url)
        .send()
        .await?;
    let status = r.status().as_u16();
    Ok((status, r.text().await?))
}

#[tokio::test]
async fn a_virtual_and_pool_created_over_rest_serve_traffic() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), None);
    let api = Api::new(&server);
    let member = upstream().await;
    let port = free_port();

    let (s, b) = api
        .req(
            Method::POST,
            "/mgmt/tm/ltm/pool",
            Some(json!({"name": "web", "members": [{"name": member.to_string()}]})),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    let (s, b) = api
        .req(
            Method::POST,
            "/mgmt/tm/ltm/virtual",
            Some(json!({"name": "vs", "destination": format!("127.0.0.1:{port}"), "pool": "/Common/web"})),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["destination"], format!("/Common/127.0.0.1:{port}"));

    let url = format!("http://127.0.0.1:{port}/anything");
    let mut last = None;
    for _ in 0..50 {
        match get(&url).await {
            Ok(r) => {
                last = Some(r);
                break;
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    assert_eq!(last, Some((200, "hello from upstream".to_string())));

    let (s, _) = api
        .req(Method::DELETE, "/mgmt/tm/ltm/virtual/vs", None)
        .await;
    assert_eq!(s, 200);
    let mut stopped = false;
    for _ in 0..50 {
        if get(&url).await.is_err() {
            stopped = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        stopped,
        "the listener of a deleted virtual server keeps answering"
    );
}
