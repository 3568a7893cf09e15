//! The zones one SOAP call changes, gathered inside one store write transaction: zones are loaded
//! from the transaction on first use, changed in memory, and written back together at the end,
//! each changed zone with its SOA serial bumped once. Any fault leaves the transaction
//! uncommitted, so a call changes all the zones it addresses or none.

use std::collections::{BTreeMap, BTreeSet};

use crate::{RData, Record, Zone, ZoneDoc, name, zone_key};
use portcullis_store::{Table, WriteTx};

use super::fault::Fault;

/// Zones loaded and changed during one call.
pub struct WorkSet<'a, 't> {
    tx: &'a mut WriteTx<'t>,
    zones: BTreeMap<String, Option<Zone>>,
    changed: BTreeSet<String>,
    created: BTreeSet<String>,
}

/// Normalises a view + zone name pair to its store key, with faults on bad names.
pub fn key_of(view: &str, zone: &str) -> Result<String, Fault> {
    name::check_view(view).map_err(|e| Fault::invalid(e.to_string()))?;
    let z = name::normalize(zone, None).map_err(|e| Fault::invalid(e.to_string()))?;
    Ok(zone_key(view, &z))
}

/// The "not found" fault of a zone.
pub fn zone_not_found(view: &str, zone: &str) -> Fault {
    Fault::not_found(format!(
        "The requested zone (view {view}, zone {zone}) was not found."
    ))
}

impl<'a, 't> WorkSet<'a, 't> {
    pub fn new(tx: &'a mut WriteTx<'t>) -> Self {
        WorkSet {
            tx,
            zones: BTreeMap::new(),
            changed: BTreeSet::new(),
            created: BTreeSet::new(),
        }
    }

    fn load(&mut self, key: &str) -> Result<(), Fault> {
        if !self.zones.contains_key(key) {
            let zone = match self.tx.get(Table::Zones, key)? {
                None => None,
                Some(v) => {
                    let doc: ZoneDoc = serde_json::from_value(v)
                        .map_err(|e| Fault::internal(format!("stored zone {key}: {e}")))?;
                    Some(Zone::from_doc(&doc)?)
                }
            };
            self.zones.insert(key.to_string(), zone);
        }
        Ok(())
    }

    /// Whether the zone exists (as changed so far in this call).
    pub fn exists(&mut self, key: &str) -> Result<bool, Fault> {
        self.load(key)?;
        Ok(matches!(self.zones.get(key), Some(Some(_))))
    }

    /// The zone to change; a "not found" fault when it does not exist.
    pub fn zone_mut(&mut self, view: &str, zone: &str) -> Result<&mut Zone, Fault> {
        let key = key_of(view, zone)?;
        self.load(&key)?;
        self.changed.insert(key.clone());
        match self.zones.get_mut(&key) {
            Some(Some(z)) => Ok(z),
            _ => Err(zone_not_found(view, zone)),
        }
    }

    /// Adds a new zone; an "already exists" fault when it is there.
    pub fn create(&mut self, zone: Zone) -> Result<(), Fault> {
        let key = zone.key();
        if self.exists(&key)? {
            return Err(Fault::exists(format!(
                "The requested zone (view {}, zone {}) already exists.",
                zone.view, zone.name
            )));
        }
        self.changed.insert(key.clone());
        self.created.insert(key.clone());
        self.zones.insert(key, Some(zone));
        Ok(())
    }

    /// Removes a zone; a "not found" fault when it is not there.
    pub fn delete(&mut self, view: &str, zone: &str) -> Result<(), Fault> {
        let key = key_of(view, zone)?;
        if !self.exists(&key)? {
            return Err(zone_not_found(view, zone));
        }
        self.changed.insert(key.clone());
        self.zones.insert(key, None);
        Ok(())
    }

    /// The closest enclosing zone of `owner` in `view`, if one exists (for reverse records).
    pub fn enclosing(&mut self, view: &str, owner: &str) -> Result<Option<String>, Fault> {
        let mut candidate = owner;
        loop {
            let key = zone_key(view, candidate);
            if self.exists(&key)? {
                return Ok(Some(key));
            }
            match candidate.split_once('.') {
                Some((_, rest)) if !rest.is_empty() => candidate = rest,
                _ => return Ok(None),
            }
        }
    }

    /// Adds (`add`) or removes the PTR record matching an address record, in the reverse zone of
    /// the same view. Without a reverse zone nothing is done, as the zone tool does.
    pub fn sync_ptr(&mut self, view: &str, rec: &Record, add: bool) -> Result<(), Fault> {
        let ip = match rec.data {
            RData::A(ip) => ip.into(),
            RData::Aaaa(ip) => ip.into(),
            _ => return Ok(()),
        };
        let owner = name::reverse_name(ip);
        let Some(key) = self.enclosing(view, &owner)? else {
            return Ok(());
        };
        let ptr = Record {
            name: owner,
            ttl: rec.ttl,
            data: RData::Ptr(rec.name.clone()),
        };
        self.changed.insert(key.clone());
        if let Some(Some(z)) = self.zones.get_mut(&key) {
            if add {
                z.insert(ptr)?;
            } else if z
                .records
                .iter()
                .any(|r| r.name == ptr.name && r.data == ptr.data)
            {
                z.remove(&ptr)?;
            }
        }
        Ok(())
    }

    /// Writes every changed zone (serial bumped; new zones keep theirs) and returns the changes
    /// to publish to the DNS listener once the transaction has committed.
    pub fn finish(self) -> Result<Vec<(String, Option<Zone>)>, Fault> {
        let mut out = Vec::new();
        for key in &self.changed {
            match self.zones.get(key).cloned().flatten() {
                Some(mut z) => {
                    if !self.created.contains(key) {
                        z.bump_serial();
                    }
                    let doc = serde_json::to_value(z.to_doc())
                        .map_err(|e| Fault::internal(e.to_string()))?;
                    self.tx.put(Table::Zones, key, &doc)?;
                    out.push((key.clone(), Some(z)));
                }
                None => {
                    self.tx.delete(Table::Zones, key)?;
                    out.push((key.clone(), None));
                }
            }
        }
        Ok(out)
    }
}
