//! The HTTP/1.1 fast path (crates/proxy/src/h1) on real sockets: scripted raw upstreams send what hyper
//! would normally parse for us (chunked bodies with trailers, close-delimited bodies, HTTP/1.0,
//! connections closed while pooled, silence), and raw clients check what comes back, including a
//! keep-alive connection that moves to the general path mid-way.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::support::proxy::*;

/// A raw upstream: for every request head it reads, `answer(n)` gives the bytes to send back
/// (n counts requests over all connections) and whether to close the connection after them.
async fn scripted(
    answer: impl Fn(usize, &str) -> (Vec<u8>, bool) + Send + Sync + 'static,
) -> (SocketAddr, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let count = Arc::new(AtomicUsize::new(0));
    let (answer, c) = (Arc::new(answer), count.clone());
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let (answer, c) = (answer.clone(), c.clone());
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        let head = String::from_utf8_lossy(&buf[..end + 4]).into_owned();
                        buf.drain(..end + 4);
                        let n = c.fetch_add(1, Ordering::SeqCst);
                        let (bytes, close) = answer(n, &head);
                        if s.write_all(&bytes).await.is_err() || close {
                            return;
                        }
                    }
                    match s.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(k) => buf.extend_from_slice(&chunk[..k]),
                    }
                }
            });
        }
    });
    (addr, count)
}

/// Reads one response (head + the body its framing announces) off `s`.
async fn one_response(s: &mut TcpStream) -> String {
    let mut out = Vec::new();
    let mut b = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&out).into_owned();
        if let Some(end) = text.find("\r\n\r\n") {
            let head = text[..end].to_ascii_lowercase();
            let body = &text[end + 4..];
            let done = if let Some(cl) = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length: "))
            {
                body.len() >= cl.trim().parse::<usize>().expect("cl")
            } else if head.contains("transfer-encoding: chunked") {
                body.ends_with("\r\n\r\n")
                    && (body.starts_with("0\r\n") || body.contains("\r\n0\r\n"))
            } else {
                true
            };
            if done {
                return text;
            }
        }
        let n = tokio::time::timeout(Duration::from_secs(5), s.read(&mut b))
            .await
            .expect("response in time")
            .expect("read");
        assert!(
            n > 0,
            "closed mid-response: {}",
            String::from_utf8_lossy(&out)
        );
        out.extend_from_slice(&b[..n]);
    }
}

/// Waits (at most 5 s) for the proxy to close `s` without sending anything more; how long it took.
async fn closed_after(s: &mut TcpStream) -> Duration {
    let since = std::time::Instant::now();
    let mut b = [0u8; 64];
    let n = tokio::time::timeout(Duration::from_secs(5), s.read(&mut b))
        .await
        .expect("closed in time")
        .unwrap_or(0);
    assert_eq!(n, 0, "{:?}", String::from_utf8_lossy(&b[..n]));
    since.elapsed()
}

const OK: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nconnection: keep-alive\r\ncontent-length: 2\r\n\r\nok";

