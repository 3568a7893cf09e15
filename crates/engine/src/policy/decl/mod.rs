//! The declaration and its validated model. The language itself (the serde mirror of a document,
//! links, templates, layers) is `portcullis-policy`, load-time code built apart from the engine's
//! request path; it is re-exported here under the names the engine uses. What the engine adds is
//! the validated [`model::Model`]: every default applied, every enumeration and cross-reference
//! checked against what the engine enforces ([`validate`] for the user's own entities).

pub use portcullis_policy::decl::*;
pub(crate) use portcullis_policy::{layers, sections, templates};

pub(super) mod model;
pub(super) mod validate;
