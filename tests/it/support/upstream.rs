//! Loopback helpers for tests that send traffic through listeners the management plane
//! creates: HTTP/1.1 servers answering every request with one body, and polling a URL until
//! its listener answers (or until it is gone).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// An HTTP/1.1 server on 127.0.0.1 answering every request with 200 and `body` (JSON).
pub async fn http_server(body: String) -> SocketAddr {
    let json = "content-type: application/json\r\n".to_string();
    super::http_table(Default::default(), (200, json, body.into_bytes())).await
}

/// Like [`http_server`], answering with whatever `body` holds at the time of the request
/// (a policy repository whose document changes between deploys).
pub async fn http_server_shared(body: Arc<Mutex<String>>) -> SocketAddr {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            let body = body.lock().clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                let mut seen = Vec::new();
                while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => seen.extend_from_slice(&buf[..n]),
                    }
                }
                let resp = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = s.write_all(resp.as_bytes()).await;
            });
        }
    });
    addr
}

/// A plain client that neither follows redirects nor verifies certificates.
pub fn plain_client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .redirect(reqwest::redirect::Policy::none())
        .tls_danger_accept_invalid_certs(true)
        .tls_info(true)
        .build()
        .unwrap()
}

/// GETs `url` until a listener answers (up to ~10 s); the response, or `None`.
pub async fn get_when_up(url: &str) -> Option<reqwest::Response> {
    let c = plain_client();
    for _ in 0..100 {
        if let Ok(r) = c.get(url).send().await {
            return Some(r);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    None
}

/// Waits until nothing listens at `url` any more (up to ~10 s); whether it went away.
pub async fn gone(url: &str) -> bool {
    let c = plain_client();
    for _ in 0..100 {
        if c.get(url).send().await.is_err() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}
