//! `security log profile` and its `application` sub-collection (local storage, remote syslog
//! servers or a log file, protocol, request-type filter, message format), each entry validated
//! with a precise error; entries given inline in the profile body replace the sub-collection in
//! the same transaction. And the virtual server's `securityLogProfiles` (fullPaths
//! of existing profiles, or the built-in `Log illegal requests` / `Log all requests`). A profile a
//! virtual uses cannot be deleted.

use serde_json::{Value, json};

use crate::events::config::{ApplicationsError, applications, parse_app};
use crate::events::route::{BUILTIN_PROFILES, PROFILE_PATH};
use portcullis_admin::MgmtState;
use portcullis_admin::{Coll, ParentRef};
use portcullis_admin::{KindSpec, PendingWrite};
use portcullis_admin::{MgmtError, MgmtResult};
use portcullis_admin::{ObjName, full_path_of};
use portcullis_admin::{commit, strip_read_only};
use portcullis_store::{Table, WriteTx};

pub static LOG_PROFILE: KindSpec = KindSpec {
    path: PROFILE_PATH,
    label: "Log Profile",
    subs: &[&APPLICATION],
    prepare: prepare_profile,
    before_delete: profile_in_use,
    ..KindSpec::BASE
};

/// The `application` sub-collection (`.../profile/~Common~p/application/~Common~p`).
pub static APPLICATION: KindSpec = KindSpec {
    path: "application",
    label: "Application",
    prepare: prepare_application,
    ..KindSpec::BASE
};

fn prepare_application(p: &mut PendingWrite<'_, '_>) -> MgmtResult<()> {
    let name = p.name.full_path();
    parse_app(p.obj, &name).map_err(|e| {
        let profile = p.parent.map(|r| r.name.full_path()).unwrap_or_default();
        MgmtError::bad_request(format!("Log profile {profile}: {e}."))
    })?;
    Ok(())
}

/// A profile body's inline `application` entries (object keyed by name, array, or expanded
/// `applicationReference`) replace its sub-collection, validated as one change.
fn prepare_profile(p: &mut PendingWrite<'_, '_>) -> MgmtResult<()> {
    let profile = p.name.full_path();
    let bad = |e: ApplicationsError| MgmtError::bad_request(format!("Log profile {profile}: {e}."));
    let entries = applications(p.obj, &p.name.name).map_err(bad)?;
    p.obj.remove("application");
    p.obj.remove("applicationReference");
    let Some(entries) = entries else {
        return Ok(());
    };
    let coll = Coll {
        spec: &APPLICATION,
        path: format!("{}/application", p.key),
        kind_base: "tm:security:log:profile:application".into(),
        parent: Some(ParentRef {
            spec: &LOG_PROFILE,
            key: p.key.to_string(),
            name: p.name.clone(),
        }),
    };
    for k in p.tx.keys(Table::Objects, &format!("{}/", coll.path))? {
        p.tx.delete(Table::Objects, &k)?;
    }
    for mut e in entries {
        let name = e
            .remove("name")
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_else(|| p.name.name.clone());
        let n = ObjName::from_body(&name, Some(&p.name.partition), None)?;
        e.remove("partition");
        strip_read_only(&mut e);
        let key = coll.key(&n);
        commit(p.st, p.tx, &coll, &n, &key, e, true, p.user)?;
    }
    Ok(())
}

const VIRTUALS: &str = "/mgmt/tm/ltm/virtual/";

fn profile_in_use(_: &MgmtState, tx: &WriteTx<'_>, n: &ObjName) -> MgmtResult<()> {
    let full_path = n.full_path();
    for k in tx.keys(Table::Objects, VIRTUALS)? {
        if k[VIRTUALS.len()..].contains('/') {
            continue;
        }
        let Some(vs) = tx.get(Table::Objects, &k)? else {
            continue;
        };
        let uses = vs
            .get("securityLogProfiles")
            .and_then(Value::as_array)
            .is_some_and(|a| a.iter().any(|p| p.as_str() == Some(full_path.as_str())));
        if uses {
            let vs_name = vs.get("fullPath").and_then(Value::as_str).unwrap_or(&k);
            return Err(MgmtError::bad_request(format!(
                "01071912:3: Cannot delete log profile ({full_path}) because it is in use by virtual server ({vs_name})."
            )));
        }
    }
    Ok(())
}

/// Normalises a virtual server's `securityLogProfiles` to fullPaths of existing profiles (names
/// may come quoted, as the real system shows those containing spaces). Called by the virtual's
/// `prepare`.
pub fn check_virtual_profiles(p: &mut PendingWrite<'_, '_>) -> MgmtResult<()> {
    let Some(v) = p.obj.get("securityLogProfiles").cloned() else {
        return Ok(());
    };
    let items = match v {
        Value::Null => Vec::new(),
        Value::Array(a) => a,
        _ => {
            return Err(MgmtError::bad_request(
                "securityLogProfiles must be an array of log profile names.",
            ));
        }
    };
    let mut out: Vec<String> = Vec::new();
    for it in items {
        let name = it
            .as_str()
            .or_else(|| it.get("name").and_then(Value::as_str))
            .ok_or_else(|| {
                MgmtError::bad_request("securityLogProfiles must be an array of log profile names.")
            })?
            .trim_matches('"');
        let full_path = if name.contains(' ') {
            let full_path = if name.starts_with('/') {
                name.to_string()
            } else {
                format!("/Common/{name}")
            };
            if !BUILTIN_PROFILES.contains(&full_path.as_str()) {
                return Err(not_found(&full_path));
            }
            full_path
        } else {
            let full_path = full_path_of(name)?;
            let key = format!("{PROFILE_PATH}/{}", full_path.replace('/', "~"));
            if p.tx.get(Table::Objects, &key)?.is_none() {
                return Err(not_found(&full_path));
            }
            full_path
        };
        if !out.contains(&full_path) {
            out.push(full_path);
        }
    }
    p.obj.insert("securityLogProfiles".into(), json!(out));
    Ok(())
}

fn not_found(full_path: &str) -> MgmtError {
    MgmtError::bad_request(format!(
        "01020036:3: The requested Log Profile ({full_path}) was not found."
    ))
}
