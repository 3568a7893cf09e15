//! The gRPC test infrastructure itself, without the proxy: a real tonic client against the tonic
//! upstream and against the demo's hyper server (`portcullis::demo::serve_grpc`). These pass on
//! their own; `grpc/proxy.rs` puts `portcullis proxy` between the same client and server.

use std::net::SocketAddr;

use crate::support::grpc::client::{TonicClient, frame, raw_call};
use crate::support::grpc::messages::*;
use crate::support::grpc::upstream::{start_demo, start_tonic};

async fn exercise(addr: SocketAddr) {
    let mut c = TonicClient::connect(addr).await;
    let reply = c.unary(SAY_HELLO, hello("alice")).await.expect("SayHello");
    assert_eq!(hello_reply(&reply), "Hello, alice!");

    let item = c.unary(GET_ITEM, get_item("SKU-2")).await.expect("GetItem");
    assert_eq!(text_field("demo.v1.Item", &item, "name"), "Mouse");
    let missing = c
        .unary(GET_ITEM, get_item("SKU-404"))
        .await
        .expect_err("unknown sku");
    assert_eq!(missing.code(), tonic::Code::NotFound);

    let summary = c
        .client_streaming(
            ADD_ITEMS,
            vec![
                item_msg("NEW-1", 2),
                item_msg("NEW-2", 3),
                item_msg("NEW-1", 1),
            ],
        )
        .await
        .expect("AddItems");
    assert_eq!(int_field("demo.v1.AddSummary", &summary, "added"), 3);
    assert_eq!(
        int_field("demo.v1.AddSummary", &summary, "total_quantity"),
        6
    );

    let (replies, end) = c
        .bidi(LOOKUP, vec![get_item("SKU-1"), get_item("SKU-3")])
        .await;
    end.expect("Lookup ends with OK");
    let names: Vec<String> = replies
        .iter()
        .map(|r| text_field("demo.v1.Item", r, "name"))
        .collect();
    assert_eq!(names, vec!["Keyboard", "Monitor"]);

    let mut z = TonicClient::connect(addr).await.gzip();
    let reply = z
        .unary(SAY_HELLO, hello("zipped"))
        .await
        .expect("gzip SayHello");
    assert_eq!(hello_reply(&reply), "Hello, zipped!");

    // Unknown method: UNIMPLEMENTED from the server (the proxy turns this into VIOL_GRPC_METHOD).
    let r = raw_call(addr, "/demo.v1.Greeter/SayGoodbye", frame(&hello("x")), &[]).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.grpc_status(), Some(12));
}

fn item_msg(sku: &str, q: i32) -> bytes::Bytes {
    item(sku, q)
}

#[tokio::test]
async fn tonic_client_against_the_tonic_upstream() {
    exercise(start_tonic().await).await;
}

#[tokio::test]
async fn tonic_client_against_the_demo_hyper_server() {
    exercise(start_demo().await).await;
}

#[tokio::test]
async fn the_demo_server_reports_broken_frames_in_trailers() {
    let addr = start_demo().await;
    let mut body = frame(&hello("bob"));
    body.truncate(body.len() - 2);
    let r = raw_call(addr, SAY_HELLO, body, &[]).await;
    assert_eq!(r.grpc_status(), Some(13), "{r:?}");
    assert!(
        r.grpc_message()
            .unwrap_or_default()
            .contains("inside a frame"),
        "{r:?}"
    );
}
