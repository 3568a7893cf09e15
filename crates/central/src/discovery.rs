//! The discovery task (`/mgmt/cm/global/tasks/device-discovery`): for a trusted
//! device (`deviceReference.link` = `cm/system/machineid-resolver/<machineId>`) and a `moduleList`
//! (`["adc_core"]` or `[{"module": "adc_core"}]`), check the trust, check each module is
//! provisioned on the device, read its configuration (object counts per module), and record the
//! modules on the device (they put it in the per-module resolver groups and allow imports).
//! Steps: `CHECK_TRUST` → `CHECK_PROVISIONING` → `READ_CONFIG` → `SAVE_DEVICE` → `DONE`.

use serde_json::{Map, Value, json};

use super::Central;
use super::devices;
use super::import::check_device;
use super::modules::{self, Module};
use super::tasks::{self, Outcome, Resume, Run, RunFuture, TaskKind};
use portcullis_admin::Ctx;
use portcullis_admin::Reply;
use portcullis_admin::{MgmtError, MgmtResult};

pub static KIND: TaskKind = TaskKind {
    collection: "/mgmt/cm/global/tasks/device-discovery",
    kind: "cm:global:tasks:device-discovery:devicediscoverytaskitemstate",
    collection_kind: "cm:global:tasks:device-discovery:devicediscoverytaskcollectionstate",
    prepare,
    run,
    exclusive: &["/mgmt/cm/global/tasks/device-discovery"],
    resume: Resume::Rerun,
};

pub fn handle(ctx: &Ctx<'_>, body: &[u8]) -> MgmtResult<Reply> {
    tasks::handle(ctx, body, &KIND)
}

/// The modules of a `moduleList` (strings or `{module}` objects; `adc_core` when absent).
pub fn module_list(v: Option<&Value>) -> MgmtResult<Vec<&'static Module>> {
    let names: Vec<String> = match v {
        None | Some(Value::Null) => vec!["adc_core".into()],
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| {
                x.as_str()
                    .or_else(|| x.get("module").and_then(Value::as_str))
                    .map(str::to_string)
                    .ok_or_else(|| {
                        MgmtError::bad_request(
                            "moduleList entries are module names or {\"module\": name} objects.",
                        )
                    })
            })
            .collect::<MgmtResult<_>>()?,
        Some(_) => {
            return Err(MgmtError::bad_request(
                "moduleList must be an array of modules.",
            ));
        }
    };
    let mut out: Vec<&'static Module> = Vec::new();
    for n in names {
        let m = modules::by_name(&n).ok_or_else(|| {
            MgmtError::bad_request(format!(
                "Module '{n}' is not supported; the modules are adc_core, asm, firewall."
            ))
        })?;
        if !out.iter().any(|x| std::ptr::eq(*x, m)) {
            out.push(m);
        }
    }
    if out.is_empty() {
        return Err(MgmtError::bad_request("moduleList is empty."));
    }
    Ok(out)
}

fn prepare(
    _: &Ctx<'_>,
    c: &Central,
    t: &mut Map<String, Value>,
    _: Option<&Map<String, Value>>,
) -> MgmtResult<Option<Value>> {
    let dev = devices::from_reference(&c.store, t)?;
    let mods = module_list(t.get("moduleList"))?;
    let list: Vec<Value> = mods.iter().map(|m| json!({"module": m.name})).collect();
    t.insert("moduleList".into(), Value::Array(list));
    t.insert("machineId".into(), json!(dev.machine_id));
    t.insert("deviceReference".into(), json!({"link": dev.reference()}));
    t.insert("currentStep".into(), json!("CHECK_TRUST"));
    t.remove("discoveredModules");
    t.remove("objectCounts");
    Ok(None)
}

fn run(r: Run) -> RunFuture {
    Box::pin(async move { discover(&r).await })
}

async fn discover(r: &Run) -> Outcome {
    let t = r.record()?;
    let mods = module_list(t.get("moduleList")).map_err(|e| e.message)?;
    r.step("CHECK_TRUST")?;
    let id = t.get("machineId").and_then(Value::as_str).unwrap_or("");
    let mut dev = check_device(&r.c, id, None)
        .await
        .map_err(|e| e.to_string())?;
    let client = dev.client(r.c.limits);

    r.step("CHECK_PROVISIONING")?;
    let prov = client
        .get_json("/mgmt/tm/sys/provision")
        .await
        .map_err(|e| e.to_string())?;
    let level = |name: &str| {
        prov.get("items")
            .and_then(Value::as_array)
            .and_then(|items| items.iter().find(|i| i["name"] == name))
            .and_then(|i| i["level"].as_str())
            .unwrap_or("none")
            .to_string()
    };
    for m in &mods {
        let l = level(m.provision);
        if l == "none" {
            return Err(format!(
                "module {} needs {} provisioned on device {} ({}); its level is '{l}'",
                m.name,
                m.provision,
                dev.hostname,
                dev.endpoint()
            ));
        }
    }

    r.step("READ_CONFIG")?;
    let mut counts = Map::new();
    for m in &mods {
        let found = modules::read(&client, m)
            .await
            .map_err(|e| format!("device {}: {e}", dev.endpoint()))?;
        counts.insert(m.name.into(), json!(found.len()));
    }

    r.step("SAVE_DEVICE")?;
    let info = client
        .get_json("/mgmt/shared/identified-devices/config/device-info")
        .await
        .map_err(|e| e.to_string())?;
    r.c.store
        .write(|tx| {
            let mut cur = devices::get(&r.c.store, &dev.machine_id)?.unwrap_or(dev.clone());
            for m in &mods {
                if !cur.modules.iter().any(|x| x == m.name) {
                    cur.modules.push(m.name.to_string());
                }
            }
            for (field, key) in [
                (&mut cur.version, "version"),
                (&mut cur.hostname, "hostname"),
                (&mut cur.build, "build"),
            ] {
                if let Some(v) = info.get(key).and_then(Value::as_str) {
                    *field = v.to_string();
                }
            }
            devices::put(tx, &cur)?;
            dev = cur;
            Ok::<_, MgmtError>(())
        })
        .map_err(|e| e.message)?;
    let mut out = Map::new();
    out.insert(
        "discoveredModules".into(),
        json!(mods.iter().map(|m| m.name).collect::<Vec<_>>()),
    );
    out.insert("objectCounts".into(), Value::Object(counts));
    out.insert("deviceModules".into(), json!(dev.modules));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_lists_accept_both_forms() {
        let m = module_list(Some(&json!([{"module": "adc_core"}, "asm", "adc_core"]))).unwrap();
        assert_eq!(
            m.iter().map(|m| m.name).collect::<Vec<_>>(),
            ["adc_core", "asm"]
        );
        assert_eq!(module_list(None).unwrap()[0].name, "adc_core");
        assert!(module_list(Some(&json!(["apm"]))).is_err());
        assert!(module_list(Some(&json!([]))).is_err());
        assert!(module_list(Some(&json!("adc_core"))).is_err());
    }
}
