//! `portcullis billing-report mask FILE`: replaces the addresses and host names of a billing report
//! (or any JSON document) with pseudonyms, keeping the JSON structure. The same address or name gets
//! the same pseudonym everywhere in one file, wherever it appears: a whole value, an `address:port`,
//! the host of a URL, or a word inside a message. IPv4 addresses become `198.18.x.y` (the benchmark
//! range), IPv6 addresses `2001:db8::<n>` (documentation prefix), host names `host-<n>.invalid`.
//! Numbering follows the order of first appearance, so the pseudonyms reveal nothing of the originals.
//! Values under version and build keys are left alone (`16.1.3.1` is a version, not an address).

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Map, Value};

/// Largest report read, in bytes.
pub const MAX_MASK_INPUT_BYTES: usize = 64 << 20;

/// Keys whose string value is a host name (or an address) as a whole.
const HOST_KEYS: &[&str] = &[
    "hostname",
    "hostName",
    "host",
    "deviceName",
    "deviceHostname",
    "managementHostname",
    "fqdn",
];
/// Keys whose value is an address, possibly `host:port`.
const ADDRESS_KEYS: &[&str] = &[
    "address",
    "deviceAddress",
    "managementAddress",
    "mgmtAddress",
];

/// IPv4 dotted quads and IPv6 candidates (checked by the std parsers before they are replaced).
static IP_TOKEN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(?:\d{1,3}\.){3}\d{1,3}\b|[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?:\d{1,3}(?:\.\d{1,3}){3})?")
        .expect("static regex")
});
/// The host of a URL: `scheme://host[:port]`.
static URL_HOST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/\s]*@)?([A-Za-z0-9._-]+)").expect("static regex")
});

/// Assigns and remembers pseudonyms.
#[derive(Default)]
pub struct Masker {
    v4: HashMap<Ipv4Addr, String>,
    v6: HashMap<Ipv6Addr, String>,
    hosts: HashMap<String, String>,
    /// Known host names, longest first (matched inside free text).
    names: Vec<String>,
}

fn is_host_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_')
}

/// A name worth finding inside text: host characters, at least one letter, not an address.
fn plausible_host(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.chars().all(is_host_char)
        && s.chars().any(|c| c.is_ascii_alphabetic())
        && s.parse::<IpAddr>().is_err()
}

fn skip_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    k.contains("version") || k == "build"
}

/// Strips a `:port` or `[v6]:port` suffix: the host part of an address value.
fn host_part(v: &str) -> &str {
    if let Some(rest) = v.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match v.rsplit_once(':') {
        Some((h, p)) if !h.contains(':') && p.chars().all(|c| c.is_ascii_digit()) => h,
        _ => v,
    }
}

impl Masker {
    fn addr(&mut self, ip: IpAddr) -> String {
        match ip {
            IpAddr::V4(a) => {
                let n = self.v4.len() as u32 + 1;
                self.v4
                    .entry(a)
                    .or_insert_with(|| Ipv4Addr::from(0xC612_0000u32.wrapping_add(n)).to_string())
                    .clone()
            }
            IpAddr::V6(a) => {
                let n = self.v6.len() as u128 + 1;
                self.v6
                    .entry(a)
                    .or_insert_with(|| Ipv6Addr::from((0x2001_0db8u128 << 96) | n).to_string())
                    .clone()
            }
        }
    }

    fn host(&mut self, name: &str) -> String {
        let n = self.hosts.len() + 1;
        self.hosts
            .entry(name.to_ascii_lowercase())
            .or_insert_with(|| format!("host-{n}.invalid"))
            .clone()
    }

    fn learn(&mut self, name: &str) {
        if plausible_host(name) && !self.names.iter().any(|n| n.eq_ignore_ascii_case(name)) {
            self.names.push(name.to_string());
        }
    }

    /// First pass: the host names the document names (host keys, address keys, URL hosts).
    fn collect(&mut self, key: Option<&str>, v: &Value) {
        match v {
            Value::Object(m) => m.iter().for_each(|(k, v)| self.collect(Some(k), v)),
            Value::Array(a) => a.iter().for_each(|v| self.collect(key, v)),
            Value::String(s) => {
                if key.is_some_and(|k| HOST_KEYS.contains(&k) || ADDRESS_KEYS.contains(&k)) {
                    self.learn(host_part(s.trim()));
                }
                for c in URL_HOST.captures_iter(s) {
                    if let Some(h) = c.get(1) {
                        self.learn(h.as_str());
                    }
                }
            }
            _ => {}
        }
    }

