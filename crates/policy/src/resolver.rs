//! How the pure engine reads the files a policy links to (OpenAPI specs, IDL files, references):
//! the caller injects a [`Resolver`]; the engine itself does no IO.

use std::collections::HashMap;

/// Why a linked file could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{link}: {reason}")]
pub struct FetchError {
    pub link: String,
    pub reason: String,
}

/// Reads the content behind a link (`file://...`, `https://...`), bounded in size and time by the
/// implementation. Links are passed as written in the policy; `base` is the link of the document
/// that contains the reference (empty for the policy itself), for resolving relative links.
pub trait Resolver: Send + Sync {
    fn fetch(&self, base: &str, link: &str) -> Result<Vec<u8>, FetchError>;
}

/// A resolver that refuses every link: for policies that must be self-contained.
pub struct NoResolver;

impl Resolver for NoResolver {
    fn fetch(&self, _base: &str, link: &str) -> Result<Vec<u8>, FetchError> {
        Err(FetchError {
            link: link.to_string(),
            reason: "external references are not allowed here".into(),
        })
    }
}

/// The one link resolver (file and remote links, by the caller's strategy).
impl Resolver for portcullis_support::links::LinkResolver {
    fn fetch(&self, base: &str, link: &str) -> Result<Vec<u8>, FetchError> {
        self.resolve(base, link).map_err(|e| FetchError {
            link: link.to_string(),
            reason: e.to_string(),
        })
    }
}

/// An in-memory resolver keyed by link: for tests, fuzzing and files already pulled by the caller.
#[derive(Default)]
pub struct MemResolver(pub HashMap<String, Vec<u8>>);

impl Resolver for MemResolver {
    fn fetch(&self, _base: &str, link: &str) -> Result<Vec<u8>, FetchError> {
        self.0.get(link).cloned().ok_or_else(|| FetchError {
            link: link.to_string(),
            reason: "not found".into(),
        })
    }
}
