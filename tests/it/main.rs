//! The integration tests: one binary, one module per area of the product. A new test goes into
//! the module of the area whose behaviour it checks (a new file in that folder when no file fits),
//! and a helper two tests need goes into `support`, never into a test file.
//!
//! - `proxy`: the data plane (`portcullis proxy`, `demo`, `replay`): HTTP conformance, bodies,
//!   limits, operations, WebSocket, topology, the management plane's listeners
//! - `access`: API access control (JWT, introspection, API keys) as data plane and configuration
//! - `grpc`: gRPC through the proxy, the demo gRPC service, deadlines, reflection, TLS upstreams
//! - `policy`: the engine's verdicts, `policy check`, link resolution, real-world policies
//! - `openapi`: OpenAPI (Swagger 2.0, 3.0, 3.1) enforcement
//! - `mgmt`: the admin API of `portcullis serve`: objects, auth, files, apply, durability, DoS
//! - `asm`: firewall policies over REST: lifecycle, events, learning, apply under load
//! - `as3`: AS3 declarations
//! - `console`: the web console
//! - `central`: `portcullis central`: trust, discovery, import, licensing, restarts
//! - `fleet`: what a fleet shares: Redis limits, the PostgreSQL event store, SIEM export
//! - `soap_dns`: the iControl SOAP portal and the DNS listener
//! - `cli`: the command line as a new user meets it (help texts, the demo walkthrough)
//!
//! Tests run as threads of this one process: a test never changes the process (environment,
//! current directory, global subscribers) and takes its ports from the kernel (port 0).

#[macro_use]
mod support;

mod access;
mod as3;
mod asm;
mod central;
mod cli;
mod console;
mod fleet;
mod grpc;
mod mgmt;
mod openapi;
mod policy;
mod proxy;
mod soap_dns;
