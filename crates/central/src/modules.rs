//! The modules a central manager discovers, imports and deploys, and how each one's configuration
//! is read from a controller: which provisioning it needs, which `/mgmt/tm` collections hold it (in
//! dependency order: what an object refers to comes first, so a deploy creates it first), and which
//! fields are state rather than configuration (left out of comparisons).

use serde_json::{Map, Value};

use super::client::{ClientError, ControllerClient};

/// One collection of a module.
pub struct Coll {
    /// `/mgmt/tm/ltm/pool`.
    pub path: &'static str,
    /// Written back with PUT (whole object) rather than PATCH.
    pub put: bool,
}

/// One module (`adc_core`, `asm`, `firewall`).
pub struct Module {
    /// The name in `moduleList` (`adc_core`).
    pub name: &'static str,
    /// The segment of its `/mgmt/cm/<cm>/...` paths (`adc-core`).
    pub cm: &'static str,
    /// The `/mgmt/tm/sys/provision` module it needs on the device.
    pub provision: &'static str,
    pub collections: &'static [Coll],
}

const fn put(path: &'static str) -> Coll {
    Coll { path, put: true }
}

pub static ADC_CORE: Module = Module {
    name: "adc_core",
    cm: "adc-core",
    provision: "ltm",
    collections: &[
        put("/mgmt/tm/ltm/monitor/http"),
        put("/mgmt/tm/ltm/monitor/https"),
        put("/mgmt/tm/ltm/monitor/tcp"),
        put("/mgmt/tm/ltm/profile/tcp"),
        put("/mgmt/tm/ltm/profile/udp"),
        put("/mgmt/tm/ltm/profile/http"),
        put("/mgmt/tm/ltm/profile/client-ssl"),
        put("/mgmt/tm/ltm/profile/server-ssl"),
        put("/mgmt/tm/ltm/node"),
        put("/mgmt/tm/ltm/pool"),
        put("/mgmt/tm/ltm/rule"),
        put("/mgmt/tm/ltm/data-group/internal"),
        put("/mgmt/tm/ltm/virtual-address"),
        put("/mgmt/tm/ltm/virtual"),
    ],
};

pub static ASM: Module = Module {
    name: "asm",
    cm: "asm",
    provision: "asm",
    collections: &[Coll {
        path: "/mgmt/tm/asm/policies",
        put: false,
    }],
};

pub static FIREWALL: Module = Module {
    name: "firewall",
    cm: "firewall",
    provision: "afm",
    collections: &[
        put("/mgmt/tm/security/firewall/address-list"),
        put("/mgmt/tm/security/firewall/port-list"),
        put("/mgmt/tm/security/firewall/rule-list"),
        put("/mgmt/tm/security/firewall/policy"),
    ],
};

pub static ALL: &[&Module] = &[&ADC_CORE, &ASM, &FIREWALL];

/// The module named `name` in a `moduleList` (`adc_core`, also `adc-core`, `ltm`).
pub fn by_name(name: &str) -> Option<&'static Module> {
    let n = name.trim().to_ascii_lowercase().replace('-', "_");
    let n = if n == "ltm" {
        "adc_core".to_string()
    } else {
        n
    };
    ALL.iter().copied().find(|m| m.name == n)
}

/// The module whose `/mgmt/cm/<cm>/` paths `path` is under.
pub fn by_cm_path(path: &str) -> Option<&'static Module> {
    ALL.iter()
        .copied()
        .find(|m| path.starts_with(&format!("/mgmt/cm/{}/", m.cm)))
}

/// A task whose `selfLink` is under no module's paths.
#[derive(Debug, thiserror::Error)]
#[error("no module serves {path}")]
pub struct NoModule {
    pub path: String,
}

/// A collection of a module that could not be read from a device.
#[derive(Debug, thiserror::Error)]
#[error("reading {collection} failed: {source}")]
pub struct ReadError {
    pub collection: &'static str,
    pub source: ClientError,
}

/// The module of a stored task, from its `selfLink` (`.../cm/asm/tasks/...`).
pub fn of_task(t: &Map<String, Value>) -> Result<&'static Module, NoModule> {
    let path = t
        .get("selfLink")
        .and_then(Value::as_str)
        .and_then(|l| l.strip_prefix("https://localhost"))
        .unwrap_or_default();
    by_cm_path(path).ok_or_else(|| NoModule {
        path: path.to_string(),
    })
}

/// Fields that describe state, not configuration.
const VOLATILE: &[&str] = &[
    "generation",
    "lastUpdateMicros",
    "selfLink",
    "status",
    "monitorStatus",
    "versionDatetime",
    "versionLastChange",
];

