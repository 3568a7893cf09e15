//! `portcullis policy check FILE`: validate and compile a declarative policy offline, like
//! `nginx -t`. Links inside the policy are read by [`DirResolver`], confined to the policy file's
//! directory; http(s) links are not fetched offline and fail naming the link.

use std::path::{Component, Path, PathBuf};

use crate::waf::policy::{self, LoadOptions};
use crate::waf::{FetchError, Resolver};

/// Most bytes read from one linked file.
const MAX_FILE: u64 = 16 << 20;

/// Reads `file://` links relative to a directory: `file://x.json` and `file:///x.json` are both
/// `<dir>/x.json` (the product reads `file:///` from its configuration directory).
pub struct DirResolver {
    pub dir: PathBuf,
}

impl Resolver for DirResolver {
    fn fetch(&self, _base: &str, link: &str) -> Result<Vec<u8>, FetchError> {
        let fail = |reason: String| FetchError {
            link: link.to_string(),
            reason,
        };
        let rel = if let Some(rest) = link.strip_prefix("file://") {
            rest.trim_start_matches('/')
        } else if link.starts_with("http://") || link.starts_with("https://") {
            return Err(fail(
                "remote links are not fetched by `policy check` (checked offline)".into(),
            ));
        } else if link.contains("://") {
            return Err(fail(
                "unsupported scheme (expected file, http or https)".into(),
            ));
        } else {
            link
        };
        let rel = Path::new(rel);
        if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
            return Err(fail("path leaves the policy directory".into()));
        }
        let path = self.dir.join(rel);
        let meta =
            std::fs::metadata(&path).map_err(|e| fail(format!("{}: {e}", path.display())))?;
        if meta.len() > MAX_FILE {
            return Err(fail(format!("larger than {MAX_FILE} bytes")));
        }
        std::fs::read(&path).map_err(|e| fail(format!("{}: {e}", path.display())))
    }
}

/// Runs the check; returns the report text and whether the policy is valid.
pub fn run(file: &Path, lenient: bool) -> (String, bool) {
    run_with(file, lenient, false)
}

/// [`run`], and with `urls` the URL table of the policy's OpenAPI spec (`policy check --urls`).
pub fn run_with(file: &Path, lenient: bool, urls: bool) -> (String, bool) {
    let doc = match std::fs::read(file) {
        Ok(d) => d,
        Err(e) => return (format!("{}: {e}", file.display()), false),
    };
    let dir = file
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let resolver = DirResolver { dir };
    let base = format!("file://{}", file.display());
    match policy::load_with(&doc, &base, &resolver, LoadOptions { lenient }) {
        Err(e) => (format!("{}: {e}", file.display()), false),
        Ok(l) => {
            let s = &l.summary;
            let mut out = format!(
                "{}: ok\n  name: {}\n  template: {}\n  enforcement mode: {}\n  urls: {}\n  parameters: {}\n  methods: {}\n  signature sets: {}\n  signatures enabled: {}\n",
                file.display(),
                s.name,
                s.template,
                s.mode,
                s.urls,
                s.parameters,
                s.methods,
                s.signature_sets,
                s.signatures_enabled
            );
            for w in &l.warnings {
                out.push_str(&format!("  warning: {w}\n"));
            }
            if urls {
                match l.policy.api() {
                    Some(api) => {
                        out.push_str(&api.url_table().to_string());
                        if !out.ends_with('\n') {
                            out.push('\n');
                        }
                    }
                    None => out.push_str("  (no open-api-files: no URL table)\n"),
                }
            }
            (out, true)
        }
    }
}
