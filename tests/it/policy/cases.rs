//! Table-driven verdict cases: every file under `tests/cases/<area>/` (JSON or YAML) holds a policy
//! (inline, or `policy_file` relative to the repository) and a list of requests with the expected
//! action, block status and violations. The runner drives `Transaction` directly, phase by phase.
//!
//! Expected violations are names (`VIOL_URL`) or name plus detail (`VIOL_EVASION:Multiple slashes`);
//! `absent` lists violations that must not appear; `signatures` / `absent_signatures` list signature ids
//! that must (not) be recorded on some violation; `staged` lists violations that must appear marked
//! staged (`performStaging`), `named` violation:name pairs that must appear.
//!
//! Linked files: `files` (link → text) or `files_from` (link → path in the repository, e.g. an
//! IDL). Binary bodies: `body_hex`, or `body_grpc` (hex protobuf messages, each sent as one
//! uncompressed gRPC frame), `body_repeat` (`text` repeated `times` times; `chunk` sets the size of
//! the chunks fed, 7 bytes by default); `version: "HTTP/2"` sends the request as HTTP/2.

use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use portcullis::waf::MemResolver;
use portcullis::waf::policy::{self, LoadOptions};
use portcullis::waf::{Action, ConnInfo, Step, Transaction};
use serde_json::Value;

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files(&p, out);
        } else if p
            .extension()
            .is_some_and(|e| e == "json" || e == "yaml" || e == "yml")
        {
            out.push(p);
        }
    }
}

fn request(r: &Value) -> (http::request::Parts, Vec<u8>, bool) {
    let method = r["method"].as_str().unwrap_or("GET");
    let uri = r["uri"].as_str().unwrap_or("/");
    let mut b = http::Request::builder().method(method).uri(uri);
    match &r["headers"] {
        Value::Object(m) => {
            for (k, v) in m {
                b = b.header(k.as_str(), v.as_str().unwrap_or_default());
            }
        }
        Value::Array(list) => {
            for kv in list {
                b = b.header(
                    kv[0].as_str().unwrap_or_default(),
                    kv[1].as_str().unwrap_or_default(),
                );
            }
        }
        _ => {}
    }
    if r["version"].as_str() == Some("HTTP/2") {
        b = b.version(http::Version::HTTP_2);
    }
    let body = match (&r["body"], &r["body_hex"], &r["body_grpc"]) {
        (_, Value::String(h), _) => hex(h),
        (_, _, Value::Array(msgs)) => msgs
            .iter()
            .flat_map(|m| {
                let m = hex(m.as_str().unwrap_or_default());
                let mut f = vec![0];
                f.extend_from_slice(&(m.len() as u32).to_be_bytes());
                f.extend_from_slice(&m);
                f
            })
            .collect(),
        (Value::String(s), _, _) => s.clone().into_bytes(),
        (Value::Null, _, _) if r["body_repeat"].is_object() => {
            let unit = r["body_repeat"]["text"].as_str().unwrap_or("a");
            unit.repeat(r["body_repeat"]["times"].as_u64().unwrap_or(0) as usize)
                .into_bytes()
        }
        (Value::Null, _, _) => Vec::new(),
        (other, _, _) => other.to_string().into_bytes(),
    };
    let (parts, ()) = b.body(()).expect("case request").into_parts();
    (parts, body, r["tls"].as_bool().unwrap_or(false))
}

fn hex(text: &str) -> Vec<u8> {
    let digits: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    digits
        .chunks(2)
        .map(|p| u8::from_str_radix(std::str::from_utf8(p).unwrap_or("zz"), 16).expect("hex body"))
        .collect()
}

