//! Where the file links of a policy point (`x`, `file://x`, `file:x`, `file:///abs/x`, `../x`):
//! one resolver with an explicit confinement, so that `policy check`, `portcullis proxy` and the
//! controller read the same link as the same file, or refuse it for the same reason.
//!
//! | link | [`Confinement::Open`] (`portcullis proxy`) | [`Confinement::Within`] (controller) |
//! | --- | --- | --- |
//! | `x`, `file://x`, `file:x` | `<dir>/x` | `<dir>/x` |
//! | `file:///abs/x`, `file:/abs/x` | `/abs/x` | `/abs/x` if inside the root, else refused |
//! | `file:///var/config/rest/downloads/x` | that absolute path | `<dir>/x` |
//! | `..` in the path | followed | refused |
//! | a symlink | followed | resolved, refused if it leads outside the root |
//!
//! `dir` is where relative links land: the policy file's directory for the proxy, the downloads
//! directory for the controller.
//!
//! [`LinkResolver`] is the one reader of a policy's links, file and remote: the scheme dispatch
//! is written once, and what happens to an `http(s)://` link is the caller's [`Remote`] strategy
//! (fetched with the outbound client's bounds, refused offline, or recorded and pulled between
//! compile rounds).

use std::path::{Path, PathBuf};

use parking_lot::Mutex;

use super::outbound::{Outbound, PullError, block_on_own_thread};

/// The path clients use for a controller's downloads directory.
pub const DOWNLOADS: &str = "/var/config/rest/downloads/";

/// How far a link may reach.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Confinement {
    /// Anywhere the process may read: the operator's own policy files (`portcullis proxy`).
    Open,
    /// Inside `root` only, after `..` is refused and symlinks are resolved: files named by
    /// a remote user (the controller's data directory). `what` names the root in messages.
    Within { root: PathBuf, what: &'static str },
}

/// Resolves file links against a directory under a confinement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileLinks {
    /// Where relative links (and, when confined, the downloads path) land.
    pub dir: PathBuf,
    pub confinement: Confinement,
}

impl FileLinks {
    /// Links of a policy file run by `portcullis proxy`: relative to its directory, unconfined.
    pub fn beside(policy_file: &Path) -> FileLinks {
        let dir = match policy_file.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        FileLinks {
            dir,
            confinement: Confinement::Open,
        }
    }

    /// Links as a controller reads them: relative ones in `downloads`, all inside `root`
    /// (`what`, e.g. "the data directory", names it in messages).
    pub fn within(downloads: PathBuf, root: PathBuf, what: &'static str) -> FileLinks {
        FileLinks {
            dir: downloads,
            confinement: Confinement::Within { root, what },
        }
    }

    /// The file a link names, or why it may not be read.
    pub fn path(&self, link: &str) -> Result<PathBuf, FileLinkError> {
        let raw = strip_scheme(link);
        let rest = percent_encoding::percent_decode_str(raw)
            .decode_utf8()
            .map_err(|_| FileLinkError::NotUtf8)?;
        let (root, what) = match &self.confinement {
            Confinement::Open => {
                let p = Path::new(rest.as_ref());
                return Ok(if p.is_absolute() {
                    p.to_path_buf()
                } else {
                    self.dir.join(p)
                });
            }
            Confinement::Within { root, what } => (root, *what),
        };
        if rest.split('/').any(|c| c == "..") {
            return Err(FileLinkError::ParentDir {
                what,
                path: rest.into_owned(),
            });
        }
        let candidate = match rest.strip_prefix(DOWNLOADS) {
            Some(name) => self.dir.join(name),
            None if rest.starts_with('/') => PathBuf::from(rest.as_ref()),
            None => self.dir.join(rest.as_ref()),
        };
        let root = root
            .canonicalize()
            .map_err(|e| FileLinkError::io(root, &e))?;
        let real = candidate
            .canonicalize()
            .map_err(|e| FileLinkError::io(&candidate, &e))?;
        if !real.starts_with(&root) {
            return Err(FileLinkError::Outside {
                what,
                path: candidate,
            });
        }
        Ok(real)
    }

    /// Reads the file a link names: a regular file of at most `max_bytes`.
    pub fn read(&self, link: &str, max_bytes: u64) -> Result<Vec<u8>, FileLinkError> {
        let path = self.path(link)?;
        let meta = std::fs::metadata(&path).map_err(|e| FileLinkError::io(&path, &e))?;
        if !meta.is_file() {
            return Err(FileLinkError::NotAFile(path));
        }
        if meta.len() > max_bytes {
            return Err(FileLinkError::TooLarge {
                path,
                limit: max_bytes,
            });
        }
        std::fs::read(&path).map_err(|e| FileLinkError::io(&path, &e))
    }
}

