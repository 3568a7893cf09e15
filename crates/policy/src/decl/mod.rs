//! The declaration: the serde mirror of a policy document ([`document`] and its entity lists),
//! every field of the format declared, read or not, so that a field the engine does not enforce is
//! still type-checked and is not reported as unknown; scalars are read leniently ([`lenient`]).

mod document;
mod entities;
pub mod lenient;

pub use document::*;
pub use entities::*;
