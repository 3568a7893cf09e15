//! The billing license report itself, built from what the central manager knows: its
//! licensing pools (`/mgmt/cm/shared/licensing/pools`), their members, and its own device-info.
//! Pure: no IO, so the report's shape is tested without a server. The format is documented in
//! docs/licensing.md ("Billing report").

use serde_json::{Value, json};

use crate::support::{iso8601_utc, parse_iso8601_utc};

/// Version of the report format (bumped on incompatible changes).
pub const REPORT_VERSION: u32 = 1;

/// What the report is built from, as read from the central manager's REST API.
#[derive(Debug, Default, Clone)]
pub struct Inventory {
    /// The URL the tool talked to.
    pub central_url: String,
    /// `GET /mgmt/shared/identified-devices/config/device-info` of the central manager.
    pub central_info: Value,
    /// Every pool with its members (`items` of the two collections).
    pub pools: Vec<(Value, Vec<Value>)>,
}

/// `YYYY-MM-DD` of a Unix time.
pub fn report_date(now_secs: u64) -> String {
    iso8601_utc(now_secs)[..10].to_string()
}

/// `PORTCULLIS_Billing_License_Report.<YYYY-MM-DD>.json`.
pub fn report_file_name(now_secs: u64) -> String {
    format!(
        "PORTCULLIS_Billing_License_Report.{}.json",
        report_date(now_secs)
    )
}

fn text(v: &Value, key: &str) -> Value {
    v.get(key)
        .filter(|x| x.is_string())
        .cloned()
        .unwrap_or(Value::Null)
}

/// One device line of the report, from a pool member record.
fn device(member: &Value, pool: &Value, now_secs: u64) -> Value {
    let status = member
        .get("state")
        .and_then(Value::as_str)
        .unwrap_or("UNKNOWN");
    let since = member.get("licensedDate").and_then(Value::as_str);
    let hours = match (status, since.and_then(parse_iso8601_utc)) {
        ("LICENSED", Some(t)) => json!(now_secs.saturating_sub(t) / 3600),
        _ => Value::Null,
    };
    json!({
        "machineId": text(member, "deviceMachineId"),
        "hostname": text(member, "deviceName"),
        "address": text(member, "deviceAddress"),
        "product": text(member, "deviceProduct"),
        "version": text(member, "deviceVersion"),
        "managed": member.get("deviceReference").is_some(),
        "status": status,
        "errorText": text(member, "errorText"),
        "licensedSince": since,
        "licensedHours": hours,
        "modules": member.get("deviceModules").filter(|m| m.is_array()).cloned().unwrap_or(json!([])),
        "pool": {"uuid": text(pool, "uuid"), "name": text(pool, "name")},
        "memberUuid": text(member, "uuid"),
    })
}

/// The report for `keys` (already normalised), as of `now_secs`.
pub fn build_report(keys: &[String], inv: &Inventory, mode: &str, now_secs: u64) -> Value {
    let per_key: Vec<Value> = keys
        .iter()
        .map(|key| {
            let pools: Vec<&(Value, Vec<Value>)> = inv
                .pools
                .iter()
                .filter(|(p, _)| {
                    p.get("baseRegKey")
                        .and_then(Value::as_str)
                        .is_some_and(|k| k.eq_ignore_ascii_case(key))
                })
                .collect();
            let devices: Vec<Value> = pools
                .iter()
                .flat_map(|(p, members)| members.iter().map(move |m| device(m, p, now_secs)))
                .collect();
            let licensed = devices.iter().filter(|d| d["status"] == "LICENSED").count();
            json!({
                "registrationKey": key,
                "status": if pools.is_empty() { "NOT_FOUND" } else { "FOUND" },
                "pools": pools.iter().map(|(p, m)| json!({
                    "uuid": text(p, "uuid"), "name": text(p, "name"), "members": m.len(),
                })).collect::<Vec<_>>(),
                "licensedDeviceCount": licensed,
                "devices": devices,
            })
        })
        .collect();
    let c = &inv.central_info;
    json!({
        "kind": "portcullis:billing:license-report",
        "reportVersion": REPORT_VERSION,
        "generated": iso8601_utc(now_secs),
        "reportDate": report_date(now_secs),
        "submissionMethod": mode,
        "centralManager": {
            "url": inv.central_url,
            "machineId": text(c, "machineId"),
            "hostname": text(c, "hostname"),
            "product": text(c, "product"),
            "version": text(c, "version"),
        },
        "totals": {
            "registrationKeys": keys.len(),
            "licensedDevices": per_key.iter().map(|k| k["licensedDeviceCount"].as_u64().unwrap_or(0)).sum::<u64>(),
        },
        "registrationKeys": per_key,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: &str = "ABCDE-FGHIJ-KLMNO-PQRST-UVWXYZ1";

    #[test]
    fn devices_are_grouped_per_key_with_usage() {
        let now = 1_795_000_000;
        let pool = json!({"uuid": "p1", "name": "prod", "baseRegKey": K});
        let ok = json!({"uuid": "m1", "state": "LICENSED", "deviceName": "a.example", "deviceAddress": "10.0.0.1",
            "deviceMachineId": "mid-a", "deviceVersion": "15.1.10", "deviceModules": ["asm", "ltm"],
            "licensedDate": iso8601_utc(now - 7200), "deviceReference": {"link": "x"}});
        let failed = json!({"uuid": "m2", "state": "FAILED", "errorText": "unreachable", "deviceAddress": "10.0.0.2"});
        let inv = Inventory {
            central_url: "https://127.0.0.1:8443".into(),
            central_info: json!({"machineId": "cm", "hostname": "cm.example", "version": "8.1.0"}),
            pools: vec![(pool, vec![ok, failed])],
        };
        let other = "BBBBB-CCCCC-DDDDD-EEEEE-FFFFFFF".to_string();
        let r = build_report(&[K.to_string(), other], &inv, "manual", now);
        assert_eq!(r["reportDate"], report_date(now));
        assert_eq!(r["totals"]["licensedDevices"], 1);
        let k = &r["registrationKeys"][0];
        assert_eq!(k["status"], "FOUND");
        assert_eq!(k["licensedDeviceCount"], 1);
        assert_eq!(k["devices"][0]["hostname"], "a.example");
        assert_eq!(k["devices"][0]["licensedHours"], 2);
        assert_eq!(k["devices"][0]["managed"], true);
        assert_eq!(k["devices"][0]["modules"], json!(["asm", "ltm"]));
        assert_eq!(k["devices"][1]["status"], "FAILED");
        assert_eq!(k["devices"][1]["licensedHours"], Value::Null);
        assert_eq!(r["registrationKeys"][1]["status"], "NOT_FOUND");
        assert_eq!(r["centralManager"]["hostname"], "cm.example");
        assert_eq!(
            report_file_name(0),
            "PORTCULLIS_Billing_License_Report.1970-01-01.json"
        );
    }
}
