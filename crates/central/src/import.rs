//! The import task (`/mgmt/cm/{adc-core,asm,firewall}/tasks/declare-mgmt-authority`):
//! copy a trusted, discovered device's configuration of one module into the central
//! manager's database.
//!
//! Steps: `CHECK_TRUST` (device-info answers with the pinned certificate and the same machine id)
//! → `READ_CONFIG` → `COMPARE` → `DONE`, or `PENDING_CONFLICTS` / `PENDING_CHILD_CONFLICTS` with
//! the conflicts listed (status `FINISHED`, as the real system answers, so pollers stop). New
//! objects are imported and the device snapshot (`current-config`) is saved even when conflicts
//! are pending. `PATCH {status: STARTED, conflicts: [...resolution...]}` resumes a pending task:
//! step `RESOLVE_CONFLICTS` applies each resolution (`USE_BIGIP` replaces the central copy with the
//! device's version seen at import, or removes it when the device no longer has the object;
//! `USE_BIGIQ` keeps it) and the task ends `DONE`. `PATCH {status: STARTED}` of a task that
//! ended `DONE` or `FAILED` re-imports (`reimport: true`) without a new trust.

use serde_json::{Map, Value, json};

use super::Central;
use super::client::ClientError;
use super::config::{self, CURRENT, WORKING};
use super::conflicts::{self, USE_BIGIP};
use super::devices::{self, Device};
use super::modules::{self, Module};
use super::tasks::{
    self, Outcome, PENDING_CHILD_CONFLICTS, PENDING_CONFLICTS, Run, RunFuture, module_task_kinds,
};
use portcullis_admin::Ctx;
use portcullis_admin::Reply;
use portcullis_admin::{MgmtError, MgmtResult};

module_task_kinds!(
    "declare-mgmt-authority",
    "dmataskitemstate",
    "dmataskcollectionstate"
);

const RESOLVE: &str = "RESOLVE_CONFLICTS";

pub fn handle(ctx: &Ctx<'_>, body: &[u8]) -> MgmtResult<Reply> {
    tasks::handle_any(ctx, body, KINDS)
}

fn prepare(
    _: &Ctx<'_>,
    c: &Central,
    t: &mut Map<String, Value>,
    existing: Option<&Map<String, Value>>,
) -> MgmtResult<Option<Value>> {
    let dev = devices::from_reference(&c.store, t)?;
    let step = existing
        .and_then(|e| e.get("currentStep"))
        .and_then(Value::as_str)
        .unwrap_or("");
    if matches!(step, PENDING_CONFLICTS | PENDING_CHILD_CONFLICTS) {
        let mut list = existing
            .and_then(|e| e.get("conflicts"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        conflicts::take_resolutions(&mut list, t.get("conflicts"))?;
        t.insert("conflicts".into(), Value::Array(list));
        t.insert("currentStep".into(), json!(RESOLVE));
    } else {
        t.insert("reimport".into(), json!(existing.is_some()));
        t.insert("conflicts".into(), json!([]));
        t.insert("currentStep".into(), json!("CHECK_TRUST"));
    }
    t.insert("machineId".into(), json!(dev.machine_id));
    t.insert("deviceIp".into(), json!(dev.address));
    t.insert("deviceName".into(), json!(dev.hostname));
    t.insert("deviceReference".into(), json!({"link": dev.reference()}));
    t.entry("name")
        .or_insert_with(|| json!(format!("import_{}", dev.hostname)));
    t.entry("createChildTasks").or_insert(json!(false));
    t.entry("skipDiscovery").or_insert(json!(false));
    Ok(None)
}

fn run(r: Run) -> RunFuture {
    Box::pin(async move { import(&r).await })
}

/// Why a task's device cannot be worked on; the task record carries the text.
#[derive(Debug, thiserror::Error)]
pub enum DeviceCheckError {
    /// The trusted devices cannot be read (the admin API's message).
    #[error("{message}")]
    Store { message: String },
    #[error("device {id} is no longer trusted")]
    NotTrusted { id: String },
    #[error(
        "module {module} was not discovered on device {hostname} ({endpoint}); run a device-discovery task with moduleList [{{\"module\": \"{module}\"}}] first"
    )]
    ModuleNotDiscovered {
        module: &'static str,
        hostname: String,
        endpoint: String,
    },
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error(
        "device {endpoint} now reports machine id '{reported}', not the trusted {trusted}; establish trust again"
    )]
    MachineIdChanged {
        endpoint: String,
        reported: String,
        trusted: String,
    },
}

