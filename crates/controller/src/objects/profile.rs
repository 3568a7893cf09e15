//! Profiles (`tcp`, `udp`, `http` with `xForwardedFor`, `client-ssl` with `cert`/`key`/`chain`
//! and `certKeyChain`, `server-ssl`) and health monitors (`http`, `https`, `tcp`). PATCH or PUT
//! on the client-ssl collection path is a 403 (`Operation is not supported
//! on component /ltm/profile/client-ssl.`).

use serde_json::{Value, json};

use portcullis_admin::full_path_of;
use portcullis_admin::{KindSpec, PendingWrite, str_field};
use portcullis_admin::{MgmtError, MgmtResult};
use portcullis_store::{Table, WriteTx};

pub static TCP: KindSpec = KindSpec {
    path: "/mgmt/tm/ltm/profile/tcp",
    label: "Profile",
    defaults: tcp_defaults,
    data_plane: true,
    ..KindSpec::BASE
};
pub static UDP: KindSpec = KindSpec {
    path: "/mgmt/tm/ltm/profile/udp",
    label: "Profile",
    data_plane: true,
    ..KindSpec::BASE
};
pub static HTTP: KindSpec = KindSpec {
    path: "/mgmt/tm/ltm/profile/http",
    label: "Profile",
    defaults: http_defaults,
    prepare: prepare_http,
    data_plane: true,
    ..KindSpec::BASE
};
pub static CLIENT_SSL: KindSpec = KindSpec {
    path: "/mgmt/tm/ltm/profile/client-ssl",
    label: "Profile",
    prepare: prepare_ssl,
    collection_write: Some("Operation is not supported on component /ltm/profile/client-ssl."),
    data_plane: true,
    ..KindSpec::BASE
};
pub static SERVER_SSL: KindSpec = KindSpec {
    path: "/mgmt/tm/ltm/profile/server-ssl",
    label: "Profile",
    prepare: prepare_ssl,
    data_plane: true,
    ..KindSpec::BASE
};
pub static MONITOR_HTTP: KindSpec = KindSpec {
    path: "/mgmt/tm/ltm/monitor/http",
    label: "Monitor",
    defaults: http_monitor_defaults,
    prepare: prepare_monitor,
    data_plane: true,
    ..KindSpec::BASE
};
pub static MONITOR_HTTPS: KindSpec = KindSpec {
    path: "/mgmt/tm/ltm/monitor/https",
    label: "Monitor",
    defaults: http_monitor_defaults,
    prepare: prepare_monitor,
    data_plane: true,
    ..KindSpec::BASE
};
pub static MONITOR_TCP: KindSpec = KindSpec {
    path: "/mgmt/tm/ltm/monitor/tcp",
    label: "Monitor",
    defaults: tcp_monitor_defaults,
    prepare: prepare_monitor,
    data_plane: true,
    ..KindSpec::BASE
};

/// Profile types in the order they are searched, with their collection paths.
pub const PROFILE_TYPES: &[(&str, &str)] = &[
    ("tcp", "/mgmt/tm/ltm/profile/tcp"),
    ("udp", "/mgmt/tm/ltm/profile/udp"),
    ("http", "/mgmt/tm/ltm/profile/http"),
    ("client-ssl", "/mgmt/tm/ltm/profile/client-ssl"),
    ("server-ssl", "/mgmt/tm/ltm/profile/server-ssl"),
    ("api-access", "/mgmt/tm/ltm/profile/api-access"),
];

const MONITOR_TYPES: &[&str] = &[
    "/mgmt/tm/ltm/monitor/http",
    "/mgmt/tm/ltm/monitor/https",
    "/mgmt/tm/ltm/monitor/tcp",
];

fn tcp_defaults() -> Value {
    json!({"defaultsFrom": "/Common/tcp", "idleTimeout": 300})
}
fn http_defaults() -> Value {
    json!({"defaultsFrom": "/Common/http", "xForwardedFor": "disabled"})
}
fn http_monitor_defaults() -> Value {
    json!({"interval": 5, "timeout": 16, "send": "GET /\\r\\n", "recv": "", "destination": "*:*"})
}
fn tcp_monitor_defaults() -> Value {
    json!({"interval": 5, "timeout": 16, "destination": "*:*"})
}

