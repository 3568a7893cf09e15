//! WebSocket (HTTP/1.1 `Connection: Upgrade`) through the real `portcullis proxy`: a hand-rolled
//! WebSocket echo upstream (RFC 6455 handshake and frames, with tokio), a raw client. The upgrade
//! request is inspected (a blocked one never reaches the upstream), frames flow both ways after
//! `101`, a declined upgrade closes the client connection so nothing sent after the upgrade head is
//! read as HTTP, idle tunnels are closed, the tunnel count is capped, and no other protocol (h2c,
//! any token) ever opens a tunnel.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use base64::Engine as _;
use sha1::Digest;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::support::proxy::{GENERIC_POLICY, PASS_POLICY, Proxy, header};

const WS_GUID: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
const KEY: &str = "dGhlIHNhbXBsZSBub25jZQ==";

/// Reads up to the end of an HTTP head; returns it (and keeps nothing after it: callers send no
/// more until they read the answer).
async fn read_head<R: AsyncRead + Unpin>(r: &mut R) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if r.read(&mut byte).await.unwrap_or(0) == 0 {
            break;
        }
        head.push(byte[0]);
    }
    String::from_utf8_lossy(&head).into_owned()
}

/// One WebSocket frame: (opcode, payload), unmasking a masked frame.
async fn read_frame<R: AsyncRead + Unpin>(r: &mut R) -> Option<(u8, Vec<u8>)> {
    let mut h = [0u8; 2];
    r.read_exact(&mut h).await.ok()?;
    let masked = h[1] & 0x80 != 0;
    let len = match h[1] & 0x7f {
        126 => u64::from(r.read_u16().await.ok()?),
        127 => r.read_u64().await.ok()?,
        n => u64::from(n),
    };
    let mut mask = [0u8; 4];
    if masked {
        r.read_exact(&mut mask).await.ok()?;
    }
    let mut payload = vec![0u8; len as usize];
    r.read_exact(&mut payload).await.ok()?;
    if masked {
        for (i, b) in payload.iter_mut().enumerate() {
            *b ^= mask[i % 4];
        }
    }
    Some((h[0] & 0x0f, payload))
}

/// A final frame; masked as a client must send it when `mask` is given.
fn frame(opcode: u8, payload: &[u8], mask: Option<[u8; 4]>) -> Vec<u8> {
    let mut out = vec![0x80 | opcode];
    let m = if mask.is_some() { 0x80 } else { 0 };
    assert!(payload.len() < 126, "short frames only");
    out.push(m | payload.len() as u8);
    match mask {
        Some(k) => {
            out.extend_from_slice(&k);
            out.extend(payload.iter().enumerate().map(|(i, b)| b ^ k[i % 4]));
        }
        None => out.extend_from_slice(payload),
    }
    out
}

struct EchoUpstream {
    addr: SocketAddr,
    /// Request heads received.
    heads: Arc<AtomicUsize>,
}

/// A WebSocket echo server; `decline` answers every upgrade with `403` instead of `101`.
async fn echo_upstream(decline: bool) -> EchoUpstream {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let heads = Arc::new(AtomicUsize::new(0));
    let counter = heads.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let counter = counter.clone();
            tokio::spawn(async move {
                loop {
                    let head = read_head(&mut s).await;
                    if head.is_empty() {
                        return;
                    }
                    counter.fetch_add(1, Ordering::SeqCst);
                    if decline || header(&head, "upgrade") != Some("websocket") {
                        let _ = s
                            .write_all(b"HTTP/1.1 403 Forbidden\r\ncontent-length: 2\r\n\r\nno")
                            .await;
                        continue;
                    }
                    let key = header(&head, "sec-websocket-key").unwrap_or("");
                    let accept = base64::engine::general_purpose::STANDARD
                        .encode(sha1::Sha1::digest(format!("{key}{WS_GUID}").as_bytes()));
                    let answer = format!(
                        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\
                         Connection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n\r\n"
                    );
                    if s.write_all(answer.as_bytes()).await.is_err() {
                        return;
                    }
                    while let Some((op, payload)) = read_frame(&mut s).await {
                        if op == 0x8 {
                            let _ = s.write_all(&frame(0x8, &payload, None)).await;
                            return;
                        }
                        if s.write_all(&frame(op, &payload, None)).await.is_err() {
                            return;
                        }
                    }
                    return;
                }
            });
        }
    });
    EchoUpstream { addr, heads }
}

