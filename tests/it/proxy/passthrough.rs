//! The real proxy in front of a real upstream, on loopback: what passes comes out unchanged.

use bytes::Bytes;
use http::Request;
use http_body_util::Full;
use hyper_util::rt::{TokioExecutor, TokioIo};

use crate::support::proxy::*;

#[tokio::test]
async fn get_and_post_pass_byte_for_byte_with_a_1_mib_body() {
    let up = Upstream::start().await;
    let proxy = Proxy::start(&[up.url()], PASS_POLICY, &[]);
    let client = h1_client();

    let res = client
        .get(proxy.url("/big").parse().expect("uri"))
        .await
        .expect("GET");
    let (status, _, body, _) = collect(res).await;
    assert_eq!(status, 200);
    assert_eq!(body.len(), 1 << 20);
    assert!(body == mib(), "GET body differs");

    let req = Request::post(proxy.url("/echo"))
        .header("content-type", "application/octet-stream")
        .body(Full::new(Bytes::from(mib())))
        .expect("req");
    let (status, headers, body, _) = collect(client.request(req).await.expect("POST")).await;
    assert_eq!(status, 200);
    assert!(body == mib(), "POST body differs after the round trip");
    assert_eq!(headers["x-seen-version"], "HTTP/1.1");
}

#[tokio::test]
async fn host_is_kept_xff_appended_and_hop_by_hop_removed() {
    let up = Upstream::start().await;
    let proxy = Proxy::start(&[up.url()], PASS_POLICY, &[]);
    let req = Request::get(proxy.url("/echo"))
        .header("host", "shop.example")
        .header("x-forwarded-for", "203.0.113.9")
        .header("connection", "keep-alive, x-drop-me")
        .header("x-drop-me", "1")
        .header("keep-alive", "timeout=3")
        .header("proxy-connection", "keep-alive")
        .body(Full::new(Bytes::new()))
        .expect("req");
    let (status, headers, _, _) = collect(h1_client().request(req).await.expect("GET")).await;
    assert_eq!(status, 200);
    assert_eq!(headers["x-seen-host"], "shop.example");
    assert_eq!(headers["x-seen-xff"], "203.0.113.9, 127.0.0.1");
    let names = headers["x-seen-names"].to_str().expect("names");
    for gone in ["x-drop-me", "keep-alive", "proxy-connection"] {
        assert!(
            !names.split(',').any(|n| n == gone),
            "{gone} reached the upstream: {names}"
        );
    }
    // The upstream's own hop-by-hop header does not reach the client either.
    assert!(headers.get("keep-alive").is_none());
}

#[tokio::test]
async fn keep_alive_connections_are_reused() {
    let up = Upstream::start().await;
    let proxy = Proxy::start(&[up.url()], PASS_POLICY, &[]);
    let out = raw(
        proxy.addr,
        b"GET /a HTTP/1.1\r\nhost: x\r\n\r\nPOST /b HTTP/1.1\r\nhost: x\r\ncontent-length: 3\r\n\r\nabc\
          GET /c HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
        std::time::Duration::from_secs(5),
    )
    .await;
    assert_eq!(out.matches("HTTP/1.1 200 OK").count(), 3, "{out}");
    assert!(out.contains("\r\n\r\nabc"), "{out}");
    assert_eq!(up.hits(), 3);
}

#[tokio::test]
async fn h2c_downstream_and_trailers_pass() {
    let up = Upstream::start().await;
    let proxy = Proxy::start(&[format!("h2c://{}", up.addr)], PASS_POLICY, &[]);
    let req = Request::post(proxy.url("/trailers"))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(Full::new(Bytes::from_static(b"\0\0\0\0\x02hi")))
        .expect("req");
    let res = h2c_client().request(req).await.expect("h2c request");
    assert_eq!(res.version(), http::Version::HTTP_2);
    let (status, headers, body, trailers) = collect(res).await;
    assert_eq!(status, 200);
    assert_eq!(
        headers["x-seen-version"], "HTTP/2.0",
        "upstream spoken to over h2c"
    );
    assert_eq!(headers["x-seen-te"], "trailers");
    assert_eq!(&body[..], b"\0\0\0\0\x02hi");
    let trailers = trailers.expect("trailers");
    assert_eq!(trailers["grpc-status"], "0");
    assert_eq!(trailers["x-trailer"], "yes");
}

#[tokio::test]
async fn trailers_pass_over_http1_chunked() {
    let up = Upstream::start().await;
    let proxy = Proxy::start(&[up.url()], PASS_POLICY, &[]);
    let out = raw(
        proxy.addr,
        b"POST /trailers HTTP/1.1\r\nhost: x\r\nte: trailers\r\nconnection: close\r\n\
          transfer-encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n",
        std::time::Duration::from_secs(5),
    )
    .await;
    assert!(out.starts_with("HTTP/1.1 200 OK"), "{out}");
    assert!(out.to_ascii_lowercase().contains("grpc-status: 0"), "{out}");
}

#[tokio::test]
async fn h2_over_tls_downstream() {
    let up = Upstream::start().await;
    let proxy = TlsProxy::start(&[up.url()], PASS_POLICY, &[]);
    let tls = proxy.connect(&[b"h2"]).await;
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    let (mut send, conn) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(tls))
            .await
            .expect("h2 handshake");
    tokio::spawn(conn);
    let req = Request::post("https://localhost/echo")
        .body(Full::new(Bytes::from_static(b"over h2 and tls")))
        .expect("req");
    let (status, headers, body, _) = collect(send.send_request(req).await.expect("send")).await;
    assert_eq!(status, 200);
    assert_eq!(&body[..], b"over h2 and tls");
    assert_eq!(headers["x-seen-host"], "localhost");
}

#[tokio::test]
async fn https_upstreams_are_verified_against_the_given_ca() {
    let (up, _dir, ca) = Upstream::start_tls().await;
    let url = format!("https://localhost:{}", up.addr.port());

    let trusted = Proxy::start(
        std::slice::from_ref(&url),
        PASS_POLICY,
        &["--upstream-ca", ca.to_str().expect("path")],
    );
    let res = h1_client()
        .get(trusted.url("/echo").parse().expect("uri"))
        .await
        .expect("GET");
    let (status, headers, _, _) = collect(res).await;
    assert_eq!(status, 200);
    assert_eq!(
        headers["x-seen-host"],
        trusted.addr.to_string(),
        "Host preserved over TLS"
    );

    // Without the CA, the self-signed upstream is not trusted: 502, not a silent pass.
    let untrusted = Proxy::start(&[url], PASS_POLICY, &[]);
    let res = h1_client()
        .get(untrusted.url("/echo").parse().expect("uri"))
        .await
        .expect("GET");
    assert_eq!(res.status(), 502);
    assert_eq!(up.hits(), 1);
}