/// The type of the profile at `full_path`, if it exists.
pub fn profile_type(tx: &WriteTx<'_>, full_path: &str) -> MgmtResult<Option<&'static str>> {
    let seg = full_path.replace('/', "~");
    for (t, coll) in PROFILE_TYPES {
        if tx.get(Table::Objects, &format!("{coll}/{seg}"))?.is_some() {
            return Ok(Some(t));
        }
    }
    Ok(None)
}

/// Whether a monitor named by full path exists (of any type).
pub fn monitor_exists(tx: &WriteTx<'_>, full_path: &str) -> MgmtResult<bool> {
    let seg = full_path.replace('/', "~");
    for coll in MONITOR_TYPES {
        if tx.get(Table::Objects, &format!("{coll}/{seg}"))?.is_some() {
            return Ok(true);
        }
    }
    Ok(false)
}

fn prepare_http(p: &mut PendingWrite<'_, '_>) -> MgmtResult<()> {
    if let Some(x) = str_field(p.obj, "xForwardedFor")?
        && !matches!(x, "enabled" | "disabled")
    {
        return Err(MgmtError::bad_request(format!(
            "xForwardedFor must be enabled or disabled, got '{x}'."
        )));
    }
    Ok(())
}

fn file_ref(tx: &WriteTx<'_>, kind: &str, v: &str) -> MgmtResult<String> {
    if v == "none" || v.is_empty() {
        return Ok("none".into());
    }
    let full_path = full_path_of(v)?;
    let key = format!("/mgmt/tm/sys/file/{kind}/{}", full_path.replace('/', "~"));
    if tx.get(Table::Objects, &key)?.is_none() {
        return Err(MgmtError::bad_request(format!(
            "010717e3:3: Client SSL profile references a {kind} ({full_path}) that was not found."
        )));
    }
    Ok(full_path)
}

fn prepare_ssl(p: &mut PendingWrite<'_, '_>) -> MgmtResult<()> {
    for (k, kind) in [
        ("cert", "ssl-cert"),
        ("key", "ssl-key"),
        ("chain", "ssl-cert"),
    ] {
        if let Some(v) = str_field(p.obj, k)?.map(str::to_string) {
            let full_path = file_ref(p.tx, kind, &v)?;
            p.obj.insert(k.into(), json!(full_path));
        }
    }
    if let Some(ckc) = p.obj.get("certKeyChain").cloned() {
        let Value::Array(items) = ckc else {
            return Err(MgmtError::bad_request("certKeyChain must be an array."));
        };
        let mut out = Vec::new();
        for it in items {
            let Value::Object(mut m) = it else {
                return Err(MgmtError::bad_request(
                    "each certKeyChain entry must be an object.",
                ));
            };
            for (k, kind) in [
                ("cert", "ssl-cert"),
                ("key", "ssl-key"),
                ("chain", "ssl-cert"),
            ] {
                if let Some(v) = str_field(&m, k)?.map(str::to_string) {
                    m.insert(k.into(), json!(file_ref(p.tx, kind, &v)?));
                }
            }
            out.push(Value::Object(m));
        }
        // The first chain is also the profile's cert/key (what older clients read).
        if let Some(first) = out.first() {
            for k in ["cert", "key", "chain"] {
                if let Some(v) = first.get(k) {
                    p.obj.insert(k.into(), v.clone());
                }
            }
        }
        p.obj.insert("certKeyChain".into(), Value::Array(out));
    }
    Ok(())
}

fn prepare_monitor(p: &mut PendingWrite<'_, '_>) -> MgmtResult<()> {
    for k in ["interval", "timeout"] {
        if let Some(v) = p.obj.get(k) {
            let n = v
                .as_u64()
                .or_else(|| v.as_str().and_then(|s| s.parse().ok()));
            match n {
                Some(n) if (1..=86_400).contains(&n) => {
                    p.obj.insert(k.into(), json!(n));
                }
                _ => {
                    return Err(MgmtError::bad_request(format!(
                        "{k} must be an integer between 1 and 86400 seconds."
                    )));
                }
            }
        }
    }
    Ok(())
}
