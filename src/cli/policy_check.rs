//! `portcullis policy check FILE`: validate and compile a declarative policy offline, like
//! `nginx -t`. File links inside the policy are read exactly as the command it is checked for
//! reads them (`--for proxy`, the default, or `--for controller`; see `support::links`), so a
//! policy that passes the check loads the same files there; http(s) links are not fetched
//! offline and fail naming the link.

use std::path::{Path, PathBuf};

use crate::support::links::{self, Confinement, DOWNLOADS, FileLinks};
use crate::waf::policy::{self, LoadOptions};
use crate::waf::{FetchError, Resolver};

/// Most bytes read from one linked file (the proxy's and the controller's default bound).
const MAX_FILE: u64 = 16 << 20;

/// Which command the policy is checked for: it decides how far file links may reach.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum CheckFor {
    /// `portcullis proxy --policy FILE`: links relative to the policy's directory, absolute
    /// paths and `..` allowed.
    #[default]
    Proxy,
    /// A controller importing the policy from its downloads directory: the policy's directory
    /// stands for it, and links may not leave it.
    Controller,
}

/// What `policy check` was asked.
#[derive(Clone, Copy, Debug, Default)]
pub struct CheckOptions {
    /// Accept a bare policy object without the `policy` wrapper.
    pub lenient: bool,
    /// Also print the URL table of the policy's OpenAPI spec.
    pub urls: bool,
    pub target: CheckFor,
}

/// Reads file links through [`FileLinks`]; refuses remote links (the check runs offline).
pub struct OfflineResolver {
    pub links: FileLinks,
}

impl OfflineResolver {
    /// Links read the proxy's way, relative to `dir`.
    pub fn in_dir(dir: PathBuf) -> OfflineResolver {
        OfflineResolver {
            links: FileLinks {
                dir,
                confinement: Confinement::Open,
            },
        }
    }
}

impl Resolver for OfflineResolver {
    fn fetch(&self, base: &str, link: &str) -> Result<Vec<u8>, FetchError> {
        let fail = |reason: String| FetchError {
            link: link.to_string(),
            reason,
        };
        let url = links::join(base, link);
        let lower = url.to_ascii_lowercase();
        if lower.starts_with("http://") || lower.starts_with("https://") {
            return Err(fail(
                "remote links are not fetched by `policy check` (checked offline)".into(),
            ));
        }
        if url.contains("://") && !lower.starts_with("file://") {
            return Err(fail(
                "unsupported scheme (expected file, http or https)".into(),
            ));
        }
        self.links.read(&url, MAX_FILE).map_err(fail)
    }
}

/// The resolver and base link `file` is loaded with when checked for `target`.
pub fn resolver_for(file: &Path, target: CheckFor) -> (OfflineResolver, String) {
    match target {
        CheckFor::Proxy => (
            OfflineResolver {
                links: FileLinks::beside(file),
            },
            crate::proxy::resolver::FsResolver::base_link(file),
        ),
        CheckFor::Controller => {
            let links = FileLinks::beside(file);
            let name = file
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            (
                OfflineResolver {
                    links: FileLinks::within(
                        links.dir.clone(),
                        links.dir,
                        "the policy's directory",
                    ),
                },
                format!("file://{DOWNLOADS}{name}"),
            )
        }
    }
}

/// Runs the check for the proxy; returns the report text and whether the policy is valid.
pub fn run(file: &Path, lenient: bool) -> (String, bool) {
    run_with(
        file,
        CheckOptions {
            lenient,
            ..CheckOptions::default()
        },
    )
}

/// Runs the check; returns the report text (a summary, or the error naming the JSON path) and
/// whether the policy is valid.
pub fn run_with(file: &Path, opts: CheckOptions) -> (String, bool) {
    let doc = match std::fs::read(file) {
        Ok(d) => d,
        Err(e) => return (format!("{}: {e}", file.display()), false),
    };
    let (resolver, base) = resolver_for(file, opts.target);
    let loaded = policy::load_with(
        &doc,
        &base,
        &resolver,
        LoadOptions {
            lenient: opts.lenient,
        },
    );
    match loaded {
        Err(e) => (format!("{}: {e}", file.display()), false),
        Ok(l) => {
            let s = &l.summary;
            let urls = if l.policy.api().is_some() {
                format!(
                    "{} ({} in the policy, {} operations of the OpenAPI spec)",
                    s.urls,
                    s.urls - s.api_operations,
                    s.api_operations
                )
            } else {
                s.urls.to_string()
            };
            let mut out = format!(
                "{}: ok\n  name: {}\n  template: {}\n  enforcement mode: {}\n  urls: {}\n  parameters: {}\n  methods: {}\n  signature sets: {}\n  signatures enabled: {}\n",
                file.display(),
                s.name,
                s.template,
                s.mode,
                urls,
                s.parameters,
                s.methods,
                s.signature_sets,
                s.signatures_enabled
            );
            for w in &l.warnings {
                out.push_str(&format!("  warning: {w}\n"));
            }
            if opts.urls {
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