/// A trusted device checked for a task: still trusted, answering with the pinned certificate and
/// the same machine id, and (with `module`) that module discovered.
pub async fn check_device(
    c: &Central,
    id: &str,
    module: Option<&Module>,
) -> Result<Device, DeviceCheckError> {
    let dev = devices::get(&c.store, id)
        .map_err(|e| DeviceCheckError::Store { message: e.message })?
        .ok_or_else(|| DeviceCheckError::NotTrusted { id: id.to_string() })?;
    if let Some(m) = module
        && !dev.modules.iter().any(|x| x == m.name)
    {
        return Err(DeviceCheckError::ModuleNotDiscovered {
            module: m.name,
            hostname: dev.hostname.clone(),
            endpoint: dev.endpoint(),
        });
    }
    let info = dev
        .client(c.limits)
        .get_json("/mgmt/shared/identified-devices/config/device-info")
        .await?;
    let now = info.get("machineId").and_then(Value::as_str).unwrap_or("");
    if now != dev.machine_id {
        return Err(DeviceCheckError::MachineIdChanged {
            endpoint: dev.endpoint(),
            reported: now.to_string(),
            trusted: dev.machine_id.clone(),
        });
    }
    Ok(dev)
}

async fn import(r: &Run) -> Outcome {
    let t = r.record()?;
    let m = modules::of_task(&t).map_err(|e| e.to_string())?;
    if t.get("currentStep").and_then(Value::as_str) == Some(RESOLVE) {
        return resolve(r, m, &t);
    }
    r.step("CHECK_TRUST")?;
    let id = t.get("machineId").and_then(Value::as_str).unwrap_or("");
    let dev = check_device(&r.c, id, Some(m))
        .await
        .map_err(|e| e.to_string())?;
    r.step("READ_CONFIG")?;
    let found = modules::read(&dev.client(r.c.limits), m)
        .await
        .map_err(|e| format!("device {}: {e}", dev.endpoint()))?;
    r.step("COMPARE")?;
    let working =
        config::list(&r.c.store, m, WORKING, Some(&dev.machine_id)).map_err(|e| e.message)?;
    let plan = conflicts::compare(m, &dev.machine_id, &found, &working);
    let old_current =
        config::list(&r.c.store, m, CURRENT, Some(&dev.machine_id)).map_err(|e| e.message)?;
    r.c.store
        .write(|tx| {
            for old in &old_current {
                config::remove(tx, m, CURRENT, old["id"].as_str().unwrap_or_default())?;
            }
            for f in &found {
                config::put(tx, m, CURRENT, &config::record(&dev.machine_id, f))?;
            }
            for f in &plan.new {
                config::put(tx, m, WORKING, &config::record(&dev.machine_id, f))?;
            }
            Ok::<_, MgmtError>(())
        })
        .map_err(|e| e.message)?;
    let mut out = Map::new();
    out.insert("deviceObjects".into(), json!(found.len()));
    out.insert("importedObjects".into(), json!(plan.new.len()));
    out.insert("unchangedObjects".into(), json!(plan.same));
    if !plan.conflicts.is_empty() {
        out.insert("currentStep".into(), json!(plan.pending_step()));
    }
    out.insert("conflicts".into(), Value::Array(plan.conflicts));
    Ok(out)
}

/// Applies the resolutions the user set (see the module header).
fn resolve(r: &Run, m: &Module, t: &Map<String, Value>) -> Outcome {
    let list = t
        .get("conflicts")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut taken = 0;
    r.c.store
        .write(|tx| {
            for c in &list {
                if c["resolution"] != USE_BIGIP {
                    continue;
                }
                taken += 1;
                let id = c["id"].as_str().unwrap_or_default();
                match config::get(&r.c.store, m, CURRENT, id)? {
                    Some(cur) if c["deviceHasObject"] == true => config::put(tx, m, WORKING, &cur)?,
                    _ => config::remove(tx, m, WORKING, id)?,
                }
            }
            Ok::<_, MgmtError>(())
        })
        .map_err(|e| e.message)?;
    let mut out = Map::new();
    out.insert("resolvedConflicts".into(), json!(list.len()));
    out.insert("deviceVersionsTaken".into(), json!(taken));
    Ok(out)
}
