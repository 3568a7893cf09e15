//! gRPC through the real `portcullis proxy` (issue 5): a real tonic client → the proxy (policy with
//! a gRPC profile over policies/demo/demo.proto) → a real tonic server. The scenarios are in
//! `grpc_support/scenarios.rs`; `grpc_reference.rs` runs them against a reference front.
//!

mod grpc_support;

use grpc_support::proxy::Proxy;
use grpc_support::scenarios;
use grpc_support::upstream::start_tonic;

/// The tonic upstream behind a freshly started `portcullis proxy` (stopped when dropped).
async fn front() -> (Proxy, std::net::SocketAddr) {
    let proxy = Proxy::start(start_tonic().await).await;
    let addr = proxy.addr;
    (proxy, addr)
}

#[tokio::test]
async fn valid_unary_and_streaming_calls_pass() {
    let (_front, addr) = front().await;
    scenarios::valid_unary_and_streaming_calls_pass(addr).await;
}

#[tokio::test]
async fn gzip_compressed_calls_are_inspected_and_pass() {
    let (_front, addr) = front().await;
    scenarios::gzip_compressed_calls_are_inspected_and_pass(addr).await;
}

#[tokio::test]
async fn unknown_method_is_blocked_with_grpc_status_3() {
    let (_front, addr) = front().await;
    scenarios::unknown_method_is_blocked_with_grpc_status_3(addr).await;
}

#[tokio::test]
async fn unknown_fields_top_level_and_nested_are_blocked() {
    let (_front, addr) = front().await;
    scenarios::unknown_fields_top_level_and_nested_are_blocked(addr).await;
}

#[tokio::test]
async fn an_oversized_message_is_blocked() {
    let (_front, addr) = front().await;
    scenarios::an_oversized_message_is_blocked(addr).await;
}

#[tokio::test]
async fn malformed_frames_and_messages_are_blocked() {
    let (_front, addr) = front().await;
    scenarios::malformed_frames_and_messages_are_blocked(addr).await;
}

#[tokio::test]
async fn an_injection_inside_a_string_field_is_blocked() {
    let (_front, addr) = front().await;
    scenarios::an_injection_inside_a_string_field_is_blocked(addr).await;
}

#[tokio::test]
async fn a_stream_is_ended_at_its_first_bad_message() {
    let (_front, addr) = front().await;
    scenarios::a_stream_is_ended_at_its_first_bad_message(addr).await;
}

#[tokio::test]
async fn an_unknown_service_gets_the_html_page() {
    let (_front, addr) = front().await;
    scenarios::an_unknown_service_gets_the_html_page(addr).await;
}

#[tokio::test]
async fn a_valid_call_after_a_blocked_one_on_the_same_connection_works() {
    let (_front, addr) = front().await;
    scenarios::a_valid_call_after_a_blocked_one_on_the_same_connection_works(addr).await;
}
