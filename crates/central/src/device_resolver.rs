//! The device resolver: `/mgmt/shared/resolver/device-groups[/<group>[/devices[/<machineId>]]]`
//! and `/mgmt/cm/system/machineid-resolver[/<machineId>]`, the lists of trusted devices that
//! clients read machine ids from. Group names follow the real ones: `cm-<product>-allDevices`,
//! `cm-bigip-allBigIpDevices` (f5-sdk), and per-module groups (`cm-adccore-allbigipDevices`,
//! `cm-asm-allAsmDevices`, `cm-firewall-allFirewallDevices`) that list the devices on which that
//! module was discovered.

use http::{Method, StatusCode};
use serde_json::{Value, json};

use super::devices::{self, Device};
use portcullis_admin::Ctx;
use portcullis_admin::Reply;
use portcullis_admin::{MgmtError, MgmtResult};
use portcullis_support::task;

const GROUPS: &str = "/mgmt/shared/resolver/device-groups";
const MACHINE_IDS: &str = "/mgmt/cm/system/machineid-resolver";

/// The groups listed by `GET /mgmt/shared/resolver/device-groups`.
const LISTED: &[&str] = &[
    "cm-bigip-allDevices",
    "cm-bigip-allBigIpDevices",
    "cm-adccore-allbigipDevices",
    "cm-asm-allAsmDevices",
    "cm-firewall-allFirewallDevices",
];

/// Which devices a group holds: `None` for an unknown group, `Some(None)` for all devices,
/// `Some(Some(module))` for those on which `module` was discovered.
fn membership(group: &str, known_products: &[String]) -> Option<Option<&'static str>> {
    let rest = group.strip_prefix("cm-")?;
    let (product, tail) = rest.split_once('-')?;
    let tail = tail.to_ascii_lowercase();
    if !(tail.starts_with("all") && tail.ends_with("devices")) {
        return None;
    }
    match product.to_ascii_lowercase().as_str() {
        "adccore" | "adc-core" | "adc_core" => Some(Some("adc_core")),
        "asm" => Some(Some("asm")),
        "firewall" => Some(Some("firewall")),
        p if p == "bigip" || known_products.iter().any(|k| k == p) => Some(None),
        _ => None,
    }
}

/// The lowercase product slug of a device (`BIG-IP` → `bigip`).
pub fn product_slug(product: &str) -> String {
    product
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect::<String>()
        .to_ascii_lowercase()
}

/// `/mgmt/shared/resolver/device-groups...`.
pub fn device_groups(ctx: &Ctx<'_>, _: &[u8]) -> MgmtResult<Reply> {
    let st = ctx.st;
    let rest: Vec<&str> = ctx.path[GROUPS.len()..]
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    if let (&Method::DELETE, [_, "devices", id]) = (&ctx.method, rest.as_slice()) {
        return remove_device(ctx, id);
    }
    ctx.only_get()?;
    let all = devices::list(&st.store)?;
    let products: Vec<String> = all.iter().map(|d| product_slug(&d.product)).collect();
    let group_view = |g: &str| {
        json!({
            "kind": "shared:resolver:device-groups:devicegroupstate",
            "groupName": g,
            "devicesReference": {"link": format!("https://localhost{GROUPS}/{g}/devices")},
            "generation": 1,
            "selfLink": format!("https://localhost{GROUPS}/{g}"),
        })
    };
    let Some(group) = rest.first().copied() else {
        let items: Vec<Value> = LISTED.iter().map(|g| group_view(g)).collect();
        return Ok(Reply::json(json!({
            "kind": "shared:resolver:device-groups:devicegroupcollectionstate",
            "selfLink": format!("https://localhost{GROUPS}"),
            "items": ctx.query.apply(items),
        })));
    };
    let which = membership(group, &products).ok_or_else(|| {
        MgmtError::new(
            StatusCode::NOT_FOUND,
            format!("Device group {group} does not exist."),
        )
    })?;
    let members: Vec<&Device> = all
        .iter()
        .filter(|d| which.is_none_or(|m| d.modules.iter().any(|x| x == m)))
        .collect();
    match rest[1..] {
        [] => Ok(Reply::json(group_view(group))),
        ["devices"] => {
            let items: Vec<Value> = members.iter().map(|d| d.resolver_view(group)).collect();
            Ok(Reply::json(json!({
                "kind": "shared:resolver:device-groups:devicegroupdevicecollectionstate",
                "selfLink": format!("https://localhost{GROUPS}/{group}/devices"),
                "items": ctx.query.apply(items),
            })))
        }
        ["devices", id] => members
            .iter()
            .find(|d| d.machine_id == id)
            .map(|d| Reply::json(ctx.query.project(d.resolver_view(group))))
            .ok_or_else(|| {
                MgmtError::new(
                    StatusCode::NOT_FOUND,
                    format!("Device {id} is not in device group {group}."),
                )
            }),
        _ => Err(MgmtError::no_such_uri(&ctx.path)),
    }
}

