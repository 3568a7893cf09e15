//! Compiling a policy document in the management plane. The engine reads linked files (OpenAPI
//! specs, IDL files and their imports, modification documents) through a `Resolver` and does no
//! IO, so links are pulled here first: the loader runs over the controller's link resolver in
//! its recording mode (`support::links::LinkResolver::recording`), which serves what was pulled
//! and records every link it misses; those are pulled (`support::fetch::controller_links`: data
//! directory, bounds and guard) and the load runs again, until it succeeds or fails for another
//! reason. The pulled files are kept with the document, so an
//! apply (and a restart) compiles exactly what was imported, without the network.
//!
//! Compiling a stored record is a pure function of the record, so the last few compiled
//! policies are remembered by the SHA-256 of the record: the apply that follows an import is a
//! swap, not a second compile, and virtuals sharing an applied policy share one compiled copy.

use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest as _, Sha256};

use portcullis_admin::MgmtState;
use portcullis_engine::CompiledPolicy;
use portcullis_engine::MemResolver;
use portcullis_engine::policy::{self, Loaded, PolicyError};
use portcullis_support::OutboundError;
use portcullis_support::fetch;
use portcullis_support::links::{self, UnreadableLink};

/// Most load rounds (each round pulls the links the previous one missed).
const MAX_ROUNDS: usize = 32;

/// A policy document with the files its links were resolved to.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Stored {
    /// The declarative document (`{"policy": {...}}`).
    pub doc: Value,
    /// The document's own link, against which relative links resolve.
    pub base: String,
    pub files: Vec<Pulled>,
}

/// One linked file, as written in the document, with its content (base64).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Pulled {
    pub link: String,
    pub data: String,
}

/// Why a policy cannot be compiled in the management plane; `Display` is the reason the admin
/// API gives (its one mapping is `policies::compile_error`).
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    /// The document is wrong (JSON path and problem).
    #[error(transparent)]
    Policy(#[from] PolicyError),
    /// A link of the document could not be pulled (link and reason).
    #[error(transparent)]
    Pull(#[from] UnreadableLink),
    /// The controller's outbound client could not be set up.
    #[error(transparent)]
    Client(#[from] OutboundError),
    /// A pulled file kept with the document is not base64: the stored record is damaged.
    #[error("stored copy of {link}: {source}")]
    StoredCopy {
        link: String,
        source: base64::DecodeError,
    },
    #[error("the policy links more files than can be pulled ({MAX_ROUNDS} rounds)")]
    TooManyRounds,
}

fn bytes_of(doc: &Value) -> Vec<u8> {
    serde_json::to_vec(doc).unwrap_or_default()
}

/// Compiles `doc`, pulling its links (each at most once) under the fetch limits of `st`.
/// Returns the compiled policy and the document with its pulled files; the error is the
/// loader's (JSON path and problem) or the pull's (link and reason).
pub fn compile_fetching(
    st: &MgmtState,
    doc: &Value,
    base: &str,
) -> Result<(Loaded, Stored), CompileError> {
    let bytes = bytes_of(doc);
    let mut files: Vec<Pulled> = Vec::new();
    let links = fetch::controller_links(&st.cfg.fetch, &st.cfg.data_dir)?.recording();
    for _ in 0..MAX_ROUNDS {
        match policy::load(&bytes, base, &links) {
            Ok(loaded) => {
                let stored = Stored {
                    doc: doc.clone(),
                    base: base.to_string(),
                    files,
                };
                return Ok((loaded, stored));
            }
            Err(e) => {
                let missed = links.take_missed();
                if missed.is_empty() {
                    return Err(e.into());
                }
                for (b, link) in missed {
                    if links.has_pulled(&link) {
                        continue;
                    }
                    let url = links::join(&b, &link);
                    let data = links.read(&url).map_err(|reason| UnreadableLink {
                        link: url.clone(),
                        reason,
                    })?;
                    files.push(Pulled {
                        link: link.clone(),
                        data: STANDARD.encode(&data),
                    });
                    links.keep_pulled(&link, data);
                }
            }
        }
    }
    Err(CompileError::TooManyRounds)
}

/// Compiled policies remembered, most recent last.
const MEMO_SIZE: usize = 8;
type Memo = Vec<(Vec<u8>, Arc<CompiledPolicy>)>;
static MEMO: Mutex<Memo> = Mutex::new(Vec::new());

fn digest(s: &Stored) -> Vec<u8> {
    Sha256::digest(serde_json::to_vec(s).unwrap_or_default()).to_vec()
}

/// Remembers the compiled form of `s` (just compiled by an import or an edit).
pub fn remember(s: &Stored, policy: CompiledPolicy) -> Arc<CompiledPolicy> {
    let key = digest(s);
    let policy = Arc::new(policy);
    let mut memo = MEMO.lock();
    memo.retain(|(k, _)| *k != key);
    if memo.len() >= MEMO_SIZE {
        memo.remove(0);
    }
    memo.push((key, policy.clone()));
    policy
}

/// The compiled form of `s`: remembered, or compiled now from its pulled files.
pub fn compiled(s: &Stored) -> Result<Arc<CompiledPolicy>, CompileError> {
    let key = digest(s);
    if let Some((_, p)) = MEMO.lock().iter().find(|(k, _)| *k == key) {
        return Ok(p.clone());
    }
    let loaded = compile_stored(s)?;
    Ok(remember(s, loaded.policy))
}

/// Compiles a stored document from its pulled files only (apply, restart).
pub fn compile_stored(s: &Stored) -> Result<Loaded, CompileError> {
    let mut mem = MemResolver::default();
    for f in &s.files {
        let data = STANDARD
            .decode(&f.data)
            .map_err(|source| CompileError::StoredCopy {
                link: f.link.clone(),
                source,
            })?;
        mem.0.insert(f.link.clone(), data);
    }
    Ok(policy::load(&bytes_of(&s.doc), &s.base, &mem)?)
}
