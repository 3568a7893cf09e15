//! Loads an access profile file (JSON or YAML) for `portcullis proxy --access FILE`:
//! `jwksFile` entries are read (relative to the file's directory, at most 256 KiB) and put inline
//! as `jwks` before the pure validation in `waf::access::config`.

use std::path::Path;

use serde_json::Value;

use portcullis_support::redact_url;

use portcullis_engine::access::{AccessProfile, from_value};

const MAX_JWKS_FILE: u64 = 256 << 10;

/// Reads, resolves and validates the profile at `path`; the error names the file and the field.
pub fn load_file(path: &Path) -> Result<AccessProfile, String> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| format!("{name}: {e}"))?;
    let mut doc = portcullis_engine::policy::parse_document(&bytes, &name)
        .map_err(|e| format!("{name}: {e}"))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    if let Some(Value::Object(methods)) = doc.get_mut("methods") {
        for (mname, m) in methods.iter_mut() {
            let Some(Value::Object(j)) = m.get_mut("jwt") else {
                continue;
            };
            let Some(file) = j.remove("jwksFile") else {
                continue;
            };
            let field = format!("{name}: methods.{mname}.jwt.jwksFile");
            let Value::String(file) = file else {
                return Err(format!("{field}: must be a string"));
            };
            if j.contains_key("jwks") {
                return Err(format!("{field}: give jwks or jwksFile, not both"));
            }
            let p = dir.join(&file);
            let size = std::fs::metadata(&p)
                .map_err(|e| format!("{field}: {}: {e}", p.display()))?
                .len();
            if size > MAX_JWKS_FILE {
                return Err(format!(
                    "{field}: {} is larger than {MAX_JWKS_FILE} bytes",
                    p.display()
                ));
            }
            let text = std::fs::read(&p).map_err(|e| format!("{field}: {}: {e}", p.display()))?;
            let v: Value = serde_json::from_slice(&text)
                .map_err(|e| format!("{field}: {}: not JSON: {e}", p.display()))?;
            j.insert("jwks".into(), v);
        }
    }
    from_value(&doc, &name).map_err(|e| format!("{name}: {e}"))
}

/// `portcullis access check FILE`: the profile's methods, rules and rate limit, or the error.
pub fn summary(path: &Path) -> Result<String, String> {
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