/// `DELETE .../devices/<machineId>`: forgets the device (its trust and discovered modules; the
/// imported copies stay) and removes the central manager's account from it when it answers.
fn remove_device(ctx: &Ctx<'_>, id: &str) -> MgmtResult<Reply> {
    if ctx.user.role != portcullis_admin::Role::Admin {
        return Err(portcullis_admin::denied(
            &ctx.user.name,
            &ctx.method,
            &ctx.path,
            &ctx.peer,
        ));
    }
    let c = super::state(ctx.st)?;
    let dev = devices::get(&c.store, id)?.ok_or_else(|| {
        MgmtError::new(
            StatusCode::NOT_FOUND,
            format!("No trusted device has machine id {id}."),
        )
    })?;
    c.store.write(|tx| devices::remove(tx, id))?;
    let client = dev.client(c.limits);
    let path = format!("/mgmt/tm/auth/user/{}", dev.user_name);
    task::spawn_on(&c.rt, async move {
        if let Err(e) = client.delete(&path).await {
            tracing::warn!(error = %e, "removing the central manager's account from a forgotten device");
        }
    });
    Ok(Reply::empty(StatusCode::OK))
}

fn machine_view(d: &Device) -> Value {
    let mut v = d.resolver_view("cm-bigip-allDevices");
    v["kind"] = json!("cm:system:machineid-resolver:machineidresolverstate");
    v["selfLink"] = json!(d.reference());
    v
}

/// `/mgmt/cm/system/machineid-resolver[/<machineId>]`.
pub fn machine_ids(ctx: &Ctx<'_>, _: &[u8]) -> MgmtResult<Reply> {
    ctx.only_get()?;
    let rest = ctx.path[MACHINE_IDS.len()..].trim_start_matches('/');
    if rest.is_empty() {
        let items: Vec<Value> = devices::list(&ctx.st.store)?
            .iter()
            .map(machine_view)
            .collect();
        return Ok(Reply::json(json!({
            "kind": "cm:system:machineid-resolver:machineidresolvercollectionstate",
            "selfLink": format!("https://localhost{MACHINE_IDS}"),
            "items": ctx.query.apply(items),
        })));
    }
    devices::get(&ctx.st.store, rest)?
        .map(|d| Reply::json(ctx.query.project(machine_view(&d))))
        .ok_or_else(|| {
            MgmtError::new(
                StatusCode::NOT_FOUND,
                format!("No trusted device has machine id {rest}."),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_names_resolve_to_memberships() {
        let known = vec!["bigip".to_string()];
        assert_eq!(membership("cm-bigip-allBigIpDevices", &known), Some(None));
        assert_eq!(membership("cm-bigip-allDevices", &known), Some(None));
        assert_eq!(
            membership("cm-asm-allAsmDevices", &known),
            Some(Some("asm"))
        );
        assert_eq!(
            membership("cm-adccore-allbigipDevices", &known),
            Some(Some("adc_core"))
        );
        assert_eq!(membership("cm-nope-allDevices", &known), None);
        assert_eq!(membership("cm-bigip-someDevices", &known), None);
        assert_eq!(product_slug("BIG-IP"), "bigip");
    }
}
