//! `security log profile`: the `application` entries (local storage, remote syslog servers or a
//! log file, protocol, request-type filter, message format) validated with a precise error and
//! stored as an array of named entries; and the virtual server's `securityLogProfiles` (fullPaths
//! of existing profiles, or the built-in `Log illegal requests` / `Log all requests`). A profile a
//! virtual uses cannot be deleted. Imports: `mgmt::*`, `store`.

use serde_json::{Value, json};

use crate::mgmt::error::{MgmtError, MgmtResult};
use crate::mgmt::events::config::{applications, parse_app};
use crate::mgmt::events::route::{BUILTIN_PROFILES, PROFILE_PATH};
use crate::mgmt::kinds::{KindSpec, Prep};
use crate::mgmt::names::{ObjName, full_path_of};
use crate::mgmt::state::MgmtState;
use crate::store::{Table, WriteTx};

pub static LOG_PROFILE: KindSpec = KindSpec {
    path: PROFILE_PATH,
    label: "Log Profile",
    prepare: prepare_profile,
    before_delete: profile_in_use,
    ..KindSpec::BASE
};

fn prepare_profile(p: &mut Prep<'_, '_>) -> MgmtResult<()> {
    let bad =
        |e: String| MgmtError::bad_request(format!("Log profile {}: {e}.", p.name.full_path()));
    let entries = applications(p.obj).map_err(bad)?;
    for e in &entries {
        parse_app(e, &p.name.name).map_err(bad)?;
    }
    if p.obj.contains_key("application") {
        let list = entries.into_iter().map(Value::Object).collect();
        p.obj.insert("application".into(), Value::Array(list));
    }
    Ok(())
}

const VIRTUALS: &str = "/mgmt/tm/ltm/virtual/";

fn profile_in_use(_: &MgmtState, tx: &WriteTx<'_>, n: &ObjName) -> MgmtResult<()> {
    let fp = n.full_path();
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
            .is_some_and(|a| a.iter().any(|p| p.as_str() == Some(fp.as_str())));
        if uses {
            let vs_name = vs.get("fullPath").and_then(Value::as_str).unwrap_or(&k);
            return Err(MgmtError::bad_request(format!(
                "01071912:3: Cannot delete log profile ({fp}) because it is in use by virtual server ({vs_name})."
            )));
        }
    }
    Ok(())
}

/// Normalises a virtual server's `securityLogProfiles` to fullPaths of existing profiles (names
/// may come quoted, as the real system shows those containing spaces). Called by the virtual's
/// `prepare`.
pub fn check_virtual_profiles(p: &mut Prep<'_, '_>) -> MgmtResult<()> {
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
        let fp = if name.contains(' ') {
            let fp = if name.starts_with('/') {
                name.to_string()
            } else {
                format!("/Common/{name}")
            };
            if !BUILTIN_PROFILES.contains(&fp.as_str()) {
                return Err(not_found(&fp));
            }
            fp
        } else {
            let fp = full_path_of(name)?;
            let key = format!("{PROFILE_PATH}/{}", fp.replace('/', "~"));
            if p.tx.get(Table::Objects, &key)?.is_none() {
                return Err(not_found(&fp));
            }
            fp
        };
        if !out.contains(&fp) {
            out.push(fp);
        }
    }
    p.obj.insert("securityLogProfiles".into(), json!(out));
    Ok(())
}

fn not_found(fp: &str) -> MgmtError {
    MgmtError::bad_request(format!(
        "01020036:3: The requested Log Profile ({fp}) was not found."
    ))
}
