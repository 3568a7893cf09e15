//! The fuzz entry point of the inspection path (`fuzz/fuzz_targets/inspect_request.rs`): arbitrary
//! requests through every phase of a [`Transaction`] under one policy that turns on the entity
//! features of the request path (json/xml-valued parameters with a JSON schema, staging, the
//! character set, executable uploads, a gRPC profile bound through a content profile, the request
//! length count). No input may panic or run unbounded.
//!
//! Input layout: byte 0 picks HTTP/2 (bit 0) and the body chunk size (bits 1–4, 1 to 16 × 7
//! bytes); then `METHOD SP TARGET LF`, header lines `name: value LF`, an empty line, and the body.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::{Arc, OnceLock};

use super::CompiledPolicy;
use crate::resolver::MemResolver;
use crate::transaction::{ConnInfo, Step, Transaction};

const IDL: &str = include_str!("../../../../policies/demo/demo.proto");

/// The policy every fuzz input runs under.
const POLICY: &str = r#"{"policy": {
  "name": "fuzz_entities", "template": {"name": "POLICY_TEMPLATE_NGINX_BASE"},
  "enforcementMode": "blocking", "applicationLanguage": "utf-8",
  "json-validation-files": [{"fileName": "q.json", "contents":
    "{\"type\": \"object\", \"properties\": {\"n\": {\"type\": \"integer\", \"minimum\": 0}}}"}],
  "json-profiles": [{"name": "q", "metacharElementCheck": true,
    "defenseAttributes": {"maximumStructureDepth": 4, "maximumArrayLength": 8},
    "validationFiles": [{"isPrimary": true, "jsonValidationFile": {"fileName": "q.json"}}]}],
  "parameters": [
    {"name": "q", "valueType": "json", "contentProfile": {"name": "q"}},
    {"name": "x", "valueType": "xml"},
    {"name": "n", "dataType": "integer", "performStaging": true}],
  "grpc-profiles": [{"name": "demo", "associateUrls": false,
    "idlFiles": [{"idlFile": {"$ref": "file:///demo.proto"}, "isPrimary": true}]}],
  "urls": [
    {"name": "/up", "disallowFileUploadOfExecutables": true},
    {"name": "/try/*", "type": "wildcard", "performStaging": true},
    {"name": "/rpc/*", "type": "wildcard",
     "urlContentProfiles": [{"type": "grpc", "contentProfile": {"name": "demo"}}]}]
}}"#;

/// The compiled fuzz policy (built once).
pub fn policy() -> Arc<CompiledPolicy> {
    static P: OnceLock<Arc<CompiledPolicy>> = OnceLock::new();
    P.get_or_init(|| {
        let r = MemResolver(HashMap::from([(
            "file:///demo.proto".to_string(),
            IDL.as_bytes().to_vec(),
        )]));
        match super::load(POLICY.as_bytes(), "file:///fuzz.json", &r) {
            Ok(l) => Arc::new(l.policy),
            Err(e) => panic!("the fuzz policy loads: {e}"),
        }
    })
    .clone()
}

/// Parses the input layout into a request head and body; `None` when the head is not HTTP.
fn request(data: &[u8]) -> Option<(crate::RequestHead, &[u8], usize)> {
    let (&flags, rest) = data.split_first()?;
    let end = rest.windows(2).position(|w| w == b"\n\n")?;
    let head = std::str::from_utf8(&rest[..end]).ok()?;
    let body = &rest[end + 2..];
    let mut lines = head.split('\n');
    let (method, target) = lines.next()?.split_once(' ')?;
    let mut b = http::Request::builder().method(method).uri(target);
    if flags & 1 == 1 {
        b = b.version(http::Version::HTTP_2);
    }
    for line in lines {
        let (k, v) = line.split_once(':')?;
        b = b.header(k.trim(), v.trim());
    }
    let chunk = 7 * (usize::from((flags >> 1) & 0x0f) + 1);
    Some((b.body(()).ok()?.into_parts().0.into(), body, chunk))
}

/// One fuzz input through every phase; the verdict's action.
pub fn inspect(data: &[u8]) -> Option<crate::Action> {
    let (head, body, chunk) = request(data)?;
    let conn = ConnInfo {
        peer: IpAddr::V4(Ipv4Addr::LOCALHOST),
        tls: false,
    };
    let mut tx = Transaction::new(policy(), conn);
    let mut step = tx.on_request_headers(&head);
    if step == Step::InspectBody {
        for c in body.chunks(chunk) {
            step = tx.on_request_body(c);
            if matches!(step, Step::Block | Step::PassRest) {
                break;
            }
        }
        if step != Step::Block {
            step = tx.on_request_end();
        }
    }
    if step != Step::Block {
        tx.on_response_headers(200, &http::HeaderMap::new());
    }
    let action = tx.verdict().action;
    let _ = tx.block_response();
    let _ = tx.finish(&head.headers);
    Some(action)
}

/// The fuzz target: never panics.
pub fn fuzz_inspect(data: &[u8]) {
    let _ = inspect(data);
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::Action;

    fn seeds() -> Vec<(String, Vec<u8>)> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/inspect_request");
        let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
            .expect("seed directory")
            .flatten()
            .map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                (name, std::fs::read(e.path()).expect("seed"))
            })
            .collect();
        out.sort();
        out
    }

    #[test]
    fn the_seeds_mean_what_their_names_say() {
        let seeds = seeds();
        assert!(seeds.len() >= 8, "{} seeds", seeds.len());
        for (name, data) in &seeds {
            let want = if name.starts_with("pass_") {
                Action::Pass
            } else if name.starts_with("alarm_") {
                Action::Alarm
            } else {
                Action::Block
            };
            assert_eq!(inspect(data), Some(want), "{name}");
        }
    }

    #[test]
    fn mutated_seeds_never_panic() {
        // A fixed xorshift stream of byte flips, truncations and duplications over every seed.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for (_, seed) in seeds() {
            for _ in 0..300 {
                let mut d = seed.clone();
                match next() % 4 {
                    0 if !d.is_empty() => {
                        let i = (next() as usize) % d.len();
                        d[i] = next() as u8;
                    }
                    1 => d.truncate((next() as usize) % (d.len() + 1)),
                    2 if !d.is_empty() => {
                        let i = (next() as usize) % d.len();
                        let tail = d[i..].to_vec();
                        d.extend_from_slice(&tail);
                    }
                    _ => d.push(next() as u8),
                }
                fuzz_inspect(&d);
            }
        }
    }
}
