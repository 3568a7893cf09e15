//! The gRPC scenarios of `grpc/proxy.rs` against the reference front of
//! `support/grpc/reference_proxy.rs` (the engine's gRPC API driven as docs/grpc.md describes, any
//! violation blocking): proves the scenarios and the engine contract right with real tonic traffic.

use crate::support::grpc::reference_proxy;
use crate::support::grpc::upstream::start_tonic;

async fn front() -> ((), std::net::SocketAddr) {
    ((), reference_proxy::start(start_tonic().await).await)
}

all_grpc_scenarios!(front);
