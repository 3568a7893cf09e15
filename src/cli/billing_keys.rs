//! The registration keys a billing report is asked for: the `-c FILE` key list (CSV) and the
//! `-k KEY[,KEY...]` list. Both give keys in the order first seen, duplicates dropped, each checked
//! with [`crate::support::parse_regkey`].
//!
//! CSV format (docs/licensing.md): UTF-8 text, one registration key per line; a leading byte-order
//! mark, blank lines and lines starting with `#` are ignored; when a line has several
//! comma-separated fields the key is the first one (exports with more columns work); fields may
//! be wrapped in double quotes; a first line whose first field is a column title (`key`, `regkey`,
//! `registrationKey`, `registration key`, any case) is a header and skipped.

use crate::support::parse_regkey;

/// Largest key-list file read, in bytes.
pub const MAX_KEY_FILE_BYTES: usize = 1 << 20;
/// Most distinct keys one report may ask for.
pub const MAX_KEYS: usize = 10_000;

/// Why a key list cannot be used; `line` is 1-based (0 for the `-k` list).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", if *.line > 0 { format!("line {}: ", .line) } else { String::new() })]
pub struct KeyListError {
    pub line: usize,
    pub message: String,
}

fn fail(line: usize, message: impl Into<String>) -> KeyListError {
    KeyListError {
        line,
        message: message.into(),
    }
}

const HEADER_TITLES: &[&str] = &[
    "key",
    "regkey",
    "registrationkey",
    "registration key",
    "reg key",
];

/// Parses the contents of a `-c` key file.
pub fn parse_key_csv(bytes: &[u8]) -> Result<Vec<String>, KeyListError> {
    if bytes.len() > MAX_KEY_FILE_BYTES {
        return Err(fail(
            0,
            format!("the key file is larger than {MAX_KEY_FILE_BYTES} bytes"),
        ));
    }
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let line = 1 + bytes[..e.valid_up_to()]
            .iter()
            .filter(|b| **b == b'\n')
            .count();
        fail(line, "the key file is not UTF-8 text")
    })?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut keys = Vec::new();
    let mut seen_content = false;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let first = trimmed.split(',').next().unwrap_or_default().trim();
        let field = unquote(first).ok_or_else(|| fail(line, "unbalanced double quote"))?;
        if !seen_content {
            seen_content = true;
            if HEADER_TITLES.contains(&field.to_ascii_lowercase().as_str()) {
                continue;
            }
        }
        let key = parse_regkey(field).map_err(|e| fail(line, e.to_string()))?;
        push_unique(&mut keys, key).map_err(|e| fail(line, e))?;
    }
    if keys.is_empty() {
        return Err(fail(0, "the key file lists no registration key"));
    }
    Ok(keys)
}

/// Parses the `-k KEY[,KEY...]` argument (may be given several times; white space is ignored).
pub fn parse_key_args<S: AsRef<str>>(args: &[S]) -> Result<Vec<String>, KeyListError> {
    let mut keys = Vec::new();
    for part in args.iter().flat_map(|a| a.as_ref().split(',')) {
        if part.trim().is_empty() {
            continue;
        }
        let key = parse_regkey(part).map_err(|e| fail(0, e.to_string()))?;
        push_unique(&mut keys, key).map_err(|e| fail(0, e))?;
    }
    if keys.is_empty() {
        return Err(fail(0, "-k lists no registration key"));
    }
    Ok(keys)
}

/// Appends `more` to `keys`, keeping the first occurrence of each key.
pub fn merge_keys(keys: &mut Vec<String>, more: Vec<String>) -> Result<(), KeyListError> {
    for k in more {
        push_unique(keys, k).map_err(|e| fail(0, e))?;
    }
    Ok(())
}

fn push_unique(keys: &mut Vec<String>, key: String) -> Result<(), String> {
    if keys.contains(&key) {
        return Ok(());
    }
    if keys.len() >= MAX_KEYS {
        return Err(format!("more than {MAX_KEYS} registration keys"));
    }
    keys.push(key);
    Ok(())
}

/// `"x"` → `x`; a field with one unmatched quote is refused.
fn unquote(field: &str) -> Option<&str> {
    match (
        field.starts_with('"'),
        field.len() >= 2 && field.ends_with('"'),
    ) {
        (true, true) => Some(field[1..field.len() - 1].trim()),
        (false, _) if !field.contains('"') => Some(field),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "ABCDE-FGHIJ-KLMNO-PQRST-UVWXYZ1";
    const B: &str = "BBBBB-CCCCC-DDDDD-EEEEE-FFFFFFF";

    #[test]
    fn csv_lines_headers_comments_quotes_and_extra_columns() {
        let text = format!(
            "\u{feff}Registration Key,customer\n# comment\n\n\"{}\",acme\n{B}\r\n {A} \n",
            A.to_lowercase()
        );
        assert_eq!(
            parse_key_csv(text.as_bytes()),
            Ok(vec![A.to_string(), B.to_string()])
        );
    }

    #[test]
    fn csv_errors_name_the_line() {
        let e = parse_key_csv(format!("{A}\nnot-a-key\n").as_bytes()).unwrap_err();
        assert_eq!(e.line, 2);
        assert!(
            e.to_string()
                .starts_with("line 2: 'not-a-key' is not a registration key")
        );
        assert_eq!(parse_key_csv(b"\"ABCDE\n").unwrap_err().line, 1);
        assert!(parse_key_csv(b"# only a comment\n").is_err());
        assert_eq!(parse_key_csv(b"ABCDE-\xff\n").unwrap_err().line, 1);
        assert!(parse_key_csv(&vec![b'A'; MAX_KEY_FILE_BYTES + 1]).is_err());
    }

    #[test]
    fn key_args_split_on_commas_and_merge_without_duplicates() {
        let mut keys = parse_key_args(&[format!("{A}, {B}"), A.to_string()]).unwrap();
        assert_eq!(keys, vec![A.to_string(), B.to_string()]);
        merge_keys(&mut keys, vec![B.to_string()]).unwrap();
        assert_eq!(keys.len(), 2);
        assert!(parse_key_args(&[","]).is_err());
        assert!(parse_key_args(&["nope"]).is_err());
    }

    #[test]
    fn fuzz_seeds_never_panic() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds/billing_input");
        let mut n = 0;
        for e in std::fs::read_dir(&dir).expect("seed dir") {
            let bytes = std::fs::read(e.expect("entry").path()).expect("seed");
            crate::cli::billing_mask::fuzz_billing_input(&bytes);
            n += 1;
        }
        assert!(n >= 3, "seeds in {}", dir.display());
    }
}
