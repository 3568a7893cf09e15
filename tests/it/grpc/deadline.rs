//! gRPC deadlines through the real `portcullis proxy` (`grpc-timeout` is respected): in
//! front of an HTTP/2 upstream that accepts calls and never answers, a call carrying
//! `grpc-timeout` ends when the client said, with DEADLINE_EXCEEDED (grpc-status 4) from the
//! proxy; without one, the proxy's own upstream response timeout answers 504 as for any request.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Empty;

use crate::support::grpc::client::{frame, raw_call};
use crate::support::grpc::messages::{SAY_HELLO, hello};
use crate::support::grpc::proxy::Proxy;
use crate::support::upstream::serve_fn;

/// An h2c server that takes every request and never answers it.
async fn silent_upstream() -> SocketAddr {
    serve_fn(|_| std::future::pending::<http::Response<Empty<Bytes>>>()).await
}

#[tokio::test]
async fn a_call_past_its_grpc_timeout_ends_with_deadline_exceeded() {
    let upstream = silent_upstream().await;
    let proxy = Proxy::start_url(
        &format!("h2c://{upstream}"),
        &["--limit", "upstream_response_timeout=2s"],
    )
    .await;

    let started = Instant::now();
    let r = raw_call(
        proxy.addr,
        SAY_HELLO,
        frame(&hello("alice")),
        &[("grpc-timeout", "300m")],
    )
    .await;
    let took = started.elapsed();
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.grpc_status(), Some(4), "{r:?}");
    assert_eq!(r.grpc_message().as_deref(), Some("Deadline Exceeded"));
    assert!(
        r.header("content-type")
            .is_some_and(|c| c.starts_with("application/grpc"))
    );
    assert!(r.body.is_empty(), "trailers-only");
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_secs(3),
        "answered after {took:?}"
    );

    // A deadline longer than the proxy's own upstream timeout: the proxy's timeout answers.
    let started = Instant::now();
    let r = raw_call(
        proxy.addr,
        SAY_HELLO,
        frame(&hello("bob")),
        &[("grpc-timeout", "1M")],
    )
    .await;
    assert_eq!(r.status, 504, "{r:?}");
    assert!(started.elapsed() >= Duration::from_secs(2));
}
