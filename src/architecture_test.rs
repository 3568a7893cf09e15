//! The architecture, enforced: every `crate::` path in `src/` (in `use` trees, grouped or not,
//! in types and expressions, and in macro arguments) is resolved to the item it names, and an
//! import from one top-level module into another must be allowed by the table "Modules and who
//! may import whom" in docs/architecture.md. The table is the only copy of the rules: this test
//! parses it. A failure names the file, the line, the path and the rule it breaks.
//!
//! Sources are parsed with `syn` rather than matched with patterns, so that `use
//! crate::{a::b, c}`, `super::super::x` and paths inside expressions count the same as a plain
//! `use` line. Modules are found by following `mod` declarations from `lib.rs`, so a module's
//! `#[cfg(test)]` code (unit tests, test-only files) is known as such and checked against the
//! table's test column.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

/// What one top-level module may import: path prefixes, for its code and for its tests.
#[derive(Debug, Default)]
struct Rule {
    code: Vec<Vec<String>>,
    tests: Vec<Vec<String>>,
}

/// One path from one module into another.
#[derive(Debug)]
struct Import {
    file: PathBuf,
    line: usize,
    /// The module the path is written in, from the crate root.
    from: Vec<String>,
    /// The item it names, from the crate root.
    to: Vec<String>,
    in_test: bool,
}

/// Parses the rules table: the first markdown table whose header starts with
/// `| module | holds | may import |`; its fourth column lists what the module's tests may also import.
fn parse_rules(doc: &str) -> BTreeMap<String, Rule> {
    let mut rules = BTreeMap::new();
    let mut in_table = false;
    for line in doc.lines() {
        let cells: Vec<&str> = line
            .trim()
            .trim_matches('|')
            .split('|')
            .map(str::trim)
            .collect();
        if !line.trim_start().starts_with('|') {
            if in_table {
                break;
            }
            continue;
        }
        if cells.len() >= 3 && cells[..3] == ["module", "holds", "may import"] {
            in_table = true;
            continue;
        }
        if !in_table || cells[0].starts_with("---") {
            continue;
        }
        let code = ticked(cells[2]);
        let tests = cells.get(3).map(|c| ticked(c)).unwrap_or_default();
        for module in ticked(cells[0]) {
            let rule = Rule {
                code: code.clone(),
                tests: tests.clone(),
            };
            rules.insert(module.join("::"), rule);
        }
    }
    rules
}

/// The backticked paths of a table cell, `a::{b, c}` expanded into `a::b` and `a::c`.
fn ticked(cell: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for (i, part) in cell.split('`').enumerate() {
        if i % 2 == 0 {
            continue;
        }
        let (head, group) = match part.split_once('{') {
            Some((h, g)) => (h, g.trim_end_matches('}')),
            None => (part, ""),
        };
        let head: Vec<String> = head
            .split("::")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect();
        if group.is_empty() {
            out.push(head);
        } else {
            for leaf in group.split(',') {
                let mut p = head.clone();
                p.extend(leaf.split("::").map(|s| s.trim().to_string()));
                out.push(p);
            }
        }
    }
    out
}

