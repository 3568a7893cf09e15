//! The data plane: hyper/tokio listeners, TLS, connection handling, upstream pools, the phase
//! driver that feeds the WAF [`portcullis_engine::Transaction`], body buffering under limits, the event log
//! and metrics. Never the management plane.
//!
//! Map: [`h1`] serves bodiless HTTP/1.1 requests itself, in the connection's task; [`head`] +
//! [`guard`] validate HTTP/1 framing before hyper for everything else; [`listener`] accepts and
//! serves connections and [`drain`] drains them; [`handler`] drives the WAF phases for one
//! request; [`body`] inspects and streams request bodies and [`pace`] cuts slow ones; [`refuse`]
//! logs and answers requests refused before the policy judged them; [`upstream`] balances
//! members and connects; [`conns`] pools upstream connections per host; [`upgrade`] forwards
//! WebSocket upgrades and runs their tunnels; [`access`] enforces access profiles; [`dataplane`]
//! runs many listeners behind the [`topology::Topology`] interface; [`run`] is the `portcullis
//! proxy` command.

pub mod access;
pub mod body;
pub mod conns;
pub mod dataplane;
pub mod deadline;
pub mod drain;
pub mod driver;
pub mod events;
pub mod fetch;
pub mod guard;
pub mod h1;
pub mod handler;
pub mod head;
pub mod limits;
pub mod listener;
pub mod metrics;
pub mod pace;
pub mod refuse;
pub mod resolver;
pub mod response;
pub mod run;
pub mod tls;
pub mod topology;
pub mod upgrade;
pub mod upstream;

pub use dataplane::Dataplane;
pub use limits::Limits;
