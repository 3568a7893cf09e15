//! The WAF engine: pure and IO-free. Policy documents go in (declaration → validated model →
//! compiled matchers); requests are inspected phase by phase in a [`Transaction`] that yields one
//! [`Verdict`]; block responses are rendered in [`response`].
//!
//! Never `proxy`, `mgmt`, tokio or hyper: files a policy links to are read
//! through an injected [`Resolver`].

pub mod access;
mod engine;
mod event;
mod event_line;
pub mod grpc;
pub mod injection;
mod json_plain;
pub mod normalize;
pub mod openapi;
mod parse;
pub mod policy;
mod request_head;
pub mod response;
pub mod signatures;
#[cfg(test)]
mod test_support;
mod transaction;
mod verdict;
mod violation;

pub use engine::Engine;
pub use event::{EventHeaders, SecurityEvent};
#[cfg(fuzzing)]
pub use parse::fuzz_all as fuzz_request_parsers;
pub use policy::CompiledPolicy;
pub use portcullis_policy::{FetchError, MemResolver, NoResolver, Resolver};
// The resolver is the policy language's; `crate::resolver` names it for the engine's own links.
use portcullis_policy::resolver;
pub use request_head::{FieldKind, FieldValue, Fields, NotText, RequestHead};
pub use response::BlockResponse;
pub use transaction::{ConnInfo, Step, Transaction};
pub use verdict::{Action, BlockReply, Verdict};
pub use violation::{Context, Violation, ViolationKind};
