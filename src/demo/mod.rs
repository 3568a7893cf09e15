//! The built-in demo upstreams `portcullis demo` runs behind the proxy, without network.
//!
//! Imports: `waf` (the gRPC IDL compiler and frame codec), `support`; tokio and hyper for serving.

pub mod grpc;
