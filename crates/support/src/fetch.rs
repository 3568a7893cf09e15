//! Server-side pulls of files named by URL: an import task's `fileReference.link`, the OpenAPI
//! and IDL links inside a policy (on import and apply), an AS3 `WAF_Policy.url`.
//!
//! A pull is a request the controller makes on a user's behalf, so it is bounded: schemes
//! `https`, `http` and `file:` only; `file:` stays inside the data directory (symlinks resolved);
//! at most `max_bytes`, `timeout_secs` for the whole pull (redirects included) and
//! `max_redirects` hops; every destination address is checked against the deny and allow lists
//! *after* name resolution, and the connection goes to the address that was checked (so a name
//! that resolves to a metadata address, or a redirect to one, is refused as well).
//!
//! The reading is the one link resolver's (`support::links::LinkResolver`), its remote fetches
//! the one outbound client's (`support::outbound`) with the guard of this configuration and the
//! webpki roots.

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use super::guard::{Cidr, DEFAULT_DENY, Guard};
use super::links::{FileLinks, LinkError, LinkResolver, Remote, UnreadableLink};
use super::outbound::{Bounds, Outbound, OutboundError, public_roots};

/// Limits and destination rules of server-side pulls (the `fetch` section of the `mgmt` config).
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FetchConfig {
    /// Largest file pulled, in bytes.
    pub max_bytes: usize,
    /// Longest time one pull may take (connect, TLS, redirects and body), in seconds.
    pub timeout_secs: u64,
    /// Most redirects followed.
    pub max_redirects: u32,
    /// When not empty, only these networks may be contacted (CIDR, e.g. `10.0.0.0/8`).
    pub allow: Vec<Cidr>,
    /// Networks never contacted; checked before `allow`. Default: link-local and metadata addresses.
    pub deny: Vec<Cidr>,
}

impl Default for FetchConfig {
    fn default() -> Self {
        FetchConfig {
            max_bytes: 16 * 1024 * 1024,
            timeout_secs: 10,
            max_redirects: 5,
            allow: Vec::new(),
            deny: DEFAULT_DENY.iter().filter_map(|c| c.parse().ok()).collect(),
        }
    }
}

/// How a controller reads links: files inside its data directory (see [`file_links`]), remote
/// links pulled under the limits and guard of `cfg`, following redirects.
pub fn controller_links(cfg: &FetchConfig, data_dir: &Path) -> Result<LinkResolver, OutboundError> {
    let client = Outbound {
        bounds: cfg.bounds(),
        guard: cfg.guard(),
        tls: public_roots()?,
    };
    let remote = Remote::Fetch {
        client,
        max_redirects: cfg.max_redirects,
    };
    Ok(LinkResolver::new(
        file_links(data_dir),
        remote,
        cfg.max_bytes as u64,
    ))
}

/// Pulls `link` (`https://`, `http://` or `file:`) under the limits of `cfg`, for synchronous
/// callers (handlers run on the blocking pool); `file:` links are resolved inside `data_dir` (see
/// [`file_links`]).
pub fn fetch_blocking(
    cfg: &FetchConfig,
    data_dir: &Path,
    link: &str,
) -> Result<Vec<u8>, UnreadableLink> {
    controller_links(cfg, data_dir)
        .map_err(|e| LinkError::Fetch(e.into()))
        .and_then(|links| links.read(link))
        .map_err(|reason| UnreadableLink {
            link: link.to_string(),
            reason,
        })
}

impl FetchConfig {
    /// The destination guard of these lists.
    pub fn guard(&self) -> Guard {
        Guard {
            allow: self.allow.clone(),
            deny: self.deny.clone(),
        }
    }

    /// The bounds of a pull (redirects included).
    pub fn bounds(&self) -> Bounds {
        Bounds {
            max_bytes: self.max_bytes,
            timeout: Duration::from_secs(self.timeout_secs),
        }
    }
}

/// The controller's reading of file links: relative ones and `/var/config/rest/downloads/` in
/// `<data-dir>/downloads`, absolute ones only inside the data directory (symlinks resolved).
pub fn file_links(data_dir: &Path) -> FileLinks {
    FileLinks::within(
        data_dir.join("downloads"),
        data_dir.to_path_buf(),
        "the data directory",
    )
}