    /// Masks every address and known host name inside `s`.
    pub fn mask_text(&mut self, s: &str) -> String {
        // (start, end, replacement) of every hit in the original text, then the leftmost-longest
        // non-overlapping ones are applied, so a pseudonym is never masked again.
        let mut hits: Vec<(usize, usize, String)> = Vec::new();
        for m in IP_TOKEN.find_iter(s) {
            if let Ok(ip) = m.as_str().parse::<IpAddr>() {
                hits.push((m.start(), m.end(), self.addr(ip)));
            }
        }
        let names = self.names.clone();
        let lower = s.to_ascii_lowercase();
        for name in &names {
            let needle = name.to_ascii_lowercase();
            for (start, _) in lower.match_indices(&needle) {
                let end = start + needle.len();
                let before = s[..start].chars().next_back();
                let after = s[end..].chars().next();
                let bounded = |c: Option<char>| c.is_none_or(|c| !is_host_char(c) || c == '.');
                if bounded(before) && after.is_none_or(|c| !is_host_char(c)) {
                    hits.push((start, end, self.host(name)));
                }
            }
        }
        if hits.is_empty() {
            return s.to_string();
        }
        hits.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        let mut out = String::with_capacity(s.len());
        let mut at = 0;
        for (start, end, rep) in hits {
            if start < at {
                continue;
            }
            out.push_str(&s[at..start]);
            out.push_str(&rep);
            at = end;
        }
        out.push_str(&s[at..]);
        out
    }

    fn mask_value(&mut self, key: Option<&str>, v: Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut out = Map::with_capacity(m.len());
                for (k, v) in m {
                    let masked = self.mask_value(Some(&k), v);
                    out.insert(self.mask_text(&k), masked);
                }
                Value::Object(out)
            }
            Value::Array(a) => {
                Value::Array(a.into_iter().map(|v| self.mask_value(key, v)).collect())
            }
            Value::String(s) if key.is_some_and(skip_key) => Value::String(s),
            Value::String(s)
                if key.is_some_and(|k| HOST_KEYS.contains(&k)) && !s.trim().is_empty() =>
            {
                let t = s.trim();
                match t.parse::<IpAddr>() {
                    Ok(ip) => Value::String(self.addr(ip)),
                    Err(_) if plausible_host(t) => Value::String(self.host(t)),
                    Err(_) => Value::String(self.mask_text(&s)),
                }
            }
            Value::String(s) => Value::String(self.mask_text(&s)),
            other => other,
        }
    }

    /// Masks a whole document.
    pub fn mask(&mut self, doc: Value) -> Value {
        self.collect(None, &doc);
        self.names.sort_by_key(|n| std::cmp::Reverse(n.len()));
        self.mask_value(None, doc)
    }
}

