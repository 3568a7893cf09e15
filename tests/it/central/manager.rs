//! The central manager against real controllers: one `portcullis central` and two `portcullis
//! serve` processes on loopback. Trust, the resolver, discovery with the `$filter` query of spec
//! 4.3, import (adc-core; asm when the controller serves ASM policies), a change on a controller →
//! re-import by PATCH → conflicts with both versions → resolution → FINISHED, deploy back to the
//! device, failures with precise messages (bad password, module not provisioned, dead device
//! within the timeout), and tasks, devices and central copies across a restart.
//! (`central/restart.rs`: interrupted tasks, a changed certificate, one task per device, retention.)

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};

use crate::support::central::{address, central, device_ref, patch_task, path_of, run_task, trust};
use crate::support::mgmt::{Api, spawn};

const DISCOVERY: &str = "/mgmt/cm/global/tasks/device-discovery";
const IMPORT: &str = "/mgmt/cm/adc-core/tasks/declare-mgmt-authority";
const DEPLOY: &str = "/mgmt/cm/adc-core/tasks/deploy-configuration";
const DEVICES: &str = "/mgmt/shared/resolver/device-groups/cm-bigip-allBigIpDevices/devices";

const DEVICE_INFO: &str = "/mgmt/shared/identified-devices/config/device-info";

async fn machine_id(api: &Api) -> String {
    let info = api.ok(Method::GET, DEVICE_INFO, None).await;
    info["machineId"].as_str().expect("machineId").to_string()
}

/// `conflicts` with each one's resolution set to `resolution`, as the body that resumes an import.
fn resolve(conflicts: &[Value], resolution: &str) -> Value {
    let resolved: Vec<Value> = conflicts
        .iter()
        .map(|c| {
            let mut c = c.clone();
            c["resolution"] = json!(resolution);
            c
        })
        .collect();
    json!({"status": "STARTED", "conflicts": resolved})
}

/// The working-config item of a device object named `full_path` in `type_path` (`ltm/pool`).
async fn working(cm: &Api, type_path: &str, id: &str, full_path: &str) -> Value {
    let (st, l) = cm
        .req(
            Method::GET,
            &format!(
                "/mgmt/cm/adc-core/working-config/{type_path}?$filter=deviceReference/link+eq+'*{id}*'+and+fullPath+eq+'{full_path}'"
            ),
            None,
        )
        .await;
    assert_eq!(st, 200, "{l}");
    let items = l["items"].as_array().expect("items");
    assert_eq!(items.len(), 1, "{l}");
    items[0].clone()
}

