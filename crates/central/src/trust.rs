//! The trust task (`/mgmt/cm/global/tasks/device-trust`): contact the controller at
//! `address` over HTTPS, pin its certificate fingerprint, check `userName`/`password`, learn its
//! machine id from `device-info`, create a dedicated administrator account on it for the central
//! manager's later calls (so the password given here is never stored), and record the device with
//! `clusterName` and the `use<Product>Sync` flag. Steps: `CONNECT` → `AUTHENTICATE` →
//! `CREATE_ACCOUNT` → `SAVE_DEVICE` → `DONE`.

use serde_json::{Map, Value, json};

use super::Central;
use super::client::{Auth, ClientError, ControllerClient};
use super::devices::{self, Device};
use super::tasks::{self, Outcome, Resume, Run, RunFuture, TaskKind, required_str};
use portcullis_admin::Ctx;
use portcullis_admin::Reply;
use portcullis_admin::{MgmtError, MgmtResult};
use portcullis_support::now_micros;

pub static KIND: TaskKind = TaskKind {
    collection: "/mgmt/cm/global/tasks/device-trust",
    kind: "cm:global:tasks:device-trust:trusttaskitemstate",
    collection_kind: "cm:global:tasks:device-trust:trusttaskcollectionstate",
    prepare,
    run,
    exclusive: &[],
    resume: Resume::Fail(
        "The central manager restarted while this trust task was running; the device password is not kept, so PATCH the task with status STARTED and the password (or post a new trust task) to try again.",
    ),
};

pub fn handle(ctx: &Ctx<'_>, body: &[u8]) -> MgmtResult<Reply> {
    tasks::handle(ctx, body, &KIND)
}

/// The `use<Product>Sync` key of a body (`useBigiqSync`, `useBigipSync`, ...), if any.
fn sync_key(t: &Map<String, Value>) -> Option<String> {
    t.keys()
        .find(|k| {
            k.len() > 7
                && k.starts_with("use")
                && k.ends_with("Sync")
                && k[3..k.len() - 4].chars().all(|c| c.is_ascii_alphanumeric())
        })
        .cloned()
}

/// Whether a device may live at `ip` (not unspecified, broadcast, multicast or link-local).
fn usable_ip(ip: std::net::IpAddr) -> bool {
    match ip {
        std::net::IpAddr::V4(v4) => {
            !(v4.is_unspecified() || v4.is_broadcast() || v4.is_multicast() || v4.is_link_local())
        }
        std::net::IpAddr::V6(v6) => {
            !(v6.is_unspecified() || v6.is_multicast() || (v6.segments()[0] & 0xffc0) == 0xfe80)
        }
    }
}

fn prepare(
    _: &Ctx<'_>,
    _: &Central,
    t: &mut Map<String, Value>,
    existing: Option<&Map<String, Value>>,
) -> MgmtResult<Option<Value>> {
    let address = required_str(t, "address")?;
    let (host, _) = super::client::split_address(&address);
    if host.is_empty() || host.chars().any(|c| c.is_whitespace() || c == '/') {
        return Err(MgmtError::bad_request(format!(
            "The address '{address}' is not a host or host:port."
        )));
    }
    if let Ok(ip) = host.parse::<std::net::IpAddr>()
        && !usable_ip(ip)
    {
        return Err(MgmtError::bad_request(format!(
            "The address '{address}' is unspecified, multicast or link-local (cloud metadata); give the controller's management address."
        )));
    }
    required_str(t, "userName")?;
    let password = match t.remove("password") {
        Some(Value::String(p)) if !p.is_empty() => p,
        _ if existing.is_some() => {
            return Err(MgmtError::bad_request(
                "Re-running a trust task needs the device password again (it is never stored).",
            ));
        }
        _ => {
            return Err(MgmtError::bad_request(
                "The task property 'password' is required (a non-empty string).",
            ));
        }
    };
    match t.get("clusterName") {
        None | Some(Value::Null) => {
            t.insert("clusterName".into(), json!(""));
        }
        Some(Value::String(_)) => {}
        Some(_) => {
            return Err(MgmtError::bad_request(
                "The task property 'clusterName' must be a string.",
            ));
        }
    }
    let key = sync_key(t).unwrap_or_else(|| "useBigiqSync".into());
    match t.get(&key) {
        None | Some(Value::Null) => {
            t.insert(key.clone(), json!(false));
        }
        Some(Value::Bool(_)) => {}
        Some(_) => {
            return Err(MgmtError::bad_request(format!(
                "The task property '{key}' must be a boolean."
            )));
        }
    }
    t.insert("address".into(), json!(address));
    t.insert("currentStep".into(), json!("CONNECT"));
    t.remove("machineId");
    Ok(Some(json!({"password": password})))
}

fn run(r: Run) -> RunFuture {
    Box::pin(async move { trust(&r).await })
}

/// The account name the central manager uses on its devices.
fn account_name(c: &Central) -> String {
    let short: String = c
        .machine_id
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(8)
        .collect();
    format!("cm-{short}")
}

