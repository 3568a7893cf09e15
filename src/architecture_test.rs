//! The architecture, enforced: the table "Crates and who may depend on whom" in
//! docs/architecture.md is the only copy of the rules, and this test parses it.
//!
//! - Cargo enforces the crate graph (a crate can name only the crates its manifest lists), so the
//!   test checks that each crate's internal `[dependencies]` and `[dev-dependencies]` are exactly
//!   the crates its row lists: the table cannot drift from the manifests, and a new dependency
//!   between crates is a change to the table, reviewed as such.
//! - A crate's public surface is its root's `pub use` items and the public modules the table
//!   "Public modules" lists: any other `pub mod` fails, so a module is private (or `pub(crate)`)
//!   unless the doc says why other crates name items through it.
//! - Where a row narrows a dependency to some of its items (`portcullis_proxy::Topology`), or
//!   names a module of the root package (`portcullis::cli`, which Cargo cannot see), every path
//!   into the other crates in that code must start with an allowed item. Paths are followed
//!   through grouped `use` trees, so `use portcullis_proxy::{topology::X, events}` counts both.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

mod string_errors;

/// One thing a row allows: a whole crate (no items) or only the items under some paths.
#[derive(Debug, Default, Clone)]
struct Allow {
    items: Vec<Vec<String>>,
    whole: bool,
}

/// One row: a crate of the workspace, or a module of the root package.
#[derive(Debug)]
struct Row {
    /// `portcullis-engine`, or `portcullis::cli` for a module of the root package.
    name: String,
    /// The names the root package's lib gives the crate (`waf`), for rows of crates.
    modules: Vec<String>,
    /// Allowed dependencies by package name, for the code and, in addition, for its tests.
    code: BTreeMap<String, Allow>,
    tests: BTreeMap<String, Allow>,
}

impl Row {
    fn is_module(&self) -> bool {
        self.name.contains("::")
    }
}

/// The backticked entries of a table cell, `a::{b, c::d}` expanded into `a::b` and `a::c::d`.
fn ticked(cell: &str) -> Vec<Vec<String>> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .flat_map(|entry| expand(&tokens(entry)))
        .collect()
}

/// Splits Rust path text into identifiers and the punctuation that matters here.
fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_alphanumeric() || c == '_' || c == '-' {
            let mut id = c.to_string();
            while let Some(&n) = chars.peek() {
                if n.is_alphanumeric() || n == '_' || n == '-' {
                    id.push(n);
                    chars.next();
                } else {
                    break;
                }
            }
            out.push(id);
        } else if c == ':' && chars.peek() == Some(&':') {
            chars.next();
            out.push("::".into());
        } else if !c.is_whitespace() {
            out.push(c.to_string());
        }
    }
    out
}

/// The paths a token stream starting with a path names: `a::{b, c::{d, e}}` gives `a::b`,
/// `a::c::d`, `a::c::e` (`self` and `*` name their parent).
fn expand(toks: &[String]) -> Vec<Vec<String>> {
    fn path(toks: &[String], i: &mut usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
        let mut p = prefix;
        loop {
            match toks.get(*i).map(String::as_str) {
                Some("{") => {
                    *i += 1;
                    loop {
                        path(toks, i, p.clone(), out);
                        match toks.get(*i).map(String::as_str) {
                            Some(",") => *i += 1,
                            Some("}") => {
                                *i += 1;
                                break;
                            }
                            _ => break,
                        }
                        if toks.get(*i).map(String::as_str) == Some("}") {
                            *i += 1;
                            break;
                        }
                    }
                    return;
                }
                Some(id)
                    if id
                        .chars()
                        .all(|c| c.is_alphanumeric() || c == '_' || c == '-') =>
                {
                    if id != "self" {
                        p.push(id.to_string());
                    }
                    *i += 1;
                    if toks.get(*i).map(String::as_str) == Some("::") {
                        *i += 1;
                        continue;
                    }
                    // `as alias` ends the path.
                    if toks.get(*i).map(String::as_str) == Some("as") {
                        *i += 2;
                    }
                    out.push(p);
                    return;
                }
                Some("*") => {
                    *i += 1;
                    out.push(p);
                    return;
                }
                _ => {
                    out.push(p);
                    return;
                }
            }
        }
    }
    let mut out = Vec::new();
    let mut i = 0;
    path(toks, &mut i, Vec::new(), &mut out);
    out
}

