//! `Management.ResourceRecord`: `get_rrs`, and `add_<t>` / `update_<t>` / `delete_<t>` for the
//! record types of [`RR_TYPES`] (a, aaaa, cname, mx, ns, ptr, srv, txt). The table drives both the
//! dispatch and the WSDL, so they cannot disagree. `sync_ptrs` (a, aaaa) keeps the PTR records of
//! the matching reverse zone in step.

use crate::{RData, Record, name, record};

use super::SoapState;
use super::decode::{self, items, long, member, required};
use super::envelope::{Call, Node};
use super::fault::Fault;
use super::response::Value;

/// One record type of the interface.
pub struct RrType {
    /// Method suffix (`add_a`).
    pub suffix: &'static str,
    /// The records parameter of add/delete (`a_records`).
    pub param: &'static str,
    /// The struct type (`Management.ARecord`).
    pub ty: &'static str,
    /// Struct members and their xsd types, in schema order.
    pub fields: &'static [(&'static str, &'static str)],
    /// Whether the methods take `sync_ptrs`.
    pub sync: bool,
}

/// The fields of an address record, IPv4 (`A`) or IPv6 (`AAAA`) alike.
const ADDRESS_FIELDS: &[(&str, &str)] = &[
    ("domain_name", "string"),
    ("ip_address", "string"),
    ("ttl", "long"),
];

/// The record types served.
pub const RR_TYPES: &[RrType] = &[
    RrType {
        suffix: "a",
        param: "a_records",
        ty: "Management.ARecord",
        fields: ADDRESS_FIELDS,
        sync: true,
    },
    RrType {
        suffix: "aaaa",
        param: "aaaa_records",
        ty: "Management.AAAARecord",
        fields: ADDRESS_FIELDS,
        sync: true,
    },
    RrType {
        suffix: "cname",
        param: "cname_records",
        ty: "Management.CNAMERecord",
        fields: &[
            ("domain_name", "string"),
            ("cname", "string"),
            ("ttl", "long"),
        ],
        sync: false,
    },
    RrType {
        suffix: "mx",
        param: "mx_records",
        ty: "Management.MXRecord",
        fields: &[
            ("domain_name", "string"),
            ("preference", "long"),
            ("mail", "string"),
            ("ttl", "long"),
        ],
        sync: false,
    },
    RrType {
        suffix: "ns",
        param: "ns_records",
        ty: "Management.NSRecord",
        fields: &[
            ("domain_name", "string"),
            ("host_name", "string"),
            ("ttl", "long"),
        ],
        sync: false,
    },
    RrType {
        suffix: "ptr",
        param: "ptr_records",
        ty: "Management.PTRRecord",
        fields: &[
            ("ip_address", "string"),
            ("dname", "string"),
            ("ttl", "long"),
        ],
        sync: false,
    },
    RrType {
        suffix: "srv",
        param: "srv_records",
        ty: "Management.SRVRecord",
        fields: &[
            ("domain_name", "string"),
            ("ttl", "long"),
            ("priority", "long"),
            ("weight", "long"),
            ("port", "long"),
            ("target", "string"),
        ],
        sync: false,
    },
    RrType {
        suffix: "txt",
        param: "txt_records",
        ty: "Management.TXTRecord",
        fields: &[
            ("domain_name", "string"),
            ("ttl", "long"),
            ("text", "string"),
        ],
        sync: false,
    },
];

/// Runs one `Management.ResourceRecord` method.
pub fn dispatch(call: &Call, st: &SoapState) -> Result<Option<Value>, Fault> {
    let m = call.method.as_str();
    if m == "get_rrs" {
        return get_rrs(call, st).map(Some);
    }
    let found = m.split_once('_').and_then(|(verb, suffix)| {
        let t = RR_TYPES.iter().find(|t| t.suffix == suffix)?;
        matches!(verb, "add" | "delete" | "update").then_some((verb, t))
    });
    let Some((verb, t)) = found else {
        return Err(Fault::client(format!(
            "Method Management.ResourceRecord.{m} is not implemented"
        )));
    };
    change(call, st, verb, t).map(|_| None)
}

fn get_rrs(call: &Call, st: &SoapState) -> Result<Value, Fault> {
    let vzs = decode::view_zones(call)?;
    let mut out = Vec::with_capacity(vzs.len());
    for vz in &vzs {
        let z = st
            .load_zone(vz)?
            .ok_or_else(|| super::workset::zone_not_found(&vz.view, &vz.zone))?;
        out.push(z.records.iter().map(Record::to_string).collect());
    }
    Ok(Value::string_arrays(out))
}

/// Reads a per-zone array of record arrays.
fn record_sets(
    call: &Call,
    pname: &str,
    pos: usize,
    t: &RrType,
    zones: &[String],
) -> Result<Vec<Vec<Record>>, Fault> {
    let node = decode::param(call, pname, pos)?;
    let sets = items(node);
    decode::same_len(pname, sets, zones.len())?;
    sets.iter()
        .zip(zones)
        .enumerate()
        .map(|(i, (set, origin))| {
            items(set)
                .iter()
                .enumerate()
                .map(|(j, n)| to_record(t, n, origin, &format!("{pname}[{i}][{j}]")))
                .collect()
        })
        .collect()
}