/// The configuration part of an object as a controller shows it: state fields, links and
/// sub-collection references removed (children are separate objects).
pub fn normalize(obj: &Map<String, Value>) -> Map<String, Value> {
    obj.iter()
        .filter(|(k, v)| {
            let link = k.ends_with("Reference") && v.get("link").is_some();
            let monitor_state =
                k.as_str() == "state" && !v.as_str().is_some_and(|s| s.starts_with("user-"));
            !(VOLATILE.contains(&k.as_str()) || link || monitor_state)
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// The device path of an object from its `selfLink` (`/mgmt/tm/ltm/pool/~Common~web`).
pub fn device_path(obj: &Map<String, Value>) -> Option<String> {
    let link = obj.get("selfLink")?.as_str()?;
    let path = link
        .split_once("://")
        .map(|(_, r)| r.find('/').map(|i| &r[i..]).unwrap_or(""))
        .unwrap_or(link);
    let path = path.split('?').next().unwrap_or_default();
    path.starts_with("/mgmt/tm/").then(|| path.to_string())
}

/// One object read from a device.
#[derive(Clone, Debug, PartialEq)]
pub struct Found {
    pub device_path: String,
    /// Its collection (`/mgmt/tm/ltm/pool`, `/mgmt/tm/ltm/pool/members` for a member).
    pub collection: String,
    /// The parent's device path, for a child object.
    pub parent: Option<String>,
    pub object: Map<String, Value>,
}

/// Reads every object of `m` from the device (one GET per collection, children expanded).
pub async fn read(c: &ControllerClient, m: &Module) -> Result<Vec<Found>, ReadError> {
    let mut out = Vec::new();
    for coll in m.collections {
        let v = c
            .get_json(&format!("{}?expandSubcollections=true", coll.path))
            .await
            .map_err(|source| ReadError {
                collection: coll.path,
                source,
            })?;
        let items = v
            .get("items")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for item in items {
            let Value::Object(obj) = item else { continue };
            let Some(path) = device_path(&obj) else {
                continue;
            };
            for (k, r) in &obj {
                let children = match r.get("items").and_then(Value::as_array) {
                    Some(items) if k.ends_with("Reference") => items,
                    _ => continue,
                };
                let sub = sub_name(k);
                for ch in children {
                    let Value::Object(cobj) = ch else { continue };
                    let Some(cpath) = device_path(cobj) else {
                        continue;
                    };
                    out.push(Found {
                        device_path: cpath,
                        collection: format!("{}/{sub}", coll.path),
                        parent: Some(path.clone()),
                        object: normalize(cobj),
                    });
                }
            }
            out.push(Found {
                device_path: path,
                collection: coll.path.to_string(),
                parent: None,
                object: normalize(&obj),
            });
        }
    }
    // Parents before their children, collections in module order.
    out.sort_by_key(|f| f.parent.is_some());
    Ok(out)
}

/// `membersReference` → `members`, `ruleListsReference` → `rule-lists`.
fn sub_name(reference_key: &str) -> String {
    let base = reference_key.trim_end_matches("Reference");
    let mut s = String::new();
    for ch in base.chars() {
        if ch.is_ascii_uppercase() {
            s.push('-');
            s.push(ch.to_ascii_lowercase());
        } else {
            s.push(ch);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn normalize_keeps_configuration_only() {
        let o = json!({"kind": "tm:ltm:pool:members:membersstate", "name": "a:80", "generation": 7,
            "selfLink": "https://localhost/mgmt/tm/ltm/pool/~Common~p/members/~Common~a:80?ver=1",
            "state": "up", "session": "user-enabled", "monitorStatus": "up",
            "poolReference": {"link": "x"}, "ratio": 1});
        let n = normalize(o.as_object().unwrap());
        assert_eq!(
            Value::Object(n),
            json!({"kind": "tm:ltm:pool:members:membersstate", "name": "a:80", "session": "user-enabled", "ratio": 1})
        );
        let d = json!({"state": "user-down"});
        assert_eq!(normalize(d.as_object().unwrap()).len(), 1);
    }

    #[test]
    fn device_paths_and_names() {
        let o = json!({"selfLink": "https://localhost/mgmt/tm/ltm/pool/~Common~p?ver=15.1.10"});
        assert_eq!(
            device_path(o.as_object().unwrap()).as_deref(),
            Some("/mgmt/tm/ltm/pool/~Common~p")
        );
        assert_eq!(sub_name("membersReference"), "members");
        assert_eq!(sub_name("ruleListsReference"), "rule-lists");
        assert_eq!(by_name("adc-core").map(|m| m.cm), Some("adc-core"));
        assert_eq!(by_name("ASM").map(|m| m.provision), Some("asm"));
        assert!(by_name("apm").is_none());
        assert_eq!(
            by_cm_path("/mgmt/cm/asm/tasks/declare-mgmt-authority").map(|m| m.name),
            Some("asm")
        );
    }
}
