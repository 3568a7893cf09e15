//! The export task, `/mgmt/tm/asm/tasks/export-policy`: `{policyReference: {link}}` or
//! `{policy: {fullPath}}`, with `filename`, `inline` and `format` (`json`, the declarative
//! format). The result is the policy's current (edited) document: inline in `result.file` when
//! `inline` is true, else written to `<filename>` in the downloads directory, downloadable from
//! `/mgmt/tm/asm/file-transfer/downloads/<filename>` (as on the real system).

use http::Method;
use serde_json::{Map, Value, json};

use super::apply::target_of;
use super::policies::{edited_key, policy_id, stored};
use super::tasks::{self, TaskOutcome, TaskType};
use crate::objects::sys_file::write_durably;
use portcullis_admin::Reply;
use portcullis_admin::check_name;
use portcullis_admin::parse_object;
use portcullis_admin::{Ctx, MgmtState};
use portcullis_admin::{MgmtError, MgmtResult};

pub static EXPORT: TaskType = TaskType {
    path: "/mgmt/tm/asm/tasks/export-policy",
    kind: "tm:asm:tasks:export-policy:export-policy-task",
};

/// `/mgmt/tm/asm/tasks/export-policy`: POST starts an export; GET lists or shows tasks.
pub fn handle(ctx: &Ctx<'_>, body: &[u8]) -> MgmtResult<Reply> {
    if ctx.method != Method::POST || ctx.path != EXPORT.path {
        return tasks::get(ctx, &EXPORT);
    }
    let req = parse_object(body)?;
    let target = target_of(&req)?;
    let obj = target.object(ctx.st)?;
    let full_path = obj["fullPath"].as_str().unwrap_or_default().to_string();
    let format = req.get("format").and_then(Value::as_str).unwrap_or("json");
    if !format.eq_ignore_ascii_case("json") {
        return Err(MgmtError::bad_request(format!(
            "Export format '{format}' is not supported; the declarative format is 'json'."
        )));
    }
    let inline = req.get("inline").and_then(Value::as_bool).unwrap_or(false);
    let name = obj["name"].as_str().unwrap_or("policy");
    let filename = match req.get("filename") {
        Some(Value::String(f)) => f.clone(),
        Some(_) => return Err(MgmtError::bad_request("'filename' must be a string.")),
        None => format!("{name}.json"),
    };
    check_name(&filename)
        .map_err(|_| MgmtError::bad_request(format!("Invalid export file name '{filename}'.")))?;
    let mut fields = Map::new();
    fields.insert("filename".into(), json!(filename));
    fields.insert("format".into(), json!("json"));
    fields.insert("inline".into(), json!(inline));
    fields.insert(
        "policyReference".into(),
        json!({"link": obj["selfLink"], "fullPath": full_path}),
    );
    let task = tasks::create(ctx.st, &EXPORT, fields)?;
    tasks::spawn(ctx.st, &EXPORT, &task, move |st| {
        run(st, &full_path, &filename, inline)
    })?;
    Ok(Reply::json(Value::Object(task)))
}

/// The document of policy `full_path` as exported: its edited version, named by the policy.
pub fn document(st: &MgmtState, full_path: &str) -> MgmtResult<Value> {
    let s = stored(st, &edited_key(&policy_id(full_path)))?
        .ok_or_else(|| MgmtError::not_found("Policy", full_path))?;
    let mut doc = s.doc;
    if let Some(Value::Object(p)) = doc.get_mut("policy") {
        let name = full_path.rsplit('/').next().unwrap_or_default();
        p.insert("name".into(), json!(name));
        p.insert("fullPath".into(), json!(full_path));
    }
    Ok(doc)
}

fn run(st: &MgmtState, full_path: &str, filename: &str, inline: bool) -> TaskOutcome {
    let doc = document(st, full_path).map_err(|e| e.message)?;
    let text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?;
    let mut result = Map::new();
    if inline {
        result.insert("file".into(), json!(text));
        result.insert(
            "message".into(),
            json!(format!("The security policy {full_path} was exported.")),
        );
    } else {
        let dir = st.downloads_dir();
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        write_durably(&dir.join(filename), text.as_bytes()).map_err(|e| e.message)?;
        result.insert("filename".into(), json!(filename));
        result.insert(
            "message".into(),
            json!(format!(
                "The security policy {full_path} was exported to {filename}; download it from /mgmt/tm/asm/file-transfer/downloads/{filename}."
            )),
        );
    }
    let mut out = Map::new();
    out.insert("result".into(), Value::Object(result));
    Ok(out)
}
