//! Conflicts between the central copy of a device's objects (`working-config`) and what the device
//! has now: finding them, describing them on the task, and taking the user's resolutions.
//!
//! An object conflicts when the central copy and the device's version differ (in any configuration
//! field), or when the central copy exists and the device no longer has the object. A conflict is
//! listed on the import task as `{id, name, objectKind, devicePath, isChild, fromReference (central
//! copy), toReference (device copy), resolution, centralVersion, deviceVersion, differences}`;
//! `resolution` is `NONE` until the user sets `USE_BIGIQ` (keep the central copy) or `USE_BIGIP`
//! (take the device's version). Pure functions.

use std::collections::{BTreeSet, HashMap};

use serde_json::{Map, Value, json};

use super::config::{self, CURRENT, WORKING};
use super::modules::{Found, Module};
use portcullis_admin::{MgmtError, MgmtResult};

pub const USE_BIGIQ: &str = "USE_BIGIQ";
pub const USE_BIGIP: &str = "USE_BIGIP";
pub const NONE: &str = "NONE";

/// What an import found, object by object.
#[derive(Debug, Default)]
pub struct Plan {
    /// Device objects with no central copy yet (imported as they are).
    pub new: Vec<Found>,
    /// Device objects equal to their central copy.
    pub same: usize,
    pub conflicts: Vec<Value>,
}

impl Plan {
    /// `PENDING_CONFLICTS` when a top-level object conflicts, else `PENDING_CHILD_CONFLICTS`.
    pub fn pending_step(&self) -> &'static str {
        if self
            .conflicts
            .iter()
            .any(|c| c["isChild"].as_bool() != Some(true))
        {
            super::tasks::PENDING_CONFLICTS
        } else {
            super::tasks::PENDING_CHILD_CONFLICTS
        }
    }
}

/// Names of the configuration fields that differ between two versions.
pub fn differences(a: &Map<String, Value>, b: &Map<String, Value>) -> Vec<String> {
    let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .cloned()
        .collect()
}

fn describe(m: &Module, machine_id: &str, working: &Value, device: Option<&Found>) -> Value {
    let id = working["id"].as_str().unwrap_or_default();
    let coll = working["collection"].as_str().unwrap_or_default();
    let central = working["object"].as_object().cloned().unwrap_or_default();
    let dev = device.map(|d| d.object.clone());
    let diff = differences(&central, dev.as_ref().unwrap_or(&Map::new()));
    let name = central
        .get("fullPath")
        .or_else(|| central.get("name"))
        .cloned()
        .unwrap_or(Value::Null);
    json!({
        "id": id,
        "name": name,
        "objectKind": central.get("kind").cloned().unwrap_or(Value::Null),
        "devicePath": working["devicePath"],
        "deviceReference": {"link": format!("https://localhost/mgmt/cm/system/machineid-resolver/{machine_id}")},
        "isChild": !working["parent"].is_null(),
        "fromReference": {"link": config::link(m, WORKING, id, coll)},
        "toReference": {"link": config::link(m, CURRENT, id, coll)},
        "resolution": NONE,
        "centralVersion": central,
        "deviceVersion": dev,
        "deviceHasObject": device.is_some(),
        "differences": diff,
    })
}

/// Compares what the device has (`found`) with the central copies of that device (`working`).
pub fn compare(m: &Module, machine_id: &str, found: &[Found], working: &[Value]) -> Plan {
    let by_id: HashMap<&str, &Value> = working
        .iter()
        .filter_map(|w| w["id"].as_str().map(|id| (id, w)))
        .collect();
    let mut plan = Plan::default();
    let mut seen = BTreeSet::new();
    for f in found {
        let id = config::object_id(machine_id, &f.device_path);
        match by_id.get(id.as_str()) {
            None => plan.new.push(f.clone()),
            Some(w) if w["object"].as_object() == Some(&f.object) => plan.same += 1,
            Some(w) => plan.conflicts.push(describe(m, machine_id, w, Some(f))),
        }
        seen.insert(id);
    }
    for w in working {
        if !seen.contains(w["id"].as_str().unwrap_or_default()) {
            plan.conflicts.push(describe(m, machine_id, w, None));
        }
    }
    plan
}