async fn trust(r: &Run) -> Outcome {
    let t = r.record()?;
    let field = |k: &str| t.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let address = field("address");
    let user = field("userName");
    let password = r
        .secret
        .as_ref()
        .and_then(|s| s.get("password"))
        .and_then(Value::as_str)
        .ok_or("the device password is not available (the central manager restarted)")?
        .to_string();
    let limits = r.c.limits;

    r.step("CONNECT")?;
    let probe = ControllerClient::new(&address, Auth::None, None, limits);
    let endpoint = probe.address();
    let fingerprint = probe.fingerprint().await.map_err(|e| e.to_string())?;
    let previous = devices::find_by_address(&r.c.store, &address).map_err(|e| e.message)?;
    if let Some(p) = &previous
        && !p.fingerprint.eq_ignore_ascii_case(&fingerprint)
    {
        return Err(format!(
            "{}. Remove the device (DELETE /mgmt/shared/resolver/device-groups/cm-bigip-allDevices/devices/{}) before trusting it again.",
            ClientError::CertificateChanged {
                addr: endpoint.clone(),
                expected: p.fingerprint.clone(),
                presented: fingerprint.clone(),
            },
            p.machine_id
        ));
    }

    r.step("AUTHENTICATE")?;
    let admin = ControllerClient::new(
        &address,
        Auth::Basic {
            user: user.clone(),
            password,
        },
        Some(fingerprint.clone()),
        limits,
    );
    let info = admin
        .get_json("/mgmt/shared/identified-devices/config/device-info")
        .await
        .map_err(|e| match e {
            ClientError::Unauthorized { addr, message } => {
                format!("device {addr} refused the credentials of user '{user}': {message}")
            }
            e => e.to_string(),
        })?;
    let s = |k: &str| {
        info.get(k)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let machine_id = s("machineId");
    if devices::machine_id_of_link(&machine_id).as_deref() != Some(machine_id.as_str()) {
        return Err(format!(
            "device {endpoint} reports no usable machineId in its device-info"
        ));
    }
    if machine_id == r.c.machine_id {
        return Err(format!(
            "device {endpoint} is this central manager itself (machine id {machine_id})"
        ));
    }

    r.step("CREATE_ACCOUNT")?;
    let account = account_name(&r.c);
    let secret = portcullis_admin::random_password();
    let user_body = json!({
        "name": account, "password": secret,
        "partitionAccess": [{"name": "all-partitions", "role": "admin"}],
        "description": format!("Portcullis central manager {}", r.c.machine_id),
    });
    let existing = admin
        .request(
            http::Method::GET,
            &format!("/mgmt/tm/auth/user/{account}"),
            None,
        )
        .await
        .map_err(|e| e.to_string())?;
    let made = if existing.0.is_success() {
        admin
            .patch_json(
                &format!("/mgmt/tm/auth/user/{account}"),
                &json!({"password": secret}),
            )
            .await
    } else {
        admin.post_json("/mgmt/tm/auth/user", &user_body).await
    };
    made.map_err(|e| {
        format!("creating the central manager's account '{account}' on the device failed (the trust needs an administrator): {e}")
    })?;
    let dev = Device {
        machine_id: machine_id.clone(),
        address: probe.host().to_string(),
        port: probe.port(),
        hostname: s("hostname"),
        product: s("product"),
        version: s("version"),
        build: s("build"),
        fingerprint: fingerprint.clone(),
        user_name: account.clone(),
        password: secret,
        cluster_name: field("clusterName"),
        sync_key: sync_key(&t).unwrap_or_else(|| "useBigiqSync".into()),
        use_sync: sync_key(&t)
            .and_then(|k| t.get(&k).and_then(Value::as_bool))
            .unwrap_or(false),
        modules: previous
            .filter(|p| p.machine_id == machine_id)
            .map(|p| p.modules)
            .unwrap_or_default(),
        trusted_micros: now_micros(),
        trust_task: t.get("id").and_then(Value::as_str).unwrap_or("").into(),
    };
    dev.client(limits)
        .get_json("/mgmt/shared/identified-devices/config/device-info")
        .await
        .map_err(|e| format!("the new account '{account}' does not work on the device: {e}"))?;

    r.step("SAVE_DEVICE")?;
    r.c.store
        .write(|tx| devices::put(tx, &dev))
        .map_err(|e| e.message)?;
    let mut out = Map::new();
    out.insert("machineId".into(), json!(machine_id));
    out.insert("deviceReference".into(), json!({"link": dev.reference()}));
    out.insert("hostname".into(), json!(dev.hostname));
    out.insert("version".into(), json!(dev.version));
    out.insert("product".into(), json!(dev.product));
    out.insert("certificateFingerprint".into(), json!(fingerprint));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_and_unspecified_addresses_are_refused() {
        for bad in [
            "169.254.169.254",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "fe80::1",
            "::",
        ] {
            assert!(!usable_ip(bad.parse().unwrap()), "{bad}");
        }
        for ok in ["127.0.0.1", "10.0.0.5", "::1", "2001:db8::1"] {
            assert!(usable_ip(ok.parse().unwrap()), "{ok}");
        }
    }

    #[test]
    fn sync_key_is_found_whatever_the_product() {
        let m: Map<String, Value> =
            serde_json::from_str(r#"{"address":"a","useBigiqSync":true}"#).unwrap();
        assert_eq!(sync_key(&m).as_deref(), Some("useBigiqSync"));
        let m: Map<String, Value> = serde_json::from_str(r#"{"usePortcullisSync":false}"#).unwrap();
        assert_eq!(sync_key(&m).as_deref(), Some("usePortcullisSync"));
        let m: Map<String, Value> = serde_json::from_str(r#"{"useSync":false}"#).unwrap();
        assert_eq!(sync_key(&m), None);
    }
}
