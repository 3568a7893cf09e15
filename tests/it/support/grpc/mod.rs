//! Shared infrastructure of the gRPC integration tests: a real tonic gRPC server for
//! `policies/demo/demo.proto` (no codegen: a raw-bytes codec around the demo service logic), a real
//! tonic client, a raw HTTP/2 client for what tonic refuses to send (broken frames, wrong paths), the
//! demo messages, and a harness that runs the real `portcullis proxy` binary.

pub mod client;
pub mod codec;
pub mod messages;
pub mod proxy;
pub mod reference_proxy;
pub mod scenarios;
#[macro_use]
pub mod upstream;

/// One `#[tokio::test]` per scenario of [`scenarios`], each run against a fresh front built by
/// `$front` (an async fn returning `(guard, addr)`; the guard keeps the front alive).
macro_rules! grpc_scenario_tests {
    ($front:ident: $($scenario:ident),* $(,)?) => {$(
        #[tokio::test]
        async fn $scenario() {
            let (_front, addr) = $front().await;
            $crate::support::grpc::scenarios::$scenario(addr).await;
        }
    )*};
}

/// Every scenario, for the fronts that must pass all of them.
macro_rules! all_grpc_scenarios {
    ($front:ident) => {
        grpc_scenario_tests!($front:
            valid_unary_and_streaming_calls_pass,
            gzip_compressed_calls_are_inspected_and_pass,
            unknown_method_is_blocked_with_grpc_status_3,
            unknown_fields_top_level_and_nested_are_blocked,
            an_oversized_message_is_blocked,
            malformed_frames_and_messages_are_blocked,
            an_injection_inside_a_string_field_is_blocked,
            a_stream_is_ended_at_its_first_bad_message,
            an_unknown_service_gets_the_html_page,
            a_valid_call_after_a_blocked_one_on_the_same_connection_works,
        );
    };
}
