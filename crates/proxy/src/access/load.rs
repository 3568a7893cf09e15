//! Loads an access profile file (JSON or YAML) for `portcullis proxy --access FILE`:
//! `jwksFile` entries are read (relative to the file's directory, at most 256 KiB) and put inline
//! as `jwks` before the pure validation in `waf::access::config`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use portcullis_support::redact_url;

use portcullis_engine::access::{AccessError, AccessProfile, from_value};
use portcullis_engine::policy::SyntaxError;

const MAX_JWKS_FILE: u64 = 256 << 10;

/// Why an access profile file cannot be used; `Display` names the file and the field, and is
/// what `access check` and `proxy --access` print.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{}: {source}", .path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {source}", .path.display())]
    Syntax { path: PathBuf, source: SyntaxError },
    /// A method's `jwt.jwksFile` cannot be used (the method's name, the file it names, why).
    #[error("{}: methods.{method}.jwt.jwksFile: {problem}", .path.display())]
    JwksFile {
        path: PathBuf,
        method: String,
        problem: JwksFileProblem,
    },
    #[error("{}: {source}", .path.display())]
    Profile { path: PathBuf, source: AccessError },
}

/// What is wrong with a `jwksFile` entry or the file it names.
#[derive(Debug, thiserror::Error)]
pub enum JwksFileProblem {
    #[error("must be a string")]
    NotAString,
    #[error("give jwks or jwksFile, not both")]
    Both,
    #[error("{}: {source}", .file.display())]
    Read {
        file: PathBuf,
        source: std::io::Error,
    },
    #[error("{} is larger than {MAX_JWKS_FILE} bytes", .file.display())]
    TooLarge { file: PathBuf },
    #[error("{}: not JSON: {source}", .file.display())]
    NotJson {
        file: PathBuf,
        source: serde_json::Error,
    },
}

/// Reads, resolves and validates the profile at `path`; the error names the file and the field.
pub fn load_file(path: &Path) -> Result<AccessProfile, LoadError> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| LoadError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let mut doc = portcullis_engine::policy::parse_document(&bytes, &name).map_err(|source| {
        LoadError::Syntax {
            path: path.to_path_buf(),
            source,
        }
    })?;
    let dir = path.parent().unwrap_or(Path::new("."));
    if let Some(Value::Object(methods)) = doc.get_mut("methods") {
        for (mname, m) in methods.iter_mut() {
            let Some(Value::Object(j)) = m.get_mut("jwt") else {
                continue;
            };
            let Some(file) = j.remove("jwksFile") else {
                continue;
            };
            let jwks = jwks_file(dir, file, j.contains_key("jwks")).map_err(|problem| {
                LoadError::JwksFile {
                    path: path.to_path_buf(),
                    method: mname.clone(),
                    problem,
                }
            })?;
            j.insert("jwks".into(), jwks);
        }
    }
    from_value(&doc, &name).map_err(|source| LoadError::Profile {
        path: path.to_path_buf(),
        source,
    })
}

/// The JWKS document a `jwksFile` entry names, relative to the profile's directory `dir`.
fn jwks_file(dir: &Path, file: Value, has_jwks: bool) -> Result<Value, JwksFileProblem> {
    let Value::String(file) = file else {
        return Err(JwksFileProblem::NotAString);
    };
    if has_jwks {
        return Err(JwksFileProblem::Both);
    }
    let file = dir.join(&file);
    let read = |source| JwksFileProblem::Read {
        file: file.clone(),
        source,
    };
    let size = std::fs::metadata(&file).map_err(read)?.len();
    if size > MAX_JWKS_FILE {
        return Err(JwksFileProblem::TooLarge { file });
    }
    let text = std::fs::read(&file).map_err(read)?;
    serde_json::from_slice(&text).map_err(|source| JwksFileProblem::NotJson { file, source })
}

/// `portcullis access check FILE`: the profile's methods, rules and rate limit, or the error.
pub fn summary(path: &Path) -> Result<String, LoadError> {
    use portcullis_engine::access::MethodKind;
    let p = load_file(path)?;
    let mut out = format!("{}: ok\n", path.display());
    for m in &p.methods {
        let what = match &m.kind {
            MethodKind::ApiKey { keys, .. } => format!("API key ({} keys)", keys.len()),
            MethodKind::Jwt(j) => match &j.jwks_url {
                Some(u) => format!("JWT ({} static keys, JWKS {u})", j.static_keys.len()),
                None => format!("JWT ({} static keys)", j.static_keys.len()),
            },
            MethodKind::Introspection(i) => format!("introspection ({})", i.endpoint),
            MethodKind::Basic { users } => format!("Basic ({} users)", users.len()),
        };
        out.push_str(&format!("  method {}: {what}\n", m.name));
    }
    out.push_str(&format!("  rules: {}\n", p.rules.len()));
    if let Some(r) = &p.rate_limit {
        match r.window {
            Some(w) => out.push_str(&format!(
                "  rate limit: {} per {} s, by {:?}",
                r.burst,
                w.as_secs(),
                r.by
            )),
            None => out.push_str(&format!(
                "  rate limit: {}/s, burst {}, by {:?}",
                r.per_second, r.burst, r.by
            )),
        }
        if let Some(s) = &r.store {
            out.push_str(&format!(", shared in {}", redact_url(&s.url)));
        }
        out.push('\n');
    }
    if let Some(s) = &p.revocations {
        out.push_str(&format!("  revocations: {}\n", redact_url(&s.url)));
    }
    Ok(out)
}
