//! The zones the DNS listener serves: an immutable snapshot of every zone, swapped atomically
//! (`ArcSwap`) when the SOAP portal commits a change, so an answer never sees half a change and
//! the next query sees the new data at once. Cloning a [`ZoneCatalog`] shares the same zones:
//! it is the zone-change notifier handed to both the SOAP portal and the listener.

use std::collections::BTreeMap;
use std::sync::Arc;

use arc_swap::ArcSwap;

use super::zone::{Zone, ZoneDoc, ZoneError};
use portcullis_store::{Store, Table};

/// Every zone by store key (`view/zone`).
pub type ZoneMap = BTreeMap<String, Arc<Zone>>;

/// A shared handle on the served zones.
#[derive(Clone, Default)]
pub struct ZoneCatalog {
    zones: Arc<ArcSwap<ZoneMap>>,
}

impl ZoneCatalog {
    /// An empty catalog.
    pub fn new() -> Self {
        Self::default()
    }

    /// Loads every zone of the store.
    pub fn load(store: &Store) -> Result<Self, ZoneError> {
        let cat = ZoneCatalog::new();
        let rows = store
            .list(Table::Zones, "")
            .map_err(|e| ZoneError(e.to_string()))?;
        let mut map = ZoneMap::new();
        for (key, value) in rows {
            let doc: ZoneDoc = serde_json::from_value(value)
                .map_err(|e| ZoneError(format!("stored zone {key}: {e}")))?;
            let zone =
                Zone::from_doc(&doc).map_err(|e| ZoneError(format!("stored zone {key}: {e}")))?;
            map.insert(key, Arc::new(zone));
        }
        cat.zones.store(Arc::new(map));
        Ok(cat)
    }

    /// Publishes committed changes: `Some(zone)` replaces or adds, `None` removes.
    pub fn publish(&self, changes: Vec<(String, Option<Zone>)>) {
        let changes: Vec<(String, Option<Arc<Zone>>)> = changes
            .into_iter()
            .map(|(k, z)| (k, z.map(Arc::new)))
            .collect();
        self.zones.rcu(|cur| {
            let mut next = ZoneMap::clone(cur);
            for (key, zone) in &changes {
                match zone {
                    Some(z) => next.insert(key.clone(), z.clone()),
                    None => next.remove(key),
                };
            }
            next
        });
    }

    /// The current snapshot.
    pub fn snapshot(&self) -> Arc<ZoneMap> {
        self.zones.load_full()
    }
}

/// The zone of `view` that is the closest enclosing zone of `qname` (fully qualified, lower case).
pub fn find_zone<'a>(zones: &'a ZoneMap, view: &str, qname: &str) -> Option<&'a Arc<Zone>> {
    let mut candidate = qname;
    loop {
        if let Some(z) = zones.get(&format!("{view}/{candidate}")) {
            return Some(z);
        }
        match candidate.split_once('.') {
            Some((_, rest)) if !rest.is_empty() => candidate = rest,
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zone(name: &str) -> Zone {
        Zone::create("external", name, "MASTER", "", vec![], &[]).unwrap()
    }

    #[test]
    fn publish_and_closest_zone() {
        let cat = ZoneCatalog::new();
        let z = zone("example.com.");
        let sub = zone("sub.example.com.");
        cat.publish(vec![(z.key(), Some(z)), (sub.key(), Some(sub))]);
        let snap = cat.snapshot();
        assert_eq!(
            find_zone(&snap, "external", "a.sub.example.com.")
                .unwrap()
                .name,
            "sub.example.com."
        );
        assert_eq!(
            find_zone(&snap, "external", "www.example.com.")
                .unwrap()
                .name,
            "example.com."
        );
        assert!(find_zone(&snap, "internal", "www.example.com.").is_none());
        assert!(find_zone(&snap, "external", "example.org.").is_none());
        cat.clone()
            .publish(vec![("external/sub.example.com.".into(), None)]);
        let snap = cat.snapshot();
        assert_eq!(
            find_zone(&snap, "external", "a.sub.example.com.")
                .unwrap()
                .name,
            "example.com."
        );
    }
}
