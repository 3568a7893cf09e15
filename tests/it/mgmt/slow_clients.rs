//! Denial of service on the admin port: the real `portcullis serve` over real TLS (trusting exactly
//! its generated certificate), attacked by clients that send slowly, stall, declare huge bodies,
//! connect and say nothing, or send a body over the limit without waiting for `100 Continue`,
//! over HTTP/1.1 and HTTP/2. Every connection must be answered or closed within the configured
//! bounds (2 s here, to keep the tests fast), and every oversized body must get its 413.

use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

use crate::support::mgmt::{PASS, Server, configured};

/// The admin port's bounds in these tests.
const CONFIG: &str = r#"{"mgmt": {"header_read_timeout": 2, "idle_timeout": 2,
    "body_read_timeout": 2, "min_body_rate": 1000}}"#;
/// Longest any attack may hold a connection here: the 2 s bounds plus scheduling slack.
const HELD_AT_MOST: Duration = Duration::from_secs(6);

struct Admin {
    server: Server,
    dir: tempfile::TempDir,
}

fn admin() -> Admin {
    let (dir, server, _) = configured(CONFIG);
    Admin { server, dir }
}

impl Admin {
    fn addr(&self) -> String {
        self.server.base.trim_start_matches("https://").to_string()
    }

    /// A TLS connection offering `alpn`, trusting exactly the server's generated certificate.
    async fn tls(&self, alpn: &[u8]) -> TlsStream<TcpStream> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let pem = std::fs::read(self.dir.path().join("data/admin-cert.pem")).expect("cert");
        let mut roots = rustls::RootCertStore::empty();
        for c in rustls_pki_types::CertificateDer::pem_slice_iter(&pem) {
            roots.add(c.expect("pem")).expect("root");
        }
        let mut cfg = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("ring supports the default versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
        cfg.alpn_protocols = vec![alpn.to_vec()];
        let tcp = TcpStream::connect(self.addr()).await.expect("connect");
        let name = rustls_pki_types::ServerName::try_from("localhost").expect("name");
        tokio_rustls::TlsConnector::from(Arc::new(cfg))
            .connect(name, tcp)
            .await
            .expect("tls")
    }
}

use rustls_pki_types::pem::PemObject as _;

fn basic() -> String {
    let b64 = base64::engine::general_purpose::STANDARD.encode(format!("admin:{PASS}"));
    format!("Basic {b64}")
}

/// Reads until the peer closes (or `limit` passes); returns what arrived and when it closed.
async fn read_until_closed(s: &mut TlsStream<TcpStream>, limit: Duration) -> (String, Duration) {
    let t0 = Instant::now();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let left = limit.saturating_sub(t0.elapsed());
        match tokio::time::timeout(left, s.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => got.extend_from_slice(&buf[..n]),
            Ok(_) => break,
            Err(_) => panic!(
                "still open after {limit:?}; got {:?}",
                String::from_utf8_lossy(&got)
            ),
        }
    }
    (String::from_utf8_lossy(&got).into_owned(), t0.elapsed())
}

