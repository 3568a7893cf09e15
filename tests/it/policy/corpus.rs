//! Real-world policies from `../shared/policy-corpus/` (by path; skipped when absent): every valid
//! document compiles or fails naming its unreachable link; schema-fail documents never panic;
//! invalid documents get the outcome `invalid/INVALID.tsv` expects.

use std::path::{Path, PathBuf};

use portcullis::cli;
use portcullis::waf::policy::{self, LoadOptions};

fn corpus() -> Option<PathBuf> {
    // `shared/` sits beside the checkout (CI, developers) or one level up (worktrees).
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    ["../shared/policy-corpus", "../../shared/policy-corpus"]
        .into_iter()
        .map(|rel| root.join(rel))
        .find(|p| p.join("README.md").exists())
}

fn check(file: &Path) -> Result<Vec<String>, String> {
    let doc = std::fs::read(file).map_err(|e| e.to_string())?;
    let resolver =
        cli::offline_resolver_in_dir(file.parent().map(Path::to_path_buf).unwrap_or_default());
    policy::load_with(
        &doc,
        &file.to_string_lossy(),
        &resolver,
        LoadOptions::default(),
    )
    .map(|l| l.warnings)
    .map_err(|e| e.to_string())
}

fn listing(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.retain(|p| p.extension().is_some_and(|e| e == "json" || e == "yaml"));
    v.sort();
    v
}

#[test]
fn valid_policies_compile_or_name_the_missing_link() {
    let Some(root) = corpus() else {
        eprintln!("policy corpus absent: skipped");
        return;
    };
    let files = listing(&root.join("valid"));
    assert!(files.len() > 100);
    let mut bad = Vec::new();
    let mut ok = 0;
    for f in &files {
        match check(f) {
            Ok(_) => ok += 1,
            Err(e)
                if e.contains("cannot read ")
                    && (e.contains("file://") || e.contains("http") || e.contains("IDL file")) => {}
            Err(e) => bad.push(format!("{}: {e}", f.display())),
        }
    }
    assert!(
        bad.is_empty(),
        "valid policies rejected:\n{}",
        bad.join("\n")
    );
    assert!(ok >= 150, "only {ok} valid policies compiled");
}

#[test]
fn schema_fail_policies_are_decided_without_panics() {
    let Some(root) = corpus() else { return };
    for f in listing(&root.join("schema-fail")) {
        if let Err(e) = check(&f) {
            assert!(
                e.starts_with("policy") || e.contains("cannot read"),
                "{}: unclear error {e}",
                f.display()
            );
        }
    }
}

#[test]
fn invalid_policies_match_the_expectations() {
    let Some(root) = corpus() else { return };
    let tsv = std::fs::read_to_string(root.join("invalid/INVALID.tsv")).expect("INVALID.tsv");
    let mut failures = Vec::new();
    for line in tsv.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        let (Some(file), Some(expect)) = (cols.first(), cols.get(8)) else {
            continue;
        };
        let result = check(&root.join(file));
        let ok = if expect.starts_with("ACCEPT") {
            result.is_ok()
        } else if expect.starts_with("REJECT or WARN") {
            match &result {
                Err(_) => true,
                Ok(w) => w.iter().any(|w| w.contains("modificationReference")),
            }
        } else {
            result.is_err()
        };
        if !ok {
            failures.push(format!("{file}: expected {expect}, got {result:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn errors_name_line_and_column_for_truncated_json() {
    let e = policy::load(
        b"{\"policy\": {\"name\": \"p\",",
        "p.json",
        &portcullis::waf::NoResolver,
    )
    .err()
    .map(|e| e.to_string())
    .unwrap_or_default();
    assert!(
        e.contains("line 1 column") && e.contains("truncated"),
        "{e}"
    );
}
