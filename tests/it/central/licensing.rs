//! Licensing pools and the billing report against real processes: one `portcullis central` and two
//! `portcullis serve` controllers on loopback. A pool is created from a base registration key; one
//! member licenses a trusted controller (by `deviceReference`), another an unmanaged controller (by
//! address and credentials); each controller's `/mgmt/tm/sys/license` shows the key; failures (bad
//! key, unknown device, bad credentials, dead controller) are clear and bounded; the real
//! `billing-report` binary writes the manual report, uploads the automatic one to a loopback TLS
//! endpoint, and `billing-report mask` pseudonymises it; revoking removes the license on the device.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};

use crate::support::central::{address, central, device_ref, trust};
use crate::support::mgmt::{Api, PASS, Server, spawn};
use crate::support::{DeadAddr, signal};

const POOLS: &str = "/mgmt/cm/shared/licensing/pools";
const KEY: &str = "ABCDE-FGHIJ-KLMNO-PQRST-UVWXYZ1";
const OTHER_KEY: &str = "BBBBB-CCCCC-DDDDD-EEEEE-FFFFFFF";

/// Runs `portcullis billing-report ARGS` (off the async workers) with the admin password set.
async fn billing(args: &[&str], cwd: &Path) -> Output {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let cwd = cwd.to_path_buf();
    tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_portcullis"))
            .arg("billing-report")
            .args(&args)
            .current_dir(&cwd)
            .env("PORTCULLIS_ADMIN_PASSWORD", PASS)
            .env_remove("PORTCULLIS_BILLING_UPLOAD_URL")
            .env_remove("PORTCULLIS_BILLING_UPLOAD_CA")
            .output()
            .expect("run billing-report")
    })
    .await
    .expect("join")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs `billing-report ARGS`, which must fail (exit status 1) saying `why` on stderr.
async fn billing_fails(args: &[&str], cwd: &Path, why: &str) {
    let o = billing(args, cwd).await;
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains(why), "{err}");
}

