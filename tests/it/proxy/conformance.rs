//! HTTP conformance of the data plane (RFC 9110, 9112, 9113) against the real binary on loopback:
//! Host and authority, message framing, CONNECT, and requests the parser refuses, which are
//! logged with a support ID like any blocked request.

use std::time::Duration;

use bytes::Bytes;
use http::Request;
use http_body_util::Full;
use hyper_util::rt::{TokioExecutor, TokioIo};

use crate::support::proxy::*;

const WAIT: Duration = Duration::from_secs(5);

/// An HTTP/2 (prior knowledge) connection to the proxy.
async fn h2(proxy: &Proxy) -> hyper::client::conn::http2::SendRequest<Full<Bytes>> {
    let tcp = tokio::net::TcpStream::connect(proxy.addr)
        .await
        .expect("tcp");
    let (send, conn) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(tcp))
            .await
            .expect("h2 handshake");
    tokio::spawn(conn);
    send
}

#[tokio::test]
async fn host_and_authority_attacks_get_400() {
    let up = Upstream::start().await;
    let proxy = Proxy::start(&[up.url()], PASS_POLICY, &[]);
    let refused: [(&str, &[u8]); 5] = [
        (
            "two Host fields",
            b"GET / HTTP/1.1\r\nHost: good.example\r\nHost: evil.example\r\n\r\n",
        ),
        ("no Host", b"GET / HTTP/1.1\r\nAccept: */*\r\n\r\n"),
        ("Host a/b@c", b"GET / HTTP/1.1\r\nHost: a/b@c\r\n\r\n"),
        (
            "authority-form GET",
            b"GET good.example:80 HTTP/1.1\r\nHost: good.example\r\n\r\n",
        ),
        (
            "userinfo in an absolute-form target",
            b"GET http://good.example@evil.example/ HTTP/1.1\r\nHost: good.example\r\n\r\n",
        ),
    ];
    for (name, bytes) in refused {
        let out = raw(proxy.addr, bytes, WAIT).await;
        assert!(out.starts_with("HTTP/1.1 400 "), "{name}: {out}");
    }
    assert_eq!(up.hits(), 0, "no refused request reaches the upstream");

    // An absolute-form target's authority wins over Host, on the fast path and with a body.
    for request in [
        &b"GET http://evil.example/abs HTTP/1.1\r\nHost: good.example\r\nConnection: close\r\n\r\n"
            [..],
        b"POST http://evil.example/abs HTTP/1.1\r\nHost: good.example\r\nContent-Length: 2\r\n\
          Connection: close\r\n\r\nhi",
    ] {
        let out = raw(proxy.addr, request, WAIT).await;
        assert!(out.starts_with("HTTP/1.1 200 "), "{out}");
        assert_eq!(header(&out, "x-seen-host"), Some("evil.example"), "{out}");
    }

    // HTTP/2: a `host` that differs from `:authority` is malformed.
    let mut send = h2(&proxy).await;
    let req = Request::get("http://good.example/h2")
        .header("host", "evil.example")
        .body(Full::new(Bytes::new()))
        .expect("req");
    let res = send.send_request(req).await.expect("answer");
    assert_eq!(res.status(), 400);
    let req = Request::get("http://good.example/h2")
        .header("host", "good.example")
        .body(Full::new(Bytes::new()))
        .expect("req");
    let (status, headers, _, _) = collect(send.send_request(req).await.expect("answer")).await;
    assert_eq!(status, 200);
    assert_eq!(headers["x-seen-host"], "good.example");
    assert_eq!(up.hits(), 3);
}

#[tokio::test]
async fn framing_attacks_are_refused_or_kept_whole() {
    let up = Upstream::start().await;
    let proxy = Proxy::start(&[up.url()], PASS_POLICY, &[]);
    // A transfer coding the proxy cannot undo is not silently dropped.
    let out = raw(
        proxy.addr,
        b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
        WAIT,
    )
    .await;
    assert!(out.starts_with("HTTP/1.1 501 "), "{out}");
    assert_eq!(up.hits(), 0);

    // A GET with a chunked body keeps it (the upstream echoes what it received).
    let out = raw(
        proxy.addr,
        b"GET /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n\
          5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
        WAIT,
    )
    .await;
    assert!(out.starts_with("HTTP/1.1 200 "), "{out}");
    assert!(out.ends_with("\r\n\r\nhello world"), "{out}");
    assert_eq!(up.hits(), 1);

    // A valid request pipelined before an invalid one is forwarded and answered first.
    let out = raw(
        proxy.addr,
        b"POST /first HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello\
          GET /second HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
        WAIT,
    )
    .await;
    assert!(out.starts_with("HTTP/1.1 200 "), "{out}");
    let second = out.find("HTTP/1.1 400 ").expect("the 400 after the 200");
    assert!(out[..second].contains("hello"), "{out}");
    assert_eq!(up.hits(), 2);
}

