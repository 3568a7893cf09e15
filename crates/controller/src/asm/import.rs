//! The import task, `/mgmt/tm/asm/tasks/import-policy` (`docs/asm.md`). The body names a source
//! and optionally a target:
//! - source: `filename` (a file uploaded to `/mgmt/tm/asm/file-transfer/uploads/<name>`),
//!   `fileReference: {link}` (pulled with `support::fetch`), `file` (inline, `isBase64` allowed),
//!   or only `policyTemplateReference: {link}` (a new policy from a template);
//! - target: `policy: {fullPath}`, `fullPath`, `name` (a full path, or a name with `partition`),
//!   or `policyReference: {link}` (overwrite an existing policy); without one the policy is
//!   named by the document (its `fullPath` when it ends in `name`, else `/<partition or
//!   Common>/<name>`).
//!
//! Rule 1 of 4.1: when a pulled document is imported under an explicit `fullPath`, its
//! `policy.name` must equal the name part of that path. An uploaded or inline document is
//! renamed to its target instead (what clients that send `name` + `filename` expect).
//! [`parse_request`] is pure (the fuzz target); the work runs on a task thread.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use http::Method;
use serde_json::{Map, Value, json};

use super::apply::{Target, target_of, template_title};
use super::policies::{full_path_field, normalize, object, put_policy_linked};
use super::tasks::{self, TaskOutcome, TaskType};
use crate::objects::sys_file::{DOWNLOADS, resolve_download};
use portcullis_admin::Reply;
use portcullis_admin::parse_object;
use portcullis_admin::{Ctx, MgmtState};
use portcullis_admin::{MgmtError, MgmtResult};
use portcullis_admin::{ObjName, check_name};
use portcullis_engine::policy::parse_document;
use portcullis_support::fetch::fetch_blocking;

pub static IMPORT: TaskType = TaskType {
    path: "/mgmt/tm/asm/tasks/import-policy",
    kind: "tm:asm:tasks:import-policy:import-policy-task",
};

/// Where the policy document comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// A file in the downloads directory.
    Upload(String),
    /// A URL to pull.
    Link(String),
    /// The document itself (base64 when `isBase64`).
    Inline(String),
    /// A new empty policy from a template (`policyTemplateReference`), by template name.
    Template(&'static str),
}

/// A checked import request.
#[derive(Clone, Debug, PartialEq)]
pub struct ImportRequest {
    pub source: Source,
    pub target: Option<Target>,
    pub is_base64: bool,
    /// The request fields the task record shows (clients read them back from the task).
    pub echo: Map<String, Value>,
}

fn flag(body: &Map<String, Value>, key: &str) -> MgmtResult<bool> {
    match body.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(Value::String(s)) if s == "true" || s == "false" => Ok(s == "true"),
        Some(_) => Err(MgmtError::bad_request(format!(
            "The value of property '{key}' must be a boolean."
        ))),
    }
}

fn string<'a>(v: &'a Value, what: &str) -> MgmtResult<&'a str> {
    v.as_str()
        .ok_or_else(|| MgmtError::bad_request(format!("'{what}' must be a string.")))
}