#[tokio::test]
async fn trust_discover_import_conflicts_reimport_deploy_and_restart() {
    let tmp = tempfile::tempdir().unwrap();
    let a = spawn("serve", &tmp.path().join("a"), 0, None);
    let b = spawn("serve", &tmp.path().join("b"), 0, None);
    let mut cm_proc = central(&tmp.path().join("cm"), 2, 1000);
    let cm = Api::new(&cm_proc);
    let (api_a, api_b) = (Api::new(&a), Api::new(&b));

    // Configuration on controller A: a pool with members, a node, a data group, a virtual.
    for (path, body) in [
        (
            "/mgmt/tm/ltm/pool",
            json!({"name": "web", "description": "v1", "members": [{"name": "10.0.0.1:80"}, {"name": "10.0.0.2:80"}]}),
        ),
        (
            "/mgmt/tm/ltm/data-group/internal",
            json!({"name": "dg", "type": "string", "records": [{"name": "k", "data": "v"}]}),
        ),
        (
            "/mgmt/tm/ltm/virtual",
            json!({"name": "vs", "destination": "127.0.0.1:1", "pool": "web", "profiles": [{"name": "http"}, {"name": "tcp", "context": "all"}]}),
        ),
    ] {
        api_a.ok(Method::POST, path, Some(body)).await;
    }

    // The central manager reports a BIG-IQ version f5-sdk accepts.
    let info = cm.ok(Method::GET, DEVICE_INFO, None).await;
    assert_eq!(info["product"], "BIG-IQ");
    assert_eq!(info["version"], "8.3.0");

    // Trust: a wrong password fails with a message naming the device and the cause.
    let bad = trust(&cm, &a, "not-the-password").await;
    assert_eq!(bad["status"], "FAILED", "{bad}");
    let msg = bad["errorMessage"].as_str().unwrap();
    assert!(
        msg.contains(&address(&a)) && msg.contains("refused the credentials"),
        "{msg}"
    );
    assert!(
        bad.get("password").is_none(),
        "the password is never stored"
    );

    let ta = trust(&cm, &a, crate::support::mgmt::PASS).await;
    assert_eq!(ta["status"], "FINISHED", "{ta}");
    assert_eq!(ta["currentStep"], "DONE");
    let id_a = machine_id(&api_a).await;
    assert_eq!(ta["machineId"], id_a.as_str());
    assert!(ta["certificateFingerprint"].as_str().unwrap().len() == 95);
    let tb = trust(&cm, &b, crate::support::mgmt::PASS).await;
    assert_eq!(tb["status"], "FINISHED", "{tb}");
    let id_b = machine_id(&api_b).await;

    // The trust created a dedicated account on the device.
    let (st, users) = api_a.req(Method::GET, "/mgmt/tm/auth/user", None).await;
    assert_eq!(st, 200);
    assert!(
        users["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|u| u["name"].as_str().unwrap().starts_with("cm-")),
        "{users}"
    );

    // Resolver: both devices with machine id, address, hostname, version.
    let (st, devs) = cm.req(Method::GET, DEVICES, None).await;
    assert_eq!(st, 200);
    assert_eq!(
        devs["kind"],
        "shared:resolver:device-groups:devicegroupdevicecollectionstate"
    );
    let items = devs["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{devs}");
    let da = items
        .iter()
        .find(|d| d["machineId"] == id_a.as_str())
        .unwrap();
    assert_eq!(
        da["kind"],
        "shared:resolver:device-groups:restdeviceresolverdevicestate"
    );
    assert_eq!(
        format!("{}:{}", da["address"].as_str().unwrap(), da["httpsPort"]),
        address(&a)
    );
    assert_eq!(da["version"], "15.1.10");
    assert!(da["hostname"].is_string() && da.get("password").is_none());
    let (st, _) = cm
        .req(
            Method::GET,
            "/mgmt/shared/resolver/device-groups/cm-bigip-allDevices/devices",
            None,
        )
        .await;
    assert_eq!(st, 200);

    // Import before discovery fails and says what to do.
    let early = run_task(
        &cm,
        IMPORT,
        json!({"name": "early", "deviceReference": device_ref(&id_a), "status": "STARTED"}),
        30,
    )
    .await;
    assert_eq!(early["status"], "FAILED");
    assert!(
        early["errorMessage"]
            .as_str()
            .unwrap()
            .contains("device-discovery"),
        "{early}"
    );

    // Discovery of both, then the device list's `$filter` query.
    let asm_served = api_a
        .req(Method::GET, "/mgmt/tm/asm/policies", None)
        .await
        .0
        == 200;
    let mut modules = vec![json!({"module": "adc_core"})];
    if asm_served {
        modules.push(json!({"module": "asm"}));
    }
    for id in [&id_a, &id_b] {
        let d = run_task(
            &cm,
            DISCOVERY,
            json!({"moduleList": modules, "status": "STARTED", "deviceReference": device_ref(id)}),
            30,
        )
        .await;
        assert_eq!(d["status"], "FINISHED", "{d}");
        assert_eq!(d["currentStep"], "DONE");
    }
    let q =
        format!("{DISCOVERY}?$filter=deviceReference/link+eq+'*{id_a}*'+and+status+eq+'FINISHED'");
    let (st, found) = cm.req(Method::GET, &q, None).await;
    assert_eq!(st, 200);
    assert_eq!(found["items"].as_array().unwrap().len(), 1, "{found}");
    let (_, none) = cm
        .req(
            Method::GET,
            &format!("{DISCOVERY}?$filter=deviceReference/link+eq+'*no-such-id*'+and+status+eq+'FINISHED'"),
            None,
        )
        .await;
    assert_eq!(none["items"].as_array().unwrap().len(), 0);

    // A module that is not provisioned on the device fails discovery and says so.
    let fw = run_task(
        &cm,
        DISCOVERY,
        json!({"moduleList": ["firewall"], "deviceReference": device_ref(&id_a)}),
        30,
    )
    .await;
    assert_eq!(fw["status"], "FAILED");
    assert!(
        fw["errorMessage"]
            .as_str()
            .unwrap()
            .contains("needs afm provisioned"),
        "{fw}"
    );

    // Import of A's adc-core configuration.
    let imp = run_task(
        &cm,
        IMPORT,
        json!({"name": "import_a", "deviceReference": device_ref(&id_a), "status": "STARTED"}),
        30,
    )
    .await;
    assert_eq!(imp["status"], "FINISHED", "{imp}");
    assert_eq!(imp["currentStep"], "DONE");
    assert_eq!(
        imp["kind"],
        "cm:adc-core:tasks:declare-mgmt-authority:dmataskitemstate"
    );
    assert!(imp["importedObjects"].as_u64().unwrap() >= 5, "{imp}");
    let web = working(&cm, "ltm/pool", &id_a, "/Common/web").await;
    assert_eq!(web["description"], "v1");
    let (_, members) = cm
        .req(
            Method::GET,
            &format!("/mgmt/cm/adc-core/working-config/ltm/pool/members?$filter=deviceReference/link+eq+'*{id_a}*'"),
            None,
        )
        .await;
    assert_eq!(members["items"].as_array().unwrap().len(), 2, "{members}");
    working(&cm, "ltm/virtual", &id_a, "/Common/vs").await;
    working(&cm, "ltm/data-group/internal", &id_a, "/Common/dg").await;
    let (_, by_dev) = cm
        .req(
            Method::GET,
            &format!("{IMPORT}?$filter=deviceReference/link+eq+'*{id_a}*'"),
            None,
        )
        .await;
    assert_eq!(by_dev["items"].as_array().unwrap().len(), 2, "{by_dev}");

    // Re-import with no change: nothing to resolve.
    let reimport = json!({"status": "STARTED", "deviceReference": device_ref(&id_a)});
    let again = patch_task(&cm, &imp, reimport, 30).await;
    assert_eq!(again["currentStep"], "DONE", "{again}");
    assert_eq!(again["reimport"], true);

    // A change on the controller → re-import → PENDING_CONFLICTS with both versions.
    let pool = "/mgmt/tm/ltm/pool/~Common~web";
    api_a
        .ok(
            Method::PATCH,
            pool,
            Some(json!({"description": "changed-on-device"})),
        )
        .await;
    let reimport =
        json!({"status": "STARTED", "deviceReference": device_ref(&id_a), "name": "import_a"});
    let pending = patch_task(&cm, &imp, reimport, 30).await;
    assert_eq!(pending["status"], "FINISHED", "{pending}");
    assert_eq!(pending["currentStep"], "PENDING_CONFLICTS", "{pending}");
    let conflicts = pending["conflicts"].as_array().unwrap();
    assert_eq!(conflicts.len(), 1, "{pending}");
    let c = &conflicts[0];
    assert_eq!(c["name"], "/Common/web");
    assert_eq!(c["resolution"], "NONE");
    assert_eq!(c["centralVersion"]["description"], "v1");
    assert_eq!(c["deviceVersion"]["description"], "changed-on-device");
    assert_eq!(c["differences"], json!(["description"]));
    // The references resolve to both copies.
    for (r, want) in [
        ("fromReference", "v1"),
        ("toReference", "changed-on-device"),
    ] {
        let link = c[r]["link"].as_str().unwrap();
        let obj = cm
            .ok(
                Method::GET,
                link.trim_start_matches("https://localhost"),
                None,
            )
            .await;
        assert_eq!(obj["description"], want);
    }

    // Resuming without a resolution is refused; with USE_BIGIQ it ends FINISHED/DONE.
    let (st, e) = cm
        .req(
            Method::PATCH,
            &path_of(&imp),
            Some(json!({"status": "STARTED"})),
        )
        .await;
    assert_eq!(st, 400, "{e}");
    assert!(e["message"].as_str().unwrap().contains("/Common/web"));
    let done = patch_task(&cm, &imp, resolve(conflicts, "USE_BIGIQ"), 30).await;
    assert_eq!(done["status"], "FINISHED", "{done}");
    assert_eq!(done["currentStep"], "DONE", "{done}");
    assert_eq!(
        working(&cm, "ltm/pool", &id_a, "/Common/web").await["description"],
        "v1",
        "USE_BIGIQ keeps the central copy"
    );

    // A child object changed → PENDING_CHILD_CONFLICTS; USE_BIGIP takes the device's version.
    let member = |ip: &str| format!("{pool}/members/~Common~{ip}:80");
    api_a
        .ok(
            Method::PATCH,
            &member("10.0.0.1"),
            Some(json!({"ratio": 7})),
        )
        .await;
    let pending = patch_task(&cm, &imp, json!({"status": "STARTED"}), 30).await;
    // The pool itself still differs (USE_BIGIQ kept v1), so both kinds are listed.
    let conflicts = pending["conflicts"].as_array().unwrap();
    assert_eq!(pending["currentStep"], "PENDING_CONFLICTS", "{pending}");
    assert!(
        conflicts
            .iter()
            .any(|c| c["isChild"] == true && c["deviceVersion"]["ratio"] == 7),
        "{pending}"
    );
    let done = patch_task(&cm, &imp, resolve(conflicts, "USE_BIGIP"), 30).await;
    assert_eq!(done["currentStep"], "DONE", "{done}");
    assert_eq!(
        working(&cm, "ltm/pool", &id_a, "/Common/web").await["description"],
        "changed-on-device"
    );

    // Only a member differs now → PENDING_CHILD_CONFLICTS.
    api_a
        .ok(
            Method::PATCH,
            &member("10.0.0.2"),
            Some(json!({"ratio": 3})),
        )
        .await;
    let pending = patch_task(&cm, &imp, json!({"status": "STARTED"}), 30).await;
    assert_eq!(
        pending["currentStep"], "PENDING_CHILD_CONFLICTS",
        "{pending}"
    );
    let child = &pending["conflicts"].as_array().unwrap()[..1];
    let done = patch_task(&cm, &imp, resolve(child, "USE_BIGIP"), 30).await;
    assert_eq!(done["currentStep"], "DONE");

    // Deploy: edit the central copy, push it back; a deleted object is recreated.
    let web = working(&cm, "ltm/pool", &id_a, "/Common/web").await;
    let edited = cm
        .ok(
            Method::PATCH,
            &path_of(&web),
            Some(json!({"description": "from-central"})),
        )
        .await;
    assert_eq!(edited["description"], "from-central");
    let vs = working(&cm, "ltm/virtual", &id_a, "/Common/vs").await;
    cm.ok(
        Method::PATCH,
        &path_of(&vs),
        Some(json!({"description": "vs-from-central"})),
    )
    .await;
    let dg = "/mgmt/tm/ltm/data-group/internal/~Common~dg";
    api_a.ok(Method::DELETE, dg, None).await;
    let dep = run_task(
        &cm,
        DEPLOY,
        json!({"name": "push", "deviceReferences": [device_ref(&id_a)]}),
        60,
    )
    .await;
    assert_eq!(dep["status"], "FINISHED", "{dep}");
    let actions: Vec<(String, String)> = dep["deployedObjects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["name"].as_str().unwrap_or("").to_string(),
                o["action"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(
        actions.contains(&("/Common/web".into(), "updated".into())),
        "{dep}"
    );
    assert!(
        actions.contains(&("/Common/dg".into(), "created".into())),
        "{dep}"
    );
    let pool = api_a.ok(Method::GET, pool, None).await;
    assert_eq!(pool["description"], "from-central");
    let v = api_a
        .ok(
            Method::GET,
            "/mgmt/tm/ltm/virtual/~Common~vs?expandSubcollections=true",
            None,
        )
        .await;
    assert_eq!(v["description"], "vs-from-central");
    assert_eq!(
        v["profilesReference"]["items"].as_array().map(Vec::len),
        Some(2),
        "the virtual keeps its profiles: {v}"
    );
    api_a.ok(Method::GET, dg, None).await;
    // After the deploy a re-import finds nothing to resolve.
    let clean = patch_task(&cm, &imp, json!({"status": "STARTED"}), 30).await;
    assert_eq!(clean["currentStep"], "DONE", "{clean}");
    // A dead controller fails its task within the configured timeout (2 s, one retry).
    let b_addr = address(&b);
    drop(b);
    let t0 = Instant::now();
    let dead = run_task(
        &cm,
        DISCOVERY,
        json!({"moduleList": ["adc_core"], "deviceReference": device_ref(&id_b)}),
        30,
    )
    .await;
    assert_eq!(dead["status"], "FAILED", "{dead}");
    assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
    let msg = dead["errorMessage"].as_str().unwrap();
    assert!(
        msg.contains(&b_addr) && msg.contains("unreachable"),
        "{msg}"
    );
    // The central manager still answers while and after that.
    let (st, _) = cm.req(Method::GET, DEVICES, None).await;
    assert_eq!(st, 200);

    // Restart: devices, tasks and central copies are still there.
    cm_proc.child.kill().unwrap();
    let _ = cm_proc.child.wait();
    cm_proc = spawn(
        "central",
        &tmp.path().join("cm").join("data"),
        0,
        Some(&tmp.path().join("cm").join("central.json")),
    );
    let cm = Api::new(&cm_proc);
    let (_, devs) = cm.req(Method::GET, DEVICES, None).await;
    assert_eq!(devs["items"].as_array().unwrap().len(), 2, "{devs}");
    let (st, t) = cm.req(Method::GET, &path_of(&imp), None).await;
    assert_eq!(st, 200);
    assert_eq!(t["currentStep"], "DONE");
    let (_, dead_again) = cm.req(Method::GET, &path_of(&dead), None).await;
    assert_eq!(dead_again["status"], "FAILED");
    assert_eq!(
        working(&cm, "ltm/pool", &id_a, "/Common/web").await["description"],
        "from-central"
    );
    drop(a);
}