/// Allows only the usual methods, and blocks the others (VIOL_METHOD).
const METHOD_POLICY: &str = r#"{"policy":{"name":"methods","template":{"name":"POLICY_TEMPLATE_NGINX_BASE"},
  "enforcementMode":"blocking",
  "blocking-settings":{"violations":[{"name":"VIOL_METHOD","alarm":true,"block":true}]}}}"#;

#[tokio::test]
async fn connect_is_refused_with_a_reply_or_blocked_with_the_page() {
    let up = Upstream::start().await;
    let open = Proxy::start(&[up.url()], PASS_POLICY, &[]);
    let connect = b"CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n";
    let out = raw(open.addr, connect, WAIT).await;
    assert!(out.starts_with("HTTP/1.1 501 "), "{out}");
    assert!(header(&out, "content-length").is_some(), "{out}");
    assert_eq!(header(&out, "connection"), Some("close"), "{out}");
    let mut send = h2(&open).await;
    let req = Request::connect("evil.example:443")
        .body(Full::new(Bytes::new()))
        .expect("req");
    let res = send
        .send_request(req)
        .await
        .expect("an answer, not a reset");
    assert_eq!(res.status(), 501);

    let blocking = Proxy::start(&[up.url()], METHOD_POLICY, &[]);
    let out = raw(blocking.addr, connect, WAIT).await;
    assert!(out.contains("Request Rejected"), "{out}");
    let mut send = h2(&blocking).await;
    let req = Request::connect("evil.example:443")
        .body(Full::new(Bytes::new()))
        .expect("req");
    let (_, _, body, _) = collect(send.send_request(req).await.expect("answer")).await;
    assert!(String::from_utf8_lossy(&body).contains("Request Rejected"));
    let events = blocking.events_containing("VIOL_METHOD");
    assert!(events.contains("VIOL_METHOD"), "{events}");
    assert_eq!(up.hits(), 0, "nothing is tunnelled or forwarded");
}

#[tokio::test]
async fn a_target_with_bytes_a_uri_leaves_out_is_judged_by_the_policy_not_refused() {
    let up = Upstream::start().await;
    let pass = Proxy::start(&[up.url()], PASS_POLICY, &[]);
    let out = raw(
        pass.addr,
        b"GET /s?f={\"id\":[1]}&q=a|b HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
        WAIT,
    )
    .await;
    assert!(out.starts_with("HTTP/1.1 200 "), "{out}");
    assert_eq!(
        header(&out, "x-seen-target"),
        Some("/s?f=%7B%22id%22:[1]%7D&q=a%7Cb"),
        "{out}"
    );

    let blocking = Proxy::start(&[up.url()], GENERIC_POLICY, &[]);
    let out = raw(
        blocking.addr,
        b"GET /a?q=<script>alert(1)</script> HTTP/1.1\r\nHost: a\r\n\r\n",
        WAIT,
    )
    .await;
    assert!(!out.starts_with("HTTP/1.1 400 "), "{out}");
    let id = support_id(&out).unwrap_or_else(|| panic!("no support ID in {out}"));
    let event = blocking.event_of(&id);
    assert_eq!(event["action"], "block", "{event}");
    let kinds: Vec<&str> = event["violations"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v["kind"].as_str())
        .collect();
    assert!(kinds.contains(&"VIOL_ATTACK_SIGNATURE"), "{event}");
    assert_eq!(up.hits(), 1, "only the passed request reaches the upstream");
}

