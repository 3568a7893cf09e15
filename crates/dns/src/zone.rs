//! A zone of the zone tool: its view, MASTER type, zone file name, option sequence and records,
//! with the invariants kept on every change: exactly one SOA at the apex, every record inside the
//! zone, no CNAME beside other data, and the SOA serial bumped by every change.
//!
//! Zones persist in the store (`Table::Zones`, key `view/zone`) as [`ZoneDoc`]: the records as
//! zone-file text lines, so what is stored is what `get_rrs` shows.

use serde::{Deserialize, Serialize};

use super::name;
use super::record::{self, RData, Record, Soa};

/// The zone types of the zone tool; only MASTER zones hold data here.
pub const ZONE_TYPES: [&str; 6] = ["UNSET", "MASTER", "SLAVE", "STUB", "FORWARD", "HINT"];

/// Why a zone change was refused; the text is shown to API users.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ZoneError(pub String);

impl From<record::RecordError> for ZoneError {
    fn from(e: record::RecordError) -> Self {
        ZoneError(e.to_string())
    }
}

impl From<name::ViewError> for ZoneError {
    fn from(e: name::ViewError) -> Self {
        ZoneError(e.to_string())
    }
}

impl From<name::NameError> for ZoneError {
    fn from(e: name::NameError) -> Self {
        ZoneError(e.to_string())
    }
}

/// The stored form of a zone.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ZoneDoc {
    pub view_name: String,
    pub zone_name: String,
    pub zone_type: String,
    pub zone_file: String,
    pub option_seq: Vec<String>,
    pub records: Vec<String>,
}

/// A zone with parsed records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Zone {
    pub view: String,
    /// Fully qualified, lower case.
    pub name: String,
    pub zone_type: String,
    pub zone_file: String,
    pub options: Vec<String>,
    /// SOA first, then the other records in the order they were added.
    pub records: Vec<Record>,
}

/// The store key of a zone.
pub fn zone_key(view: &str, zone: &str) -> String {
    format!("{view}/{zone}")
}

impl Zone {
    /// Builds a new zone from its info and record texts, validating everything. Without an SOA
    /// in `texts`, one is made (`ns1.<zone> hostmaster.<zone> 1 10800 3600 604800 86400`).
    pub fn create(
        view: &str,
        zone_name: &str,
        zone_type: &str,
        zone_file: &str,
        options: Vec<String>,
        texts: &[String],
    ) -> Result<Zone, ZoneError> {
        name::check_view(view)?;
        let zname = name::normalize(zone_name, None)?;
        if zname == "." {
            return Err(ZoneError("the root zone cannot be managed here".into()));
        }
        let ztype = zone_type.trim().to_ascii_uppercase();
        if ztype != "MASTER" {
            return Err(ZoneError(if ZONE_TYPES.contains(&ztype.as_str()) {
                format!("zone type {ztype} is not supported; only MASTER zones can be created")
            } else {
                format!("unknown zone type \"{zone_type}\" (expected MASTER)")
            }));
        }
        let zone_file = if zone_file.trim().is_empty() {
            format!("db.{view}.{zname}")
        } else {
            zone_file.trim().to_string()
        };
        if zone_file.contains('/') || zone_file.contains("..") {
            return Err(ZoneError(format!(
                "zone file name \"{zone_file}\" must be a plain file name"
            )));
        }
        let mut zone = Zone {
            view: view.to_string(),
            name: zname,
            zone_type: ztype,
            zone_file,
            options,
            records: Vec::new(),
        };
        let mut parsed = Vec::with_capacity(texts.len() + 1);
        for t in texts.iter().filter(|t| !t.trim().is_empty()) {
            parsed.push(record::parse_record(t, &zone.name)?);
        }
        let soas: Vec<&Record> = parsed
            .iter()
            .filter(|r| matches!(r.data, RData::Soa(_)))
            .collect();
        match soas.len() {
            0 => zone.records.push(Record {
                name: zone.name.clone(),
                ttl: record::DEFAULT_TTL,
                data: RData::Soa(Soa {
                    mname: format!("ns1.{}", zone.name),
                    rname: format!("hostmaster.{}", zone.name),
                    serial: 1,
                    refresh: 10800,
                    retry: 3600,
                    expire: 604800,
                    minimum: 86400,
                }),
            }),
            1 => {}
            n => {
                return Err(ZoneError(format!(
                    "zone {} has {n} SOA records; one is allowed",
                    zone.name
                )));
            }
        }
        parsed.sort_by_key(|r| !matches!(r.data, RData::Soa(_)));
        for r in parsed {
            zone.insert(r)?;
        }
        Ok(zone)
    }

    /// The store key (`view/zone`).
    pub fn key(&self) -> String {
        zone_key(&self.view, &self.name)
    }

    /// The zone's SOA record.
    pub fn soa(&self) -> Option<(&Record, &Soa)> {
        self.records.iter().find_map(|r| match &r.data {
            RData::Soa(s) => Some((r, s)),
            _ => None,
        })
    }