/// Takes the resolutions of a PATCH body's `conflicts` onto the task's conflicts (matched by `id`,
/// else `fromReference.link`, else `name`); every conflict must end with `USE_BIGIQ` or
/// `USE_BIGIP`, or the 400 names the unresolved ones.
pub fn take_resolutions(task: &mut [Value], body: Option<&Value>) -> MgmtResult<()> {
    let given = body.and_then(Value::as_array).cloned().unwrap_or_default();
    for g in &given {
        let res = g.get("resolution").and_then(Value::as_str).unwrap_or(NONE);
        if ![USE_BIGIQ, USE_BIGIP, NONE].contains(&res) {
            return Err(MgmtError::bad_request(format!(
                "Conflict resolution '{res}' is not one of USE_BIGIQ, USE_BIGIP."
            )));
        }
        let target = task.iter_mut().find(|t| {
            (g.get("id").is_some() && g.get("id") == t.get("id"))
                || (g.pointer("/fromReference/link").is_some()
                    && g.pointer("/fromReference/link") == t.pointer("/fromReference/link"))
                || (g.get("name").is_some() && g.get("name") == t.get("name"))
        });
        match target {
            Some(t) => t["resolution"] = json!(res),
            None => {
                return Err(MgmtError::bad_request(format!(
                    "The task has no conflict matching {}.",
                    g.get("id")
                        .or_else(|| g.pointer("/fromReference/link"))
                        .or_else(|| g.get("name"))
                        .cloned()
                        .unwrap_or(Value::Null)
                )));
            }
        }
    }
    let open: Vec<String> = task
        .iter()
        .filter(|t| t["resolution"] == NONE)
        .map(|t| t["name"].as_str().unwrap_or("?").to_string())
        .collect();
    if !open.is_empty() {
        return Err(MgmtError::bad_request(format!(
            "{} conflict(s) have no resolution ({}); set each conflict's resolution to USE_BIGIQ or USE_BIGIP.",
            open.len(),
            open.join(", ")
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::modules::ADC_CORE;
    use super::*;

    fn found(path: &str, obj: Value) -> Found {
        Found {
            device_path: path.into(),
            collection: "/mgmt/tm/ltm/pool".into(),
            parent: None,
            object: obj.as_object().cloned().unwrap_or_default(),
        }
    }

    #[test]
    fn compare_sorts_new_same_and_conflicting_objects() {
        let a = found(
            "/mgmt/tm/ltm/pool/~Common~a",
            json!({"fullPath": "/Common/a", "lb": "rr"}),
        );
        let b = found(
            "/mgmt/tm/ltm/pool/~Common~b",
            json!({"fullPath": "/Common/b", "lb": "rr"}),
        );
        let gone = found(
            "/mgmt/tm/ltm/pool/~Common~g",
            json!({"fullPath": "/Common/g"}),
        );
        let wa = config::record("m", &a);
        let mut b_central = b.clone();
        b_central.object.insert("lb".into(), json!("least"));
        let wb = config::record("m", &b_central);
        let wg = config::record("m", &gone);
        let c = found(
            "/mgmt/tm/ltm/pool/~Common~c",
            json!({"fullPath": "/Common/c"}),
        );
        let plan = compare(&ADC_CORE, "m", &[a, b, c.clone()], &[wa, wb, wg]);
        assert_eq!(plan.same, 1);
        assert_eq!(plan.new, vec![c]);
        assert_eq!(plan.conflicts.len(), 2);
        let cb = &plan.conflicts[0];
        assert_eq!(cb["name"], "/Common/b");
        assert_eq!(cb["differences"], json!(["lb"]));
        assert_eq!(cb["centralVersion"]["lb"], "least");
        assert_eq!(cb["deviceVersion"]["lb"], "rr");
        assert_eq!(plan.conflicts[1]["deviceHasObject"], false);
        assert_eq!(plan.pending_step(), "PENDING_CONFLICTS");
    }

    #[test]
    fn resolutions_must_cover_every_conflict() {
        let mut task = vec![
            json!({"id": "1", "name": "/Common/a", "resolution": "NONE"}),
            json!({"id": "2", "name": "/Common/b", "resolution": "NONE"}),
        ];
        let partial = json!([{"id": "1", "resolution": "USE_BIGIQ"}]);
        let e = take_resolutions(&mut task, Some(&partial)).unwrap_err();
        assert!(e.message.contains("/Common/b"), "{}", e.message);
        let all = json!([{"name": "/Common/b", "resolution": "USE_BIGIP"}]);
        take_resolutions(&mut task, Some(&all)).unwrap();
        assert_eq!(task[0]["resolution"], "USE_BIGIQ");
        assert_eq!(task[1]["resolution"], "USE_BIGIP");
        let bad = json!([{"id": "1", "resolution": "MERGE"}]);
        assert!(take_resolutions(&mut task, Some(&bad)).is_err());
    }
}
