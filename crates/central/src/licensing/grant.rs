//! The calls a licensing pool makes to a controller: granting (read the device's identity and
//! modules, `POST /mgmt/tm/sys/license {command: install}` with the pool's key and where it came
//! from, read the license back) and revoking (`DELETE /mgmt/tm/sys/license {registrationKey}`).
//! Every call goes through `central::client` (pinned certificate, per-attempt timeout, bounded
//! retries), so a dead controller fails the grant with a message naming it, never hangs.

use http::{Method, StatusCode};
use serde_json::{Map, Value, json};

use crate::client::{Auth, CallLimits, ClientError, ControllerClient};
use crate::devices::Device;

/// The device a member licenses, and how to reach it.
#[derive(Clone, Debug)]
pub enum Target {
    /// A trusted device: its record carries the address, account and pinned certificate.
    Managed(Box<Device>),
    /// A device given by address and credentials; `pin` is the certificate fingerprint seen at
    /// the grant (used again to revoke).
    Unmanaged {
        address: String,
        user: String,
        password: String,
        pin: Option<String>,
    },
}

impl Target {
    pub fn client(&self, limits: CallLimits) -> ControllerClient {
        match self {
            Target::Managed(d) => d.client(limits),
            Target::Unmanaged {
                address,
                user,
                password,
                pin,
            } => ControllerClient::new(
                address,
                Auth::Basic {
                    user: user.clone(),
                    password: password.clone(),
                },
                pin.clone(),
                limits,
            ),
        }
    }
}

fn entry<'a>(stats: &'a Value, name: &str) -> Option<&'a str> {
    stats
        .get("entries")?
        .as_object()?
        .values()
        .next()?
        .pointer(&format!("/nestedStats/entries/{name}/description"))?
        .as_str()
}

/// Why a device could not be identified, licensed or have its license revoked; the member
/// record and the admin API's answer carry the text.
#[derive(Debug, thiserror::Error)]
pub enum GrantError {
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error("device {addr} reported no machineId in its device-info")]
    NoMachineId { addr: String },
    #[error("device {addr} reports registration key {installed} after the install of {expected}")]
    KeyNotInstalled {
        addr: String,
        installed: String,
        expected: String,
    },
    #[error("device {addr} refused the credentials: {message}")]
    Unauthorized { addr: String, message: String },
    #[error("device {addr} answered {status} to the license revocation: {message}")]
    RevocationRefused {
        addr: String,
        status: StatusCode,
        message: String,
    },
}

/// What the pool tells the controller it was licensed by.
pub struct Source<'a> {
    pub reg_key: &'a str,
    pub pool_uuid: &'a str,
    pub pool_name: &'a str,
    pub member_uuid: &'a str,
    pub central: &'a str,
}

/// The device's identity before it is licensed: fields of the member record (`deviceMachineId`,
/// `deviceName`, `deviceProduct`, `deviceVersion`, `deviceModules`, and `deviceFingerprint` for an
/// unmanaged device), plus the client to go on with (pinned to the certificate just seen).
pub async fn identify(
    target: &Target,
    limits: CallLimits,
) -> Result<(ControllerClient, Map<String, Value>), GrantError> {
    let mut client = target.client(limits);
    let mut fields = Map::new();
    if let Target::Unmanaged {
        address,
        user,
        password,
        pin: None,
    } = target
    {
        let fingerprint = client.fingerprint().await?;
        let pinned = Target::Unmanaged {
            address: address.clone(),
            user: user.clone(),
            password: password.clone(),
            pin: Some(fingerprint.clone()),
        };
        client = pinned.client(limits);
        fields.insert("deviceFingerprint".into(), json!(fingerprint));
    }
    let info = client
        .get_json("/mgmt/shared/identified-devices/config/device-info")
        .await?;
    let machine_id = info["machineId"].as_str().unwrap_or_default();
    if machine_id.is_empty() {
        return Err(GrantError::NoMachineId {
            addr: client.address(),
        });
    }
    let prov = client.get_json("/mgmt/tm/sys/provision").await?;
    let modules: Vec<Value> = prov["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["level"].as_str().is_some_and(|l| l != "none"))
        .filter_map(|m| m["name"].as_str().map(|n| json!(n)))
        .collect();
    fields.insert("deviceMachineId".into(), json!(machine_id));
    fields.insert("deviceName".into(), info["hostname"].clone());
    fields.insert("deviceProduct".into(), info["product"].clone());
    fields.insert("deviceVersion".into(), info["version"].clone());
    fields.insert("deviceModules".into(), Value::Array(modules));
    Ok((client, fields))
}

/// Installs the pool's key on the device and reads it back; returns `licensedDate` as the
/// device reports it.
pub async fn install(client: &ControllerClient, src: &Source<'_>) -> Result<String, GrantError> {
    let body = json!({
        "command": "install",
        "registrationKey": src.reg_key,
        "source": {
            "poolName": src.pool_name,
            "poolUuid": src.pool_uuid,
            "memberUuid": src.member_uuid,
            "centralManager": src.central,
        },
    });
    client.post_json("/mgmt/tm/sys/license", &body).await?;
    let lic = client.get_json("/mgmt/tm/sys/license").await?;
    let installed = entry(&lic, "registrationKey").unwrap_or("none");
    if !installed.eq_ignore_ascii_case(src.reg_key) {
        return Err(GrantError::KeyNotInstalled {
            addr: client.address(),
            installed: installed.to_string(),
            expected: src.reg_key.to_string(),
        });
    }
    Ok(entry(&lic, "licensedOnDate")
        .unwrap_or_default()
        .to_string())
}

/// Removes the pool's key from the device. A device that holds another key by now (409) or no
/// license at all no longer holds this pool's license: that is success too.
pub async fn revoke(target: &Target, limits: CallLimits, reg_key: &str) -> Result<(), GrantError> {
    let client = target.client(limits);
    let (status, v) = client
        .request(
            Method::DELETE,
            "/mgmt/tm/sys/license",
            Some(&json!({"registrationKey": reg_key})),
        )
        .await?;
    if status.is_success() || status == StatusCode::CONFLICT {
        return Ok(());
    }
    let msg = v["message"].as_str().unwrap_or_default();
    if status == StatusCode::UNAUTHORIZED {
        return Err(GrantError::Unauthorized {
            addr: client.address(),
            message: msg.to_string(),
        });
    }
    Err(GrantError::RevocationRefused {
        addr: client.address(),
        status,
        message: msg.to_string(),
    })
}