/// Polls a member until it leaves INSTALLING (within `secs`).
async fn settled(cm: &Api, pool: &str, member: &Value, secs: u64) -> Value {
    let path = format!(
        "{POOLS}/{pool}/members/{}",
        member["uuid"].as_str().unwrap()
    );
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let (st, m) = cm.req(Method::GET, &path, None).await;
        assert_eq!(st, 200, "{m}");
        if m["state"] != "INSTALLING" {
            return m;
        }
        assert!(
            Instant::now() < deadline,
            "member still INSTALLING after {secs} s: {m}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn license_key(api: &Api) -> Value {
    let (st, l) = api.req(Method::GET, "/mgmt/tm/sys/license", None).await;
    assert_eq!(st, 200, "{l}");
    l["entries"]["https://localhost/mgmt/tm/sys/license/0"]["nestedStats"]["entries"].clone()
}

async fn add_member(cm: &Api, pool: &str, body: Value) -> (reqwest::StatusCode, Value) {
    cm.req(Method::POST, &format!("{POOLS}/{pool}/members"), Some(body))
        .await
}

/// Adds the two members every test starts with: `managed` (a trusted controller's machine id) by
/// its `deviceReference`, and the controller `unmanaged` by address and credentials. Both grants
/// are accepted (202) and run in the background; returns both members.
async fn add_both(cm: &Api, pool: &str, managed: &str, unmanaged: &Server) -> (Value, Value) {
    let mut members = Vec::new();
    for body in [
        json!({"deviceReference": device_ref(managed)}),
        json!({"deviceAddress": address(unmanaged), "username": "admin", "password": PASS}),
    ] {
        let (st, m) = add_member(cm, pool, body).await;
        assert_eq!(st, 202, "{m}");
        assert_eq!(m["state"], "INSTALLING", "{m}");
        members.push(m);
    }
    let m_b = members.pop().unwrap();
    (members.pop().unwrap(), m_b)
}

/// A loopback HTTPS endpoint (self-signed) that records the bodies POSTed to `/billing`.
async fn billing_endpoint(
    dir: &Path,
) -> (
    String,
    std::path::PathBuf,
    tokio::sync::mpsc::Receiver<Vec<u8>>,
) {
    let ck =
        rcgen::generate_simple_self_signed(vec!["127.0.0.1".into(), "localhost".into()]).unwrap();
    let ca = dir.join("billing-ca.pem");
    std::fs::write(&ca, ck.cert.pem()).unwrap();
    let tls = portcullis::proxy::tls_server_config(
        ck.cert.pem().as_bytes(),
        ck.signing_key.serialize_pem().as_bytes(),
    )
    .unwrap();
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    let app = axum::Router::new().route(
        "/billing",
        axum::routing::post(move |body: axum::body::Bytes| {
            let tx = tx.clone();
            async move {
                let _ = tx.send(body.to_vec()).await;
                (axum::http::StatusCode::ACCEPTED, "{\"received\":true}")
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(portcullis::mgmt::serve_admin(
        listener,
        tls,
        app,
        portcullis::mgmt::ConnLimits::default(),
        std::future::pending(),
    ));
    (format!("https://127.0.0.1:{port}/billing"), ca, rx)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pools_license_controllers_and_the_billing_report_reads_them() {
    let tmp = tempfile::tempdir().unwrap();
    let a: Server = spawn("serve", &tmp.path().join("a"), 0, None);
    let b: Server = spawn("serve", &tmp.path().join("b"), 0, None);
    let cm_proc = central(&tmp.path().join("cm"), 2, 100);
    let cm = Api::new(&cm_proc);
    let (api_a, api_b) = (Api::new(&a), Api::new(&b));

    // Pools: a bad key is refused, the key is normalised, a second pool on the same key conflicts.
    let (st, e) = cm
        .req(
            Method::POST,
            POOLS,
            Some(json!({"name": "prod", "baseRegKey": "not-a-key"})),
        )
        .await;
    assert_eq!(st, 400, "{e}");
    assert!(
        e["message"].as_str().unwrap().contains("registration key"),
        "{e}"
    );
    let (st, pool) = cm
        .req(
            Method::POST,
            POOLS,
            Some(
                json!({"name": "prod", "baseRegKey": KEY.to_lowercase(), "totalDeviceLicenses": 5}),
            ),
        )
        .await;
    assert_eq!(st, 200, "{pool}");
    assert_eq!(pool["baseRegKey"], KEY);
    assert_eq!(pool["state"], "LICENSED");
    assert_eq!(
        pool["kind"],
        "cm:shared:licensing:pools:licensepoolworkerstate"
    );
    let pid = pool["uuid"].as_str().unwrap().to_string();
    let (st, e) = cm
        .req(
            Method::POST,
            POOLS,
            Some(json!({"name": "again", "baseRegKey": KEY})),
        )
        .await;
    assert_eq!(st, 409, "{e}");
    let (st, list) = cm
        .req(
            Method::GET,
            &format!("{POOLS}?$filter=name+eq+'prod'"),
            None,
        )
        .await;
    assert_eq!(st, 200, "{list}");
    assert_eq!(list["items"][0]["uuid"], pid.as_str());
    assert_eq!(list["items"][0]["freeDeviceLicenses"], 5);

    // A managed member, controller A, trusted through the central manager's trust task, and an
    // unmanaged member, controller B by address and credentials.
    let t = trust(&cm, &a, PASS).await;
    assert_eq!(t["status"], "FINISHED", "{t}");
    let mid_a = t["machineId"].as_str().unwrap().to_string();
    let (m_a, m_b) = add_both(&cm, &pid, &mid_a, &b).await;
    assert_eq!(
        m_a["kind"],
        "cm:shared:licensing:pools:licensepoolmemberstate"
    );
    let m_a = settled(&cm, &pid, &m_a, 30).await;
    let m_b = settled(&cm, &pid, &m_b, 30).await;
    assert_eq!(m_a["state"], "LICENSED", "{m_a}");
    assert_eq!(m_b["state"], "LICENSED", "{m_b}");
    assert_eq!(m_a["deviceMachineId"], mid_a.as_str());
    assert!(
        m_b["deviceModules"]
            .as_array()
            .unwrap()
            .contains(&json!("asm")),
        "{m_b}"
    );
    for (api, m) in [(&api_a, &m_a), (&api_b, &m_b)] {
        let e = license_key(api).await;
        assert_eq!(e["registrationKey"]["description"], KEY, "{e}");
        assert_eq!(e["licensePoolUuid"]["description"], pid.as_str(), "{e}");
        assert_eq!(e["licensePoolMemberUuid"]["description"], m["uuid"], "{e}");
    }
    let (_, p) = cm.req(Method::GET, &format!("{POOLS}/{pid}"), None).await;
    assert_eq!(p["freeDeviceLicenses"], 3, "{p}");

    // Errors: the same device twice, an unknown device, both forms, bad credentials, a dead controller.
    let (st, e) = add_member(&cm, &pid, json!({"deviceReference": device_ref(&mid_a)})).await;
    assert_eq!(st, 409, "{e}");
    let (st, e) = add_member(
        &cm,
        &pid,
        json!({"deviceReference": device_ref("0b9e6a4e-0000-4000-a000-000000000000")}),
    )
    .await;
    assert_eq!(st, 404, "{e}");
    let (st, e) = add_member(&cm, &pid, json!({"deviceReference": device_ref(&mid_a), "deviceAddress": "x", "username": "u", "password": "p"})).await;
    assert_eq!(st, 400, "{e}");
    let (st, e) = add_member(&cm, &pid, json!({"deviceAddress": address(&b)})).await;
    assert_eq!(st, 400, "{e}");
    let a_by_name = address(&a).replace("127.0.0.1", "localhost");
    let (_, bad) = add_member(
        &cm,
        &pid,
        json!({"deviceAddress": a_by_name, "username": "admin", "password": "wrong"}),
    )
    .await;
    let bad = settled(&cm, &pid, &bad, 30).await;
    assert_eq!(bad["state"], "FAILED", "{bad}");
    assert!(
        bad["errorText"]
            .as_str()
            .unwrap()
            .contains("refused the credentials"),
        "{bad}"
    );
    let dead_addr = DeadAddr::new();
    let dead = dead_addr.to_string();
    let started = Instant::now();
    let (_, gone) = add_member(
        &cm,
        &pid,
        json!({"deviceAddress": dead, "username": "admin", "password": PASS}),
    )
    .await;
    let gone = settled(&cm, &pid, &gone, 30).await;
    assert_eq!(gone["state"], "FAILED", "{gone}");
    assert!(
        gone["errorText"].as_str().unwrap().contains(&dead),
        "{gone}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "dead device took {:?}",
        started.elapsed()
    );
    assert_eq!(
        license_key(&api_a).await["registrationKey"]["description"],
        KEY,
        "A keeps its license"
    );

    // Billing report, manual: the real binary, a CSV key file plus -k.
    let out_dir = tmp.path().join("reports");
    std::fs::create_dir_all(&out_dir).unwrap();
    let csv = tmp.path().join("keys.csv");
    std::fs::write(&csv, format!("registration key,customer\n{KEY},acme\n")).unwrap();
    let (csv, out) = (csv.display().to_string(), out_dir.display().to_string());
    let manual = ["-k", OTHER_KEY, "-r", "manual", "--central", &cm_proc.base];
    let o = billing(
        &[&["-c", &csv], &manual[..], &["--out-dir", &out]].concat(),
        tmp.path(),
    )
    .await;
    assert!(o.status.success(), "{}{}", text(&o.stdout), text(&o.stderr));
    assert!(
        text(&o.stdout)
            .contains("no licensing pool on the central manager uses registration key BBBBB"),
        "{}",
        text(&o.stdout)
    );
    let files: Vec<_> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let name = files[0].file_name().unwrap().to_string_lossy().into_owned();
    let date = &name.trim_start_matches("PORTCULLIS_Billing_License_Report.")[..10];
    assert_eq!(
        name,
        format!("PORTCULLIS_Billing_License_Report.{date}.json")
    );
    assert!(date.len() == 10 && date.as_bytes()[4] == b'-', "{name}");
    let report: Value = serde_json::from_slice(&std::fs::read(&files[0]).unwrap()).unwrap();
    assert_eq!(report["submissionMethod"], "manual");
    assert_eq!(report["reportDate"], date);
    assert_eq!(report["centralManager"]["product"], "BIG-IQ");
    let per_key = report["registrationKeys"].as_array().unwrap();
    assert_eq!(per_key.len(), 2, "{report}");
    assert_eq!(per_key[0]["registrationKey"], KEY);
    assert_eq!(per_key[0]["status"], "FOUND");
    assert_eq!(per_key[0]["licensedDeviceCount"], 2, "{report}");
    assert_eq!(per_key[1]["status"], "NOT_FOUND");
    let devices = per_key[0]["devices"].as_array().unwrap();
    let licensed: Vec<&Value> = devices
        .iter()
        .filter(|d| d["status"] == "LICENSED")
        .collect();
    assert_eq!(licensed.len(), 2, "{report}");
    for d in &licensed {
        assert!(
            d["machineId"].as_str().is_some_and(|s| !s.is_empty()),
            "{d}"
        );
        assert_eq!(d["hostname"], "portcullis.local", "{d}");
        assert_eq!(d["version"], "15.1.10", "{d}");
        assert!(d["licensedSince"].as_str().unwrap().ends_with('Z'), "{d}");
        assert_eq!(d["licensedHours"], 0, "{d}");
        assert!(
            d["modules"].as_array().unwrap().contains(&json!("ltm")),
            "{d}"
        );
    }
    let addresses: Vec<&str> = licensed
        .iter()
        .map(|d| d["address"].as_str().unwrap())
        .collect();
    assert!(
        addresses.contains(&address(&a).as_str()) && addresses.contains(&address(&b).as_str()),
        "{addresses:?}"
    );
    assert!(
        devices
            .iter()
            .any(|d| d["status"] == "FAILED" && d["address"] == dead.as_str())
    );

    // Mask: same structure, every address and host name replaced, the same one the same way.
    let o = billing(&["mask", &files[0].display().to_string()], tmp.path()).await;
    assert!(o.status.success(), "{}", text(&o.stderr));
    let masked_path = out_dir.join(name.replace(".json", ".masked.json"));
    let masked_text = std::fs::read_to_string(&masked_path).unwrap();
    for secret in ["127.0.0.1", "portcullis.local", "localhost"] {
        assert!(
            !masked_text.contains(secret),
            "{secret} left in the masked report"
        );
    }
    let masked: Value = serde_json::from_str(&masked_text).unwrap();
    let all = masked["registrationKeys"][0]["devices"].as_array().unwrap();
    assert_eq!(all.len(), devices.len());
    let md: Vec<&Value> = all.iter().filter(|d| d["status"] == "LICENSED").collect();
    let host_of = |d: &Value| {
        d["address"]
            .as_str()
            .unwrap()
            .rsplit_once(':')
            .unwrap()
            .0
            .to_string()
    };
    assert_eq!(host_of(md[0]), host_of(md[1]), "one address, one pseudonym");
    assert_eq!(md[0]["hostname"], md[1]["hostname"]);
    assert_eq!(
        md[0]["machineId"], licensed[0]["machineId"],
        "ids are not addresses"
    );
    assert_eq!(masked["registrationKeys"][0]["licensedDeviceCount"], 2);

    // Automatic: to a loopback TLS endpoint trusted through --upload-ca; unreachable fails.
    let (url, ca, mut rx) = billing_endpoint(tmp.path()).await;
    let ca = ca.display().to_string();
    let upload = |url| ["-k", KEY, "--central", &cm_proc.base, "--upload-url", url];
    let o = billing(
        &[&upload(&url)[..], &["--upload-ca", &ca]].concat(),
        tmp.path(),
    )
    .await;
    assert!(o.status.success(), "{}{}", text(&o.stdout), text(&o.stderr));
    assert!(text(&o.stdout).contains("uploaded"), "{}", text(&o.stdout));
    let body = tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .unwrap()
        .unwrap();
    let sent: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(sent["submissionMethod"], "automatic");
    assert_eq!(sent["registrationKeys"][0]["licensedDeviceCount"], 2);
    let dead = DeadAddr::new();
    let dead_url = format!("https://{dead}/billing");
    let dead_upload = [&upload(&dead_url)[..], &["--upload-ca", &ca]].concat();
    billing_fails(&dead_upload, tmp.path(), "cannot connect").await;
    let o = billing(&upload(&url), tmp.path()).await;
    assert_eq!(
        o.status.code(),
        Some(1),
        "the endpoint's self-signed certificate is not trusted without --upload-ca"
    );
    let nobody = [
        "-k",
        KEY,
        "-r",
        "manual",
        "--central",
        &cm_proc.base,
        "--user",
        "nobody",
    ];
    billing_fails(
        &nobody,
        tmp.path(),
        "refused the credentials of user nobody",
    )
    .await;

    // Revoke: the pool will not go while it licenses devices; each revocation removes the license.
    let (st, e) = cm
        .req(Method::DELETE, &format!("{POOLS}/{pid}"), None)
        .await;
    assert_eq!(st, 409, "{e}");
    let member_path = |m: &Value| format!("{POOLS}/{pid}/members/{}", m["uuid"].as_str().unwrap());
    let (st, r) = cm.req(Method::DELETE, &member_path(&m_a), None).await;
    assert_eq!(st, 200, "{r}");
    assert_eq!(r["state"], "REVOKED");
    assert_eq!(
        license_key(&api_a).await["registrationKey"]["description"],
        "none"
    );
    let (st, e) = cm.req(Method::DELETE, &member_path(&m_b), None).await;
    assert_eq!(st, 400, "unmanaged revocation needs credentials: {e}");
    assert_eq!(
        license_key(&api_b).await["registrationKey"]["description"],
        KEY
    );
    let (st, r) = cm
        .req(
            Method::DELETE,
            &member_path(&m_b),
            Some(json!({"username": "admin", "password": PASS})),
        )
        .await;
    assert_eq!(st, 200, "{r}");
    assert_eq!(
        license_key(&api_b).await["registrationKey"]["description"],
        "none"
    );
    let (st, e) = cm.req(Method::GET, &member_path(&m_b), None).await;
    assert_eq!(st, 404, "{e}");
    let (st, _) = cm
        .req(Method::DELETE, &format!("{POOLS}/{pid}"), None)
        .await;
    assert_eq!(st, 200);
    let (_, list) = cm.req(Method::GET, POOLS, None).await;
    assert_eq!(list["items"], json!([]));
}

#[tokio::test]
async fn billing_report_usage_and_missing_endpoint_fail_clearly() {
    let tmp = tempfile::tempdir().unwrap();
    let o = billing(&["-r", "manual"], tmp.path()).await;
    assert_eq!(o.status.code(), Some(2), "no -c/-k is a usage error");
    assert!(
        text(&o.stderr).contains("-c") && text(&o.stderr).contains("-k"),
        "{}",
        text(&o.stderr)
    );
    let bad_key = ["-k", "not-a-key", "-r", "manual"];
    billing_fails(&bad_key, tmp.path(), "is not a registration key").await;
    // Automatic is the default; with no endpoint configured it says so before calling anything.
    billing_fails(&["-k", KEY], tmp.path(), "PORTCULLIS_BILLING_UPLOAD_URL").await;
    let o = billing(&["-h"], tmp.path()).await;
    assert!(
        o.status.success() && text(&o.stdout).contains("-r <MODE>"),
        "{}",
        text(&o.stdout)
    );
    // A central manager that is not running: a bounded, clear failure.
    let dead = DeadAddr::new();
    let dead_cm = format!("https://{dead}");
    let args = ["-k", KEY, "-r", "manual", "--central", &dead_cm];
    billing_fails(&args, tmp.path(), "unreachable").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grants_interrupted_by_a_restart_resume_or_fail() {
    let tmp = tempfile::tempdir().unwrap();
    let a = spawn("serve", &tmp.path().join("a"), 0, None);
    let b = spawn("serve", &tmp.path().join("b"), 0, None);
    let cm_dir = tmp.path().join("cm");
    let cm_proc = central(&cm_dir, 20, 100);
    let cm = Api::new(&cm_proc);
    let t = trust(&cm, &a, PASS).await;
    assert_eq!(t["status"], "FINISHED", "{t}");
    let mid_a = t["machineId"].as_str().unwrap().to_string();
    let pool = cm
        .ok(
            Method::POST,
            POOLS,
            Some(json!({"name": "p", "baseRegKey": KEY})),
        )
        .await;
    let pid = pool["uuid"].as_str().unwrap().to_string();

    // Both controllers hang (stopped): the grants stay INSTALLING while the central manager dies.
    signal(a.child.id(), "STOP");
    signal(b.child.id(), "STOP");
    let (m_a, m_b) = add_both(&cm, &pid, &mid_a, &b).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (_, still) = cm
        .req(
            Method::GET,
            &format!("{POOLS}/{pid}/members/{}", m_a["uuid"].as_str().unwrap()),
            None,
        )
        .await;
    assert_eq!(still["state"], "INSTALLING", "{still}");
    drop(cm_proc);
    signal(a.child.id(), "CONT");
    signal(b.child.id(), "CONT");

    let cm_proc = spawn(
        "central",
        &cm_dir.join("data"),
        0,
        Some(&cm_dir.join("central.json")),
    );
    let cm = Api::new(&cm_proc);
    let m_a = settled(&cm, &pid, &m_a, 60).await;
    assert_eq!(
        m_a["state"], "LICENSED",
        "the managed grant runs again: {m_a}"
    );
    assert_eq!(
        license_key(&Api::new(&a)).await["registrationKey"]["description"],
        KEY
    );
    let m_b = settled(&cm, &pid, &m_b, 5).await;
    assert_eq!(m_b["state"], "FAILED", "{m_b}");
    assert!(
        m_b["errorText"].as_str().unwrap().contains("restart"),
        "{m_b}"
    );
    assert_eq!(
        license_key(&Api::new(&b)).await["registrationKey"]["description"],
        "none"
    );
}
