//! Trusted devices: one record per controller the central manager manages, keyed by the machine id
//! the controller reports in `device-info`. A record holds everything later calls need: where the
//! controller listens, the pinned certificate fingerprint, and the credentials of the dedicated
//! account the trust task created on it (never the administrator password it was given).
//! Stored in the `Objects` table under `cm-device/<machine id>`.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::client::{Auth, CallLimits, ControllerClient};
use portcullis_admin::{MgmtError, MgmtResult};
use portcullis_store::{Store, Table, WriteTx};

const PREFIX: &str = "cm-device/";

/// One trusted controller.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Device {
    /// The controller's `machineId` (stable for its data directory).
    pub machine_id: String,
    /// The address as given to the trust task, without the port (`10.0.0.5`, `bigip1.example`).
    pub address: String,
    /// The admin API port.
    pub port: u16,
    pub hostname: String,
    pub product: String,
    pub version: String,
    pub build: String,
    /// SHA-256 of the controller's certificate, `AA:BB:...`, pinned at trust.
    pub fingerprint: String,
    /// The account the central manager calls the controller with.
    pub user_name: String,
    pub password: String,
    pub cluster_name: String,
    /// The `use<Product>Sync` key of the trust request (e.g. `useBigiqSync`) and its value.
    pub sync_key: String,
    pub use_sync: bool,
    /// Modules discovered on the device (`adc_core`, `asm`, ...).
    #[serde(default)]
    pub modules: Vec<String>,
    /// When the trust was established, µs since the epoch.
    pub trusted_micros: u64,
    /// The trust task that created this record.
    #[serde(default)]
    pub trust_task: String,
}

impl Device {
    /// `host:port` to call.
    pub fn endpoint(&self) -> String {
        if self.address.contains(':') {
            format!("[{}]:{}", self.address, self.port)
        } else {
            format!("{}:{}", self.address, self.port)
        }
    }

    /// A client for this device: its dedicated account, its pinned certificate.
    pub fn client(&self, limits: CallLimits) -> ControllerClient {
        ControllerClient::new(
            &self.endpoint(),
            Auth::Basic {
                user: self.user_name.clone(),
                password: self.password.clone(),
            },
            Some(self.fingerprint.clone()),
            limits,
        )
    }

    /// `https://localhost/mgmt/cm/system/machineid-resolver/<id>`, the `deviceReference` link.
    pub fn reference(&self) -> String {
        format!(
            "https://localhost/mgmt/cm/system/machineid-resolver/{}",
            self.machine_id
        )
    }

    /// The resolver's view of the device (no credentials), for the device-group listings.
    pub fn resolver_view(&self, group: &str) -> Value {
        json!({
            "kind": "shared:resolver:device-groups:restdeviceresolverdevicestate",
            "uuid": self.machine_id,
            "machineId": self.machine_id,
            "deviceUri": format!("https://{}", self.endpoint()),
            "address": self.address,
            "managementAddress": self.address,
            "httpsPort": self.port,
            "hostname": self.hostname,
            "product": self.product,
            "version": self.version,
            "build": self.build,
            "edition": "Final",
            "state": "ACTIVE",
            "isClustered": !self.cluster_name.is_empty(),
            "clusterName": self.cluster_name,
            "trustDomainGuid": self.fingerprint,
            "properties": {"cm:gui:module": self.modules, self.sync_key.clone(): self.use_sync},
            "generation": 1,
            "lastUpdateMicros": self.trusted_micros,
            "selfLink": format!("https://localhost/mgmt/shared/resolver/device-groups/{group}/devices/{}", self.machine_id),
        })
    }
}

fn key(machine_id: &str) -> String {
    format!("{PREFIX}{machine_id}")
}

fn decode(v: Value) -> MgmtResult<Device> {
    serde_json::from_value(v).map_err(|e| MgmtError::internal(format!("device record: {e}")))
}

/// The trusted device with this machine id.
pub fn get(store: &Store, machine_id: &str) -> MgmtResult<Option<Device>> {
    store
        .get(Table::Objects, &key(machine_id))?
        .map(decode)
        .transpose()
}

/// Every trusted device, in machine-id order.
pub fn list(store: &Store) -> MgmtResult<Vec<Device>> {
    store
        .list(Table::Objects, PREFIX)?
        .into_iter()
        .map(|(_, v)| decode(v))
        .collect()
}

/// The trusted device at `address` (host, or host:port), if any.
pub fn find_by_address(store: &Store, address: &str) -> MgmtResult<Option<Device>> {
    let (host, port) = super::client::split_address(address);
    Ok(list(store)?
        .into_iter()
        .find(|d| d.address == host && d.port == port))
}

/// Stores (or replaces) a device record inside a write transaction.
pub fn put(tx: &mut WriteTx<'_>, d: &Device) -> MgmtResult<()> {
    let v = serde_json::to_value(d).map_err(|e| MgmtError::internal(e.to_string()))?;
    tx.put(Table::Objects, &key(&d.machine_id), &v)?;
    Ok(())
}

/// Removes a device record; returns whether it existed.
pub fn remove(tx: &mut WriteTx<'_>, machine_id: &str) -> MgmtResult<bool> {
    Ok(tx.delete(Table::Objects, &key(machine_id))?)
}

/// The machine id named by a `deviceReference` link (`.../machineid-resolver/<id>`, a resolver
/// device link `.../devices/<id>`, or a bare id).
pub fn machine_id_of_link(link: &str) -> Option<String> {
    let path = link.split(['?', '#']).next().unwrap_or_default();
    let last = path.trim_end_matches('/').rsplit('/').next()?;
    let ok = !last.is_empty()
        && last.len() <= 64
        && last
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    ok.then(|| last.to_string())
}

/// The device a task body's `deviceReference.link` names, or the 400/404 to answer.
pub fn from_reference(store: &Store, body: &serde_json::Map<String, Value>) -> MgmtResult<Device> {
    let link = body
        .get("deviceReference")
        .and_then(|r| r.get("link"))
        .and_then(Value::as_str)
        .ok_or_else(|| {
            MgmtError::bad_request(
                "deviceReference.link is required (cm/system/machineid-resolver/<machineId>).",
            )
        })?;
    let id = machine_id_of_link(link).ok_or_else(|| {
        MgmtError::bad_request(format!(
            "deviceReference.link '{link}' does not name a machine id."
        ))
    })?;
    get(store, &id)?.ok_or_else(|| {
        MgmtError::new(
            http::StatusCode::NOT_FOUND,
            format!("No trusted device has machine id {id}; establish trust with a device-trust task first."),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_name_machine_ids() {
        assert_eq!(
            machine_id_of_link("https://localhost/mgmt/cm/system/machineid-resolver/ab-12"),
            Some("ab-12".into())
        );
        assert_eq!(
            machine_id_of_link("cm/system/machineid-resolver/ab-12/"),
            Some("ab-12".into())
        );
        assert_eq!(machine_id_of_link("x/../"), None);
        assert_eq!(machine_id_of_link(""), None);
    }
}
