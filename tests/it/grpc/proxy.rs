//! gRPC through the real `portcullis proxy`: a real tonic client → the proxy (policy with
//! a gRPC profile over policies/demo/demo.proto) → a real tonic server. The scenarios are in
//! `support/grpc/scenarios.rs`; `grpc/reference.rs` runs them against a reference front.

use crate::support::grpc::proxy::Proxy;
use crate::support::grpc::upstream::start_tonic;

/// The tonic upstream behind a freshly started `portcullis proxy` (stopped when dropped).
async fn front() -> (Proxy, std::net::SocketAddr) {
    let proxy = Proxy::start(start_tonic().await).await;
    let addr = proxy.addr;
    (proxy, addr)
}

all_grpc_scenarios!(front);
