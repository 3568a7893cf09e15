//! The gRPC scenarios (valid and compressed calls pass; unknown methods and fields, oversized and
//! malformed messages and injections are blocked, streams at their first bad message), run against a
//! front (the real `portcullis proxy` in `grpc/proxy.rs`, the reference front in
//! `grpc/reference.rs`) that protects the tonic upstream with the test policy of
//! [`super::proxy::policy`].

use std::net::SocketAddr;

use super::client::{RawResponse, TonicClient, frame, raw_call};
use super::messages::*;
use super::proxy::{MAX_MESSAGE, has_support_id};

/// The status a blocked call gets: INVALID_ARGUMENT (3) with the support id in the message.
pub fn assert_blocked(status: &tonic::Status) {
    assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");
    assert!(
        has_support_id(status.message()),
        "no support id in {:?}",
        status.message()
    );
}

/// A blocked call as it is on the wire: HTTP 200, the gRPC content type, grpc-status 3 and the
/// support id in grpc-message.
pub fn assert_blocked_on_the_wire(r: &RawResponse) {
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(
        r.header("content-type"),
        Some("application/grpc; charset=utf-8")
    );
    assert_eq!(r.grpc_status(), Some(3), "{r:?}");
    assert!(
        has_support_id(&r.grpc_message().unwrap_or_default()),
        "{r:?}"
    );
}

/// A unary call to `path` with `msg` that the front blocks ([`assert_blocked`]); `why` names it.
pub async fn assert_call_blocked(
    c: &mut TonicClient,
    path: &'static str,
    msg: bytes::Bytes,
    why: &str,
) {
    assert_blocked(&c.unary(path, msg).await.expect_err(why));
}

pub async fn valid_unary_and_streaming_calls_pass(front: SocketAddr) {
    let mut c = TonicClient::connect(front).await;
    let reply = c
        .unary(SAY_HELLO, hello("alice"))
        .await
        .expect("SayHello passes");
    assert_eq!(hello_reply(&reply), "Hello, alice!");
    let summary = c
        .client_streaming(ADD_ITEMS, vec![item("P-1", 2), item("P-2", 5)])
        .await
        .expect("AddItems passes");
    assert_eq!(
        int_field("demo.v1.AddSummary", &summary, "total_quantity"),
        7
    );
    let (replies, end) = c
        .bidi(LOOKUP, vec![get_item("SKU-1"), get_item("SKU-2")])
        .await;
    end.expect("Lookup passes");
    assert_eq!(replies.len(), 2);
}

pub async fn gzip_compressed_calls_are_inspected_and_pass(front: SocketAddr) {
    let mut z = TonicClient::connect(front).await.gzip();
    let reply = z
        .unary(SAY_HELLO, hello("zipped"))
        .await
        .expect("gzip SayHello passes");
    assert_eq!(hello_reply(&reply), "Hello, zipped!");
    let blocked = z
        .unary(SAY_HELLO, hello("<script>alert(document.cookie)</script>"))
        .await;
    assert_blocked(&blocked.expect_err("an injection inside a gzip message is blocked"));
}

pub async fn unknown_method_is_blocked_with_grpc_status_3(front: SocketAddr) {
    let mut c = TonicClient::connect(front).await;
    let err = c
        .unary("/demo.v1.Greeter/SayGoodbye", hello("bob"))
        .await
        .expect_err("blocked");
    assert_blocked(&err);
    // On the wire: HTTP 200, trailers-only, content-length 0, the gRPC content type (docs/grpc.md).
    let r = raw_call(
        front,
        "/demo.v1.Greeter/SayGoodbye",
        frame(&hello("bob")),
        &[],
    )
    .await;
    assert_blocked_on_the_wire(&r);
    assert_eq!(
        r.header("grpc-status"),
        Some("3"),
        "grpc-status must be in the headers (trailers-only)"
    );
    assert_eq!(r.header("content-length"), Some("0"));
    assert!(r.body.is_empty());
}

