//! `Management.Zone`: `zone_exist`, `add_zone_text`, `get_zone_v2`, `delete_zone`.

use crate::{RData, Zone};

use super::SoapState;
use super::decode::{self, ViewZone};
use super::envelope::Call;
use super::fault::Fault;
use super::response::Value;
use super::workset::{key_of, zone_not_found};

/// The methods of this interface (the WSDL test checks its document declares each).
#[cfg(test)]
pub const METHODS: [&str; 4] = ["zone_exist", "add_zone_text", "get_zone_v2", "delete_zone"];

/// Runs one `Management.Zone` method.
pub fn dispatch(call: &Call, st: &SoapState) -> Result<Option<Value>, Fault> {
    match call.method.as_str() {
        "zone_exist" => zone_exist(call, st).map(Some),
        "add_zone_text" => add_zone_text(call, st).map(|_| None),
        "get_zone_v2" => get_zone_v2(call, st).map(Some),
        "delete_zone" => delete_zone(call, st).map(|_| None),
        other => Err(Fault::client(format!(
            "Method Management.Zone.{other} is not implemented"
        ))),
    }
}

fn zone_exist(call: &Call, st: &SoapState) -> Result<Value, Fault> {
    let vzs = decode::view_zones(call)?;
    let mut out = Vec::with_capacity(vzs.len());
    for vz in &vzs {
        out.push(st.load_zone(vz)?.is_some());
    }
    Ok(Value::bools(out))
}

fn add_zone_text(call: &Call, st: &SoapState) -> Result<(), Fault> {
    let infos = decode::zone_infos(
        call.param("zone_records", 0)
            .ok_or_else(|| Fault::invalid("missing parameter zone_records"))?,
    )?;
    let texts = call
        .param("text", 1)
        .map(decode::string_arrays)
        .unwrap_or_default();
    let texts = if texts.is_empty() {
        vec![Vec::new(); infos.len()]
    } else {
        texts
    };
    decode::same_len("text", &texts, infos.len())?;
    let sync = decode::sync_ptrs(call, 2, infos.len())?;
    st.write(|ws| {
        let mut zones = Vec::with_capacity(infos.len());
        for (info, recs) in infos.iter().zip(&texts) {
            let zone = Zone::create(
                &info.view,
                &info.zone,
                &info.zone_type,
                &info.zone_file,
                info.options.clone(),
                recs,
            )?;
            zones.push(zone.clone());
            ws.create(zone)?;
        }
        for (zone, sync) in zones.iter().zip(sync) {
            if sync {
                for r in zone
                    .records
                    .iter()
                    .filter(|r| matches!(r.data, RData::A(_) | RData::Aaaa(_)))
                {
                    ws.sync_ptr(&zone.view, r, true)?;
                }
            }
        }
        Ok(())
    })
}

fn get_zone_v2(call: &Call, st: &SoapState) -> Result<Value, Fault> {
    let vzs = decode::view_zones(call)?;
    let mut out = Vec::with_capacity(vzs.len());
    for vz in &vzs {
        let z = st
            .load_zone(vz)?
            .ok_or_else(|| zone_not_found(&vz.view, &vz.zone))?;
        out.push(Value::Struct(vec![
            ("view_name", Value::Str(z.view.clone())),
            ("zone_name", Value::Str(z.name.clone())),
            (
                "zone_type",
                Value::Enum("iControl:Management.ZoneType", z.zone_type.clone()),
            ),
            ("zone_file", Value::Str(z.zone_file.clone())),
            ("option_seq", Value::strings(z.options.clone())),
        ]));
    }
    Ok(Value::structs("Management.ZoneInfo", out))
}

fn delete_zone(call: &Call, st: &SoapState) -> Result<(), Fault> {
    let vzs = decode::view_zones(call)?;
    st.write(|ws| {
        for ViewZone { view, zone } in &vzs {
            key_of(view, zone)?;
            ws.delete(view, zone)?;
        }
        Ok(())
    })
}
