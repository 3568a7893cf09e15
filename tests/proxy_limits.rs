//! Limits, timeouts and request smuggling against the real proxy binary on loopback.

mod proxy_support;

use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use proxy_support::*;

const WAIT: Duration = Duration::from_secs(5);

#[tokio::test]
async fn each_smuggling_form_gets_400_and_nothing_reaches_the_upstream() {
    let up = Upstream::start().await;
    let proxy = Proxy::start(&[up.url()], PASS_POLICY, &[]);
    let forms: [(&str, &[u8]); 8] = [
        (
            "CL+TE",
            b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nX",
        ),
        (
            "TE+CL",
            b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 6\r\n\r\n0\r\n\r\nX",
        ),
        (
            "differing CL",
            b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
        ),
        ("obs-fold", b"GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n  folded\r\n\r\n"),
        ("bare LF", b"GET / HTTP/1.1\nHost: a\r\n\r\n"),
        ("bare CR", b"GET / HTTP/1.1\r\nHost: a\rX: b\r\n\r\n"),
        ("invalid name", b"GET / HTTP/1.1\r\nHost: a\r\nBad Name: 1\r\n\r\n"),
        ("space before colon", b"GET / HTTP/1.1\r\nHost : a\r\n\r\n"),
    ];
    for (name, bytes) in forms {
        let out = raw(proxy.addr, bytes, WAIT).await;
        assert!(out.starts_with("HTTP/1.1 400 "), "{name}: {out:?}");
    }
    // Smuggled behind a valid first request on a keep-alive connection.
    let out = raw(
        proxy.addr,
        b"GET /ok HTTP/1.1\r\nHost: a\r\n\r\nPOST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\
          Transfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n",
        WAIT,
    )
    .await;
    assert!(out.starts_with("HTTP/1.1 200 OK"), "{out}");
    assert!(out.contains("HTTP/1.1 400 "), "{out}");
    assert_eq!(
        up.hits(),
        1,
        "only the valid first request may reach the upstream"
    );
}

#[tokio::test]
async fn upstream_down_gives_502_fast() {
    let dead = free_port();
    let proxy = Proxy::start(&[format!("http://{dead}")], PASS_POLICY, &[]);
    let started = Instant::now();
    let out = raw(
        proxy.addr,
        b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
        WAIT,
    )
    .await;
    assert!(out.starts_with("HTTP/1.1 502 "), "{out}");
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn a_dead_member_is_skipped_and_the_live_one_serves() {
    let up = Upstream::start().await;
    let dead = free_port();
    let proxy = Proxy::start(&[format!("http://{dead}"), up.url()], PASS_POLICY, &[]);
    let client = h1_client();
    for _ in 0..4 {
        let res = client
            .get(proxy.url("/x").parse().expect("uri"))
            .await
            .expect("GET");
        assert_eq!(res.status(), 200);
    }
    assert_eq!(up.hits(), 4);
}

#[tokio::test]
async fn a_slowloris_client_is_cut_at_the_header_timeout() {
    let up = Upstream::start().await;
    let proxy = Proxy::start(
        &[up.url()],
        PASS_POLICY,
        &["--limit", "header_read_timeout=1s"],
    );
    let mut s = tokio::net::TcpStream::connect(proxy.addr)
        .await
        .expect("connect");
    let started = Instant::now();
    s.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n")
        .await
        .expect("write");
    let mut closed_at = None;
    for _ in 0..40 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if s.write_all(b"X-Slow: 1\r\n").await.is_err() {
            closed_at = Some(started.elapsed());
            break;
        }
        let mut buf = [0u8; 64];
        if let Ok(Ok(0)) = tokio::time::timeout(Duration::from_millis(1), s.read(&mut buf)).await {
            closed_at = Some(started.elapsed());
            break;
        }
    }
    let t = closed_at.expect("connection still open after 4 s");
    assert!(
        t >= Duration::from_millis(900) && t < Duration::from_millis(2500),
        "{t:?}"
    );
    assert_eq!(up.hits(), 0);
}

#[tokio::test]
async fn bodies_over_the_limit_get_413() {
    let up = Upstream::start().await;
    let proxy = Proxy::start(
        &[up.url()],
        PASS_POLICY,
        &["--limit", "max_body_bytes=1000"],
    );
    let declared = raw(
        proxy.addr,
        b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1001\r\n\r\n",
        WAIT,
    )
    .await;
    assert!(declared.starts_with("HTTP/1.1 413 "), "{declared}");
    assert_eq!(
        up.hits(),
        0,
        "a declared oversize body is refused before forwarding"
    );

    let mut chunked = b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for _ in 0..3 {
        chunked.extend_from_slice(b"190\r\n");
        chunked.extend_from_slice(&[b'a'; 400]);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let streamed = raw(proxy.addr, &chunked, WAIT).await;
    assert!(streamed.starts_with("HTTP/1.1 413 "), "{streamed}");

    let ok = raw(
        proxy.addr,
        b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
        WAIT,
    )
    .await;
    assert!(ok.starts_with("HTTP/1.1 200 "), "{ok}");
}

#[tokio::test]
async fn long_urls_and_header_floods_are_refused() {
    let up = Upstream::start().await;
    let proxy = Proxy::start(
        &[up.url()],
        PASS_POLICY,
        &["--limit", "max_url_bytes=100", "--limit", "max_headers=10"],
    );
    let long = format!("GET /{} HTTP/1.1\r\nHost: a\r\n\r\n", "a".repeat(200));
    assert!(
        raw(proxy.addr, long.as_bytes(), WAIT)
            .await
            .starts_with("HTTP/1.1 414 ")
    );
    let flood = format!(
        "GET / HTTP/1.1\r\nHost: a\r\n{}\r\n",
        "X-A: 1\r\n".repeat(20)
    );
    assert!(
        raw(proxy.addr, flood.as_bytes(), WAIT)
            .await
            .starts_with("HTTP/1.1 431 ")
    );
    assert_eq!(up.hits(), 0);
}