pub async fn unknown_fields_top_level_and_nested_are_blocked(front: SocketAddr) {
    let mut c = TonicClient::connect(front).await;
    for (msg, why) in [
        (hello_with_unknown_field("eve"), "unknown field"),
        (hello_with_nested_unknown_field("eve"), "nested unknown"),
    ] {
        assert_call_blocked(&mut c, SAY_HELLO, msg, why).await;
    }
}

pub async fn an_oversized_message_is_blocked(front: SocketAddr) {
    let mut c = TonicClient::connect(front).await;
    let big = hello(&"a".repeat(MAX_MESSAGE + 100));
    assert!(big.len() > MAX_MESSAGE);
    assert_call_blocked(&mut c, SAY_HELLO, big, "oversized").await;
}

pub async fn malformed_frames_and_messages_are_blocked(front: SocketAddr) {
    // compressed-flag 7, then a message that is not a HelloRequest, then a body cut inside a frame.
    let bad_flag = vec![7, 0, 0, 0, 1, 0];
    let not_protobuf = frame(&[0x0a, 0x40, b'x']);
    let mut truncated = frame(&hello("bob"));
    truncated.truncate(truncated.len() - 3);
    for body in [bad_flag, not_protobuf, truncated] {
        let r = raw_call(front, SAY_HELLO, body.clone(), &[]).await;
        assert_eq!(r.status, 200, "{body:?}: {r:?}");
        assert_eq!(r.grpc_status(), Some(3), "{body:?}: {r:?}");
        assert!(
            has_support_id(&r.grpc_message().unwrap_or_default()),
            "{r:?}"
        );
    }
}

pub async fn an_injection_inside_a_string_field_is_blocked(front: SocketAddr) {
    let mut c = TonicClient::connect(front).await;
    let err = c
        .unary(SAY_HELLO, hello("<script>alert(document.cookie)</script>"))
        .await
        .expect_err("xss");
    assert_blocked(&err);
    let err = c
        .unary(GET_ITEM, get_item("1' UNION SELECT password FROM users--"))
        .await
        .expect_err("sqli");
    assert_blocked(&err);
}

pub async fn a_stream_is_ended_at_its_first_bad_message(front: SocketAddr) {
    let mut c = TonicClient::connect(front).await;
    let msgs = vec![
        get_item("SKU-1"),
        get_item("<script>alert(1)</script>"),
        get_item("SKU-2"),
    ];
    let (replies, end) = c.bidi(LOOKUP, msgs).await;
    assert_blocked(&end.expect_err("the stream is ended with the block status"));
    assert!(
        replies.len() <= 1,
        "nothing after the bad message reaches the server: {replies:?}"
    );
    let err = c
        .client_streaming(
            ADD_ITEMS,
            vec![item("OK-1", 1), hello_with_unknown_field("x")],
        )
        .await;
    assert_blocked(&err.expect_err("client stream blocked"));
}

pub async fn an_unknown_service_gets_the_html_page(front: SocketAddr) {
    let r = raw_call(front, "/demo.v1.Nowhere/Call", frame(&hello("bob")), &[]).await;
    assert_eq!(r.status, 200);
    assert!(
        r.header("content-type")
            .is_some_and(|t| t.starts_with("text/html")),
        "{r:?}"
    );
    let page = String::from_utf8_lossy(&r.body);
    assert!(page.contains("Request Rejected"), "{page}");
    assert!(has_support_id(&page), "{page}");
    assert_eq!(r.grpc_status(), None);
}

pub async fn a_valid_call_after_a_blocked_one_on_the_same_connection_works(front: SocketAddr) {
    let mut c = TonicClient::connect(front).await;
    assert_call_blocked(&mut c, SAY_HELLO, hello_with_unknown_field("x"), "blocked").await;
    let reply = c
        .unary(SAY_HELLO, hello("again"))
        .await
        .expect("same connection still serves");
    assert_eq!(hello_reply(&reply), "Hello, again!");
    assert_call_blocked(&mut c, "/demo.v1.Greeter/Nope", hello("x"), "blocked").await;
    let (replies, end) = c.bidi(LOOKUP, vec![get_item("SKU-3")]).await;
    end.expect("streaming after a block");
    assert_eq!(replies.len(), 1);
}