fn upgrade_request(path: &str) -> String {
    format!(
        "GET {path} HTTP/1.1\r\nHost: chat.example\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: {KEY}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
}

/// Connects to the proxy and sends the upgrade request; returns the stream and the answer head.
async fn handshake(proxy: SocketAddr, path: &str) -> (TcpStream, String) {
    let mut s = TcpStream::connect(proxy).await.expect("connect");
    s.write_all(upgrade_request(path).as_bytes())
        .await
        .expect("write");
    let head = tokio::time::timeout(Duration::from_secs(10), read_head(&mut s))
        .await
        .expect("answer within 10 s");
    (s, head)
}

/// Reads until the peer closes (true) or `wait` passes (false).
async fn closed_within(s: &mut TcpStream, wait: Duration) -> bool {
    let mut sink = Vec::new();
    matches!(
        tokio::time::timeout(wait, s.read_to_end(&mut sink)).await,
        Ok(Ok(_)) | Ok(Err(_))
    )
}

#[tokio::test]
async fn frames_flow_both_ways_after_101() {
    let up = echo_upstream(false).await;
    let proxy = Proxy::start(&[format!("http://{}", up.addr)], PASS_POLICY, &[]);
    let (mut s, head) = handshake(proxy.addr, "/chat").await;
    assert!(head.starts_with("HTTP/1.1 101"), "{head}");
    assert_eq!(header(&head, "upgrade"), Some("websocket"), "{head}");
    let accept = base64::engine::general_purpose::STANDARD
        .encode(sha1::Sha1::digest(format!("{KEY}{WS_GUID}").as_bytes()));
    assert_eq!(header(&head, "sec-websocket-accept"), Some(accept.as_str()));
    for msg in ["hello", "GET / HTTP/1.1", "third"] {
        s.write_all(&frame(0x1, msg.as_bytes(), Some([1, 2, 3, 4])))
            .await
            .expect("send");
        let (op, payload) = read_frame(&mut s).await.expect("echo");
        assert_eq!((op, payload.as_slice()), (0x1, msg.as_bytes()));
    }
    s.write_all(&frame(0x8, b"", Some([9, 9, 9, 9])))
        .await
        .expect("close");
    assert_eq!(read_frame(&mut s).await.map(|f| f.0), Some(0x8));
    assert!(closed_within(&mut s, Duration::from_secs(5)).await);
    assert_eq!(up.heads.load(Ordering::SeqCst), 1);
}

/// Only `/api/allowed` is allowed; everything else is blocked by the policy.
const URL_POLICY: &str = r#"{"policy":{"name":"ws_block","template":{"name":"POLICY_TEMPLATE_NGINX_BASE"},
  "enforcementMode":"blocking",
  "urls":[{"name":"*","type":"wildcard","$action":"delete"},{"name":"/chat","method":"*"}],
  "blocking-settings":{"violations":[{"name":"VIOL_URL","alarm":true,"block":true}]}}}"#;

#[tokio::test]
async fn a_blocked_upgrade_never_reaches_the_upstream_and_closes() {
    let up = echo_upstream(false).await;
    let proxy = Proxy::start(&[format!("http://{}", up.addr)], URL_POLICY, &[]);
    let (mut s, head) = handshake(proxy.addr, "/admin").await;
    assert!(!head.starts_with("HTTP/1.1 101"), "{head}");
    assert_eq!(header(&head, "connection"), Some("close"), "{head}");
    assert!(closed_within(&mut s, Duration::from_secs(5)).await);
    assert_eq!(up.heads.load(Ordering::SeqCst), 0);
    let events = proxy.events_containing("VIOL_URL");
    assert!(events.contains("VIOL_URL"), "{events}");
    // The allowed URL upgrades.
    let (_s, head) = handshake(proxy.addr, "/chat").await;
    assert!(head.starts_with("HTTP/1.1 101"), "{head}");
}

#[tokio::test]
async fn a_declined_upgrade_closes_and_bytes_after_it_are_never_read_as_http() {
    let up = echo_upstream(true).await;
    let proxy = Proxy::start(&[format!("http://{}", up.addr)], PASS_POLICY, &[]);
    let mut s = TcpStream::connect(proxy.addr).await.expect("connect");
    // A second request right behind the upgrade head: if the proxy read it as HTTP it would
    // reach the upstream as a second request.
    let mut bytes = upgrade_request("/chat").into_bytes();
    bytes.extend_from_slice(b"GET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n");
    s.write_all(&bytes).await.expect("write");
    let head = read_head(&mut s).await;
    assert!(head.starts_with("HTTP/1.1 403"), "{head}");
    assert_eq!(header(&head, "connection"), Some("close"), "{head}");
    assert!(closed_within(&mut s, Duration::from_secs(5)).await);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        up.heads.load(Ordering::SeqCst),
        1,
        "only the upgrade request"
    );
}