fn change(call: &Call, st: &SoapState, verb: &str, t: &RrType) -> Result<(), Fault> {
    let vzs = decode::view_zones(call)?;
    let origins = vzs
        .iter()
        .map(|vz| name::normalize(&vz.zone, None).map_err(|e| Fault::invalid(e.to_string())))
        .collect::<Result<Vec<String>, Fault>>()?;
    let (old, new, sync_pos) = match verb {
        "update" => (
            record_sets(call, "old_records", 1, t, &origins)?,
            record_sets(call, "new_records", 2, t, &origins)?,
            3,
        ),
        "add" => (Vec::new(), record_sets(call, t.param, 1, t, &origins)?, 2),
        _ => (record_sets(call, t.param, 1, t, &origins)?, Vec::new(), 2),
    };
    let sync = if t.sync {
        decode::sync_ptrs(call, sync_pos, vzs.len())?
    } else {
        vec![false; vzs.len()]
    };
    st.write(|ws| {
        for (i, vz) in vzs.iter().enumerate() {
            for r in old.get(i).into_iter().flatten() {
                ws.zone_mut(&vz.view, &vz.zone)?.remove(r)?;
                if sync[i] {
                    ws.sync_ptr(&vz.view, r, false)?;
                }
            }
            for r in new.get(i).into_iter().flatten() {
                ws.zone_mut(&vz.view, &vz.zone)?.insert(r.clone())?;
                if sync[i] {
                    ws.sync_ptr(&vz.view, r, true)?;
                }
            }
            // a call with no records still addresses the zone: it must exist
            ws.zone_mut(&vz.view, &vz.zone)?;
        }
        Ok(())
    })
}

/// Builds a record from its iControl struct.
fn to_record(t: &RrType, n: &Node, origin: &str, what: &str) -> Result<Record, Fault> {
    let ttl = long(n, "ttl", what)?;
    let ttl = u32::try_from(ttl)
        .ok()
        .filter(|v| *v <= record::MAX_TTL)
        .ok_or_else(|| {
            Fault::invalid(format!(
                "{what}: TTL {ttl} is outside 0..={}",
                record::MAX_TTL
            ))
        })?;
    let nm = |field: &str| -> Result<String, Fault> {
        let raw = required(n, field, what)?;
        name::normalize(&raw, Some(origin)).map_err(|e| Fault::invalid(format!("{what}: {e}")))
    };
    let small = |field: &str| -> Result<u16, Fault> {
        let v = long(n, field, what)?;
        u16::try_from(v)
            .map_err(|_| Fault::invalid(format!("{what}: {field} {v} is outside 0..=65535")))
    };
    let ip = |v6: bool| -> Result<RData, Fault> {
        let raw = required(n, "ip_address", what)?;
        let bad = || {
            Fault::invalid(format!(
                "{what}: \"{raw}\" is not an IPv{} address",
                if v6 { 6 } else { 4 }
            ))
        };
        Ok(if v6 {
            RData::Aaaa(raw.parse().map_err(|_| bad())?)
        } else {
            RData::A(raw.parse().map_err(|_| bad())?)
        })
    };
    let (owner, data) = match t.suffix {
        "a" => (nm("domain_name")?, ip(false)?),
        "aaaa" => (nm("domain_name")?, ip(true)?),
        "cname" => (nm("domain_name")?, RData::Cname(nm("cname")?)),
        "mx" => (
            nm("domain_name")?,
            RData::Mx {
                preference: small("preference")?,
                exchange: nm("mail")?,
            },
        ),
        "ns" => (nm("domain_name")?, RData::Ns(nm("host_name")?)),
        "ptr" => {
            let raw = required(n, "ip_address", what)?;
            let owner = match raw.parse::<std::net::IpAddr>() {
                Ok(ip) => name::reverse_name(ip),
                Err(_) => name::normalize(&raw, Some(origin))
                    .map_err(|e| Fault::invalid(format!("{what}: {e}")))?,
            };
            (owner, RData::Ptr(nm("dname")?))
        }
        "srv" => (
            nm("domain_name")?,
            RData::Srv {
                priority: small("priority")?,
                weight: small("weight")?,
                port: small("port")?,
                target: nm("target")?,
            },
        ),
        _ => {
            let text = member(n, "text");
            let parts = if text.starts_with('"') {
                let line = format!("x TXT {text}");
                match record::parse_record(&line, origin) {
                    Ok(Record {
                        data: RData::Txt(p),
                        ..
                    }) => p,
                    Ok(_) => vec![text.clone()],
                    Err(e) => return Err(Fault::invalid(format!("{what}: {e}"))),
                }
            } else {
                split_txt(&text)
            };
            (nm("domain_name")?, RData::Txt(parts))
        }
    };
    Ok(Record {
        name: owner,
        ttl,
        data,
    })
}

/// Splits unquoted TXT text into character-strings of at most 255 bytes.
fn split_txt(text: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    for ch in text.chars() {
        let cur = out
            .last_mut()
            .map(|s| s.len() + ch.len_utf8() > 255)
            .unwrap_or(false);
        if cur {
            out.push(String::new());
        }
        if let Some(s) = out.last_mut() {
            s.push(ch);
        }
    }
    out
}