/// Why a file link gives no file; `Display` is the reason shown after the link.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FileLinkError {
    #[error("the path is not valid UTF-8")]
    NotUtf8,
    /// A confined link with a `..` component (refused before any file is looked at).
    #[error("file links must stay inside {what} ('..' in {path})")]
    ParentDir { what: &'static str, path: String },
    /// A confined link that leads outside its root (symlinks resolved).
    #[error("file links must stay inside {what} ({} is outside)", .path.display())]
    Outside { what: &'static str, path: PathBuf },
    /// The file system refused (missing file, no permission); `kind` for callers that match.
    #[error("{}: {detail}", .path.display())]
    Io {
        path: PathBuf,
        kind: std::io::ErrorKind,
        detail: String,
    },
    #[error("{}: not a regular file", .0.display())]
    NotAFile(PathBuf),
    #[error("{}: larger than the limit of {limit} bytes", .path.display())]
    TooLarge { path: PathBuf, limit: u64 },
}

impl FileLinkError {
    fn io(path: &Path, e: &std::io::Error) -> FileLinkError {
        FileLinkError::Io {
            path: path.to_path_buf(),
            kind: e.kind(),
            detail: e.to_string(),
        }
    }
}

/// What a [`LinkResolver`] does with an `http(s)://` link.
#[derive(Clone)]
pub enum Remote {
    /// Fetches it now with the one outbound client (its bounds and guard), following at most
    /// `max_redirects` redirects; an answer outside 2xx fails.
    Fetch {
        client: Outbound,
        max_redirects: u32,
    },
    /// Refuses it, for this reason (a check that runs offline).
    Refuse(&'static str),
}

/// Why a link could not be read; `Display` is the reason shown after the link.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    #[error("unsupported scheme (expected file, http or https)")]
    UnsupportedScheme,
    /// A remote link where [`Remote::Refuse`] is the strategy.
    #[error("{0}")]
    Refused(&'static str),
    /// The fetch of a remote link failed.
    #[error(transparent)]
    Fetch(#[from] PullError),
    /// In the recording mode: not pulled yet (recorded as missing).
    #[error("not pulled yet")]
    NotPulled,
    /// A file link is refused by the confinement, missing, or too large.
    #[error(transparent)]
    File(#[from] FileLinkError),
}

/// A link that gave no file, and why; `Display` is `link: reason`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{link}: {reason}")]
pub struct UnreadableLink {
    pub link: String,
    #[source]
    pub reason: LinkError,
}

/// The one reader of a policy's links: the scheme decides (`http(s)://` → [`Remote`], `file:` or
/// no scheme → [`FileLinks`], anything else refused), the same way for `portcullis proxy`,
/// `policy check` and the controller.
///
/// A controller compiles a policy in rounds ([`LinkResolver::recording`]): links are served
/// from what was pulled before, the missing ones are recorded and pulled between rounds, and
/// the pulled files are kept with the policy so that an apply reads no link again.
pub struct LinkResolver {
    pub files: FileLinks,
    pub remote: Remote,
    /// Largest file read through a file link.
    pub max_file_bytes: u64,
    recorded: Option<Recorded>,
}

#[derive(Default)]
struct Recorded {
    /// Pulled files by link as written, in the order pulled.
    pulled: Mutex<Vec<(String, Vec<u8>)>>,
    /// `(base, link)` asked for and not pulled yet.
    missed: Mutex<Vec<(String, String)>>,
}

enum Plan<'a> {
    Fetch(&'a Outbound, u32),
    Done(Result<Vec<u8>, LinkError>),
}

enum Scheme {
    Remote,
    File,
    Other,
}

fn scheme(link: &str) -> Scheme {
    let head = link.get(..8).unwrap_or(link).to_ascii_lowercase();
    if head.starts_with("http://") || head.starts_with("https://") {
        Scheme::Remote
    } else if head.starts_with("file:") || !link.contains("://") {
        Scheme::File
    } else {
        Scheme::Other
    }
}

impl LinkResolver {
    /// Reads links as they come: file links through `files`, remote ones by `remote`.
    pub fn new(files: FileLinks, remote: Remote, max_file_bytes: u64) -> LinkResolver {
        LinkResolver {
            files,
            remote,
            max_file_bytes,
            recorded: None,
        }
    }

    /// The same resolver recording instead of reading: see [`LinkResolver::take_missed`].
    pub fn recording(self) -> LinkResolver {
        LinkResolver {
            recorded: Some(Recorded::default()),
            ..self
        }
    }

    /// The file behind `link` as written in the document whose own link is `base`.
    pub fn resolve(&self, base: &str, link: &str) -> Result<Vec<u8>, LinkError> {
        let Some(rec) = &self.recorded else {
            return self.read(&join(base, link));
        };
        if let Some((_, data)) = rec.pulled.lock().iter().find(|(l, _)| l == link) {
            return Ok(data.clone());
        }
        rec.missed.lock().push((base.to_string(), link.to_string()));
        Err(LinkError::NotPulled)
    }

    /// Reads an absolute link now (blocking: a remote fetch runs on a thread of its own).
    pub fn read(&self, url: &str) -> Result<Vec<u8>, LinkError> {
        match self.plan(url) {
            Plan::Fetch(client, hops) => {
                let (client, owned) = (client.clone(), url.to_string());
                block_on_own_thread("link-fetch", async move {
                    client.get_following(&owned, hops).await
                })
                .map_err(|e| PullError::Worker(e.to_string()))?
                .map_err(LinkError::Fetch)
            }
            Plan::Done(r) => r,
        }
    }

    /// [`LinkResolver::read`] for async callers.
    pub async fn read_async(&self, url: &str) -> Result<Vec<u8>, LinkError> {
        match self.plan(url) {
            Plan::Fetch(client, hops) => client
                .get_following(url, hops)
                .await
                .map_err(LinkError::Fetch),
            Plan::Done(r) => r,
        }
    }

    /// The scheme dispatch: a remote fetch to make, or the answer.
    fn plan(&self, url: &str) -> Plan<'_> {
        Plan::Done(match (scheme(url), &self.remote) {
            (
                Scheme::Remote,
                Remote::Fetch {
                    client,
                    max_redirects,
                },
            ) => return Plan::Fetch(client, *max_redirects),
            (Scheme::Remote, Remote::Refuse(why)) => Err(LinkError::Refused(why)),
            (Scheme::Other, _) => Err(LinkError::UnsupportedScheme),
            (Scheme::File, _) => self
                .files
                .read(url, self.max_file_bytes)
                .map_err(LinkError::File),
        })
    }

    /// The links recorded as missing since the last call, with the link of their document.
    pub fn take_missed(&self) -> Vec<(String, String)> {
        self.recorded
            .as_ref()
            .map(|r| std::mem::take(&mut *r.missed.lock()))
            .unwrap_or_default()
    }

    /// Whether `link` (as written) was pulled already.
    pub fn has_pulled(&self, link: &str) -> bool {
        self.recorded
            .as_ref()
            .is_some_and(|r| r.pulled.lock().iter().any(|(l, _)| l == link))
    }

    /// Keeps `data` as what `link` (as written) resolves to from now on.
    pub fn keep_pulled(&self, link: &str, data: Vec<u8>) {
        if let Some(r) = &self.recorded {
            r.pulled.lock().push((link.to_string(), data));
        }
    }
}

/// A link as written in a document, made absolute against the link of that document (`base`):
/// `spec.yaml` in `https://h/a/p.json` is `https://h/a/spec.yaml`; a link with a scheme stays
/// as it is (`file://x` is relative to the directory links land in, not to `base`).
pub fn join(base: &str, link: &str) -> String {
    if link.contains(':') {
        return link.to_string();
    }
    if base.is_empty() {
        return format!("file://{link}");
    }
    if link.starts_with('/') {
        if let Some(i) = base.find("://") {
            let host_end = base[i + 3..].find('/').map_or(base.len(), |j| i + 3 + j);
            return format!("{}{link}", &base[..host_end]);
        }
        return format!("file://{link}");
    }
    match base.rsplit_once('/') {
        Some((dir, _)) => format!("{dir}/{link}"),
        None => link.to_string(),
    }
}

/// The path part of a file link: `file://localhost/a` → `/a`, `file:///a` → `/a`,
/// `file://a` → `a` (relative, as the product reads it), `file:a` → `a`, `a` → `a`.
fn strip_scheme(link: &str) -> &str {
    let Some(rest) = link
        .get(..5)
        .filter(|s| s.eq_ignore_ascii_case("file:"))
        .map(|_| &link[5..])
    else {
        return link;
    };
    if let Some(r) = rest.strip_prefix("//localhost/") {
        return &rest[rest.len() - r.len() - 1..];
    }
    rest.strip_prefix("//").unwrap_or(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_links_join_their_document() {
        assert_eq!(
            join("http://h:8/a/p.json", "spec.yaml"),
            "http://h:8/a/spec.yaml"
        );
        assert_eq!(
            join("https://h/a/p.json", "/x/spec.yaml"),
            "https://h/x/spec.yaml"
        );
        assert_eq!(
            join("http://h/a/p.json", "file://demo.proto"),
            "file://demo.proto"
        );
        assert_eq!(join("", "demo.proto"), "file://demo.proto");
        assert_eq!(
            join("file:///var/config/rest/downloads/p.json", "demo.proto"),
            "file:///var/config/rest/downloads/demo.proto"
        );
    }

    #[test]
    fn schemes_are_stripped_the_product_way() {
        assert_eq!(strip_scheme("file://localhost/a/b"), "/a/b");
        assert_eq!(strip_scheme("file:///a/b"), "/a/b");
        assert_eq!(strip_scheme("FILE://a"), "a");
        assert_eq!(strip_scheme("file:a"), "a");
        assert_eq!(strip_scheme("file:/a"), "/a");
        assert_eq!(strip_scheme("a/b"), "a/b");
    }

    #[test]
    fn confined_links_stay_inside_the_root() {
        let dir = tempfile::tempdir().expect("tmp");
        let dl = dir.path().join("downloads");
        std::fs::create_dir_all(&dl).expect("mkdir");
        std::fs::write(dl.join("a.json"), b"{}").expect("write");
        let want = dl.join("a.json").canonicalize().expect("canon");
        let links = FileLinks::within(dl.clone(), dir.path().to_path_buf(), "the data directory");
        for link in [
            "file:///var/config/rest/downloads/a.json",
            "file://a.json",
            "file:a.json",
            "a.json",
            "file://%61.json",
        ] {
            assert_eq!(links.path(link).expect(link), want, "{link}");
        }
        let abs = format!("file://{}", want.display());
        assert_eq!(links.path(&abs).expect("abs"), want);
        assert!(links.path("file:///etc/hostname").is_err());
        assert!(links.path("file://../downloads/a.json").is_err());
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("/etc", dl.join("etc")).expect("link");
            let e = links.path("file://etc/hostname").expect_err("symlink out");
            assert!(
                matches!(
                    e,
                    FileLinkError::Outside {
                        what: "the data directory",
                        ..
                    }
                ),
                "{e}"
            );
        }
        let open = FileLinks::beside(&dl.join("policy.json"));
        assert_eq!(
            open.path("file:///etc/hostname").unwrap(),
            Path::new("/etc/hostname")
        );
        assert_eq!(open.path("../x").unwrap(), dl.join("../x"));
    }

    #[test]
    fn one_resolver_dispatches_by_scheme_and_records_when_asked() {
        let dir = tempfile::tempdir().expect("tmp");
        std::fs::write(dir.path().join("a.json"), b"{}").expect("write");
        let files = FileLinks::beside(&dir.path().join("p.json"));
        let r = LinkResolver::new(files, Remote::Refuse("checked offline"), 1024);
        assert_eq!(r.resolve("", "a.json"), Ok(b"{}".to_vec()));
        assert_eq!(r.resolve("", "file:a.json"), Ok(b"{}".to_vec()));
        assert_eq!(
            r.resolve("", "HTTPS://h/x"),
            Err(LinkError::Refused("checked offline"))
        );
        let e = r.resolve("", "gopher://h/x").expect_err("gopher");
        assert_eq!(
            e.to_string(),
            "unsupported scheme (expected file, http or https)"
        );
        // Recording: nothing is read; what is missing is recorded, what was pulled is served.
        let rec = r.recording();
        assert!(rec.resolve("base", "a.json").is_err());
        assert_eq!(rec.take_missed(), vec![("base".into(), "a.json".into())]);
        assert!(!rec.has_pulled("a.json"));
        rec.keep_pulled("a.json", b"pulled".to_vec());
        assert_eq!(rec.resolve("base", "a.json"), Ok(b"pulled".to_vec()));
        assert!(rec.take_missed().is_empty());
    }
}