#[tokio::test]
async fn idle_tunnels_are_closed_and_their_number_is_capped() {
    let up = echo_upstream(false).await;
    let proxy = Proxy::start(
        &[format!("http://{}", up.addr)],
        PASS_POLICY,
        &[
            "--limit",
            "tunnel_idle_timeout=1s",
            "--limit",
            "max_tunnels=1",
        ],
    );
    let (mut first, head) = handshake(proxy.addr, "/chat").await;
    assert!(head.starts_with("HTTP/1.1 101"), "{head}");
    let (mut second, head) = handshake(proxy.addr, "/chat").await;
    assert!(head.starts_with("HTTP/1.1 503"), "{head}");
    assert!(closed_within(&mut second, Duration::from_secs(5)).await);
    // Quiet for longer than the idle timeout: the proxy closes the tunnel and frees its slot.
    assert!(closed_within(&mut first, Duration::from_secs(5)).await);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (_third, head) = handshake(proxy.addr, "/chat").await;
    assert!(head.starts_with("HTTP/1.1 101"), "{head}");
}

/// An upstream that switches to whatever protocol a request names (and, with `always`, answers
/// `101` even to a request that names none), then records every byte it receives.
async fn switching_upstream(always: bool) -> (SocketAddr, Arc<parking_lot::Mutex<Vec<u8>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let seen = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let record = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let record = record.clone();
            tokio::spawn(async move {
                loop {
                    let head = read_head(&mut s).await;
                    if head.is_empty() {
                        return;
                    }
                    record.lock().extend_from_slice(head.as_bytes());
                    let protocol = header(&head, "upgrade").map(str::to_string);
                    if protocol.is_none() && !always {
                        let ok = "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
                        if s.write_all(ok.as_bytes()).await.is_err() {
                            return;
                        }
                        continue;
                    }
                    let answer = format!(
                        "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: {}\r\n\r\n",
                        protocol.as_deref().unwrap_or("h2c")
                    );
                    if s.write_all(answer.as_bytes()).await.is_err() {
                        return;
                    }
                    let mut buf = [0u8; 4096];
                    while let Ok(n) = s.read(&mut buf).await {
                        if n == 0 {
                            return;
                        }
                        record.lock().extend_from_slice(&buf[..n]);
                    }
                    return;
                }
            });
        }
    });
    (addr, seen)
}

#[tokio::test]
async fn h2c_and_unknown_upgrades_open_no_uninspected_tunnel() {
    let (addr, seen) = switching_upstream(false).await;
    let proxy = Proxy::start(&[format!("http://{addr}")], GENERIC_POLICY, &[]);
    let attack = "GET /a?x=%3Cscript%3Ealert(1)%3C/script%3E HTTP/1.1\r\nHost: a\r\n\r\n";
    for upgrade in [
        "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n",
        "Connection: Upgrade\r\nUpgrade: foo\r\n",
        "Connection: Upgrade\r\nUpgrade: websocket, h2c\r\n",
    ] {
        let mut s = TcpStream::connect(proxy.addr).await.expect("connect");
        let head = format!("GET /chat HTTP/1.1\r\nHost: a\r\n{upgrade}\r\n");
        s.write_all(head.as_bytes()).await.expect("write");
        let answer = read_head(&mut s).await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{upgrade}: {answer}");
        let mut ok = [0u8; 2];
        s.read_exact(&mut ok).await.expect("body");
        // Had a tunnel been joined, this would reach the upstream uninspected.
        s.write_all(attack.as_bytes()).await.expect("write");
        let answer = read_head(&mut s).await;
        assert!(!answer.starts_with("HTTP/1.1 101"), "{upgrade}: {answer}");
        assert!(
            answer.starts_with("HTTP/1.1 200 OK") && header(&answer, "connection") == Some("close"),
            "{upgrade}: the block page expected, got {answer}"
        );
    }
    let seen = String::from_utf8_lossy(&seen.lock()).to_ascii_lowercase();
    assert!(!seen.contains("upgrade:"), "{seen}");
    assert!(!seen.contains("http2-settings"), "{seen}");
    assert!(!seen.contains("script"), "{seen}");
    let events = proxy.events_containing("VIOL_ATTACK_SIGNATURE");
    assert!(events.contains("VIOL_ATTACK_SIGNATURE"), "{events}");
}

#[tokio::test]
async fn a_member_that_switches_protocols_unasked_gets_no_tunnel() {
    let (addr, seen) = switching_upstream(true).await;
    let proxy = Proxy::start(&[format!("http://{addr}")], PASS_POLICY, &[]);
    // The fast path (no body) and the general path (a body) both refuse the 101.
    for request in [
        "GET /x HTTP/1.1\r\nHost: a\r\n\r\n",
        "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nhi",
    ] {
        let mut s = TcpStream::connect(proxy.addr).await.expect("connect");
        s.write_all(request.as_bytes()).await.expect("write");
        let answer = read_head(&mut s).await;
        assert!(answer.starts_with("HTTP/1.1 502"), "{request}: {answer}");
        // Bytes of another protocol: through a tunnel they would reach the member as they are.
        let _ = s.write_all(b"TUNNELLED BYTES\r\n\r\n").await;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let seen = String::from_utf8_lossy(&seen.lock()).into_owned();
    assert!(!seen.contains("TUNNELLED"), "{seen}");
}
