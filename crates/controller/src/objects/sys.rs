//! System surfaces: `/mgmt/tm/sys` (its `selfLink` carries `?ver=`, which f5-sdk parses),
//! `sys/version`, `sys/provision` (ltm and asm provisioned), `sys/license` (GET, and POST
//! `{command: install, registrationKey, source?}` used by a central manager's licensing pools, DELETE
//! `{registrationKey?}` revokes), `/mgmt/shared/echo-query`
//! and `device-info` with a stable `machineId`.

use http::Method;
use serde_json::{Value, json};

use portcullis_admin::Ctx;
use portcullis_admin::Reply;
use portcullis_admin::Role;
use portcullis_admin::parse_object;
use portcullis_admin::{MgmtError, MgmtResult};
use portcullis_store::Table;
use portcullis_support::{iso8601_utc, now_micros, unix_seconds};

/// Sub-collections of `/mgmt/tm/sys` listed as references.
const SYS_ITEMS: &[&str] = &[
    "version",
    "provision",
    "license",
    "file",
    "crypto",
    "global-settings",
];

pub fn sys_root(ctx: &Ctx<'_>, _: &[u8]) -> MgmtResult<Reply> {
    ctx.only_get()?;
    let items: Vec<Value> = SYS_ITEMS
        .iter()
        .map(|s| json!({"reference": {"link": ctx.st.link(&format!("/mgmt/tm/sys/{s}"))}}))
        .collect();
    Ok(Reply::json(json!({
        "kind": "tm:sys:syscollectionstate",
        "selfLink": ctx.st.link("/mgmt/tm/sys"),
        "items": items,
    })))
}

pub fn version(ctx: &Ctx<'_>, _: &[u8]) -> MgmtResult<Reply> {
    ctx.only_get()?;
    let c = &ctx.st.cfg;
    Ok(Reply::json(json!({
        "kind": "tm:sys:version:versionstats",
        "selfLink": ctx.st.link("/mgmt/tm/sys/version"),
        "entries": {"https://localhost/mgmt/tm/sys/version/0": {"nestedStats": {"entries": {
            "Build": {"description": "0.0.6"},
            "Date": {"description": iso8601_utc(unix_seconds())},
            "Edition": {"description": "Final"},
            "Product": {"description": c.product},
            "Title": {"description": "Main Package"},
            "Version": {"description": c.version},
        }}}},
    })))
}

/// Provisioned modules: the proxy (ltm) and the firewall (asm) run; the rest do not exist here.
const MODULES: &[(&str, &str)] = &[
    ("afm", "none"),
    ("am", "none"),
    ("apm", "none"),
    ("asm", "nominal"),
    ("avr", "none"),
    ("gtm", "none"),
    ("ltm", "nominal"),
    ("pem", "none"),
];

pub fn provision(ctx: &Ctx<'_>, _: &[u8]) -> MgmtResult<Reply> {
    ctx.only_get()?;
    let item = |(name, level): &(&str, &str)| {
        json!({"kind": "tm:sys:provision:provisionstate", "name": name, "fullPath": name, "generation": 1,
               "selfLink": ctx.st.link(&format!("/mgmt/tm/sys/provision/{name}")),
               "cpuRatio": 0, "diskRatio": 0, "level": level, "memoryRatio": 0})
    };
    let rest = ctx
        .path
        .trim_start_matches("/mgmt/tm/sys/provision")
        .trim_start_matches('/');
    if rest.is_empty() {
        let items: Vec<Value> = MODULES.iter().map(item).collect();
        return Ok(Reply::json(json!({
            "kind": "tm:sys:provision:provisioncollectionstate",
            "selfLink": ctx.st.link("/mgmt/tm/sys/provision"),
            "items": ctx.query.apply(items),
        })));
    }
    MODULES
        .iter()
        .find(|(n, _)| *n == rest.trim_start_matches("~Common~"))
        .map(|m| Reply::json(item(m)))
        .ok_or_else(|| MgmtError::not_found("Provision", rest))
}

