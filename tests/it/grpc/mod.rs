//! gRPC through the data plane, between a real tonic client and server.

mod bound_urls;
mod deadline;
mod demo;
mod demo_proxy;
mod proxy;
mod reference;
mod reflection;
mod tls_upstream;
