//! The deploy task (`/mgmt/cm/{adc-core,asm,firewall}/tasks/deploy-configuration`): push the
//! central copies (`working-config`) of a module's objects back to trusted devices.
//!
//! Body: `deviceReferences: [{link}]` (or one `deviceReference`), and optionally
//! `objectsToDeployReferences: [{link: <working-config item>}]` (default: every central copy of
//! each device for the module). Per object, in dependency order (parents before children): an
//! object the device lacks is created (POST on its collection), one that differs is replaced (PUT,
//! or PATCH for ASM policies), one that is equal is left alone; the device's `current-config` copy
//! is updated after each write. Steps: `CHECK_TRUST` → `DEPLOY` → `DONE`; the first device error
//! fails the task naming the object and the device.

use http::Method;
use serde_json::{Map, Value, json};

use super::Central;
use super::config::{self, CURRENT, WORKING};
use super::devices::{self, Device};
use super::import::check_device;
use super::modules::{self, Module};
use super::tasks::{self, Outcome, Run, RunFuture, module_task_kinds};
use portcullis_admin::Ctx;
use portcullis_admin::Reply;
use portcullis_admin::{MgmtError, MgmtResult};

module_task_kinds!(
    "deploy-configuration",
    "deployconfigtaskitemstate",
    "deployconfigtaskcollectionstate"
);

pub fn handle(ctx: &Ctx<'_>, body: &[u8]) -> MgmtResult<Reply> {
    tasks::handle_any(ctx, body, KINDS)
}

