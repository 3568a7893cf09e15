//! The data plane: conformance, bodies, limits, operations, WebSocket, topology, replay.

mod bodies;
mod conformance;
mod demo;
mod fastpath;
mod limits;
mod ops;
mod passthrough;
mod replay;
mod serve;
mod topology;
mod websocket;