/// Why `billing-report mask` cannot mask a file; `Display` is what the command prints.
#[derive(Debug, thiserror::Error)]
pub enum MaskError {
    #[error("{}: {source}", .path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {problem}", .path.display())]
    Input {
        path: PathBuf,
        problem: InputProblem,
    },
    #[error(transparent)]
    Write(#[from] super::billing_report::WriteError),
    #[error("{0}")]
    Json(#[from] serde_json::Error),
}

/// Why bytes given to the masker are not a document it masks.
#[derive(Debug, thiserror::Error)]
pub enum InputProblem {
    #[error("larger than {MAX_MASK_INPUT_BYTES} bytes")]
    TooLarge,
    #[error("not a JSON document: {0}")]
    NotJson(#[source] serde_json::Error),
}

/// Masks a JSON document given as bytes; the error says why the input is not one.
fn mask_json(input: &[u8]) -> Result<Value, InputProblem> {
    if input.len() > MAX_MASK_INPUT_BYTES {
        return Err(InputProblem::TooLarge);
    }
    let doc: Value = serde_json::from_slice(input).map_err(InputProblem::NotJson)?;
    Ok(Masker::default().mask(doc))
}

/// Where the masked copy of `file` goes: `<stem>.masked.json` beside it.
pub fn masked_path(file: &Path) -> PathBuf {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.strip_suffix(".json").unwrap_or(&name);
    file.with_file_name(format!("{stem}.masked.json"))
}

/// Runs the `mask` subcommand: writes the masked copy beside `file` (or prints it with `stdout`)
/// and returns what to tell the user.
pub fn run(file: &Path, stdout: bool) -> Result<String, MaskError> {
    let read = |source| MaskError::Read {
        path: file.to_path_buf(),
        source,
    };
    let input = |problem| MaskError::Input {
        path: file.to_path_buf(),
        problem,
    };
    let meta = std::fs::metadata(file).map_err(read)?;
    if meta.len() > MAX_MASK_INPUT_BYTES as u64 {
        return Err(input(InputProblem::TooLarge));
    }
    let bytes = std::fs::read(file).map_err(read)?;
    let masked = mask_json(&bytes).map_err(input)?;
    let text = serde_json::to_string_pretty(&masked)? + "\n";
    if stdout {
        return Ok(text);
    }
    let out = masked_path(file);
    super::billing_report::write_atomically(&out, text.as_bytes())?;
    Ok(format!("masked report written to {}\n", out.display()))
}

/// The fuzz target `billing_input`: the key-list parser and the masker over arbitrary bytes.
/// A masked document keeps its shape (same JSON types, same array lengths).
#[cfg(any(test, fuzzing))]
pub fn fuzz_billing_input(data: &[u8]) {
    let _ = super::billing_keys::parse_key_csv(data);
    if let Ok(doc) = serde_json::from_slice::<Value>(data)
        && let Ok(masked) = mask_json(data)
    {
        assert!(
            same_shape(&doc, &masked),
            "masking changed the document's shape"
        );
    }
}

#[cfg(any(test, fuzzing))]
fn same_shape(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.values().zip(y.values()).all(|(p, q)| same_shape(p, q))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_shape(p, q))
        }
        (Value::String(_), Value::String(_)) => true,
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn addresses_and_names_get_consistent_pseudonyms_everywhere() {
        let doc = json!({
            "centralManager": {"url": "https://cm1.corp.example:8443", "hostname": "cm1.corp.example"},
            "registrationKeys": [{"devices": [
                {"hostname": "bigip-a.corp.example", "address": "10.1.2.3:443", "version": "16.1.3.1",
                 "note": "licensed by cm1.corp.example from 10.1.2.3"},
                {"hostname": "bigip-b.corp.example", "address": "10.1.2.4", "mgmt": "fe80::1",
                 "note": "peer of bigip-a.corp.example at [fe80::1]:443"}
            ]}]
        });
        let m = Masker::default().mask(doc.clone());
        let text = m.to_string();
        for secret in [
            "10.1.2.3",
            "10.1.2.4",
            "fe80::1",
            "corp.example",
            "bigip-a",
            "cm1",
        ] {
            assert!(!text.contains(secret), "{secret} left in {text}");
        }
        assert!(same_shape(&doc, &m));
        let d = &m["registrationKeys"][0]["devices"];
        let a_host = d[0]["hostname"].as_str().unwrap();
        assert!(a_host.starts_with("host-") && a_host.ends_with(".invalid"));
        assert_eq!(
            d[1]["note"],
            format!(
                "peer of {a_host} at [{}]:443",
                d[1]["mgmt"].as_str().unwrap()
            )
        );
        let a_addr = d[0]["address"]
            .as_str()
            .unwrap()
            .strip_suffix(":443")
            .unwrap();
        assert!(a_addr.starts_with("198.18."));
        let cm = m["centralManager"]["hostname"].as_str().unwrap();
        assert_eq!(d[0]["note"], format!("licensed by {cm} from {a_addr}"));
        assert_eq!(m["centralManager"]["url"], format!("https://{cm}:8443"));
        assert_eq!(d[0]["version"], "16.1.3.1");
        assert_ne!(d[0]["address"], d[1]["address"]);
    }

    #[test]
    fn timestamps_macs_and_plain_words_stay() {
        let mut m = Masker::default();
        let s = "2026-11-22T07:10:00Z mac 00:11:22:33:44:55 version 1.2.3";
        assert_eq!(m.mask_text(s), s);
    }

    #[test]
    fn masked_file_goes_beside_the_report() {
        assert_eq!(
            masked_path(Path::new(
                "/tmp/r/PORTCULLIS_Billing_License_Report.2026-11-22.json"
            )),
            PathBuf::from("/tmp/r/PORTCULLIS_Billing_License_Report.2026-11-22.masked.json")
        );
        assert!(mask_json(b"{not json").is_err());
    }
}