#[tokio::test]
async fn a_body_trickled_one_byte_a_second_is_cut_off() {
    let a = admin();
    let mut s = a.tls(b"http/1.1").await;
    let head = format!(
        "POST /mgmt/tm/ltm/pool HTTP/1.1\r\nHost: localhost\r\nAuthorization: {}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n",
        basic()
    );
    s.write_all(head.as_bytes()).await.expect("head");
    let t0 = Instant::now();
    let (mut r, mut w) = tokio::io::split(s);
    let writer = tokio::spawn(async move {
        // Never a gap of 2 s, but 1 byte/s is far under the 1000 bytes/s minimum.
        for _ in 0..60 {
            if w.write_all(b" ").await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    });
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    while let Ok(Ok(n)) = tokio::time::timeout(HELD_AT_MOST, r.read(&mut buf)).await {
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    writer.abort();
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(t0.elapsed() < HELD_AT_MOST, "held {:?}", t0.elapsed());
}

#[tokio::test]
async fn an_unauthenticated_post_that_stalls_is_answered_and_closed() {
    let a = admin();
    let mut s = a.tls(b"http/1.1").await;
    s.write_all(
        b"POST /mgmt/tm/ltm/pool HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n{",
    )
    .await
    .expect("write");
    let (text, took) = read_until_closed(&mut s, HELD_AT_MOST).await;
    assert!(text.starts_with("HTTP/1.1 401"), "{text}");
    assert!(took < HELD_AT_MOST, "held {took:?}");
}

#[tokio::test]
async fn a_declared_gigabyte_is_refused_before_a_byte_of_it_is_read() {
    let a = admin();
    let mut s = a.tls(b"http/1.1").await;
    let head = format!(
        "POST /mgmt/tm/ltm/pool HTTP/1.1\r\nHost: localhost\r\nAuthorization: {}\r\nContent-Length: 1073741824\r\n\r\n",
        basic()
    );
    s.write_all(head.as_bytes()).await.expect("head");
    let (text, took) = read_until_closed(&mut s, HELD_AT_MOST).await;
    assert!(text.starts_with("HTTP/1.1 413"), "{text}");
    assert!(took < Duration::from_secs(1), "answered after {took:?}");
}

#[tokio::test]
async fn a_tls_connection_that_sends_nothing_is_closed() {
    let a = admin();
    for alpn in [&b"http/1.1"[..], b"h2"] {
        let mut s = a.tls(alpn).await;
        let (_, took) = read_until_closed(&mut s, HELD_AT_MOST).await;
        assert!(took < HELD_AT_MOST, "{alpn:?} held {took:?}");
    }
}

/// Sends `body` in one request (no `Expect: 100-continue`) over HTTP/1.1 or HTTP/2 and returns
/// the status the client reads.
async fn post(a: &Admin, h2: bool, auth: bool, body: Bytes) -> Result<u16, String> {
    let io = TokioIo::new(a.tls(if h2 { b"h2" } else { b"http/1.1" }).await);
    let mut req = http::Request::post("https://localhost/mgmt/tm/ltm/pool")
        .header("content-type", "application/json");
    if auth {
        req = req.header("authorization", basic());
    }
    let req = req.body(Full::new(body)).expect("request");
    let res = if h2 {
        let (mut send, conn) = hyper::client::conn::http2::handshake(TokioExecutor::new(), io)
            .await
            .map_err(|e| e.to_string())?;
        tokio::spawn(conn);
        send.send_request(req).await
    } else {
        let (mut send, conn) = hyper::client::conn::http1::handshake(io)
            .await
            .map_err(|e| e.to_string())?;
        tokio::spawn(conn);
        send.send_request(req).await
    }
    .map_err(|e| format!("no answer: {e}"))?;
    let status = res.status().as_u16();
    let _ = res.into_body().collect().await;
    Ok(status)
}

#[tokio::test]
async fn an_oversized_body_sent_without_expect_gets_its_413_over_http1_and_http2() {
    let a = admin();
    // 18 MiB of JSON: over the 16 MiB limit of a JSON body.
    let mut json = Vec::with_capacity(18 << 20);
    json.extend_from_slice(b"{\"name\":\"");
    json.resize((18 << 20) - 2, b'a');
    json.extend_from_slice(b"\"}");
    let body = Bytes::from(json);
    for h2 in [false, true] {
        assert_eq!(post(&a, h2, true, body.clone()).await, Ok(413), "h2: {h2}");
        assert_eq!(post(&a, h2, false, body.clone()).await, Ok(401), "h2: {h2}");
    }
    // The server still works.
    let small = Bytes::from_static(br#"{"name":"after_the_flood"}"#);
    assert_eq!(post(&a, true, true, small).await, Ok(200));
}