/// `GET` shows the license; `POST {command: install, registrationKey}` installs one
/// (administrators only); `DELETE` revokes it.
pub fn license(ctx: &Ctx<'_>, body: &[u8]) -> MgmtResult<Reply> {
    let st = ctx.st;
    match ctx.method {
        Method::GET => {}
        Method::POST | Method::DELETE if ctx.user.role != Role::Admin => {
            return Err(portcullis_admin::denied(
                &ctx.user.name,
                &ctx.method,
                &ctx.path,
                &ctx.peer,
            ));
        }
        Method::POST => {
            let b = parse_object(body)?;
            if b.get("command").and_then(Value::as_str) != Some("install") {
                return Err(MgmtError::bad_request(
                    "The license command must be 'install'.",
                ));
            }
            let key = b
                .get("registrationKey")
                .and_then(Value::as_str)
                .filter(|k| {
                    !k.is_empty()
                        && k.len() <= 128
                        && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                })
                .ok_or_else(|| {
                    MgmtError::bad_request(
                        "registrationKey is required (letters, digits and dashes).",
                    )
                })?;
            let rec = json!({"registrationKey": key, "licensedOnDate": iso8601_utc(unix_seconds()),
                             "installedMicros": now_micros(), "source": source_of(&b)});
            st.store.write(|tx| tx.put(Table::Meta, "license", &rec))?;
        }
        Method::DELETE => revoke(ctx, body)?,
        _ => {
            return Err(MgmtError::method_not_allowed(
                ctx.method.as_str(),
                &ctx.path,
            ));
        }
    }
    let lic = st.meta("license");
    let entry = |v: &str| json!({"description": v});
    let mut entries = serde_json::Map::new();
    match &lic {
        Some(l) => {
            entries.insert(
                "registrationKey".into(),
                entry(l["registrationKey"].as_str().unwrap_or("")),
            );
            entries.insert(
                "licensedOnDate".into(),
                entry(l["licensedOnDate"].as_str().unwrap_or("")),
            );
            entries.insert("licensedVersion".into(), entry(&st.cfg.version));
            entries.insert(
                "activeModules".into(),
                json!({"nestedStats": {"entries": {
                "LTM|WAF": {"description": "LTM, ASM"}}}}),
            );
            source_entries(&l["source"], &mut entries);
        }
        None => {
            entries.insert("registrationKey".into(), entry("none"));
        }
    }
    Ok(Reply::json(json!({
        "kind": "tm:sys:license:licensestats",
        "selfLink": st.link("/mgmt/tm/sys/license"),
        "entries": {"https://localhost/mgmt/tm/sys/license/0": {"nestedStats": {"entries": entries}}},
    })))
}

/// `DELETE` revokes the license. A JSON body `{registrationKey}` (what a central manager sends)
/// revokes only that key: a device relicensed since from elsewhere keeps its license (409).
fn revoke(ctx: &Ctx<'_>, body: &[u8]) -> MgmtResult<()> {
    let want = if body.iter().all(u8::is_ascii_whitespace) {
        None
    } else {
        parse_object(body)?
            .get("registrationKey")
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    ctx.st.store.write(|tx| {
        let current = tx.get(Table::Meta, "license")?;
        let installed = current
            .as_ref()
            .and_then(|l| l["registrationKey"].as_str())
            .unwrap_or("");
        if let (Some(w), Some(_)) = (&want, &current)
            && !w.eq_ignore_ascii_case(installed)
        {
            return Err(MgmtError::new(
                http::StatusCode::CONFLICT,
                format!("The installed license ({installed}) is not {w}; it was not revoked."),
            ));
        }
        tx.delete(Table::Meta, "license")?;
        Ok(())
    })
}

/// The fields of `source` kept with the license (short strings only).
const SOURCE_FIELDS: [(&str, &str); 4] = [
    ("licensePool", "poolName"),
    ("licensePoolUuid", "poolUuid"),
    ("licensePoolMemberUuid", "memberUuid"),
    ("licenseManager", "centralManager"),
];

fn source_of(body: &serde_json::Map<String, Value>) -> Value {
    let mut out = serde_json::Map::new();
    for (_, key) in SOURCE_FIELDS {
        if let Some(v) = body
            .get("source")
            .and_then(|s| s.get(key))
            .and_then(Value::as_str)
            && v.len() <= 256
        {
            out.insert(key.into(), json!(v));
        }
    }
    Value::Object(out)
}

/// Who licensed the device, when a central manager did (the `source` it sent with the install).
fn source_entries(source: &Value, entries: &mut serde_json::Map<String, Value>) {
    for (entry, key) in SOURCE_FIELDS {
        if let Some(v) = source.get(key).and_then(Value::as_str) {
            entries.insert(entry.into(), json!({"description": v}));
        }
    }
}

pub fn echo(ctx: &Ctx<'_>, _: &[u8]) -> MgmtResult<Reply> {
    ctx.only_get()?;
    Ok(Reply::json(json!({
        "kind": "shared:echo-query:echorequeststate",
        "selfLink": "https://localhost/mgmt/shared/echo-query",
        "generation": 0,
        "lastUpdateMicros": now_micros(),
    })))
}

pub fn device_info(ctx: &Ctx<'_>, _: &[u8]) -> MgmtResult<Reply> {
    ctx.only_get()?;
    let st = ctx.st;
    let machine_id = st
        .meta("machineId")
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let host = st
        .meta("hostname")
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| "portcullis.local".into());
    Ok(Reply::json(json!({
        "baseMac": "00:00:00:00:00:00",
        "build": "0.0.6",
        "chassisSerialNumber": machine_id,
        "edition": "Final",
        "hostname": host,
        "isClustered": false,
        "isVirtual": true,
        "machineId": machine_id,
        "managementAddress": "127.0.0.1",
        "platform": "Z100",
        "product": st.cfg.product,
        "version": st.cfg.version,
        "restFrameworkVersion": st.cfg.version,
        "slots": [{"volume": "HD1.1", "product": st.cfg.product, "version": st.cfg.version, "build": "0.0.6", "isActive": true}],
        "generation": 0,
        "lastUpdateMicros": now_micros(),
        "kind": "shared:resolver:device-groups:deviceinfostate",
        "selfLink": "https://localhost/mgmt/shared/identified-devices/config/device-info",
    })))
}
