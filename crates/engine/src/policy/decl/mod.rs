//! The declaration: what a policy document says, read from JSON or YAML into the serde mirror
//! ([`document`] and its entity lists), with its references resolved ([`refs`]), layered over its
//! template ([`layers`], [`templates`], [`sections`] for the merge keys) and checked into the
//! validated [`model::Model`] with every default applied.

// The serde mirror declares every field of the format, read or not: a field the engine does not
// enforce is still type-checked and is not reported as unknown.
#[allow(dead_code)]
mod document;
#[allow(dead_code)]
mod entities;
pub(crate) mod layers;
pub(super) mod lenient;
pub(super) mod model;
pub(super) mod refs;
pub(super) mod sections;
pub(crate) mod templates;
pub(super) mod unenforced;
pub(super) mod validate;

pub use document::*;
pub use entities::*;
