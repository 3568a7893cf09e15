//! `portcullis demo` serves the demo gRPC service (policies/demo/demo.proto) behind the data plane
//! with the demo policy's gRPC profile: a real tonic client through `demo::start` (in process, on a
//! free port) to the demo upstream, which serves the JSON API and gRPC on one port.

use std::net::SocketAddr;

use crate::support::grpc::scenarios;

async fn demo() -> (portcullis::demo::Demo, SocketAddr) {
    let d = portcullis::demo::start(&portcullis::demo::DemoOptions {
        listen: ([127, 0, 0, 1], 0).into(),
        admin_listen: ([127, 0, 0, 1], 0).into(),
        event_log: Some("/dev/null".into()),
    })
    .await
    .expect("demo starts");
    let addr = d.proxy;
    (d, addr)
}

#[tokio::test]
async fn demo_grpc_calls_pass_through_the_proxy() {
    let (_d, addr) = demo().await;
    scenarios::valid_unary_and_streaming_calls_pass(addr).await;
}

#[tokio::test]
async fn demo_blocks_an_unknown_grpc_method_with_status_3() {
    let (_d, addr) = demo().await;
    scenarios::unknown_method_is_blocked_with_grpc_status_3(addr).await;
}

#[tokio::test]
async fn demo_blocks_unknown_fields() {
    let (_d, addr) = demo().await;
    scenarios::unknown_fields_top_level_and_nested_are_blocked(addr).await;
}

#[tokio::test]
async fn demo_blocks_an_injection_in_a_string_field() {
    let (_d, addr) = demo().await;
    scenarios::an_injection_inside_a_string_field_is_blocked(addr).await;
}
