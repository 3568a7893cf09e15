//! The tuning loop: from blocked and alarmed requests to policy changes (docs/asm.md, "Tuning").
//!
//! - [`request`]: a stored event read back (its violations, its head);
//! - [`fix`]: the `modifications[]` entry that stops one violation, on the entity that raised it;
//! - [`settings`]: the `policy-builder` settings the learning honours, and who is a bot;
//! - [`suggestions`]: suggestions aggregated from events, their evidence and learning score;
//! - [`learner`]: the event subscriber that feeds them (and applies them in automatic mode);
//! - [`accept`]: accepting one request by its support id (the smallest set of changes);
//! - [`readiness`]: what blocking mode would do to the recent traffic of a transparent policy;
//! - [`routes`]: the REST surface under `/mgmt/tm/asm`.
//!
//! Every change goes the one way a change goes: appended to the edited document's
//! `modifications` (it must compile), then applied by an apply-policy task.

mod accept;
mod fix;
pub(crate) mod learner;
mod readiness;
mod request;
pub(crate) mod routes;
mod settings;
pub(crate) mod suggestions;

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::compile::{Stored, compiled};
use super::policies::{
    applied_key, by_path, compile_error, edited_key, full_path_field, policy_id, stored,
};
use fix::{Fix, Scope};
use portcullis_admin::MgmtState;
use portcullis_admin::{MgmtError, MgmtResult};
use portcullis_engine::CompiledPolicy;
use portcullis_engine::policy::{TemplateId, apply_modifications, merge_policy, select_template};
use request::Request;
use settings::Settings;

/// One version of a policy, as the learning reads it.
pub struct PolicyView {
    pub full_path: String,
    pub id: String,
    pub compiled: Arc<CompiledPolicy>,
    /// The body merged with its template and modifications.
    pub merged: Map<String, Value>,
    pub settings: Settings,
}

/// Which stored version of a policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    /// What runs (what judged the traffic).
    Applied,
    /// What the next apply will run.
    Edited,
}

/// The template, body and inline modifications of a stored document, merged as the compiler
/// merges them (to read what a wildcard entity says, and the policy-builder settings).
pub fn merged_body(s: &Stored) -> Map<String, Value> {
    let body = s
        .doc
        .get("policy")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let name = body
        .get("template")
        .and_then(|t| t.get("name"))
        .and_then(Value::as_str);
    // A stored document compiled, so its template name is known; the base is only a fallback.
    let template = select_template(name).map_or(TemplateId::NginxBase, |(t, _)| t);
    let mut merged = template.policy();
    merge_policy(&mut merged, &body);
    if let Some(m) = s.doc.get("modifications") {
        // A document that compiled has valid modifications; nothing to report here.
        let _ = apply_modifications(&mut merged, m, "modifications");
    }
    merged
}

impl PolicyView {
    /// The `version` of policy `full_path`; None when that version does not exist (never applied).
    pub fn load(
        st: &MgmtState,
        full_path: &str,
        version: Version,
    ) -> MgmtResult<Option<PolicyView>> {
        let canonical = full_path_field(&by_path(st, full_path)?);
        let id = policy_id(&canonical);
        let key = match version {
            Version::Applied => applied_key(&id),
            Version::Edited => edited_key(&id),
        };
        let Some(s) = stored(st, &key)? else {
            return Ok(None);
        };
        let compiled = compiled(&s).map_err(|e| compile_error(&canonical, &e))?;
        let merged = merged_body(&s);
        Ok(Some(PolicyView {
            settings: Settings::of(&merged),
            full_path: canonical,
            id,
            compiled,
            merged,
        }))
    }

    /// The fixes of every violation of `r` (staged ones are never enforced: none), each with
    /// the violation it stops.
    pub fn fixes(&self, r: &Request) -> Vec<(portcullis_engine::Violation, Vec<Fix>)> {
        let owners = self.compiled.owners(&r.head().into(), false);
        let scope = Scope {
            policy: &self.compiled,
            merged: &self.merged,
            owners: &owners,
            request: r,
        };
        r.violations
            .iter()
            .filter(|v| !v.staged)
            .map(|v| (v.clone(), fix::fixes(&scope, v)))
            .collect()
    }

    /// Whether `r` carries an enforced high-accuracy attack signature under this policy.
    pub fn is_attack(&self, r: &Request) -> bool {
        r.violations
            .iter()
            .any(|v| self.compiled.high_accuracy_hit(v))
    }
}

/// Appends `mods` to the edited document of `full_path` (those already there are skipped) and
/// returns how many were added. The document must still compile.
pub fn append_modifications(st: &MgmtState, full_path: &str, mods: &[Value]) -> MgmtResult<usize> {
    let mut added = 0;
    super::policies::edit_document(st, full_path, |doc| {
        let Some(root) = doc.as_object_mut() else {
            return Err(MgmtError::internal(
                "the stored policy document is not an object",
            ));
        };
        if root.contains_key("modificationsReference") && !root.contains_key("modifications") {
            return Err(MgmtError::bad_request(format!(
                "The security policy {full_path} takes its modifications from 'modificationsReference'; \
                 change that file (or import the policy with inline 'modifications') to add to them."
            )));
        }
        let list = root
            .entry("modifications")
            .or_insert_with(|| Value::Array(Vec::new()));
        let Value::Array(list) = list else {
            return Err(MgmtError::bad_request(format!(
                "The 'modifications' of security policy {full_path} is not an array."
            )));
        };
        added = append_new(list, mods);
        Ok(())
    })?;
    Ok(added)
}

/// Appends those of `mods` that `list` does not hold yet; returns how many.
fn append_new(list: &mut Vec<Value>, mods: &[Value]) -> usize {
    // Accepting all suggestions appends thousands at once: equal entries share the entity they
    // change, so only entries on the same entity are compared in full.
    let mut by_entity: HashMap<(String, String), Vec<usize>> = HashMap::new();
    for (i, m) in list.iter().enumerate() {
        by_entity.entry(entity_key(m)).or_default().push(i);
    }
    let before = list.len();
    for m in mods {
        let same = by_entity.entry(entity_key(m)).or_default();
        if !same.iter().any(|&i| list[i] == *m) {
            same.push(list.len());
            list.push(m.clone());
        }
    }
    list.len() - before
}

/// The entity a `modifications[]` entry changes: its type and name (equal entries have equal keys).
fn entity_key(m: &Value) -> (String, String) {
    (m["entityType"].to_string(), m["entity"]["name"].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn appending_skips_the_modifications_already_there() {
        let sig = |p: &str, s: u32| {
            json!({"entityType": "parameter", "entity": {"name": p},
                   "entityChanges": {"signatureOverrides": [{"signatureId": s, "enabled": false}]},
                   "action": "add-or-update"})
        };
        let mut list = vec![sig("next", 1)];
        // Keys in another order are the same entry.
        let reordered = json!({"action": "add-or-update", "entity": {"name": "next"}, "entityType": "parameter",
                               "entityChanges": {"signatureOverrides": [{"enabled": false, "signatureId": 1}]}});
        let mods = [reordered, sig("next", 2), sig("next", 2), sig("other", 1)];
        assert_eq!(append_new(&mut list, &mods), 2);
        assert_eq!(list, vec![sig("next", 1), sig("next", 2), sig("other", 1)]);
    }
}
