//! The fuzz entry point of the central manager's input parsing (`fuzz/fuzz_targets/central_body.rs`):
//! one arbitrary task body through every pure parser a request or a device answer reaches —
//! addresses, `deviceReference` links, `moduleList`, conflict resolutions, the normalisation
//! and comparison of device objects, the events of a controller's feed page (`items`) and the
//! fleet search's address and time parameters (`clientIp`, `since`). Network work is never started
//! from here.

use serde_json::{Map, Value};

use super::{client, conflicts, devices, discovery, events, modules};

/// Runs one input; must never panic.
pub fn body(data: &[u8]) {
    let Ok(v) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let obj = v.as_object().cloned().unwrap_or_default();
    if let Some(a) = obj.get("address").and_then(Value::as_str) {
        let _ = client::split_address(a);
    }
    if let Some(l) = v.pointer("/deviceReference/link").and_then(Value::as_str) {
        let _ = devices::machine_id_of_link(l);
    }
    let _ = discovery::module_list(obj.get("moduleList"));
    let mut task: Vec<Value> = obj
        .get("taskConflicts")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let _ = conflicts::take_resolutions(&mut task, obj.get("conflicts"));
    let found: Vec<modules::Found> = obj
        .get("items")
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_object)
                .filter_map(|o| {
                    Some(modules::Found {
                        device_path: modules::device_path(o)?,
                        collection: "/mgmt/tm/ltm/pool".into(),
                        parent: None,
                        object: modules::normalize(o),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let working: Vec<Value> = found
        .iter()
        .map(|f| {
            let mut g = f.clone();
            g.object = Map::new();
            super::config::record("m", &g)
        })
        .collect();
    let plan = conflicts::compare(&modules::ADC_CORE, "m", &found, &working);
    let _ = plan.pending_step();
    let dev: devices::Device = serde_json::from_value(serde_json::json!({
        "machineId": "m", "address": "192.0.2.1", "port": 443, "hostname": "h", "product": "p",
        "version": "v", "build": "b", "fingerprint": "f", "userName": "u", "password": "x",
        "clusterName": "", "syncKey": "", "useSync": false, "trustedMicros": 0}))
    .expect("a device record");
    for item in obj
        .get("items")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let _ = events::FleetEvent::from_item(&dev, item.clone());
    }
    if let Some(c) = obj.get("clientIp").and_then(Value::as_str)
        && let Ok(block) = c.parse::<portcullis_support::Cidr>()
    {
        let _ = c.parse().is_ok_and(|ip| block.contains(ip));
        assert_eq!(block.to_string().parse(), Ok(block));
    }
    if let Some(t) = obj.get("since").and_then(Value::as_str) {
        let _ = events::search::instant("since", t);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn seeds_run_without_panic() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/central_body");
        let mut n = 0;
        for e in std::fs::read_dir(&dir).expect("seed directory") {
            let data = std::fs::read(e.expect("entry").path()).expect("seed");
            super::body(&data);
            n += 1;
        }
        assert!(n >= 4, "seed corpus present");
    }
}
