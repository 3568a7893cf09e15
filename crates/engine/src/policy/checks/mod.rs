//! The request checks of a compiled policy, one file per concern, each an `impl CompiledPolicy`
//! block run by the transaction's phases: the head ([`head`], [`fields`] and its [`field_memo`],
//! [`protocol`], [`params`], [`length`], [`encoding`], [`cors`], [`controls`], [`redirect`], then
//! [`body_plan`]), the body ([`body`], [`value`], [`json_schema`], [`upload`], [`api`], [`grpc`]),
//! the signature scan of one value ([`scan`]); then staging, rating and the decision ([`staging`],
//! [`rating`]) and which entities judged a request ([`explain`]).

pub(super) mod api;
pub(super) mod body;
pub(super) mod body_plan;
pub(super) mod controls;
pub(super) mod cors;
pub(super) mod dot_segments;
pub(super) mod encoding;
pub(crate) mod explain;
pub(super) mod field_memo;
pub(super) mod fields;
pub(super) mod grpc;
pub(super) mod head;
pub(super) mod json_schema;
pub(super) mod known_fields;
pub(super) mod length;
pub(super) mod params;
pub(super) mod path_url;
pub(super) mod protocol;
pub(super) mod rating;
pub(super) mod redirect;
pub(super) mod related;
pub(super) mod scan;
pub(super) mod staging;
pub(super) mod upload;
pub(super) mod value;