/// Parses and checks an import request body, without side effects.
pub fn parse_request(body: &[u8]) -> MgmtResult<ImportRequest> {
    let req = parse_object(body)?;
    let is_base64 = flag(&req, "isBase64")?;
    let mut echo = Map::new();
    echo.insert("isBase64".into(), json!(is_base64));
    for k in ["getPolicyAttributesOnly", "retainInheritanceSettings"] {
        echo.insert(k.into(), json!(flag(&req, k)?));
    }
    let filename = req
        .get("filename")
        .map(|v| string(v, "filename"))
        .transpose()?;
    let link = match req.get("fileReference") {
        Some(r) => Some(string(
            r.get("link").unwrap_or(&Value::Null),
            "fileReference.link",
        )?),
        None => None,
    };
    let inline = req.get("file").map(|v| string(v, "file")).transpose()?;
    let source = match (filename, link, inline) {
        (Some(f), None, None) => {
            let name = f.strip_prefix(DOWNLOADS).unwrap_or(f);
            check_name(name).map_err(|_| {
                MgmtError::bad_request(format!(
                    "Invalid file name '{f}': a file uploaded to {DOWNLOADS} is expected."
                ))
            })?;
            Source::Upload(name.to_string())
        }
        (None, Some(l), None) => {
            echo.insert("fileReference".into(), json!({ "link": l }));
            Source::Link(l.to_string())
        }
        (None, None, Some(text)) => Source::Inline(text.to_string()),
        (None, None, None) if req.get("policyTemplateReference").is_some() => {
            let link = req
                .get("policyTemplateReference")
                .and_then(|r| r.get("link"))
                .unwrap_or(&Value::Null);
            let link = string(link, "policyTemplateReference.link")?;
            let name = super::templates::name_of(link).ok_or_else(|| {
                MgmtError::bad_request(format!(
                    "'policyTemplateReference.link' {link} names no policy template."
                ))
            })?;
            echo.insert("policyTemplateReference".into(), json!({ "link": link }));
            Source::Template(name)
        }
        (None, None, None) => {
            return Err(MgmtError::bad_request(
                "The request names no policy file: give 'filename' (an uploaded file), 'fileReference': {'link': ...} or 'file' (the document inline).",
            ));
        }
        _ => {
            return Err(MgmtError::bad_request(
                "Give only one of 'filename', 'fileReference' and 'file'.",
            ));
        }
    };
    let shown = match &source {
        Source::Upload(n) => n.clone(),
        _ => String::new(),
    };
    echo.insert("filename".into(), json!(shown));
    let target = if let Some(n) = req.get("name") {
        let part = req
            .get("partition")
            .map(|p| string(p, "partition"))
            .transpose()?;
        let n = ObjName::from_body(string(n, "name")?, part, None)?;
        Some(Target::Path(n.full_path()))
    } else {
        match target_of(&req) {
            Ok(Target::Path(p)) => Some(Target::Path(normalize(&p)?)),
            Ok(t) => Some(t),
            Err(_) if req.get("policy").is_none() && req.get("policyReference").is_none() => None,
            Err(e) => return Err(e.into()),
        }
    };
    match &target {
        Some(Target::Path(p)) => {
            echo.insert("fullPath".into(), json!(p));
        }
        Some(Target::Id(id)) => {
            echo.insert(
                "policyReference".into(),
                json!({ "link": format!("https://localhost/mgmt/tm/asm/policies/{id}") }),
            );
        }
        None => {}
    }
    Ok(ImportRequest {
        source,
        target,
        is_base64,
        echo,
    })
}

/// The fuzz target: parse and check an import body; never panics, changes nothing.
#[cfg(any(test, fuzzing))]
pub fn fuzz_import_request(data: &[u8]) {
    let _ = parse_request(data);
}

/// `/mgmt/tm/asm/tasks/import-policy`: POST starts an import task; GET lists or shows tasks.
pub fn handle(ctx: &Ctx<'_>, body: &[u8]) -> MgmtResult<Reply> {
    if ctx.method != Method::POST || ctx.path != IMPORT.path {
        return tasks::get(ctx, &IMPORT);
    }
    let req = parse_request(body)?;
    let task = tasks::create(ctx.st, &IMPORT, req.echo.clone())?;
    tasks::spawn(ctx.st, &IMPORT, &task, move |st| run(st, &req))?;
    Ok(Reply::json(Value::Object(task)))
}

