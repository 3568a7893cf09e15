//! The resolver `portcullis proxy` hands to the policy loader: file links read the proxy's way
//! (`support::links`: relative to the policy file's directory, unconfined), `http(s)://` links
//! fetched by `support::outbound` with a bounded size and time. Loading runs off the hot path, so
//! fetching blocks: each fetch runs a small current-thread runtime on its own thread.

use std::path::Path;
use std::time::Duration;

use portcullis_support::Guard;
use portcullis_support::links::{FileLinks, LinkResolver, Remote};
use portcullis_support::{Bounds, Outbound};

use super::tls::TlsConfigError;

/// Largest linked file accepted.
pub const MAX_FETCH_BYTES: usize = 16 * 1024 * 1024;
/// Longest time a fetch may take, connect included.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// The resolver of a policy file run by `portcullis proxy`: file links relative to its
/// directory, unconfined; http(s) links fetched (no redirects followed). The links are the
/// operator's own: no destination guard.
pub fn policy_links(policy_file: &Path) -> Result<LinkResolver, TlsConfigError> {
    let client = Outbound {
        bounds: Bounds {
            max_bytes: MAX_FETCH_BYTES,
            timeout: FETCH_TIMEOUT,
        },
        guard: Guard::open(),
        tls: super::tls::client_config(None)?,
    };
    let remote = Remote::Fetch {
        client,
        max_redirects: 0,
    };
    Ok(LinkResolver::new(
        FileLinks::beside(policy_file),
        remote,
        MAX_FETCH_BYTES as u64,
    ))
}

/// The `file://` link of a policy file, for `policy::load`'s `base`.
pub fn base_link(policy_file: &Path) -> String {
    let abs = std::path::absolute(policy_file).unwrap_or_else(|_| policy_file.to_path_buf());
    format!("file://{}", abs.display())
}

#[cfg(test)]
mod tests {
    use super::*;
    use portcullis_engine::Resolver;

    #[test]
    fn file_links_resolve_next_to_the_policy() {
        let dir = tempfile::tempdir().expect("tmp");
        std::fs::write(dir.path().join("api.yaml"), b"openapi: 3.0.0").expect("write");
        let policy = dir.path().join("policy.json");
        let r = policy_links(&policy).expect("resolver");
        let base = base_link(&policy);
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
        let r = policy_links(Path::new("policy.json")).expect("resolver");
        let got = r.read(&format!("http://{addr}/spec.yaml")).expect("fetch");
        assert_eq!(got, b"hello");
        server.join().expect("server");
        let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let dead = closed.local_addr().expect("addr");
        drop(closed);
        assert!(r.read(&format!("http://{dead}/x")).is_err());
    }
}