#[tokio::test]
async fn a_keep_alive_connection_moves_to_the_general_path_at_its_first_body() {
    let up = Upstream::start().await;
    let proxy = Proxy::start(&[up.url()], PASS_POLICY, &[]);
    let mut s = TcpStream::connect(proxy.addr).await.expect("connect");
    // Fast path, then a body (handed over with the bytes already read), then the general path.
    s.write_all(b"GET /echo HTTP/1.1\r\nhost: x\r\n\r\nPOST /echo HTTP/1.1\r\nhost: x\r\ncontent-length: 5\r\n\r\nhello")
        .await
        .expect("write");
    let first = one_response(&mut s).await;
    assert!(first.starts_with("HTTP/1.1 200 OK\r\n"), "{first}");
    let second = one_response(&mut s).await;
    assert!(
        second.starts_with("HTTP/1.1 200 OK\r\n") && second.ends_with("hello"),
        "{second}"
    );
    s.write_all(b"GET /echo HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        .await
        .expect("write");
    let mut rest = String::new();
    s.read_to_string(&mut rest).await.expect("read to close");
    assert!(rest.starts_with("HTTP/1.1 200 OK\r\n"), "{rest}");
    assert_eq!(up.hits(), 3);
}

#[tokio::test]
async fn pipelined_requests_are_answered_in_order() {
    let (addr, count) = scripted(|n, head| {
        let path = head.split(' ').nth(1).unwrap_or("?").to_string();
        let body = format!("{n}:{path}");
        let r = format!(
            "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        (r.into_bytes(), false)
    })
    .await;
    let proxy = Proxy::start(&[format!("http://{addr}")], PASS_POLICY, &[]);
    let mut req = String::new();
    for i in 0..5 {
        req.push_str(&format!("GET /p{i} HTTP/1.1\r\nhost: x\r\n\r\n"));
    }
    req.push_str("HEAD /h HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n");
    let out = raw(proxy.addr, req.as_bytes(), Duration::from_secs(5)).await;
    let order: Vec<&str> = out
        .match_indices("/p")
        .map(|(i, _)| &out[i..i + 3])
        .collect();
    assert_eq!(order, ["/p0", "/p1", "/p2", "/p3", "/p4"], "{out}");
    // HEAD: the length header passes, no body follows, and the connection closes as asked.
    assert!(
        out.ends_with("content-length: 4\r\nconnection: close\r\n\r\n"),
        "{out:?}"
    );
    assert_eq!(count.load(Ordering::SeqCst), 6);
}

#[tokio::test]
async fn a_pooled_connection_the_upstream_closed_is_not_a_failure() {
    // Every answer closes its connection without saying so: each pooled connection is dead by
    // the time the next request wants it.
    let (addr, count) = scripted(|_, _| (OK.to_vec(), true)).await;
    let proxy = Proxy::start(&[format!("http://{addr}")], PASS_POLICY, &[]);
    let mut s = TcpStream::connect(proxy.addr).await.expect("connect");
    for _ in 0..6 {
        s.write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n")
            .await
            .expect("write");
        let res = one_response(&mut s).await;
        assert!(res.starts_with("HTTP/1.1 200 OK\r\n"), "{res}");
        assert!(res.ends_with("\r\n\r\nok"), "{res}");
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    assert_eq!(count.load(Ordering::SeqCst), 6);
}

#[tokio::test]
async fn chunked_bodies_are_rechunked_with_trailers_only_when_asked() {
    let (addr, _) = scripted(|_, _| {
        let r = b"HTTP/1.1 200 OK\r\ntrailer: x-sum\r\ntransfer-encoding: chunked\r\n\r\n\
                  5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nx-sum: 12\r\ncontent-type: no\r\n\r\n";
        (r.to_vec(), false)
    })
    .await;
    let proxy = Proxy::start(&[format!("http://{addr}")], PASS_POLICY, &[]);
    let mut s = TcpStream::connect(proxy.addr).await.expect("connect");
    s.write_all(b"GET / HTTP/1.1\r\nhost: x\r\nte: trailers\r\n\r\n")
        .await
        .expect("write");
    let with = one_response(&mut s).await;
    assert!(
        with.starts_with("HTTP/1.1 200 OK\r\ntrailer: x-sum\r\ntransfer-encoding: chunked\r\n\r\n"),
        "{with:?}"
    );
    let body = &with[with.find("\r\n\r\n").expect("head") + 4..];
    assert_eq!(dechunk(body), "hello, world");
    assert!(body.ends_with("0\r\nx-sum: 12\r\n\r\n"), "{body:?}");
    s.write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .expect("write");
    let without = one_response(&mut s).await;
    assert!(
        without.ends_with("\r\n0\r\n\r\n"),
        "no trailers unless asked: {without:?}"
    );
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    loop {
        let (size, rest) = body.split_once("\r\n").expect("size line");
        let n = usize::from_str_radix(size, 16).expect("hex");
        if n == 0 {
            return out;
        }
        out.push_str(&rest[..n]);
        body = &rest[n + 2..];
    }
}

#[tokio::test]
async fn close_delimited_and_http10_upstream_bodies_reach_the_client() {
    let (addr, _) = scripted(|n, _| {
        let r: &[u8] = if n % 2 == 0 {
            b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\nuntil the end"
        } else {
            b"HTTP/1.0 200 OK\r\nx-old: 1\r\n\r\nold style"
        };
        (r.to_vec(), true)
    })
    .await;
    let proxy = Proxy::start(&[format!("http://{addr}")], PASS_POLICY, &[]);
    let mut s = TcpStream::connect(proxy.addr).await.expect("connect");
    s.write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .expect("write");
    let first = one_response(&mut s).await;
    assert!(
        first.starts_with(
            "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ntransfer-encoding: chunked\r\n\r\n"
        ),
        "{first:?}"
    );
    assert_eq!(
        dechunk(&first[first.find("\r\n\r\n").expect("head") + 4..]),
        "until the end"
    );
    // The keep-alive connection goes on; an HTTP/1.0 answer is passed as HTTP/1.0, close-delimited.
    s.write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .expect("write");
    let mut rest = String::new();
    s.read_to_string(&mut rest).await.expect("read to close");
    assert_eq!(rest, "HTTP/1.0 200 OK\r\nx-old: 1\r\n\r\nold style");
}

#[tokio::test]
async fn a_silent_upstream_gets_504_and_a_malformed_one_502() {
    let (addr, _) = scripted(|n, _| {
        if n == 0 {
            (Vec::new(), false)
        } else {
            (
                b"HTTP/1.1 200 OK\r\ncontent-length: 1, 2\r\n\r\nx".to_vec(),
                true,
            )
        }
    })
    .await;
    let proxy = Proxy::start(
        &[format!("http://{addr}")],
        PASS_POLICY,
        &["--limit", "upstream_response_timeout=400ms"],
    );
    let mut s = TcpStream::connect(proxy.addr).await.expect("connect");
    s.write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .expect("write");
    let res = one_response(&mut s).await;
    assert_eq!(
        res,
        "HTTP/1.1 504 Gateway Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n\
         content-length: 19\r\n\r\nupstream timed out\n"
    );
    s.write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .expect("write");
    let res = one_response(&mut s).await;
    assert!(
        res.starts_with("HTTP/1.1 502 Bad Gateway\r\n") && res.ends_with("upstream failed\n"),
        "{res}"
    );
}

/// The connection's timeouts are re-armed lazily (crates/proxy/src/h1/timer.rs): each request moves them
/// later without touching the timer. They must still hold, at their length from the last move.
#[tokio::test]
async fn timeouts_hold_after_requests_moved_them() {
    let (addr, _) = scripted(|_, head| {
        if head.starts_with("GET /silent ") {
            (Vec::new(), false)
        } else {
            (OK.to_vec(), false)
        }
    })
    .await;
    let proxy = Proxy::start(
        &[format!("http://{addr}")],
        PASS_POLICY,
        &[
            "--limit",
            "idle_timeout=1s",
            "--limit",
            "upstream_response_timeout=1s",
        ],
    );
    let mut s = TcpStream::connect(proxy.addr).await.expect("connect");
    // Four requests 400 ms apart: past both first deadlines, so each was moved.
    for _ in 0..4 {
        tokio::time::sleep(Duration::from_millis(400)).await;
        s.write_all(b"GET /ok HTTP/1.1\r\nhost: x\r\n\r\n")
            .await
            .expect("write");
        let res = one_response(&mut s).await;
        assert!(res.starts_with("HTTP/1.1 200 OK\r\n"), "{res}");
    }
    let asked = std::time::Instant::now();
    s.write_all(b"GET /silent HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .expect("write");
    let res = one_response(&mut s).await;
    let waited = asked.elapsed();
    assert!(res.starts_with("HTTP/1.1 504 "), "{res}");
    assert!(
        waited >= Duration::from_millis(950) && waited < Duration::from_secs(3),
        "504 after {waited:?}"
    );
    // Idle from here: closed at the idle timeout.
    let waited = closed_after(&mut s).await;
    assert!(
        waited >= Duration::from_millis(950) && waited < Duration::from_secs(3),
        "closed after {waited:?}"
    );
}

/// SIGTERM closes a keep-alive connection that waits idle between requests at once (the drain
/// signal is registered at the first idle wait, then read as a flag), and the proxy exits.
#[tokio::test]
async fn an_idle_keep_alive_connection_closes_when_the_proxy_drains() {
    let (addr, _) = scripted(|_, _| (OK.to_vec(), false)).await;
    let mut proxy = Proxy::start(&[format!("http://{addr}")], PASS_POLICY, &[]);
    let mut s = TcpStream::connect(proxy.addr).await.expect("connect");
    for _ in 0..3 {
        s.write_all(b"GET /ok HTTP/1.1\r\nhost: x\r\n\r\n")
            .await
            .expect("write");
        let res = one_response(&mut s).await;
        assert!(res.starts_with("HTTP/1.1 200 OK\r\n"), "{res}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    proxy.signal("TERM");
    let waited = closed_after(&mut s).await;
    assert!(waited < Duration::from_secs(2), "{waited:?}");
    for _ in 0..100 {
        if let Some(status) = proxy.child.try_wait().expect("wait") {
            assert!(status.success(), "{status}");
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the proxy did not exit after draining");
}

#[tokio::test]
async fn http2_prior_knowledge_and_http10_clients_still_go_to_hyper() {
    let up = Upstream::start().await;
    let proxy = Proxy::start(&[up.url()], PASS_POLICY, &[]);
    let out = raw(
        proxy.addr,
        b"GET /echo HTTP/1.0\r\nhost: x\r\n\r\n",
        Duration::from_secs(5),
    )
    .await;
    assert!(out.starts_with("HTTP/1.0 200 OK\r\n"), "{out}");
    let res = h2c_client()
        .get(proxy.url("/echo").parse().expect("uri"))
        .await
        .expect("h2c");
    assert_eq!(res.version(), http::Version::HTTP_2);
    assert_eq!(res.status(), 200);
}

#[tokio::test]
async fn http11_over_tls_takes_the_fast_path_then_hands_over() {
    let up = Upstream::start().await;
    let proxy = TlsProxy::start(&[up.url()], PASS_POLICY, &[]);
    // ALPN http/1.1, and no ALPN at all (the proxy sniffs for the HTTP/2 preface).
    for alpn in [&[&b"http/1.1"[..]][..], &[]] {
        let mut tls = proxy.connect(alpn).await;
        tls.write_all(
            b"GET /echo HTTP/1.1\r\nhost: x\r\n\r\nPOST /echo HTTP/1.1\r\nhost: x\r\n\
              content-length: 3\r\n\r\nabcGET /echo HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
        )
        .await
        .expect("write");
        let mut out = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(5), tls.read_to_end(&mut out)).await;
        let out = String::from_utf8_lossy(&out);
        assert_eq!(
            out.matches("HTTP/1.1 200 OK\r\n").count(),
            3,
            "{alpn:?}: {out}"
        );
        assert!(out.contains("\r\n\r\nabc"), "{out}");
    }
    assert_eq!(up.hits(), 6);
}

#[tokio::test]
async fn only_idempotent_requests_are_sent_again_when_a_pooled_connection_drops_them() {
    // Every third request is read and dropped without an answer, the connection closed.
    let (addr, count) = scripted(|n, _| {
        if n % 3 == 1 {
            (Vec::new(), true)
        } else {
            (OK.to_vec(), false)
        }
    })
    .await;
    let proxy = Proxy::start(&[format!("http://{addr}")], PASS_POLICY, &[]);
    let mut s = TcpStream::connect(proxy.addr).await.expect("connect");
    let mut send = async |req: &[u8]| {
        s.write_all(req).await.expect("write");
        one_response(&mut s).await
    };
    let get = b"GET / HTTP/1.1\r\nhost: x\r\n\r\n";
    let post = b"POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\n\r\n";
    assert!(send(get).await.starts_with("HTTP/1.1 200 OK"));
    // Dropped on the pooled connection after it went out: a GET is sent again on a fresh one.
    assert!(send(get).await.starts_with("HTTP/1.1 200 OK"));
    assert!(send(post).await.starts_with("HTTP/1.1 200 OK"));
    // A POST the upstream may have acted on is not repeated: 502.
    let res = send(post).await;
    assert!(res.starts_with("HTTP/1.1 502 Bad Gateway"), "{res}");
    assert_eq!(count.load(Ordering::SeqCst), 5);
}
