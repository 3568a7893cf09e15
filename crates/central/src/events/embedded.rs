//! The fleet event store in the central manager's own embedded store (the default): `Table::Events`
//! under `f/<timeMicros, 20 digits>/<machineId>/<supportId>` → the item, and the index
//! `s/<supportId>/<machineId>` → its `f/` key. A search by support id reads the index; other
//! searches walk the events newest first (between `since` and `until` only), so they cost in
//! proportion to what is kept: PostgreSQL is the store for large fleets.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};

use super::{EventStoreError, FleetEvent, Found, Retention, Search};
use portcullis_store::{Store, Table, WriteTx};
use portcullis_support::now_micros;

const ITEMS: &str = "f/";
const INDEX: &str = "s/";

fn item_key(e: &FleetEvent) -> String {
    format!("{ITEMS}{:020}/{}/{}", e.time_micros, e.device, e.support_id)
}

fn index_key(support_id: &str, device: &str) -> String {
    format!("{INDEX}{support_id}/{device}")
}

pub struct Embedded {
    store: Arc<Store>,
    /// Events kept (counted once, then kept up to date by inserts and prunes).
    count: AtomicU64,
}

/// Whether the stored item `v` meets every criterion of `q`.
fn matches(q: &Search, v: &Value) -> bool {
    let s = |k: &str| v[k].as_str().unwrap_or_default();
    let names = || {
        v["violations"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|x| x["name"].as_str())
    };
    q.support_id
        .as_deref()
        .is_none_or(|id| s("supportId") == id)
        && q.devices
            .as_ref()
            .is_none_or(|ids| ids.iter().any(|d| v["device"]["machineId"] == d.as_str()))
        && q.policy.as_deref().is_none_or(|p| {
            let full_path = s("policyName");
            full_path == p || (!p.contains('/') && full_path.rsplit('/').next() == Some(p))
        })
        && q.violation
            .as_deref()
            .is_none_or(|want| names().any(|n| n == want))
        && q.signature.is_none_or(|sig| {
            v["violations"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|x| x["signatureIds"].as_array().cloned().unwrap_or_default())
                .any(|id| id.as_i64() == Some(sig))
        })
        && q.client
            .is_none_or(|c| s("clientIp").parse().is_ok_and(|ip| c.contains(ip)))
}

impl Embedded {
    pub fn new(store: Arc<Store>) -> Embedded {
        let count = store.count(Table::Events, ITEMS).unwrap_or(0) as u64;
        Embedded {
            store,
            count: AtomicU64::new(count),
        }
    }

    pub fn insert(&self, events: &[FleetEvent]) -> Result<usize, EventStoreError> {
        let added = self.store.write(|tx| {
            let mut added = 0;
            for e in events {
                let ix = index_key(&e.support_id, &e.device);
                if tx.get(Table::Events, &ix)?.is_some() {
                    continue;
                }
                let key = item_key(e);
                tx.put(Table::Events, &key, &e.item)?;
                tx.put(Table::Events, &ix, &json!(key))?;
                added += 1;
            }
            Ok::<_, portcullis_store::StoreError>(added)
        })?;
        self.count.fetch_add(added as u64, Ordering::Relaxed);
        Ok(added)
    }

    pub fn search(&self, q: &Search) -> Result<Found, EventStoreError> {
        let mut found = Found::default();
        let mut take = |v: Value| {
            if matches(q, &v) {
                if found.total >= q.skip as u64 && found.items.len() < q.top {
                    found.items.push(v);
                }
                found.total += 1;
            }
        };
        if let Some(id) = &q.support_id {
            let mut hits: Vec<Value> = Vec::new();
            for (_, key) in self.store.list(Table::Events, &format!("{INDEX}{id}/"))? {
                if let Some(v) = key
                    .as_str()
                    .and_then(|k| self.store.get(Table::Events, k).ok().flatten())
                {
                    hits.push(v);
                }
            }
            hits.sort_by_key(|v| std::cmp::Reverse(v["timeMicros"].as_u64().unwrap_or(0)));
            hits.into_iter()
                .filter(|v| in_range(q, v["timeMicros"].as_u64().unwrap_or(0)))
                .for_each(&mut take);
            return Ok(found);
        }
        let since = q.since_micros.unwrap_or(0);
        self.store.scan_rev(Table::Events, ITEMS, |k, v| {
            let t = k[ITEMS.len()..]
                .split('/')
                .next()
                .and_then(|t| t.parse::<u64>().ok())
                .unwrap_or(0);
            if t < since {
                return false;
            }
            if in_range(q, t) {
                take(v);
            }
            true
        })?;
        Ok(found)
    }