fn links(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.get("link").and_then(Value::as_str).map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn prepare(
    ctx: &Ctx<'_>,
    c: &Central,
    t: &mut Map<String, Value>,
    _: Option<&Map<String, Value>>,
) -> MgmtResult<Option<Value>> {
    let m = modules::by_cm_path(&format!("{}/", ctx.path))
        .ok_or_else(|| MgmtError::no_such_uri(&ctx.path))?;
    let mut refs = links(t.get("deviceReferences"));
    if let Some(l) = t
        .get("deviceReference")
        .and_then(|r| r.get("link"))
        .and_then(Value::as_str)
    {
        refs.push(l.to_string());
    }
    if refs.is_empty() {
        return Err(MgmtError::bad_request(
            "deviceReferences (or deviceReference) must name at least one trusted device.",
        ));
    }
    let mut devs: Vec<Device> = Vec::new();
    for l in &refs {
        let mut one = Map::new();
        one.insert("deviceReference".into(), json!({"link": l}));
        let d = devices::from_reference(&c.store, &one)?;
        if !devs.iter().any(|x| x.machine_id == d.machine_id) {
            devs.push(d);
        }
    }
    let mut objects = Vec::new();
    for l in links(t.get("objectsToDeployReferences")) {
        let id = devices::machine_id_of_link(&l).unwrap_or_default();
        let rec = config::get(&c.store, m, WORKING, &id)?.ok_or_else(|| {
            MgmtError::bad_request(format!(
                "objectsToDeployReferences: {l} is not a {} working-config object.",
                m.cm
            ))
        })?;
        if !devs
            .iter()
            .any(|d| rec["machineId"] == d.machine_id.as_str())
        {
            return Err(MgmtError::bad_request(format!(
                "objectsToDeployReferences: {l} belongs to device {}, which is not in deviceReferences.",
                rec["machineId"]
            )));
        }
        objects.push(json!({"link": config::link(m, WORKING, &id, rec["collection"].as_str().unwrap_or_default())}));
    }
    let dev_links: Vec<Value> = devs
        .iter()
        .map(|d| json!({"link": d.reference()}))
        .collect();
    t.remove("deviceReference");
    t.insert("deviceReferences".into(), Value::Array(dev_links));
    t.insert(
        "machineIds".into(),
        json!(
            devs.iter()
                .map(|d| d.machine_id.as_str())
                .collect::<Vec<_>>()
        ),
    );
    t.insert("objectsToDeployReferences".into(), Value::Array(objects));
    t.insert("currentStep".into(), json!("CHECK_TRUST"));
    t.remove("deployedObjects");
    Ok(None)
}

fn run(r: Run) -> RunFuture {
    Box::pin(async move { deploy(&r).await })
}

/// Dependency order: the module's collection order, parents before children.
fn order(m: &Module, rec: &Value) -> (usize, bool) {
    let coll = rec["collection"].as_str().unwrap_or_default();
    let idx = m
        .collections
        .iter()
        .position(|c| coll == c.path || coll.starts_with(&format!("{}/", c.path)))
        .unwrap_or(usize::MAX);
    (idx, !rec["parent"].is_null())
}

async fn deploy(r: &Run) -> Outcome {
    let t = r.record()?;
    let m = modules::of_task(&t).map_err(|e| e.to_string())?;
    let wanted: Vec<String> = links(t.get("objectsToDeployReferences"))
        .iter()
        .filter_map(|l| devices::machine_id_of_link(l))
        .collect();
    let mut report = Vec::new();
    for dl in links(t.get("deviceReferences")) {
        let id = devices::machine_id_of_link(&dl).unwrap_or_default();
        r.step("CHECK_TRUST")?;
        let dev = check_device(&r.c, &id, None)
            .await
            .map_err(|e| e.to_string())?;
        r.step("DEPLOY")?;
        let mut recs: Vec<Value> = config::list(&r.c.store, m, WORKING, Some(&dev.machine_id))
            .map_err(|e| e.message)?
            .into_iter()
            .filter(|w| wanted.is_empty() || wanted.iter().any(|x| w["id"] == x.as_str()))
            .collect();
        recs.sort_by_key(|w| order(m, w));
        let client = dev.client(r.c.limits);
        for w in &recs {
            let action = push(&client, m, w).await.map_err(|e| {
                format!(
                    "deploying {} to device {} ({}) failed: {e}",
                    w["object"]["fullPath"]
                        .as_str()
                        .or(w["object"]["name"].as_str())
                        .unwrap_or("?"),
                    dev.hostname,
                    dev.endpoint()
                )
            })?;
            if action != "unchanged" {
                r.c.store
                    .write(|tx| config::put(tx, m, CURRENT, w))
                    .map_err(|e| e.message)?;
            }
            report.push(json!({
                "name": w["object"].get("fullPath").or(w["object"].get("name")),
                "devicePath": w["devicePath"],
                "machineId": dev.machine_id,
                "action": action,
            }));
        }
    }
    let mut out = Map::new();
    out.insert("deployedObjects".into(), Value::Array(report));
    Ok(out)
}

/// Makes the device's object equal to the central copy `w`; returns what was done.
async fn push(c: &super::ControllerClient, m: &Module, w: &Value) -> Result<&'static str, String> {
    let path = w["devicePath"].as_str().unwrap_or_default();
    let body = w["object"].clone();
    let (status, current) = c
        .request(Method::GET, path, None)
        .await
        .map_err(|e| e.to_string())?;
    if status == http::StatusCode::NOT_FOUND {
        let coll = match w["parent"].as_str() {
            Some(p) => format!(
                "{p}/{}",
                w["collection"]
                    .as_str()
                    .unwrap_or_default()
                    .rsplit('/')
                    .next()
                    .unwrap_or_default()
            ),
            None => w["collection"].as_str().unwrap_or_default().to_string(),
        };
        c.post_json(&coll, &body).await.map_err(|e| e.to_string())?;
        return Ok("created");
    }
    if !status.is_success() {
        return Err(format!("reading {path} answered {status}"));
    }
    let now = current
        .as_object()
        .map(modules::normalize)
        .unwrap_or_default();
    if Some(&now) == body.as_object() {
        return Ok("unchanged");
    }
    let put = m
        .collections
        .iter()
        .find(|x| {
            w["collection"]
                .as_str()
                .is_some_and(|c| c.starts_with(x.path))
        })
        .is_none_or(|x| x.put);
    let r = if put {
        c.put_json(path, &body).await
    } else {
        c.patch_json(path, &body).await
    };
    r.map_err(|e| e.to_string())?;
    Ok("updated")
}
