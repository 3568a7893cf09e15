//! Shared infrastructure of the gRPC integration tests: a real tonic gRPC server for
//! `policies/demo/demo.proto` (no codegen: a raw-bytes codec around the demo service logic), a real
//! tonic client, a raw HTTP/2 client for what tonic refuses to send (broken frames, wrong paths), the
//! demo messages, and a harness that runs the real `portcullis proxy` binary.
//!
//! Each test binary uses part of it.
#![allow(dead_code)]

pub mod client;
pub mod codec;
pub mod messages;
pub mod proxy;
pub mod reference_proxy;
pub mod scenarios;
pub mod upstream;