/// Groups a cell's entries by package (`portcullis_proxy::Topology` → `portcullis-proxy`).
fn allows(cell: &str) -> BTreeMap<String, Allow> {
    let mut map: BTreeMap<String, Allow> = BTreeMap::new();
    for entry in ticked(cell) {
        let Some((krate, items)) = entry.split_first() else {
            continue;
        };
        let a = map.entry(krate.replace('_', "-")).or_default();
        if items.is_empty() {
            a.whole = true;
        } else {
            a.items.push(items.to_vec());
        }
    }
    map
}

/// The cells of each body row of the first table of `doc` whose header starts with `header`.
fn table<'a>(doc: &'a str, header: &[&str]) -> Vec<Vec<&'a str>> {
    let mut rows = Vec::new();
    let mut in_table = false;
    for line in doc.lines() {
        let line = line.trim();
        if !line.starts_with('|') {
            if in_table {
                break;
            }
            continue;
        }
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        if cells.len() >= header.len() && cells[..header.len()] == *header {
            in_table = true;
            continue;
        }
        if in_table && !cells[0].starts_with("---") {
            rows.push(cells);
        }
    }
    rows
}

/// The rows of the table whose header starts with `| crate | module | holds | depends on |`;
/// its fifth column lists what the crate's tests may use in addition.
fn parse_rules(doc: &str) -> Vec<Row> {
    table(doc, &["crate", "module", "holds", "depends on"])
        .into_iter()
        .map(|cells| Row {
            name: cells[0].split('`').nth(1).unwrap_or_default().to_string(),
            modules: ticked(cells[1]).into_iter().map(|p| p.join("::")).collect(),
            code: allows(cells[3]),
            tests: cells.get(4).map(|c| allows(c)).unwrap_or_default(),
        })
        .collect()
}

/// The internal (`portcullis-*`) entries of one section of a manifest.
fn manifest_deps(manifest: &str, section: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut inside = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            inside = line == section;
            continue;
        }
        if inside && line.starts_with("portcullis-") {
            let name = line.split(['.', ' ', '=']).next().unwrap_or_default();
            out.insert(name.to_string());
        }
    }
    out
}