/// Walks one file's items, collecting the paths that leave the crate root's `from` module.
struct Walker<'a> {
    file: PathBuf,
    /// The directory holding this file's out-of-line child modules.
    child_dir: PathBuf,
    module: Vec<String>,
    in_test: bool,
    out: &'a mut Vec<Import>,
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.meta.require_list().is_ok_and(|l| {
                let t = l.tokens.to_string();
                t.split(|c: char| !c.is_alphanumeric() && c != '_')
                    .any(|w| w == "test")
                    && !t.contains("not")
            })
    })
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Trait(i) => &i.attrs,
        syn::Item::Type(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

impl Walker<'_> {
    /// Records `segs` (as written, `crate`/`self`/`super` first) if it names an item of another
    /// top-level module.
    fn record(&mut self, segs: &[String], line: usize) {
        let mut to: Vec<String> = match segs.first().map(String::as_str) {
            Some("crate") => Vec::new(),
            Some("self") => self.module.clone(),
            Some("super") => self.module.clone(),
            _ => return,
        };
        let mut rest = &segs[1..];
        if segs[0] == "super" {
            to.pop();
            while rest.first().is_some_and(|s| s == "super") {
                to.pop();
                rest = &rest[1..];
            }
        }
        to.extend(rest.iter().filter(|s| *s != "self" && *s != "*").cloned());
        // The crate root only declares modules; within one top-level module anything goes.
        if to.is_empty() || self.module.is_empty() || to.first() == self.module.first() {
            return;
        }
        self.out.push(Import {
            file: self.file.clone(),
            line,
            from: self.module.clone(),
            to,
            in_test: self.in_test,
        });
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => self.use_leaf(prefix, &n.ident),
            syn::UseTree::Rename(r) => self.use_leaf(prefix, &r.ident),
            syn::UseTree::Glob(g) => {
                let line = g.star_token.spans[0].start().line;
                let segs = prefix.clone();
                if !segs.is_empty() {
                    self.record(&segs, line);
                }
            }
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(prefix, t);
                }
            }
        }
    }

    fn use_leaf(&mut self, prefix: &[String], ident: &syn::Ident) {
        let mut segs = prefix.to_vec();
        segs.push(ident.to_string());
        self.record(&segs, ident.span().start().line);
    }

    /// `crate :: a :: b` (and `super ::`, `self ::`) sequences in a macro's tokens.
    fn tokens(&mut self, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < trees.len() {
            if let TokenTree::Group(g) = &trees[i] {
                self.tokens(g.stream());
                i += 1;
                continue;
            }
            let starts = matches!(&trees[i], TokenTree::Ident(id)
                if id == "crate" || id == "super" || id == "self")
                && !matches!(i.checked_sub(1).map(|p| &trees[p]), Some(TokenTree::Punct(p)) if p.as_char() == '$' || p.as_char() == ':' || p.as_char() == '.');
            if !starts {
                i += 1;
                continue;
            }
            let line = trees[i].span().start().line;
            let mut segs = vec![trees[i].to_string()];
            let mut j = i + 1;
            loop {
                let colons = matches!((&trees.get(j), &trees.get(j + 1)),
                    (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b))) if a.as_char() == ':' && b.as_char() == ':');
                match (colons, trees.get(j + 2)) {
                    (true, Some(TokenTree::Ident(id))) => {
                        segs.push(id.to_string());
                        j += 3;
                    }
                    _ => break,
                }
            }
            if segs.len() > 1 {
                self.record(&segs, line);
            }
            i = j;
        }
    }

    /// Follows `mod name;` to its file (`#[path]` honoured) and walks it.
    fn out_of_line(&mut self, m: &syn::ItemMod) {
        let name = m.ident.to_string();
        let explicit = m.attrs.iter().find_map(|a| {
            let syn::Meta::NameValue(nv) = &a.meta else {
                return None;
            };
            if !nv.path.is_ident("path") {
                return None;
            }
            match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value()),
                _ => None,
            }
        });
        let file = match explicit {
            Some(p) => self.file.parent().unwrap_or(Path::new("")).join(p),
            None => {
                let flat = self.child_dir.join(format!("{name}.rs"));
                if flat.exists() {
                    flat
                } else {
                    self.child_dir.join(&name).join("mod.rs")
                }
            }
        };
        let child_dir = match file.file_name().and_then(|f| f.to_str()) {
            Some("mod.rs") => file.parent().unwrap_or(Path::new("")).to_path_buf(),
            _ => file.with_extension(""),
        };
        walk_file(
            &file,
            child_dir,
            self.module.clone(),
            self.in_test,
            self.out,
        );
    }
}

impl<'ast> Visit<'ast> for Walker<'_> {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let was = self.in_test;
        self.in_test |= is_cfg_test(item_attrs(item));
        syn::visit::visit_item(self, item);
        self.in_test = was;
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        let name = m.ident.to_string();
        self.module.push(name.clone());
        match &m.content {
            Some((_, items)) => {
                let dir = self.child_dir.clone();
                self.child_dir = dir.join(&name);
                for item in items {
                    self.visit_item(item);
                }
                self.child_dir = dir;
            }
            None => self.out_of_line(m),
        }
        self.module.pop();
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &u.tree);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        if let Some(first) = path.segments.first() {
            self.record(&segs, first.ident.span().start().line);
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.tokens(mac.tokens.clone());
        syn::visit::visit_macro(self, mac);
    }
}

fn walk_file(
    file: &Path,
    child_dir: PathBuf,
    module: Vec<String>,
    in_test: bool,
    out: &mut Vec<Import>,
) {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let mut w = Walker {
        file: file.to_path_buf(),
        child_dir,
        module,
        in_test,
        out,
    };
    for item in &ast.items {
        w.visit_item(item);
    }
}

