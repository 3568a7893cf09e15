//! Limits, timeouts and request smuggling against the real proxy binary on loopback.

use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::DeadAddr;
use crate::support::proxy::*;

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
    let dead = DeadAddr::new();
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
    let dead = DeadAddr::new();
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

/// A body that goes past the inspection limit cannot be inspected whole: an SQL injection behind
/// 1.1 MiB of padding, in a form or a JSON body, is blocked under the generic policy
/// (VIOL_REQUEST_MAX_LENGTH) instead of streaming on uninspected.
#[tokio::test]
async fn sqli_after_a_megabyte_of_padding_is_blocked() {
    let up = Upstream::start().await;
    let proxy = Proxy::start(&[up.url()], GENERIC_POLICY, &[]);
    let pad = "a".repeat(1_150_000);
    let sqli = "1' UNION SELECT username, password FROM users--";
    let bodies = [
        (
            "application/x-www-form-urlencoded",
            format!("pad={pad}&q={}", sqli.replace(' ', "+")),
        ),
        (
            "application/json",
            format!(r#"{{"pad":"{pad}","q":"{sqli}"}}"#),
        ),
    ];
    for (ct, body) in bodies {
        let head = format!(
            "POST /search HTTP/1.1\r\nHost: a\r\nContent-Type: {ct}\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n",
            body.len()
        );
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(body.as_bytes());
        let out = raw(proxy.addr, &bytes, Duration::from_secs(10)).await;
        assert!(out.contains("Request Rejected"), "{ct}: {out:.300}");
    }
    assert_eq!(up.hits(), 0, "no padded attack reaches the upstream");
    let events = proxy.events_containing("VIOL_REQUEST_MAX_LENGTH");
    assert!(events.contains("VIOL_REQUEST_MAX_LENGTH"), "{events:.2000}");
}

/// Reads until the proxy closes the connection; the answer and when it came.
async fn answer_and_close(s: &mut tokio::net::TcpStream, within: Duration) -> (String, Duration) {
    let started = Instant::now();
    let mut out = Vec::new();
    let _ = tokio::time::timeout(within, s.read_to_end(&mut out)).await;
    (
        String::from_utf8_lossy(&out).into_owned(),
        started.elapsed(),
    )
}

/// A POST whose client stops sending its body, or trickles it, is answered 408 and closed at the
/// body read timeout or when it falls under the minimum rate, not held forever.
#[tokio::test]
async fn a_stalled_or_trickled_post_body_is_cut() {
    let up = Upstream::start().await;
    let proxy = Proxy::start(
        &[up.url()],
        PASS_POLICY,
        &[
            "--limit",
            "body_read_timeout=1s",
            "--limit",
            "min_body_rate=100",
        ],
    );
    let head = b"POST /upload HTTP/1.1\r\nHost: a\r\nContent-Length: 1000\r\n\r\n";
    let mut stalled = tokio::net::TcpStream::connect(proxy.addr)
        .await
        .expect("connect");
    stalled.write_all(head).await.expect("head");
    stalled.write_all(b"x").await.expect("byte");
    let (out, t) = answer_and_close(&mut stalled, Duration::from_secs(6)).await;
    assert!(out.starts_with("HTTP/1.1 408 "), "{out}");
    assert!(t < Duration::from_secs(3), "{t:?}");

    // One byte every 300 ms is never idle for 1 s, but stays under 100 bytes/s.
    let mut trickle = tokio::net::TcpStream::connect(proxy.addr)
        .await
        .expect("connect");
    trickle.write_all(head).await.expect("head");
    let started = Instant::now();
    let mut closed = false;
    for _ in 0..30 {
        if trickle.write_all(b"x").await.is_err() {
            closed = true;
            break;
        }
        let mut buf = [0u8; 256];
        match tokio::time::timeout(Duration::from_millis(300), trickle.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => {
                let out = String::from_utf8_lossy(&buf[..n]).into_owned();
                assert!(out.starts_with("HTTP/1.1 408 "), "{out}");
                closed = true;
                break;
            }
            Ok(_) => {
                closed = true;
                break;
            }
            Err(_) => {}
        }
    }
    assert!(closed, "a trickled body was held for 9 s");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
}

/// 300 POSTs that stall after their head must not take the descriptors a proxy limited to 256
/// needs for ordinary requests: they are cut at the body read timeout and service resumes.
#[tokio::test]
async fn three_hundred_stalled_posts_do_not_exhaust_descriptors() {
    let up = Upstream::start().await;
    let proxy = Proxy::start_with_nofile(
        &[up.url()],
        PASS_POLICY,
        &["--limit", "body_read_timeout=1s"],
        256,
    );
    let mut stalled = Vec::new();
    for _ in 0..300 {
        if let Ok(Ok(mut s)) = tokio::time::timeout(
            Duration::from_millis(500),
            tokio::net::TcpStream::connect(proxy.addr),
        )
        .await
        {
            let _ = s
                .write_all(b"POST /up HTTP/1.1\r\nHost: a\r\nContent-Length: 100000\r\n\r\nx")
                .await;
            stalled.push(s);
        }
    }
    // Within a few body timeouts an ordinary request is served again.
    let started = Instant::now();
    let mut served = false;
    while started.elapsed() < Duration::from_secs(8) {
        let out = raw(
            proxy.addr,
            b"GET /ok HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
            Duration::from_secs(1),
        )
        .await;
        if out.starts_with("HTTP/1.1 200 ") {
            served = true;
            break;
        }
    }
    assert!(served, "no request served 8 s after 300 stalled POSTs");
    drop(stalled);
}

/// A TLS client that completes its handshake and sends nothing is closed at the header timeout,
/// whichever protocol it negotiated.
#[tokio::test]
async fn a_silent_tls_connection_is_closed_at_the_header_timeout() {
    let up = Upstream::start().await;
    let tls = TlsProxy::start(
        &[up.url()],
        PASS_POLICY,
        &["--limit", "header_read_timeout=1s"],
    );
    for alpn in [&[][..], &[&b"http/1.1"[..]], &[&b"h2"[..]]] {
        let mut conn = tls.connect(alpn).await;
        let started = Instant::now();
        let mut sink = Vec::new();
        let closed =
            tokio::time::timeout(Duration::from_secs(5), conn.read_to_end(&mut sink)).await;
        assert!(closed.is_ok(), "ALPN {alpn:?}: still open after 5 s");
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
    }
}
