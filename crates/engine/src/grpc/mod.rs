//! gRPC protection: IDL compilation and per-stream message inspection (`docs/grpc.md`).
//!
//! Map of this module:
//! - [`spec`]: serde mirror of one `grpc-profiles[]` entry of the declarative policy.
//! - [`compile`]: IDL files (through the injected [`crate::Resolver`]) → protox → a
//!   prost-reflect descriptor pool, the method index and the profile's limits.
//! - `idl`: protox file resolution (listed files, imports, well-known types) and error positions.
//! - [`frame`]: the incremental parser of the 5-byte length-prefixed message frames.
//! - [`walk`]: one decoded message: unknown fields anywhere in the tree, every string field
//!   reported with its field path.
//! - [`call`]: the headers-phase checks of a call (POST, known method, gRPC content type).
//! - [`schema`]: per message type field tables, built once per profile for the hot path.
//! - `wire`: the in-place wire-format walk behind [`walk::inspect`] (the hot path).
//! - [`stream`]: [`GrpcStream`], the per-call inspector the policy's body phase feeds chunk by chunk.
//! - [`opaque`]: [`OpaqueCall`], the same for a call on a URL no profile describes (framed,
//!   inflated, scanned as raw bytes, released message by message).
//!
//! The contract with the policy and the proxy is written down in `docs/grpc.md`.
//! Pure: no IO.

mod call;
mod compile;
pub(crate) mod frame;
#[cfg(any(test, fuzzing))]
pub(crate) mod fuzzing;
mod idl;
mod opaque;
mod schema;
mod spec;
mod stream;
mod walk;
mod wire;

#[cfg(test)]
pub(crate) mod tests;

pub use call::{CallStart, is_grpc_content_type, start_call};
pub use compile::{CompiledGrpcProfile, GrpcError, GrpcMethod, GrpcProfile};
pub use frame::{FrameError, FrameEvent, FrameParser, MAX_FRAME_LEN, encode_frame};
#[cfg(fuzzing)]
pub use fuzzing::{frames as fuzz_frames, idl as fuzz_idl, message as fuzz_message};
pub use opaque::OpaqueCall;
pub use spec::{DataLength, GrpcProfileSpec, IdlFileEntry};
pub use stream::{Encoding, FeedResult, GrpcLimits, GrpcStream};
pub use walk::{StringCheck, WalkOptions};