    /// Adds a record (validated). Returns false when an identical record (same name, type and
    /// data) is already there; its TTL is then updated.
    pub fn insert(&mut self, r: Record) -> Result<bool, ZoneError> {
        if !name::in_zone(&r.name, &self.name) {
            return Err(ZoneError(format!(
                "record {} is outside zone {}",
                r.name, self.name
            )));
        }
        if let RData::Soa(_) = r.data {
            if r.name != self.name {
                return Err(ZoneError(format!(
                    "the SOA record must be at the zone apex {}",
                    self.name
                )));
            }
            if self.soa().is_some() {
                return Err(ZoneError(format!(
                    "zone {} already has an SOA record",
                    self.name
                )));
            }
        }
        if let Some(same) = self
            .records
            .iter_mut()
            .find(|x| x.name == r.name && x.data == r.data)
        {
            same.ttl = r.ttl;
            return Ok(false);
        }
        let is_cname = matches!(r.data, RData::Cname(_));
        let clash = self
            .records
            .iter()
            .any(|x| x.name == r.name && (is_cname || matches!(x.data, RData::Cname(_))));
        if clash {
            return Err(ZoneError(format!(
                "{} cannot hold a CNAME record together with other records",
                r.name
            )));
        }
        self.records.push(r);
        Ok(true)
    }

    /// Removes the record with the same name, type and data (the TTL is not compared).
    pub fn remove(&mut self, r: &Record) -> Result<(), ZoneError> {
        if matches!(r.data, RData::Soa(_)) {
            return Err(ZoneError("the SOA record cannot be deleted".into()));
        }
        match self
            .records
            .iter()
            .position(|x| x.name == r.name && x.data == r.data)
        {
            Some(i) => {
                self.records.remove(i);
                Ok(())
            }
            None => Err(ZoneError(format!(
                "the record \"{}\" was not found in zone {}",
                r, self.name
            ))),
        }
    }

    /// Increments the SOA serial (RFC 1982 arithmetic: wraps, never 0).
    pub fn bump_serial(&mut self) {
        for r in &mut self.records {
            if let RData::Soa(s) = &mut r.data {
                s.serial = s.serial.wrapping_add(1).max(1);
            }
        }
    }

    /// The stored form.
    pub fn to_doc(&self) -> ZoneDoc {
        ZoneDoc {
            view_name: self.view.clone(),
            zone_name: self.name.clone(),
            zone_type: self.zone_type.clone(),
            zone_file: self.zone_file.clone(),
            option_seq: self.options.clone(),
            records: self.records.iter().map(Record::to_string).collect(),
        }
    }

    /// Rebuilds a zone from its stored form.
    pub fn from_doc(doc: &ZoneDoc) -> Result<Zone, ZoneError> {
        Zone::create(
            &doc.view_name,
            &doc.zone_name,
            &doc.zone_type,
            &doc.zone_file,
            doc.option_seq.clone(),
            &doc.records,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zone(texts: &[&str]) -> Result<Zone, ZoneError> {
        let texts: Vec<String> = texts.iter().map(|s| s.to_string()).collect();
        Zone::create("external", "Example.com.", "MASTER", "", vec![], &texts)
    }

    #[test]
    fn create_validates_and_defaults() {
        let z = zone(&["www 300 IN A 10.0.0.1"]).unwrap();
        assert_eq!(z.name, "example.com.");
        assert_eq!(z.zone_file, "db.external.example.com.");
        assert_eq!(z.soa().unwrap().1.serial, 1);
        assert_eq!(z.records.len(), 2);
        assert!(zone(&["www.other.com. 300 IN A 10.0.0.1"]).is_err());
        assert!(zone(&["www 300 IN SOA a b 1 2 3 4 5"]).is_err());
        assert!(zone(&["www 300 IN CNAME x", "www 300 IN A 10.0.0.1"]).is_err());
        let bad = Zone::create("external", "x.com.", "SLAVE", "", vec![], &[]);
        assert!(bad.unwrap_err().0.contains("only MASTER"));
        assert!(Zone::create("bad view", "x.com.", "MASTER", "", vec![], &[]).is_err());
    }

    #[test]
    fn changes_keep_invariants_and_doc_round_trips() {
        let mut z = zone(&["@ 3600 IN SOA ns1 hm 41 1 1 1 1", "@ 3600 IN NS ns1"]).unwrap();
        let a = record::parse_record("www 300 IN A 10.0.0.1", &z.name).unwrap();
        assert!(z.insert(a.clone()).unwrap());
        assert!(!z.insert(a.clone()).unwrap(), "duplicate add is a no-op");
        z.bump_serial();
        assert_eq!(z.soa().unwrap().1.serial, 42);
        let back = Zone::from_doc(&z.to_doc()).unwrap();
        assert_eq!(back, z);
        z.remove(&a).unwrap();
        assert!(z.remove(&a).unwrap_err().0.contains("not found"));
    }
}
