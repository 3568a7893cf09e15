//! The data plane: hyper/tokio listeners, TLS, connection handling, upstream pools, the phase
//! driver that feeds the WAF [`portcullis_engine::Transaction`], body buffering under limits, the event log
//! and metrics. Never the management plane.
//!
//! Map: [`driver`] runs the phases of one request (admission, access, head and body inspection,
//! upstream, response, logging), written once for both front-ends: [`h1`] serves every HTTP/1.x
//! connection with our own codec, after [`head`] validates each request head's framing;
//! [`handler`] is hyper's HTTP/2 and h2c front-end, with [`guard`] replaying the bytes read before
//! the preface. [`listener`] accepts and serves connections, plain or TLS as one stream type
//! ([`plain_or_tls`]), each socket registered with the reactor only once it waits
//! ([`client_tcp`]), and [`drain`] drains them; [`body`] inspects and streams request bodies and
//! [`pace`] cuts slow ones; [`refuse`] logs and answers requests refused before the policy judged
//! them; [`upstream`] balances members and connects; [`conns`] pools upstream connections per
//! host; [`upgrade`] forwards WebSocket upgrades and runs their tunnels; [`access`] enforces access
//! profiles; [`dataplane`] runs many listeners behind the [`topology::Topology`] interface; [`run`]
//! is the `portcullis proxy` command.

pub mod access;
mod body;
mod client_tcp;
mod conns;
mod dataplane;
mod deadline;
mod drain;
mod driver;
mod events;
mod fetch;
mod guard;
pub mod h1;
mod handler;
mod head;
mod limits;
mod listener;
mod metrics;
mod nodelay;
mod pace;
mod plain_or_tls;
mod refuse;
mod resolver;
mod response;
mod run;
#[cfg(test)]
mod testing;
mod tls;
mod topology;
mod upgrade;
mod upstream;

pub use dataplane::Dataplane;
pub use events::{EventSink, EventStream};
pub use handler::{Shared as DataplaneShared, SharedError as DataplaneSharedError};
#[cfg(fuzzing)]
pub use head::fuzz_head;
pub use head::{
    Framing as BodyFraming, HeadLimits, Reject as HeadRefusal, find_head_end,
    parse_scanned as parse_scanned_head, validate_head,
};
pub use limits::{LimitError, Limits};
pub use metrics::Metrics;
pub use resolver::base_link as policy_base_link;
pub use response::strip_hop_by_hop;
pub use run::{ProxyOptions, StartError, load_policy, run as run_proxy, runtime as worker_runtime};
pub use tls::{
    TlsConfigError, client_config as tls_client_config, server_config as tls_server_config,
};
pub use topology::{ListenerSpec, ListenerStatus, TlsSpec, Topology, UpstreamSpec};
pub use upstream::Clients as UpstreamClients;