#[tokio::test]
async fn a_request_the_parser_refuses_is_logged_with_a_support_id() {
    let up = Upstream::start().await;
    let proxy = Proxy::start(&[up.url()], PASS_POLICY, &[]);
    for (request, target, status) in [
        (
            &b"GET http://user@a.example/a HTTP/1.1\r\nHost: a\r\n\r\n"[..],
            "http://user@a.example/a",
            400,
        ),
        (b"GET /b HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", "/b", 400),
        (
            b"GET /c HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            "/c",
            400,
        ),
        (
            b"POST /d HTTP/1.1\r\nHost: a\r\nContent-Length: 3x\r\n\r\nabc",
            "/d",
            400,
        ),
        (b"GET /e HTTP/3.0\r\nHost: a\r\n\r\n", "/e", 505),
        (b"GET /f?a=b HTTP/1.1 x\r\nHost: a\r\n\r\n", "/f?a=b", 400),
    ] {
        let out = raw(proxy.addr, request, WAIT).await;
        assert!(out.starts_with(&format!("HTTP/1.1 {status} ")), "{out}");
        // The policy's blocking page, under the refusal's own status: a client tells a refused
        // request from an answer of the site as it tells a blocked one.
        let (head, body) = out.split_once("\r\n\r\n").expect("a head");
        assert_eq!(
            header(head, "content-type"),
            Some("text/html; charset=utf-8"),
            "{out}"
        );
        assert_eq!(header(head, "connection"), Some("close"), "{out}");
        assert!(body.contains("Request Rejected"), "{out}");
        assert_eq!(
            header(head, "content-length"),
            Some(body.len().to_string().as_str()),
            "{out}"
        );
        let id = support_id(body).unwrap_or_else(|| panic!("no support ID in {out}"));
        let event = proxy.event_of(&id);
        assert_eq!(event["uri"], target, "{event}");
        assert_eq!(event["responseCode"], status, "{event}");
        assert_eq!(event["action"], "block", "{event}");
        assert_eq!(
            event["violations"][0]["kind"], "VIOL_HTTP_PROTOCOL",
            "{event}"
        );
    }
    assert_eq!(up.hits(), 0);
}

/// A policy whose blocking page is the API template's JSON.
const API_POLICY: &str = r#"{"policy":{"name":"api","template":{"name":"POLICY_TEMPLATE_API_SECURITY"},
  "enforcementMode":"blocking"}}"#;

#[tokio::test]
async fn a_refused_request_gets_the_policy_page_it_would_be_blocked_with() {
    let up = Upstream::start().await;
    let proxy = Proxy::start(&[up.url()], API_POLICY, &[]);
    let out = raw(
        proxy.addr,
        b"GET /b HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
        WAIT,
    )
    .await;
    assert!(out.starts_with("HTTP/1.1 400 "), "{out}");
    let (head, body) = out.split_once("\r\n\r\n").expect("a head");
    assert_eq!(
        header(head, "content-type"),
        Some("application/json; charset=utf-8"),
        "{out}"
    );
    assert!(body.starts_with("{\"supportID\":\""), "{out}");
    assert_eq!(up.hits(), 0);
}

#[tokio::test]
async fn a_blocked_head_request_is_told_by_its_status() {
    let up = Upstream::start().await;
    let proxy = Proxy::start(&[up.url()], GENERIC_POLICY, &[]);
    let attack = "/a?q=%3Cscript%3Ealert(1)%3C/script%3E";
    // The default page's status is 200: a HEAD answer has no body to show it, so it gets 403.
    let out = raw(
        proxy.addr,
        format!("HEAD {attack} HTTP/1.1\r\nHost: a\r\n\r\n").as_bytes(),
        WAIT,
    )
    .await;
    assert!(out.starts_with("HTTP/1.1 403 "), "{out}");
    let (head, body) = out.split_once("\r\n\r\n").expect("a head");
    assert_eq!(body, "", "{out}");
    assert_eq!(
        header(head, "content-type"),
        Some("text/html; charset=utf-8")
    );
    // A GET of the same target gets the page and its status.
    let out = raw(
        proxy.addr,
        format!("GET {attack} HTTP/1.1\r\nHost: a\r\n\r\n").as_bytes(),
        WAIT,
    )
    .await;
    assert!(out.starts_with("HTTP/1.1 200 "), "{out}");
    assert!(out.contains("Request Rejected"), "{out}");
    // HTTP/2 the same.
    let mut send = h2(&proxy).await;
    let req = Request::head(format!("http://a{attack}"))
        .body(Full::new(Bytes::new()))
        .expect("req");
    let res = send.send_request(req).await.expect("answer");
    assert_eq!(res.status(), 403);
    // A HEAD that passes gets the upstream's answer.
    let out = raw(
        proxy.addr,
        b"HEAD /a?q=shoes HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
        WAIT,
    )
    .await;
    assert!(out.starts_with("HTTP/1.1 200 "), "{out}");
    assert_eq!(up.hits(), 1);
}
