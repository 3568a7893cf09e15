//! The ban on `Result<_, String>` in public functions: no public function of any crate returns a
//! `String` error, directly or through a type alias of one.
//!
//! An error that crosses a module or crate boundary is a type its callers can match on
//! (`thiserror`), turned into text once per surface (the admin API's error object, `policy
//! check`'s report, what a command prints before it exits); a `String` error is for a function
//! private to its module.

use std::collections::BTreeSet;
use std::path::PathBuf;

use super::{root, sources};

/// The error type `E` of a type written `Result<T, E>` or `std::result::Result<T, E>`; `String`
/// for a type named by one of `string_aliases` (aliases of `Result<_, String>`); `None` for any
/// other type, including one-parameter results such as `io::Result<T>`.
fn error_type(ty: &str, string_aliases: &BTreeSet<String>) -> Option<String> {
    let ty = ty.trim_start();
    let ty = ty.strip_prefix("std::result::").unwrap_or(ty);
    let Some(args) = ty.strip_prefix("Result<") else {
        let name_end = ty
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(ty.len());
        return string_aliases
            .contains(&ty[..name_end])
            .then(|| "String".to_string());
    };
    let (mut depth, mut comma) = (0usize, None);
    for (i, c) in args.char_indices() {
        match c {
            '<' | '(' | '[' => depth += 1,
            ')' | ']' => depth = depth.saturating_sub(1),
            '>' if depth == 0 => return comma.map(|j: usize| args[j + 1..i].trim().to_string()),
            '>' => depth -= 1,
            ',' if depth == 0 => comma = Some(i),
            _ => {}
        }
    }
    None
}

/// The error type of a function signature's `Result` return type (see [`error_type`]). The return
/// type is what follows the parameter list, so a closure parameter's `-> T` is not taken for it.
fn result_error(signature: &str, string_aliases: &BTreeSet<String>) -> Option<String> {
    let open = signature.find('(')?;
    let mut depth = 0usize;
    let close = signature[open..].char_indices().find_map(|(i, c)| {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        (depth == 0).then_some(open + i)
    })?;
    let ret = signature[close + 1..].trim_start().strip_prefix("->")?;
    error_type(ret, string_aliases)
}

/// The names of the type aliases of `Result<_, String>` a source file defines.
fn string_result_aliases(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let Some((_, rest)) = line.split_once("type ") else {
            continue;
        };
        if !line.trim_start().starts_with("type ") && !line.trim_start().starts_with("pub") {
            continue;
        }
        let Some((name, ty)) = rest.split_once('=') else {
            continue;
        };
        let name = name.split('<').next().unwrap_or(name).trim();
        if error_type(ty, &BTreeSet::new()).as_deref() == Some("String") {
            out.insert(name.to_string());
        }
    }
    out
}

/// `pub fn` signatures (joined onto one line) of a source file, with their line numbers.
fn public_signatures(text: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        if !(t.starts_with("pub fn ") || t.starts_with("pub async fn ")) {
            continue;
        }
        let mut sig = String::new();
        for l in &lines[i..] {
            sig.push_str(l.trim());
            sig.push(' ');
            if l.contains('{') || l.trim_end().ends_with(';') {
                break;
            }
        }
        out.push((i + 1, sig));
    }
    out
}

#[test]
fn public_functions_return_typed_errors() {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root().join("crates"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("src").is_dir())
        .collect();
    dirs.push(root().to_path_buf());
    dirs.sort();
    let mut found = Vec::new();
    for dir in dirs {
        let texts: Vec<(PathBuf, String)> = sources(&dir.join("src"))
            .into_iter()
            .map(|f| {
                let text = std::fs::read_to_string(&f).unwrap();
                (f, text)
            })
            .collect();
        let aliases: BTreeSet<String> = texts
            .iter()
            .flat_map(|(_, t)| string_result_aliases(t))
            .collect();
        for (file, text) in &texts {
            for (line, sig) in public_signatures(text) {
                if result_error(&sig, &aliases).as_deref() == Some("String") {
                    let at = file.strip_prefix(root()).unwrap().display().to_string();
                    let name = sig.split('(').next().unwrap_or(&sig).trim();
                    found.push(format!("{at}:{line}: {name}"));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "public functions return Result<_, String>; give each an error type its callers can \
         match on (or make it private to its module):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_error_type_of_a_result_is_found_in_every_form() {
    let aliases = string_result_aliases(
        "pub type Outcome = Result<Map<String, Value>, String>;\n\
         type Res<T> = std::result::Result<T, String>;\n\
         pub type Typed = Result<(), PolicyError>;\n",
    );
    assert_eq!(
        aliases,
        BTreeSet::from(["Outcome".to_string(), "Res".to_string()])
    );
    let e = |s: &str| result_error(s, &aliases);
    assert_eq!(
        e("pub fn f() -> Result<(), String> {").as_deref(),
        Some("String")
    );
    assert_eq!(
        e("pub fn f() -> Result<(Vec<u8>, HashMap<String, String>), String> {").as_deref(),
        Some("String")
    );
    assert_eq!(
        e("pub fn f() -> std::result::Result<u8, String> {").as_deref(),
        Some("String")
    );
    assert_eq!(
        e("pub fn f() -> Result<Vec<String>, PolicyError> {").as_deref(),
        Some("PolicyError")
    );
    assert_eq!(
        e("pub fn f(g: impl Fn() -> Result<(), String>) -> u8 {"),
        None
    );
    assert_eq!(
        e("pub fn f(x: (u8, u8)) -> Outcome {").as_deref(),
        Some("String")
    );
    assert_eq!(e("pub fn f() -> Res<u8> {").as_deref(), Some("String"));
    assert_eq!(e("pub fn f() -> Typed {"), None);
    assert_eq!(e("pub fn f() -> OutcomeKind {"), None);
    assert_eq!(e("pub fn f() -> MgmtResult<String> {"), None);
    assert_eq!(e("pub fn f() -> io::Result<String> {"), None);
    assert_eq!(e("pub fn f(x: u8) {"), None);
}
