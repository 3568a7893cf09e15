//! The resolver `portcullis proxy` hands to the policy loader: file links read the proxy's way
//! (`support::links`: relative to the policy file's directory, unconfined), `http(s)://` links
//! fetched by `support::outbound` with a bounded size and time. Loading runs off the hot path, so
//! fetching blocks: each fetch runs a small current-thread runtime on its own thread.

use std::path::Path;
use std::time::Duration;

use crate::support::guard::Guard;
use crate::support::links::{self, FileLinks};
use crate::support::outbound::{Bounds, Call, Outbound, block_on_own_thread};
use crate::waf::{FetchError, Resolver};

/// Largest linked file accepted.
pub const MAX_FETCH_BYTES: usize = 16 * 1024 * 1024;
/// Longest time a fetch may take, connect included.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// Resolves links of a policy file on disk.
pub struct FsResolver {
    links: FileLinks,
}

impl FsResolver {
    /// `policy_file` is the policy's path; relative `file:` links resolve against its directory.
    pub fn for_policy(policy_file: &Path) -> FsResolver {
        FsResolver {
            links: FileLinks::beside(policy_file),
        }
    }

    /// The `file://` link of a policy file, for `policy::load`'s `base`.
    pub fn base_link(policy_file: &Path) -> String {
        let abs = std::path::absolute(policy_file).unwrap_or_else(|_| policy_file.to_path_buf());
        format!("file://{}", abs.display())
    }
}

fn err(link: &str, reason: impl Into<String>) -> FetchError {
    FetchError {
        link: link.to_string(),
        reason: reason.into(),
    }
}

impl Resolver for FsResolver {
    fn fetch(&self, base: &str, link: &str) -> Result<Vec<u8>, FetchError> {
        let url = links::join(base, link);
        let lower = url.to_ascii_lowercase();
        if lower.starts_with("http://") || lower.starts_with("https://") {
            return fetch_url(&url);
        }
        if url.contains("://") && !lower.starts_with("file://") {
            return Err(err(link, "only file, http and https links are supported"));
        }
        self.links
            .read(&url, MAX_FETCH_BYTES as u64)
            .map_err(|reason| err(link, reason))
    }
}

/// Fetches an http(s) URL with the size and time bounds, on a thread of its own (so it works
/// from inside or outside a runtime). The link is the operator's own: no destination guard.
pub fn fetch_url(link: &str) -> Result<Vec<u8>, FetchError> {
    let tls = super::tls::client_config(None).map_err(|e| err(link, e))?;
    let client = Outbound {
        bounds: Bounds {
            max_bytes: MAX_FETCH_BYTES,
            timeout: FETCH_TIMEOUT,
        },
        guard: Guard::open(),
        tls,
    };
    let owned = link.to_string();
    let answer = block_on_own_thread("policy-fetch", async move {
        client.send(Call::get(&owned)).await
    })
    .map_err(|e| err(link, e))?
    .map_err(|e| err(link, e.to_string()))?;
    if !answer.status.is_success() {
        return Err(err(link, format!("HTTP status {}", answer.status.as_u16())));
    }
    Ok(answer.body.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_links_resolve_next_to_the_policy() {
        let dir = tempfile::tempdir().expect("tmp");
        std::fs::write(dir.path().join("api.yaml"), b"openapi: 3.0.0").expect("write");
        let policy = dir.path().join("policy.json");
        let r = FsResolver::for_policy(&policy);
        let base = FsResolver::base_link(&policy);
        assert_eq!(
            r.fetch(&base, "file://api.yaml").expect("rel"),
            b"openapi: 3.0.0"
        );
        assert_eq!(r.fetch(&base, "api.yaml").expect("bare"), b"openapi: 3.0.0");
        let abs = format!("file://{}", dir.path().join("api.yaml").display());
        assert_eq!(r.fetch(&base, &abs).expect("abs"), b"openapi: 3.0.0");
        assert!(r.fetch(&base, "file://missing.yaml").is_err());
        assert!(r.fetch(&base, "ftp://x/y").is_err());
    }

    #[test]
    fn http_links_are_fetched_with_bounds() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let server = std::thread::spawn(move || {
            use std::io::{Read, Write};
            let (mut s, _) = listener.accept().expect("accept");
            let mut buf = [0u8; 1024];
            let _ = s.read(&mut buf);
            let _ = s.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
            );
        });
        let got = fetch_url(&format!("http://{addr}/spec.yaml")).expect("fetch");
        assert_eq!(got, b"hello");
        server.join().expect("server");
        let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let dead = closed.local_addr().expect("addr");
        drop(closed);
        assert!(fetch_url(&format!("http://{dead}/x")).is_err());
    }
}