    pub fn prune(&self, keep: Retention) -> Result<u64, EventStoreError> {
        let count = self.count.load(Ordering::Relaxed);
        let over = keep.excess(count);
        let cutoff = keep.cutoff_micros(now_micros());
        let removed = self.store.write(|tx| {
            let mut removed = 0u64;
            if over > 0 {
                for k in tx.first_keys(Table::Events, ITEMS, over as usize)? {
                    delete(tx, &k)?;
                    removed += 1;
                }
            }
            if let Some(cutoff) = cutoff {
                let bound = format!("{ITEMS}{cutoff:020}");
                loop {
                    let keys = tx.first_keys(Table::Events, ITEMS, 1024)?;
                    let old: Vec<&String> = keys.iter().take_while(|k| **k < bound).collect();
                    for k in &old {
                        delete(tx, k)?;
                        removed += 1;
                    }
                    if old.len() < 1024 {
                        break;
                    }
                }
            }
            Ok::<_, portcullis_store::StoreError>(removed)
        })?;
        self.count.fetch_sub(removed.min(count), Ordering::Relaxed);
        Ok(removed)
    }
}

fn in_range(q: &Search, t: u64) -> bool {
    q.since_micros.is_none_or(|s| t >= s) && q.until_micros.is_none_or(|u| t <= u)
}

fn delete(tx: &mut WriteTx<'_>, key: &str) -> portcullis_store::Result<()> {
    let mut parts = key[ITEMS.len()..].splitn(3, '/');
    let (_, device, support_id) = (parts.next(), parts.next(), parts.next());
    if let (Some(d), Some(s)) = (device, support_id) {
        tx.delete(Table::Events, &index_key(s, d))?;
    }
    tx.delete(Table::Events, key)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn ev(device: &str, id: &str, t: u64, ip: &str, violation: &str) -> FleetEvent {
        let item = json!({"supportId": id, "timeMicros": t, "clientIp": ip,
            "policyName": "/Common/api", "device": {"machineId": device},
            "violations": [{"name": violation, "signatureIds": [200001]}]});
        FleetEvent {
            device: device.into(),
            support_id: id.into(),
            time_micros: t,
            client_ip: ip.into(),
            policy: "/Common/api".into(),
            virtual_server: "/Common/vs".into(),
            violations: vec![violation.into()],
            signatures: vec![200001],
            item,
        }
    }

    #[test]
    fn insert_dedups_searches_and_prunes() {
        let dir = tempfile::tempdir().unwrap();
        let e = Embedded::new(Arc::new(Store::open(dir.path()).unwrap()));
        let now = now_micros();
        let batch = vec![
            ev("m1", "1", now - 3, "10.0.0.1", "VIOL_URL"),
            ev("m2", "2", now - 2, "10.0.0.2", "VIOL_ATTACK_SIGNATURE"),
            ev("m1", "3", now - 1, "192.0.2.1", "VIOL_URL"),
        ];
        assert_eq!(e.insert(&batch).unwrap(), 3);
        assert_eq!(e.insert(&batch).unwrap(), 0, "no duplicates");
        let ids = |q: Search| -> Vec<String> {
            e.search(&Search { top: 10, ..q })
                .unwrap()
                .items
                .iter()
                .map(|v| v["supportId"].as_str().unwrap().to_string())
                .collect()
        };
        assert_eq!(ids(Search::default()), ["3", "2", "1"]);
        assert_eq!(
            ids(Search {
                support_id: Some("2".into()),
                ..Search::default()
            }),
            ["2"]
        );
        assert_eq!(
            ids(Search {
                devices: Some(vec!["m1".into()]),
                ..Search::default()
            }),
            ["3", "1"]
        );
        assert_eq!(
            ids(Search {
                violation: Some("VIOL_URL".into()),
                ..Search::default()
            }),
            ["3", "1"]
        );
        assert_eq!(
            ids(Search {
                client: "10.0.0.0/8".parse().ok(),
                ..Search::default()
            }),
            ["2", "1"]
        );
        assert_eq!(
            ids(Search {
                policy: Some("api".into()),
                signature: Some(200001),
                ..Search::default()
            })
            .len(),
            3
        );
        assert_eq!(
            ids(Search {
                since_micros: Some(now - 2),
                until_micros: Some(now - 2),
                ..Search::default()
            }),
            ["2"]
        );
        let page = e
            .search(&Search {
                top: 1,
                skip: 1,
                ..Search::default()
            })
            .unwrap();
        assert_eq!(
            (page.total, page.items[0]["supportId"].as_str()),
            (3, Some("2"))
        );
        let keep = Retention {
            max_age: Duration::from_secs(3600),
            max_events: 2,
        };
        assert_eq!(e.prune(keep).unwrap(), 1);
        assert_eq!(ids(Search::default()), ["3", "2"]);
        assert!(
            ids(Search {
                support_id: Some("1".into()),
                ..Search::default()
            })
            .is_empty()
        );
        let old = ev("m3", "4", now - 7200 * 1_000_000, "10.0.0.4", "VIOL_URL");
        e.insert(&[old]).unwrap();
        assert_eq!(e.prune(keep).unwrap(), 1, "past the age bound");
        assert_eq!(e.count.load(Ordering::Relaxed), 2);
    }
}