fn run(st: &MgmtState, req: &ImportRequest) -> TaskOutcome {
    let (bytes, base, label) = match &req.source {
        Source::Upload(name) => {
            let path = resolve_download(st, name).map_err(|e| e.message)?;
            let bytes = std::fs::read(&path).map_err(|e| format!("{DOWNLOADS}{name}: {e}"))?;
            (bytes, format!("file://{DOWNLOADS}{name}"), name.clone())
        }
        Source::Link(link) => {
            let bytes = fetch_blocking(&st.cfg.fetch, &st.cfg.data_dir, link)
                .map_err(|e| format!("Cannot pull the policy file: {e}"))?;
            (bytes, link.clone(), link.clone())
        }
        Source::Inline(text) => (
            text.clone().into_bytes(),
            String::new(),
            "policy.json".into(),
        ),
        Source::Template(t) => {
            if req.target.is_none() {
                return Err("A policy made from a template needs a 'name' or 'fullPath'.".into());
            }
            let doc = json!({"policy": {"name": "from-template", "template": {"name": t}}});
            (
                doc.to_string().into_bytes(),
                String::new(),
                "policy.json".into(),
            )
        }
    };
    let bytes = if req.is_base64 {
        let compact: Vec<u8> = bytes
            .into_iter()
            .filter(|b| !b.is_ascii_whitespace())
            .collect();
        STANDARD
            .decode(compact)
            .map_err(|e| format!("The file is not valid base64 (isBase64 is true): {e}"))?
    } else {
        bytes
    };
    let mut doc = parse_document(&bytes, &label)
        .map_err(|e| format!("The file is not a valid policy document: {e}"))?;
    let doc_name = doc
        .pointer("/policy/name")
        .and_then(Value::as_str)
        .map(str::to_string);
    let full_path = match &req.target {
        Some(Target::Path(p)) => p.clone(),
        Some(Target::Id(id)) => object(st, id)
            .map(|o| full_path_field(&o))
            .map_err(|_| format!("'policyReference.link' names no existing policy (id {id})."))?,
        None => {
            let name = doc_name.clone().ok_or(
                "The policy document has no 'policy.name'; give 'policy': {'fullPath': ...}.",
            )?;
            // An exported document carries its `fullPath`; else `partition` + `name`.
            let written = doc.pointer("/policy/fullPath").and_then(Value::as_str);
            let partition = doc.pointer("/policy/partition").and_then(Value::as_str);
            let n = match written {
                Some(w) if w.rsplit('/').next() == Some(name.as_str()) => {
                    ObjName::from_body(w, None, None)
                }
                _ => ObjName::from_body(&name, partition, None),
            };
            n.map_err(|e| format!("policy.name: {}", e.message))?
                .full_path()
        }
    };
    let short = full_path.rsplit('/').next().unwrap_or_default().to_string();
    match (&req.source, &req.target, &doc_name) {
        (Source::Link(_), Some(Target::Path(_)), Some(n)) if *n != short => {
            return Err(format!(
                "The policy name '{n}' in the pulled file does not match the name '{short}' of fullPath '{full_path}'."
            ));
        }
        _ => {
            if let Some(Value::Object(p)) = doc.get_mut("policy") {
                p.insert("name".into(), json!(short));
            }
        }
    }
    let obj = put_policy_linked(st, &full_path, &doc, &base).map_err(|e| e.message)?;
    let template = obj["templateReference"]["name"]
        .as_str()
        .unwrap_or_default();
    let reference = json!({"link": obj["selfLink"], "fullPath": full_path});
    let mut out = Map::new();
    out.insert("policyReference".into(), reference.clone());
    out.insert(
        "result".into(),
        json!({
            "policyReference": reference,
            "message": format!(
                "The operation was completed successfully. The security policy name is '{full_path}'. Policy Template set to {}.",
                template_title(template)
            ),
        }),
    );
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_forms() {
        let r = parse_request(br#"{"filename":"p.json","policy":{"fullPath":"/Common/p"}}"#)
            .expect("form 1");
        assert_eq!(r.source, Source::Upload("p.json".into()));
        assert_eq!(r.target, Some(Target::Path("/Common/p".into())));
        assert_eq!(r.echo["filename"], "p.json");
        let r = parse_request(br#"{"fileReference":{"link":"https://h/p.json"}}"#).expect("form 2");
        assert_eq!(r.source, Source::Link("https://h/p.json".into()));
        assert_eq!((r.target, r.echo["filename"].as_str()), (None, Some("")));
        let r = parse_request(br#"{"name":"x","partition":"T","file":"e30=","isBase64":true}"#)
            .expect("inline");
        assert_eq!(r.target, Some(Target::Path("/T/x".into())));
        assert!(r.is_base64);
        let r = parse_request(
            br#"{"filename":"a","policyReference":{"link":"https://localhost/mgmt/tm/asm/policies/abc?ver=1"}}"#,
        )
        .expect("overwrite");
        assert_eq!(r.target, Some(Target::Id("abc".into())));
        for bad in [
            &br#"{"filename":"a","file":"b"}"#[..],
            br#"{"filename":"../x"}"#,
            br#"{"policy":{"fullPath":"/Common/x"}}"#,
            br#"{"filename":"a","policy":{"fullPath":"no//"}}"#,
            br#"{"filename":"a","isBase64":"yes"}"#,
            br#"[1]"#,
        ] {
            let e = parse_request(bad).expect_err("refused");
            assert_eq!(e.status, http::StatusCode::BAD_REQUEST, "{e:?}");
        }
    }

    #[test]
    fn fuzz_seeds_replay() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fuzz/seeds/asm_import_request");
        let mut n = 0;
        for entry in std::fs::read_dir(&dir).expect("seed directory") {
            fuzz_import_request(&std::fs::read(entry.expect("entry").path()).expect("seed"));
            n += 1;
        }
        assert!(n >= 5, "only {n} seeds");
    }
}
