//! `portcullis policy check FILE`: validate and compile a declarative policy offline, like
//! `nginx -t`. File links inside the policy are read exactly as the command it is checked for
//! reads them (`--for proxy`, the default, or `--for controller`; see `support::links`), so a
//! policy that passes the check loads the same files there; http(s) links are not fetched
//! offline and fail naming the link.

use std::path::{Path, PathBuf};

use crate::support::links::{Confinement, DOWNLOADS, FileLinks, LinkResolver, Remote};
use crate::waf::policy::{self, LoadOptions};

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

/// Why a remote link fails the check.
const OFFLINE: &str = "remote links are not fetched by `policy check` (checked offline)";

/// The offline resolver: file links through `links`, remote links refused (the check runs
/// offline).
pub fn offline(links: FileLinks) -> LinkResolver {
    LinkResolver::new(links, Remote::Refuse(OFFLINE), MAX_FILE)
}

/// The offline resolver of links read the proxy's way, relative to `dir`.
pub fn offline_in_dir(dir: PathBuf) -> LinkResolver {
    offline(FileLinks {
        dir,
        confinement: Confinement::Open,
    })
}

/// The resolver and base link `file` is loaded with when checked for `target`.
pub fn resolver_for(file: &Path, target: CheckFor) -> (LinkResolver, String) {
    match target {
        CheckFor::Proxy => (
            offline(FileLinks::beside(file)),
            crate::proxy::policy_base_link(file),
        ),
        CheckFor::Controller => {
            let links = FileLinks::beside(file);
            let name = file
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            (
                offline(FileLinks::within(
                    links.dir.clone(),
                    links.dir,
                    "the policy's directory",
                )),
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
