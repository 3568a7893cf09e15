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
mod body;
mod conns;
mod dataplane;
mod deadline;
mod drain;
mod driver;
pub mod events;
pub mod fetch;
mod guard;
pub mod h1;
pub mod handler;
pub mod head;
mod limits;
mod listener;
pub mod metrics;
mod pace;
mod refuse;
pub mod resolver;
pub mod response;
pub mod run;
pub mod tls;
pub mod topology;
mod upgrade;
pub mod upstream;

pub use dataplane::Dataplane;
pub use limits::Limits;