/// Adds to `bad` each path of `text` into another crate that `allowed` does not cover.
fn check_paths(
    file: &Path,
    text: &str,
    aliases: &BTreeMap<String, String>,
    allowed: &BTreeMap<String, Allow>,
    bad: &mut Vec<String>,
) {
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or_default();
        let toks = tokens(code);
        let mut i = 0;
        while i < toks.len() {
            // `crate::` (in a module of the root package: `crate::waf::...`, `crate::{waf::x, y}`)
            // or a crate's own name.
            let start = ((toks[i] == "crate" || toks[i].starts_with("portcullis_"))
                && toks.get(i + 1).is_some_and(|t| t == "::"))
            .then_some(i);
            let Some(start) = start else {
                i += 1;
                continue;
            };
            // A grouped `use` tree can span lines: take the statement from here to its `;`.
            let rest: String = if code.matches('{').count() > code.matches('}').count() {
                text.lines()
                    .skip(n)
                    .map(|l| l.split("//").next().unwrap_or_default())
                    .collect::<Vec<_>>()
                    .join(" ")
            } else {
                code.to_string()
            };
            // The statement's tokens begin with this line's.
            let all = tokens(&rest);
            let from = &all[start..];
            let end = from.iter().position(|t| t == ";").unwrap_or(from.len());
            for mut path in expand(&from[..end]) {
                if path.first().is_some_and(|h| h == "crate") {
                    path.remove(0);
                    if !path.first().is_some_and(|h| aliases.contains_key(h)) {
                        continue;
                    }
                }
                let Some((head, items)) = path.split_first() else {
                    continue;
                };
                let krate = aliases
                    .get(head)
                    .cloned()
                    .unwrap_or_else(|| head.replace('_', "-"));
                let ok = allowed
                    .get(&krate)
                    .is_some_and(|a| a.whole || a.items.iter().any(|p| items.starts_with(p)));
                if !ok {
                    bad.push(format!(
                        "{}:{}: `{}` is not allowed here",
                        file.display(),
                        n + 1,
                        path.join("::")
                    ));
                }
            }
            i += 1;
        }
    }
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(sources(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn rules() -> Vec<Row> {
    let rows = parse_rules(&std::fs::read_to_string(root().join("docs/architecture.md")).unwrap());
    assert!(
        rows.iter().any(|r| r.name == "portcullis-engine"),
        "rules table not found: {rows:?}"
    );
    rows
}

/// The directory of a row's crate, from the workspace manifest's path dependencies.
fn crate_dir(name: &str) -> PathBuf {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let line = manifest
        .lines()
        .find(|l| l.starts_with(&format!("{name} = {{ path = ")))
        .unwrap_or_else(|| panic!("{name} is not in [workspace.dependencies]"));
    root().join(line.split('"').nth(1).unwrap())
}

#[test]
fn every_crate_has_a_row_and_depends_on_what_it_says() {
    let rows = rules();
    let mut seen = BTreeSet::new();
    let mut bad = Vec::new();
    for row in rows.iter().filter(|r| !r.is_module()) {
        let dir = if row.name == "portcullis" {
            root().to_path_buf()
        } else {
            crate_dir(&row.name)
        };
        seen.insert(dir.clone());
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        for (section, want) in [
            ("[dependencies]", &row.code),
            ("[dev-dependencies]", &row.tests),
        ] {
            let have = manifest_deps(&manifest, section);
            let want: BTreeSet<String> = want.keys().cloned().collect();
            if have != want {
                bad.push(format!(
                    "{}: {section} has {have:?}, its row in docs/architecture.md says {want:?}",
                    row.name
                ));
            }
        }
    }
    for e in std::fs::read_dir(root().join("crates")).unwrap().flatten() {
        if !seen.contains(&e.path()) {
            bad.push(format!(
                "{}: no row in docs/architecture.md",
                e.path().display()
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn paths_stay_within_the_items_a_row_allows() {
    let rows = rules();
    let aliases: BTreeMap<String, String> = rows
        .iter()
        .flat_map(|r| r.modules.iter().map(|m| (m.clone(), r.name.clone())))
        .collect();
    let mut bad = Vec::new();
    let mut checked = 0;
    for row in &rows {
        let narrowed = row
            .code
            .values()
            .chain(row.tests.values())
            .any(|a| !a.whole);
        if !row.is_module() && !narrowed {
            continue;
        }
        let dir = match row.name.split_once("::") {
            Some((_, module)) => root().join("src").join(module),
            None => crate_dir(&row.name).join("src"),
        };
        // What the row allows, its tests' entries included: a test-only file cannot be told
        // apart from its name, and the manifests already keep dev-dependencies out of the code.
        let mut allowed = row.code.clone();
        for (k, a) in &row.tests {
            let e = allowed.entry(k.clone()).or_default();
            e.whole |= a.whole;
            e.items.extend(a.items.iter().cloned());
        }
        // A module of the root package reaches the crates through the lib's names for them.
        let aliases = if row.is_module() {
            aliases.clone()
        } else {
            BTreeMap::new()
        };
        for file in sources(&dir) {
            let text = std::fs::read_to_string(&file).unwrap();
            let rel = file.strip_prefix(root()).unwrap_or(&file);
            check_paths(rel, &text, &aliases, &allowed, &mut bad);
            checked += 1;
        }
    }
    assert!(checked > 50, "too few files checked: {checked}");
    assert!(
        bad.is_empty(),
        "paths the architecture forbids:\n{}",
        bad.join("\n")
    );
}

/// The checker itself: grouped trees (on one line or several), `as` renames, paths in
/// expressions, and the lib's names for crates in a module of the root package.
#[test]
fn forbidden_paths_are_found_in_every_form() {
    let rows = parse_rules(
        "| crate | module | holds | depends on | its tests also use |\n| --- | --- | --- | --- | --- |\n| `portcullis-a` | `a` | | `portcullis_b::{x, y::z}` | |\n",
    );
    let allowed = &rows[0].code;
    let text = "use portcullis_b::{x::X, y::{z, w}};\nuse portcullis_b::{\n    x,\n    q as r,\n};\nfn f() { portcullis_b::y::z::g(); portcullis_c::h(); }\n";
    let mut bad = Vec::new();
    check_paths(Path::new("f.rs"), text, &BTreeMap::new(), allowed, &mut bad);
    assert_eq!(
        bad,
        [
            "f.rs:1: `portcullis_b::y::w` is not allowed here",
            "f.rs:2: `portcullis_b::q` is not allowed here",
            "f.rs:6: `portcullis_c::h` is not allowed here",
        ]
    );
    let aliases = BTreeMap::from([("b".to_string(), "portcullis-b".to_string())]);
    let mut bad = Vec::new();
    check_paths(
        Path::new("g.rs"),
        "use crate::b::x::Y;\nuse crate::b::v;\nuse crate::{b::x, b::u, cli::z};\n",
        &aliases,
        allowed,
        &mut bad,
    );
    assert_eq!(
        bad,
        [
            "g.rs:2: `b::v` is not allowed here",
            "g.rs:3: `b::u` is not allowed here"
        ]
    );
}

#[test]
fn a_manifest_lists_its_internal_dependencies() {
    let m = "[dependencies]\nportcullis-a.workspace = true\nserde.workspace = true\n\n[dev-dependencies]\nportcullis-b = { path = \"../b\" }\n";
    assert_eq!(
        manifest_deps(m, "[dependencies]"),
        BTreeSet::from(["portcullis-a".to_string()])
    );
    assert_eq!(
        manifest_deps(m, "[dev-dependencies]"),
        BTreeSet::from(["portcullis-b".to_string()])
    );
}

/// The table "Public modules" of docs/architecture.md: per package, its modules other crates may
/// name items through (`body` for `crates/support/src/body.rs`, `grpc::frame` below it). A
/// remark in parentheses names items as examples (`access` (`access::revoke`, …)), not modules,
/// so it allows nothing.
fn public_modules(doc: &str) -> BTreeMap<String, BTreeSet<String>> {
    table(doc, &["crate", "public modules"])
        .into_iter()
        .map(|cells| {
            let name = cells[0].split('`').nth(1).unwrap_or_default().to_string();
            let mods = ticked(&outside_parentheses(cells[1]))
                .into_iter()
                .map(|p| p.join("::"))
                .collect();
            (name, mods)
        })
        .collect()
}

/// `text` without what its parentheses enclose.
fn outside_parentheses(text: &str) -> String {
    let mut depth = 0usize;
    text.chars()
        .filter(|&c| match c {
            '(' => {
                depth += 1;
                false
            }
            ')' => {
                depth = depth.saturating_sub(1);
                false
            }
            _ => depth == 0,
        })
        .collect()
}

/// The `pub mod` declarations under `src` (a crate's source directory), as module paths from its
/// root, each with the file and line that declares it.
fn declared_public_modules(src: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for file in sources(src) {
        let rel = file.strip_prefix(src).unwrap();
        let mut parent: Vec<String> = rel
            .with_extension("")
            .iter()
            .map(|c| c.to_string_lossy().into_owned())
            .collect();
        if parent
            .last()
            .is_some_and(|l| ["lib", "main", "mod"].contains(&l.as_str()))
        {
            parent.pop();
        }
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let Some(rest) = line.trim_start().strip_prefix("pub mod ") else {
                continue;
            };
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let mut path = parent.clone();
            path.push(name);
            let at = file.strip_prefix(root()).unwrap_or(&file).display();
            out.push((path.join("::"), format!("{at}:{}", n + 1)));
        }
    }
    out
}

#[test]
fn public_modules_are_the_ones_the_doc_lists() {
    let doc = std::fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let listed = public_modules(&doc);
    assert!(
        listed.contains_key("portcullis-engine"),
        "table \"Public modules\" not found: {listed:?}"
    );
    let mut bad = Vec::new();
    for row in rules().iter().filter(|r| !r.is_module()) {
        let src = if row.name == "portcullis" {
            root().join("src")
        } else {
            crate_dir(&row.name).join("src")
        };
        let allowed = listed.get(&row.name).cloned().unwrap_or_default();
        for (module, at) in declared_public_modules(&src) {
            if !allowed.contains(&module) {
                bad.push(format!(
                    "{at}: `pub mod {module}` in {}: make it private and `pub use` what other crates need, or list it in docs/architecture.md \"Public modules\"",
                    row.name
                ));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn a_public_module_is_found_with_its_path() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("grpc")).unwrap();
    std::fs::write(dir.join("lib.rs"), "pub mod grpc;\nmod engine;\n").unwrap();
    std::fs::write(
        dir.join("grpc/mod.rs"),
        "pub mod frame;\npub(crate) mod walk;\n",
    )
    .unwrap();
    let mut found = declared_public_modules(dir)
        .into_iter()
        .map(|(m, _)| m)
        .collect::<Vec<_>>();
    found.sort();
    assert_eq!(found, ["grpc", "grpc::frame"]);
    let listed = public_modules(
        "| crate | public modules |\n| --- | --- |\n| `portcullis-a` | `grpc` (`grpc::encode`), `grpc::frame` |\n",
    );
    assert_eq!(
        listed["portcullis-a"],
        BTreeSet::from(["grpc".to_string(), "grpc::frame".to_string()])
    );
}
