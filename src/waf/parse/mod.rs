//! Request structure extraction with bounds: query strings and form bodies, cookies, multipart,
//! a JSON walk and a basic XML well-formedness walk. Each parser returns borrowed slices or small
//! owned values and never panics on input. The decoders here are the minimum the policy checks need;
//! `waf::normalize` (signatures work) owns the full normalisation pipeline.
//! Imports: nothing outside `waf::parse`.

pub mod cookie;
pub mod json;
pub mod multipart;
pub mod query;
pub mod xml;