fn run_case(pol: &Arc<policy::CompiledPolicy>, case: &Value) -> Result<(), String> {
    let (parts, body, tls) = request(&case["request"]);
    let mut tx = Transaction::new(
        pol.clone(),
        ConnInfo {
            peer: IpAddr::V4(Ipv4Addr::LOCALHOST),
            tls,
        },
    );
    let parts = portcullis::waf::RequestHead::from(parts);
    let mut step = tx.on_request_headers(&parts);
    if step == Step::InspectBody {
        let size = case["request"]["chunk"].as_u64().unwrap_or(7) as usize;
        for chunk in body.chunks(size).chain(body.is_empty().then_some(&[][..])) {
            step = tx.on_request_body(chunk);
            if matches!(step, Step::Block | Step::PassRest) {
                break;
            }
        }
        if step != Step::Block {
            step = tx.on_request_end();
        }
    }
    let verdict = tx.verdict();
    let expect = &case["expect"];
    let got: Vec<String> = verdict
        .violations
        .iter()
        .map(|v| format!("{}:{}", v.kind.name(), v.detail))
        .collect();
    let want_action = expect["action"].as_str().unwrap_or("pass");
    let action = match verdict.action {
        Action::Pass => "pass",
        Action::Alarm => "alarm",
        Action::Block => "block",
    };
    if action != want_action {
        return Err(format!(
            "action {action}, expected {want_action}; violations {got:?}"
        ));
    }
    if (step == Step::Block) != (want_action == "block") {
        return Err(format!("last step {step:?} disagrees with action {action}"));
    }
    if let Some(status) = expect["status"].as_u64() {
        let r = tx.block_response();
        if u64::from(r.status) != status {
            return Err(format!("status {}, expected {status}", r.status));
        }
    }
    if let Some(ct) = expect["content_type"].as_str() {
        let r = tx.block_response();
        let got_ct = r
            .headers
            .iter()
            .find(|(k, _)| k == "content-type")
            .map(|(_, v)| v.as_ref());
        if got_ct != Some(ct) {
            return Err(format!("content-type {got_ct:?}, expected {ct}"));
        }
    }
    let matches = |want: &str| {
        got.iter()
            .any(|g| g == want || g.split(':').next() == Some(want))
    };
    for w in expect["violations"].as_array().into_iter().flatten() {
        let w = w.as_str().unwrap_or_default();
        if !matches(w) {
            return Err(format!("missing {w}; got {got:?}"));
        }
    }
    for w in expect["absent"].as_array().into_iter().flatten() {
        let w = w.as_str().unwrap_or_default();
        if matches(w) {
            return Err(format!("unexpected {w}; got {got:?}"));
        }
    }
    for w in expect["staged"].as_array().into_iter().flatten() {
        let w = w.as_str().unwrap_or_default();
        if !verdict
            .violations
            .iter()
            .any(|v| v.staged && v.kind.name() == w)
        {
            return Err(format!("no staged {w}; got {got:?}"));
        }
    }
    for w in expect["named"].as_array().into_iter().flatten() {
        let w = w.as_str().unwrap_or_default();
        let (kind, name) = w.split_once('=').unwrap_or((w, ""));
        if !verdict
            .violations
            .iter()
            .any(|v| v.kind.name() == kind && v.name.as_deref() == Some(name))
        {
            let names: Vec<String> = verdict
                .violations
                .iter()
                .map(|v| format!("{}={}", v.kind.name(), v.name.as_deref().unwrap_or("")))
                .collect();
            return Err(format!("no {w}; got {names:?}"));
        }
    }
    let ids: Vec<u32> = verdict
        .violations
        .iter()
        .flat_map(|v| v.signature_ids.iter().copied())
        .collect();
    for id in expect["signatures"].as_array().into_iter().flatten() {
        if !id
            .as_u64()
            .is_some_and(|id| ids.iter().any(|&i| u64::from(i) == id))
        {
            return Err(format!("signature {id} not recorded; got {ids:?}"));
        }
    }
    for id in expect["absent_signatures"].as_array().into_iter().flatten() {
        if id
            .as_u64()
            .is_some_and(|id| ids.iter().any(|&i| u64::from(i) == id))
        {
            return Err(format!("signature {id} recorded; got {ids:?}"));
        }
    }
    if let Some(r) = expect["rating"].as_u64()
        && u64::from(verdict.rating) != r
    {
        return Err(format!("rating {}, expected {r}", verdict.rating));
    }
    Ok(())
}

#[test]
fn verdict_cases() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut list = Vec::new();
    files(&root.join("tests/cases"), &mut list);
    assert!(
        list.len() >= 10,
        "expected the case files under tests/cases"
    );
    let mut failures = Vec::new();
    let mut count = 0;
    for file in &list {
        let text = std::fs::read(file).expect("read case file");
        let doc: Value = policy::parse_document(&text, &file.to_string_lossy())
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let policy_doc = match (&doc["policy"], doc["policy_file"].as_str()) {
            (Value::Object(_), _) => serde_json::to_vec(&serde_json::json!({"policy": doc["policy"], "modifications": doc["modifications"].as_array().cloned().unwrap_or_default()})).unwrap_or_default(),
            (_, Some(p)) => std::fs::read(root.join(p)).expect("policy_file"),
            _ => panic!("{}: no policy", file.display()),
        };
        let mut files_map = std::collections::HashMap::new();
        for (k, v) in doc["files"].as_object().into_iter().flatten() {
            files_map.insert(
                k.clone(),
                v.as_str().unwrap_or_default().as_bytes().to_vec(),
            );
        }
        for (k, v) in doc["files_from"].as_object().into_iter().flatten() {
            let path = root.join(v.as_str().unwrap_or_default());
            files_map.insert(k.clone(), std::fs::read(&path).expect("files_from"));
        }
        let resolver = MemResolver(files_map);
        let loaded =
            match policy::load_with(&policy_doc, "case.json", &resolver, LoadOptions::default()) {
                Ok(l) => l,
                Err(e) => {
                    if let Some(want) = doc["load_error"].as_str() {
                        let e = e.to_string();
                        if !e.contains(want) {
                            failures.push(format!(
                                "{}: load error {e:?} lacks {want:?}",
                                file.display()
                            ));
                        }
                        count += 1;
                        continue;
                    }
                    failures.push(format!("{}: policy does not load: {e}", file.display()));
                    continue;
                }
            };
        if let Some(want) = doc["load_error"].as_str() {
            failures.push(format!("{}: expected load error {want:?}", file.display()));
            continue;
        }
        let pol = Arc::new(loaded.policy);
        for (i, case) in doc["cases"].as_array().into_iter().flatten().enumerate() {
            count += 1;
            let name = case["name"]
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| i.to_string());
            if let Err(e) = run_case(&pol, case) {
                failures.push(format!("{} [{name}]: {e}", file.display()));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {count} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!("{count} verdict cases passed");
}