/// The imports of the crate whose root file is `lib`.
fn imports_of(lib: &Path) -> Vec<Import> {
    let mut out = Vec::new();
    let dir = lib.parent().unwrap_or(Path::new("")).to_path_buf();
    walk_file(lib, dir, Vec::new(), false, &mut out);
    out
}

/// The imports the rules forbid, one message each.
fn violations(imports: &[Import], rules: &BTreeMap<String, Rule>, root: &Path) -> Vec<String> {
    let mut bad = Vec::new();
    for i in imports {
        let from = &i.from[0];
        let Some(rule) = rules.get(from) else {
            bad.push(format!(
                "{}:{}: module `{from}` has no row in the table of docs/architecture.md",
                i.file.strip_prefix(root).unwrap_or(&i.file).display(),
                i.line
            ));
            continue;
        };
        let allowed = |list: &Vec<Vec<String>>| list.iter().any(|p| i.to.starts_with(p));
        if allowed(&rule.code) || (i.in_test && allowed(&rule.tests)) {
            continue;
        }
        let show = |list: &Vec<Vec<String>>| {
            let v: Vec<String> = list.iter().map(|p| p.join("::")).collect();
            if v.is_empty() {
                "nothing internal".to_string()
            } else {
                v.join(", ")
            }
        };
        let tests = if i.in_test && !rule.tests.is_empty() {
            format!("; its tests also: {}", show(&rule.tests))
        } else {
            String::new()
        };
        bad.push(format!(
            "{}:{}: `{from}` may not import `crate::{}` (it may import: {}{tests})",
            i.file.strip_prefix(root).unwrap_or(&i.file).display(),
            i.line,
            i.to.join("::"),
            show(&rule.code),
        ));
    }
    bad
}

#[test]
fn imports_follow_the_architecture_table() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let rules = parse_rules(&doc);
    assert!(
        rules.contains_key("waf") && rules.contains_key("admin"),
        "rules table not found: {rules:?}"
    );
    let imports = imports_of(&root.join("src/lib.rs"));
    assert!(
        imports.len() > 100,
        "too few imports found: {}",
        imports.len()
    );
    let bad = violations(&imports, &rules, root);
    assert!(
        bad.is_empty(),
        "imports the architecture forbids:\n{}",
        bad.join("\n")
    );
}

#[test]
fn every_top_level_module_has_a_row() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let rules = parse_rules(&std::fs::read_to_string(root.join("docs/architecture.md")).unwrap());
    let lib = syn::parse_file(&std::fs::read_to_string(root.join("src/lib.rs")).unwrap()).unwrap();
    for item in lib.items {
        if let syn::Item::Mod(m) = item
            && !is_cfg_test(&m.attrs)
        {
            assert!(
                rules.contains_key(&m.ident.to_string()),
                "no row for `{}`",
                m.ident
            );
        }
    }
}

/// The checker itself: grouped `use`, `super` chains, expression and macro paths all count, and
/// a module's tests are held to the test column.
#[test]
fn forbidden_paths_are_found_in_every_form() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    std::fs::create_dir_all(dir.join("b")).unwrap();
    std::fs::write(dir.join("lib.rs"), "mod a; mod b; mod c;\n").unwrap();
    std::fs::write(
        dir.join("a.rs"),
        "use crate::{b::x, c::{y, z}};\nfn f() { crate::b::g(); let _ = format!(\"{}\", crate::c::K); }\nmod inner { use super::super::b::w; }\n#[cfg(test)]\nmod tests { use crate::c::t; }\n",
    )
    .unwrap();
    std::fs::write(dir.join("b/mod.rs"), "pub fn g() { crate::a::h() }\n").unwrap();
    std::fs::write(dir.join("c.rs"), "").unwrap();
    let rules = parse_rules(
        "| module | holds | may import | its tests may also import |\n| --- | --- | --- | --- |\n| `a` | | `b` | `c::t` |\n| `b`, `c` | | nothing internal | |\n",
    );
    let bad = violations(&imports_of(&dir.join("lib.rs")), &rules, &dir);
    let lines: Vec<&str> = bad.iter().map(|m| m.split(": ").next().unwrap()).collect();
    assert_eq!(
        lines,
        ["a.rs:1", "a.rs:1", "a.rs:2", "b/mod.rs:1"],
        "{bad:#?}"
    );
    assert!(
        bad[0].contains("`a` may not import `crate::c::y` (it may import: b)"),
        "{}",
        bad[0]
    );
    assert!(bad[3].contains("`b` may not import `crate::a::h` (it may import: nothing internal)"));
}
