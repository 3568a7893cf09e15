//! The narrow interface through which a management plane drives the data plane: the set of
//! listeners it wants, applied as a whole. The data plane reconciles: it starts new listeners,
//! updates changed ones in place (new requests see the new pool, TLS and policy; requests in flight
//! finish on the old), and stops removed ones.

use std::net::SocketAddr;
use std::sync::Arc;

use portcullis_engine::Engine;
use portcullis_engine::access::AccessProfile;

/// One listener (a virtual server) as the management plane wants it.
#[derive(Clone)]
pub struct ListenerSpec {
    /// Stable name, e.g. the virtual server's fullPath `/Common/vs1`.
    pub name: String,
    pub bind: SocketAddr,
    /// Server certificate and key (PEM) when the listener terminates TLS (a client-ssl profile).
    pub tls: Option<TlsSpec>,
    /// Pool members, balanced round-robin; members whose monitor says down are skipped.
    pub upstreams: Vec<UpstreamSpec>,
    /// The policy engine of the listener (shared so an apply can swap its policy in place).
    pub engine: Arc<Engine>,
    /// Append the client address to `X-Forwarded-For` (http profile `xForwardedFor`).
    pub x_forwarded_for: bool,
    /// Answer every request with a redirect to this scheme+host instead of proxying (AS3 `redirect80`).
    pub redirect_to_https: bool,
    /// API access control (API keys, JWT, introspection, Basic, rate limits); `None`: none.
    pub access: Option<Arc<AccessProfile>>,
}

#[derive(Clone, PartialEq, Eq)]
pub struct TlsSpec {
    pub cert_pem: String,
    pub key_pem: String,
}

/// One upstream member.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpstreamSpec {
    /// `http://host:port`, `https://host:port` or `h2c://host:port`.
    pub url: String,
    /// Health as the management plane's monitors see it; `false` takes the member out of rotation.
    pub healthy: bool,
}

/// What became of one listener after an apply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListenerStatus {
    pub name: String,
    /// `None` when the listener is serving; the reason when it is not (e.g. the address cannot be bound).
    pub error: Option<String>,
}

/// Implemented by the data plane; held by the management plane as `Arc<dyn Topology>`.
pub trait Topology: Send + Sync {
    /// Makes the running listeners exactly `listeners`; returns one status per listener.
    fn apply(&self, listeners: Vec<ListenerSpec>) -> Vec<ListenerStatus>;

    /// Requests listener `name` has answered since the process started (0 when unknown): what the
    /// management plane samples for its traffic statistics.
    fn requests_answered(&self, _name: &str) -> u64 {
        0
    }
}
