//! Compilation: the validated model turned ([`build`]) into the immutable
//! [`compiled::CompiledPolicy`] every request consults, with its building blocks: compiled
//! entities and name matchers ([`entities`], [`glob`]), meta-character tables ([`charset`]),
//! signature selection ([`signature_selection`]), block pages ([`pages`]) and the gRPC URL bindings
//! ([`grpc_urls`]).

pub(super) mod build;
pub(super) mod charset;
pub(super) mod compiled;
pub(super) mod entities;
pub(crate) mod glob;
pub(super) mod grpc_urls;
pub(super) mod pages;
pub(super) mod signature_selection;
