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
//! The request itself is the one outbound client's (`support::outbound`), with the guard of
//! this configuration and the webpki roots.

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use super::guard::{Cidr, DEFAULT_DENY, Guard};
use super::links::FileLinks;
use super::outbound::{Bounds, Call, Outbound, block_on_own_thread, public_roots, within};

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

/// Pulls `link` (`https://`, `http://` or `file:`) under the limits of `cfg`; `file:` links are
/// resolved inside `data_dir` (see [`file_links`]). The error names the link and the reason.
pub async fn fetch(cfg: &FetchConfig, data_dir: &Path, link: &str) -> Result<Vec<u8>, String> {
    let fail = |reason: String| format!("{link}: {reason}");
    let lower = link.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        let timeout = Duration::from_secs(cfg.timeout_secs);
        within(timeout, async { Ok(fetch_http(cfg, link).await) })
            .await
            .map_err(|e| e.to_string())
            .and_then(|r| r)
            .map_err(fail)
    } else if lower.starts_with("file:") {
        file_links(data_dir)
            .read(link, cfg.max_bytes as u64)
            .map_err(fail)
    } else {
        Err(fail(
            "unsupported scheme (expected https, http or file)".into(),
        ))
    }
}

/// [`fetch`] for synchronous callers (handlers run on the blocking pool): runs the pull on a
/// thread of its own with a small runtime, so it works inside or outside a runtime.
pub fn fetch_blocking(cfg: &FetchConfig, data_dir: &Path, link: &str) -> Result<Vec<u8>, String> {
    let (cfg, dir, owned) = (cfg.clone(), data_dir.to_path_buf(), link.to_string());
    block_on_own_thread("mgmt-fetch", async move { fetch(&cfg, &dir, &owned).await })
        .map_err(|e| format!("{link}: {e}"))?
}

impl FetchConfig {
    /// The destination guard of these lists.
    pub fn guard(&self) -> Guard {
        Guard {
            allow: self.allow.clone(),
            deny: self.deny.clone(),
        }
    }

    /// The bounds of one request of a pull (the whole pull, redirects included, is bounded by
    /// `timeout_secs` as well).
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

async fn fetch_http(cfg: &FetchConfig, link: &str) -> Result<Vec<u8>, String> {
    let client = Outbound {
        bounds: cfg.bounds(),
        guard: cfg.guard(),
        tls: public_roots().map_err(|e| e.to_string())?,
    };
    let headers = [("user-agent", "portcullis-fetch".to_string())];
    let mut url = link.to_string();
    for _ in 0..=cfg.max_redirects {
        let call = Call {
            headers: &headers,
            ..Call::get(&url)
        };
        let answer = client
            .send_unbounded_in_time(call)
            .await
            .map_err(|e| e.to_string())?;
        let status = answer.status;
        if status.is_redirection() {
            let loc = answer
                .headers
                .get(http::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .ok_or_else(|| format!("HTTP {status} without a Location"))?;
            let base: http::Uri = url
                .parse()
                .map_err(|e| format!("not a valid URL ({url}): {e}"))?;
            url = join(&base, loc)?;
            continue;
        }
        if !status.is_success() {
            return Err(format!("HTTP status {status} from {url}"));
        }
        return Ok(answer.body.to_vec());
    }
    Err(format!(
        "too many redirects (more than {})",
        cfg.max_redirects
    ))
}

/// A redirect target: absolute (`https://...`), or a path on the same origin.
fn join(base: &http::Uri, loc: &str) -> Result<String, String> {
    let lower = loc.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        return Ok(loc.to_string());
    }
    if loc.contains("://") {
        return Err(format!("redirect to an unsupported scheme ({loc})"));
    }
    let origin = format!(
        "{}://{}",
        base.scheme_str().unwrap_or("http"),
        base.authority().map(|a| a.as_str()).unwrap_or_default()
    );
    if loc.starts_with('/') {
        return Ok(format!("{origin}{loc}"));
    }
    let dir = base.path().rsplit_once('/').map_or("", |(d, _)| d);
    Ok(format!("{origin}{dir}/{loc}"))
}
