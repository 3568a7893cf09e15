//! The central manager when things go wrong: the central manager is killed (SIGKILL) during a trust
//! task (it fails clearly after the restart: the password is not kept) and during a discovery
//! waiting on a paused controller (it resumes and finishes); a second task for a busy device is
//! refused (409); a controller whose certificate changed fails discovery and trust with a precise
//! message until it is forgotten and trusted again; old tasks are pruned beyond `max_tasks`.

use std::time::Duration;

use reqwest::Method;
use serde_json::json;

use crate::support::central::{address, central, device_ref, run_task, trust, wait};
use crate::support::mgmt::{Api, spawn};
use crate::support::signal;

const DISCOVERY: &str = "/mgmt/cm/global/tasks/device-discovery";
const DEVICES: &str = "/mgmt/shared/resolver/device-groups/cm-bigip-allBigIpDevices/devices";

#[tokio::test]
async fn interrupted_tasks_resume_or_fail_and_a_changed_certificate_is_caught() {
    let tmp = tempfile::tempdir().unwrap();
    let a_dir = tmp.path().join("a");
    let mut a = spawn("serve", &a_dir, 0, None);
    let a_port: u16 = address(&a).rsplit(':').next().unwrap().parse().unwrap();
    let mut cm_proc = central(&tmp.path().join("cm"), 20, 4);
    let cm = Api::new(&cm_proc);
    let ta = trust(&cm, &a, crate::support::mgmt::PASS).await;
    assert_eq!(ta["status"], "FINISHED", "{ta}");
    let id_a = ta["machineId"].as_str().unwrap().to_string();

    // A listener that accepts connections and never answers.
    let hole = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hole_addr = hole.local_addr().unwrap().to_string();
    let holder = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = hole.accept().await {
            held.push(s);
        }
    });
    let (st, stuck_trust) = cm
        .req(
            Method::POST,
            "/mgmt/cm/global/tasks/device-trust",
            Some(json!({"address": hole_addr, "userName": "admin", "password": "x"})),
        )
        .await;
    assert_eq!(st, 202, "{stuck_trust}");
    // A paused controller: the discovery waits in CHECK_TRUST.
    signal(a.child.id(), "STOP");
    let (st, stuck_disc) = cm
        .req(
            Method::POST,
            DISCOVERY,
            Some(json!({"moduleList": ["adc_core"], "deviceReference": device_ref(&id_a)})),
        )
        .await;
    assert_eq!(st, 202, "{stuck_disc}");
    // One task per device at a time.
    let (st, busy) = cm
        .req(
            Method::POST,
            DISCOVERY,
            Some(json!({"moduleList": ["adc_core"], "deviceReference": device_ref(&id_a)})),
        )
        .await;
    assert_eq!(st, 409, "{busy}");
    assert!(busy["message"].as_str().unwrap().contains(&id_a), "{busy}");
    tokio::time::sleep(Duration::from_millis(800)).await;
    for t in [&stuck_trust, &stuck_disc] {
        let (_, now) = cm
            .req(Method::GET, &crate::support::central::path_of(t), None)
            .await;
        assert_eq!(now["status"], "STARTED", "{now}");
    }

    // kill -9 the central manager in the middle of both tasks, then restart it.
    cm_proc.child.kill().unwrap();
    let _ = cm_proc.child.wait();
    signal(a.child.id(), "CONT");
    cm_proc = spawn(
        "central",
        &tmp.path().join("cm").join("data"),
        0,
        Some(&tmp.path().join("cm").join("central.json")),
    );
    let cm = Api::new(&cm_proc);
    let t = wait(&cm, &stuck_trust, 10).await;
    assert_eq!(t["status"], "FAILED", "{t}");
    assert!(
        t["errorMessage"].as_str().unwrap().contains("restarted"),
        "{t}"
    );
    let d = wait(&cm, &stuck_disc, 60).await;
    assert_eq!(d["status"], "FINISHED", "the discovery resumed: {d}");
    assert_eq!(d["currentStep"], "DONE");
    holder.abort();

    // The controller comes back on the same port with a new certificate.
    a.child.kill().unwrap();
    let _ = a.child.wait();
    std::fs::remove_file(a_dir.join("admin-cert.pem")).unwrap();
    std::fs::remove_file(a_dir.join("admin-key.pem")).unwrap();
    let a = spawn("serve", &a_dir, a_port, None);
    let changed = run_task(
        &cm,
        DISCOVERY,
        json!({"moduleList": ["adc_core"], "deviceReference": device_ref(&id_a)}),
        60,
    )
    .await;
    assert_eq!(changed["status"], "FAILED", "{changed}");
    let msg = changed["errorMessage"].as_str().unwrap();
    assert!(
        msg.contains("certificate") && msg.contains("changed"),
        "{msg}"
    );
    assert!(
        msg.contains(&ta["certificateFingerprint"].as_str().unwrap()[..20]),
        "{msg}"
    );
    let again = trust(&cm, &a, crate::support::mgmt::PASS).await;
    assert_eq!(again["status"], "FAILED", "{again}");
    assert!(
        again["errorMessage"]
            .as_str()
            .unwrap()
            .contains("Remove the device"),
        "{again}"
    );
    // Forget the device, then trust it again: the new certificate is pinned.
    let (st, _) = cm
        .req(
            Method::DELETE,
            &format!("/mgmt/shared/resolver/device-groups/cm-bigip-allDevices/devices/{id_a}"),
            None,
        )
        .await;
    assert_eq!(st, 200);
    let (_, devs) = cm.req(Method::GET, DEVICES, None).await;
    assert_eq!(devs["items"].as_array().unwrap().len(), 0, "{devs}");
    let fresh = trust(&cm, &a, crate::support::mgmt::PASS).await;
    assert_eq!(fresh["status"], "FINISHED", "{fresh}");
    assert_ne!(
        fresh["certificateFingerprint"],
        ta["certificateFingerprint"]
    );
    let ok = run_task(
        &cm,
        DISCOVERY,
        json!({"moduleList": ["adc_core"], "deviceReference": device_ref(&id_a)}),
        60,
    )
    .await;
    assert_eq!(ok["status"], "FINISHED", "{ok}");

    // Retention: at most 4 trust tasks are kept; the oldest ended one goes first.
    let (_, before) = cm
        .req(Method::GET, "/mgmt/cm/global/tasks/device-trust", None)
        .await;
    assert_eq!(before["items"].as_array().unwrap().len(), 4, "{before}");
    let extra = trust(&cm, &a, "wrong-password").await;
    assert_eq!(extra["status"], "FAILED");
    let (_, after) = cm
        .req(Method::GET, "/mgmt/cm/global/tasks/device-trust", None)
        .await;
    let ids: Vec<&str> = after["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 4, "{after}");
    assert!(
        !ids.contains(&ta["id"].as_str().unwrap()),
        "the oldest task was removed"
    );
    assert!(ids.contains(&extra["id"].as_str().unwrap()));
}
