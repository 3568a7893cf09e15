//! `cm device-group`, with its `devices` sub-collection (shown inline with
//! `expandSubcollections=true`).

use serde_json::{Value, json};

use portcullis_admin::{KindSpec, PendingWrite, str_field};
use portcullis_admin::{MgmtError, MgmtResult};

pub static DEVICE_GROUP: KindSpec = KindSpec {
    path: "/mgmt/tm/cm/device-group",
    label: "Device Group",
    subs: &[&DEVICES],
    defaults: dg_defaults,
    prepare: prepare_device_group,
    ..KindSpec::BASE
};

pub static DEVICES: KindSpec = KindSpec {
    path: "devices",
    label: "Device",
    ..KindSpec::BASE
};

fn dg_defaults() -> Value {
    json!({"autoSync": "disabled", "fullLoadOnSync": "false", "incrementalConfigSyncSizeMax": 1024,
           "networkFailover": "enabled", "saveOnAutoSync": "false", "type": "sync-only"})
}

fn prepare_device_group(p: &mut PendingWrite<'_, '_>) -> MgmtResult<()> {
    if let Some(t) = str_field(p.obj, "type")?
        && !matches!(t, "sync-only" | "sync-failover")
    {
        return Err(MgmtError::bad_request(format!(
            "Device group type must be sync-only or sync-failover, got '{t}'."
        )));
    }
    Ok(())
}
