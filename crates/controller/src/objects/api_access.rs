//! `ltm profile api-access`: an API access-control profile (API keys, JWT, token introspection,
//! Basic credentials, rate limits; the document format of `docs/access.md`) stored as an object
//! and attached to a virtual server through its `profiles` like any other profile. Plain `key`
//! values of API keys are replaced by their SHA-256 before the object is stored, so keys are never
//! kept or shown.

use serde_json::{Map, Value, json};

use portcullis_admin::MgmtState;
use portcullis_admin::ObjName;
use portcullis_admin::{KindSpec, PendingWrite};
use portcullis_admin::{MgmtError, MgmtResult};
use portcullis_engine::access::{AccessError, AccessProfile, from_value};
use portcullis_store::{Table, WriteTx};

pub static API_ACCESS: KindSpec = KindSpec {
    path: "/mgmt/tm/ltm/profile/api-access",
    label: "Profile",
    prepare,
    before_delete: in_use,
    data_plane: true,
    ..KindSpec::BASE
};

/// The object properties that make up the access document (the rest are the object's own).
const DOCUMENT_FIELDS: &[&str] = &[
    "realm",
    "methods",
    "rules",
    "default",
    "rateLimit",
    "revocations",
    "forwardCredentials",
    "openapi",
];

fn document(obj: &Map<String, Value>) -> Value {
    Value::Object(
        obj.iter()
            .filter(|(k, _)| DOCUMENT_FIELDS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    )
}

/// Replaces `key` by `sha256` in every API key entry.
fn hash_plain_keys(obj: &mut Map<String, Value>) {
    let Some(Value::Object(methods)) = obj.get_mut("methods") else {
        return;
    };
    for m in methods.values_mut() {
        let Some(Value::Array(keys)) = m.pointer_mut("/apiKey/keys") else {
            continue;
        };
        for k in keys.iter_mut().filter_map(Value::as_object_mut) {
            if let Some(Value::String(plain)) = k.remove("key") {
                let digest = portcullis_engine::access::sha256(plain.as_bytes());
                k.insert(
                    "sha256".into(),
                    json!(portcullis_engine::access::hex(&digest)),
                );
            }
        }
    }
}

fn prepare(p: &mut PendingWrite<'_, '_>) -> MgmtResult<()> {
    hash_plain_keys(p.obj);
    let full_path = p.name.full_path();
    compile(p.obj, &full_path)?;
    Ok(())
}

/// A profile attached to a virtual server cannot be deleted (the listener would silently lose its
/// access control).
fn in_use(_: &MgmtState, tx: &WriteTx<'_>, n: &ObjName) -> MgmtResult<()> {
    let suffix = format!("/profiles/{}", n.tilde());
    for k in tx.keys(Table::Objects, "/mgmt/tm/ltm/virtual/")? {
        if let Some(vs) = k.strip_suffix(&suffix) {
            let vs = vs
                .trim_start_matches("/mgmt/tm/ltm/virtual/")
                .replace('~', "/");
            return Err(MgmtError::bad_request(format!(
                "01070621:3: The profile ({}) cannot be deleted because it is in use by a virtual server ({vs}).",
                n.full_path()
            )));
        }
    }
    Ok(())
}

/// A stored access profile that does not validate: the profile and the field at fault.
#[derive(Debug, thiserror::Error)]
#[error("Access profile {full_path}: {source}")]
pub struct ProfileError {
    pub full_path: String,
    pub source: AccessError,
}

impl From<ProfileError> for MgmtError {
    fn from(e: ProfileError) -> Self {
        MgmtError::bad_request(e.to_string())
    }
}

/// The validated profile of a stored object (`full_path` names it in errors).
pub fn compile(obj: &Map<String, Value>, full_path: &str) -> Result<AccessProfile, ProfileError> {
    from_value(&document(obj), full_path).map_err(|source| ProfileError {
        full_path: full_path.to_string(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_keys_are_hashed_and_errors_name_the_field() {
        let mut obj =
            json!({"name": "a", "methods": {"k": {"apiKey": {"in": "header", "name": "x-key",
            "keys": [{"id": "one", "key": "secret-1"}]}}}})
            .as_object()
            .cloned()
            .unwrap_or_default();
        hash_plain_keys(&mut obj);
        let text = Value::Object(obj.clone()).to_string();
        assert!(
            !text.contains("secret-1") && text.contains("sha256"),
            "{text}"
        );
        assert!(compile(&obj, "/Common/a").is_ok());
        obj.insert(
            "rules".into(),
            json!([{"path": "/x", "require": [{"nope": []}]}]),
        );
        let e = compile(&obj, "/Common/a").err().map(|e| e.to_string());
        let e = e.unwrap_or_default();
        assert!(
            e.starts_with("Access profile /Common/a: ") && e.contains("rules[0].require[0].nope"),
            "{e}"
        );
    }
}
