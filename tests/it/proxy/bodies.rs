//! HTTP/1.1 request bodies on the proxy's own connection code, on real sockets: both framings on
//! keep-alive connections at both ends (pipelined, the upstream connection reused after bodies),
//! `Expect: 100-continue`, early answers (a block while the client is still sending, an upstream
//! that answers before reading the body), and `https://` members.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::support::proxy::*;

const WAIT: Duration = Duration::from_secs(10);

/// A raw upstream that reads each request (head and body, `Content-Length` or chunked) and
/// answers `<body length>:<path>`; `early` answers right after the head without reading the body
/// (401, keep-alive). Counts connections and requests.
async fn counting(early: bool) -> (SocketAddr, Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (conns, reqs) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (c, r) = (conns.clone(), reqs.clone());
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            c.fetch_add(1, Ordering::SeqCst);
            let r = r.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                loop {
                    let Some(end) = find(&buf, b"\r\n\r\n") else {
                        if !fill(&mut s, &mut buf).await {
                            return;
                        }
                        continue;
                    };
                    let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
                    buf.drain(..end + 4);
                    r.fetch_add(1, Ordering::SeqCst);
                    let path = head.split(' ').nth(1).unwrap_or("?").to_string();
                    if early {
                        let res = "HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\n\r\n";
                        if s.write_all(res.as_bytes()).await.is_err() {
                            return;
                        }
                        continue;
                    }
                    let Some(body) = read_body(&mut s, &mut buf, &head).await else {
                        return;
                    };
                    let text = format!("{}:{path}", body.len());
                    let res = format!(
                        "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{text}",
                        text.len()
                    );
                    if s.write_all(res.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (addr, conns, reqs)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

async fn fill(s: &mut TcpStream, buf: &mut Vec<u8>) -> bool {
    let mut chunk = [0u8; 16384];
    match s.read(&mut chunk).await {
        Ok(0) | Err(_) => false,
        Ok(n) => {
            buf.extend_from_slice(&chunk[..n]);
            true
        }
    }
}

/// Reads the body `head` announces from `buf` and `s`.
async fn read_body(s: &mut TcpStream, buf: &mut Vec<u8>, head: &str) -> Option<Vec<u8>> {
    if head.contains("transfer-encoding: chunked") {
        let mut body = Vec::new();
        loop {
            while find(buf, b"\r\n").is_none() {
                if !fill(s, buf).await {
                    return None;
                }
            }
            let line_end = find(buf, b"\r\n")?;
            let size_text = String::from_utf8_lossy(&buf[..line_end]).to_string();
            let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
            buf.drain(..line_end + 2);
            if size == 0 {
                // Trailer lines up to the empty one.
                loop {
                    while find(buf, b"\r\n").is_none() {
                        if !fill(s, buf).await {
                            return None;
                        }
                    }
                    let end = find(buf, b"\r\n")?;
                    buf.drain(..end + 2);
                    if end == 0 {
                        return Some(body);
                    }
                }
            }
            while buf.len() < size + 2 {
                if !fill(s, buf).await {
                    return None;
                }
            }
            body.extend_from_slice(&buf[..size]);
            buf.drain(..size + 2);
        }
    }
    let len = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length: "))
        .map_or(0, |v| v.trim().parse::<usize>().unwrap_or(0));
    while buf.len() < len {
        if !fill(s, buf).await {
            return None;
        }
    }
    Some(buf.drain(..len).collect())
}

/// Reads `n` complete responses (`Content-Length` framed) off `s`.
async fn responses(s: &mut TcpStream, n: usize) -> Vec<String> {
    let mut buf = Vec::new();
    let mut out = Vec::new();
    while out.len() < n {
        if let Some(end) = find(&buf, b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_string();
            let len = head
                .to_ascii_lowercase()
                .lines()
                .find_map(|l| l.strip_prefix("content-length: ").map(str::to_string))
                .map_or(0, |v| v.trim().parse::<usize>().unwrap_or(0));
            if head.starts_with("HTTP/1.1 100 ") {
                buf.drain(..end + 4);
                out.push(head);
                continue;
            }
            if buf.len() >= end + 4 + len {
                let body = String::from_utf8_lossy(&buf[end + 4..end + 4 + len]).to_string();
                buf.drain(..end + 4 + len);
                out.push(format!("{head}\r\n\r\n{body}"));
                continue;
            }
        }
        let mut chunk = [0u8; 16384];
        let got = tokio::time::timeout(WAIT, s.read(&mut chunk))
            .await
            .expect("answer in time")
            .expect("read");
        assert!(got > 0, "closed early: {:?}", String::from_utf8_lossy(&buf));
        buf.extend_from_slice(&chunk[..got]);
    }
    out
}

#[tokio::test]
async fn pipelined_bodies_of_both_framings_reuse_the_upstream_connection() {
    let (addr, conns, reqs) = counting(false).await;
    let proxy = Proxy::start(&[format!("http://{addr}")], PASS_POLICY, &[]);
    let mut s = TcpStream::connect(proxy.addr).await.expect("connect");
    let big = "x".repeat(200_000);
    let mut wire = Vec::new();
    wire.extend_from_slice(b"POST /a HTTP/1.1\r\nhost: x\r\ncontent-length: 5\r\n\r\nhello");
    wire.extend_from_slice(
        b"POST /b HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n\
          3;ext=1\r\nabc\r\n4\r\ndefg\r\n0\r\nx-trailer: dropped\r\n\r\n",
    );
    wire.extend_from_slice(b"GET /c HTTP/1.1\r\nhost: x\r\n\r\n");
    wire.extend_from_slice(
        format!(
            "PUT /d HTTP/1.1\r\nhost: x\r\ncontent-length: {}\r\n\r\n{big}",
            big.len()
        )
        .as_bytes(),
    );
    s.write_all(&wire).await.expect("write");
    let got = responses(&mut s, 4).await;
    let bodies: Vec<&str> = got
        .iter()
        .map(|r| r.rsplit("\r\n\r\n").next().unwrap_or(""))
        .collect();
    assert_eq!(bodies, ["5:/a", "7:/b", "0:/c", "200000:/d"], "{got:?}");
    assert!(
        got.iter().all(|r| r.starts_with("HTTP/1.1 200 OK")),
        "{got:?}"
    );
    // Once more, after the bodies, on the same upstream connection.
    s.write_all(b"POST /e HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\nok")
        .await
        .expect("write");
    let got = responses(&mut s, 1).await;
    assert!(got[0].ends_with("2:/e"), "{got:?}");
    assert_eq!(reqs.load(Ordering::SeqCst), 5);
    assert_eq!(
        conns.load(Ordering::SeqCst),
        1,
        "the upstream connection is kept"
    );
}

#[tokio::test]
async fn expect_100_continue_is_answered_before_the_body_is_sent() {
    let (addr, _, _) = counting(false).await;
    let proxy = Proxy::start(&[format!("http://{addr}")], PASS_POLICY, &[]);
    let mut s = TcpStream::connect(proxy.addr).await.expect("connect");
    s.write_all(
        b"POST /e HTTP/1.1\r\nhost: x\r\ncontent-length: 4\r\nexpect: 100-continue\r\n\r\n",
    )
    .await
    .expect("write");
    let interim = responses(&mut s, 1).await;
    assert_eq!(interim[0], "HTTP/1.1 100 Continue", "{interim:?}");
    s.write_all(b"body").await.expect("write");
    let got = responses(&mut s, 1).await;
    assert!(
        got[0].starts_with("HTTP/1.1 200 OK") && got[0].ends_with("4:/e"),
        "{got:?}"
    );
}

#[tokio::test]
async fn an_upstream_that_answers_first_gets_its_answer_relayed_and_the_connection_goes_on() {
    let (addr, _, reqs) = counting(true).await;
    // Past 4 KiB the (transparent) policy lets the body stream uninspected, so the request goes
    // upstream before its body ended.
    let limit = ["--limit", "inspection_bytes=4096"];
    let proxy = Proxy::start(&[format!("http://{addr}")], PASS_POLICY, &limit);
    let mut s = TcpStream::connect(proxy.addr).await.expect("connect");
    // A body the upstream does not wait for, sent in two parts with a pause between them.
    s.write_all(b"POST /a HTTP/1.1\r\nhost: x\r\ncontent-length: 20000\r\n\r\n")
        .await
        .expect("write");
    s.write_all(&[b'a'; 10_000]).await.expect("write");
    let got = responses(&mut s, 1).await;
    assert!(got[0].starts_with("HTTP/1.1 401 "), "{got:?}");
    s.write_all(&[b'b'; 10_000]).await.expect("write");
    // The rest was read and discarded: the next request on the connection is served.
    s.write_all(b"GET /next HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .expect("write");
    let got = responses(&mut s, 1).await;
    assert!(got[0].starts_with("HTTP/1.1 401 "), "{got:?}");
    assert_eq!(reqs.load(Ordering::SeqCst), 2);
}

/// Sends `head`, then `body_len` bytes in pieces (chunk-framed when `chunked`) while reading;
/// returns what was read. Write errors are ignored: the proxy may stop reading after its answer.
async fn send_while_reading(
    addr: SocketAddr,
    head: String,
    body_len: usize,
    chunked: bool,
) -> String {
    let s = TcpStream::connect(addr).await.expect("connect");
    let (mut r, mut w) = s.into_split();
    let writer = tokio::spawn(async move {
        if w.write_all(head.as_bytes()).await.is_err() {
            return;
        }
        let piece = vec![b'a'; 64 * 1024];
        let mut sent = 0;
        while sent < body_len {
            let n = piece.len().min(body_len - sent);
            let mut framed = Vec::with_capacity(n + 16);
            if chunked {
                framed.extend_from_slice(format!("{n:x}\r\n").as_bytes());
            }
            framed.extend_from_slice(&piece[..n]);
            if chunked {
                framed.extend_from_slice(b"\r\n");
            }
            if w.write_all(&framed).await.is_err() {
                return;
            }
            sent += n;
        }
    });
    let mut out = Vec::new();
    let mut chunk = [0u8; 16384];
    loop {
        match tokio::time::timeout(WAIT, r.read(&mut chunk)).await {
            Ok(Ok(n)) if n > 0 => out.extend_from_slice(&chunk[..n]),
            Ok(Ok(_)) => break,
            Ok(Err(e)) => panic!("read failed after {:?}: {e}", String::from_utf8_lossy(&out)),
            Err(_) => panic!("no end in time: {:?}", String::from_utf8_lossy(&out)),
        }
    }
    writer.abort();
    String::from_utf8_lossy(&out).into_owned()
}

#[tokio::test]
async fn a_client_still_sending_its_body_receives_the_block_page() {
    let (addr, _, reqs) = counting(false).await;
    let proxy = Proxy::start(&[format!("http://{addr}")], GENERIC_POLICY, &[]);
    for round in 0..5 {
        // Blocked by its headers, with 8 MiB still to come.
        let head = format!(
            "POST /upload?q=%3Cscript%3Ealert(1)%3C/script%3E HTTP/1.1\r\nhost: x\r\n\
             content-type: application/octet-stream\r\ncontent-length: {}\r\n\r\n",
            8 << 20
        );
        let out = send_while_reading(proxy.addr, head, 8 << 20, false).await;
        assert!(out.contains("Request Rejected"), "round {round}: {out:?}");
        // Blocked in its body (an attack in the first bytes of a large form body).
        let head = format!(
            "POST /form HTTP/1.1\r\nhost: x\r\ncontent-type: application/x-www-form-urlencoded\r\n\
             transfer-encoding: chunked\r\n\r\n{:x}\r\nq=1'%20union%20select%20password%20from%20users--&pad=\r\n",
            "q=1'%20union%20select%20password%20from%20users--&pad=".len()
        );
        let out = send_while_reading(proxy.addr, head, 4 << 20, true).await;
        assert!(out.contains("Request Rejected"), "round {round}: {out:?}");
    }
    assert_eq!(
        reqs.load(Ordering::SeqCst),
        0,
        "nothing reached the upstream"
    );
}

#[tokio::test]
async fn https_members_take_bodies_on_the_same_path() {
    let (up, _dir, ca) = Upstream::start_tls().await;
    let url = format!("https://localhost:{}", up.addr.port());
    let proxy = Proxy::start(
        &[url],
        PASS_POLICY,
        &["--upstream-ca", ca.to_str().expect("path")],
    );
    let mut s = TcpStream::connect(proxy.addr).await.expect("connect");
    s.write_all(
        b"POST /echo HTTP/1.1\r\nhost: x\r\ncontent-length: 5\r\n\r\nhello\
          POST /echo HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n6\r\n world\r\n0\r\n\r\n",
    )
    .await
    .expect("write");
    let got = responses(&mut s, 2).await;
    assert!(
        got[0].starts_with("HTTP/1.1 200 OK") && got[0].ends_with("hello"),
        "{got:?}"
    );
    assert!(got[1].ends_with(" world"), "{got:?}");
    assert!(got[0].contains("x-seen-version: HTTP/1.1"), "{got:?}");
    assert_eq!(up.hits(), 2);
}
