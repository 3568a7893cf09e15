//! The local request-event log in `Table::Events`: a consumer thread writes events in batches
//! (one durable store transaction per batch) under time-ordered keys, and prunes by count and
//! age (`events_max_count`, `events_max_age`) in the same transaction, and on its own every
//! [`PRUNE_EVERY`] when idle. Keys: `e/<timeMicros, 20 digits>/<supportId>` → the event JSON (as
//! the JSON-line event log writes it, plus `policyFullPath` and its write `sequence`);
//! `i/<supportId>` → its `e/` key; `w/<sequence, 20 digits>` → its `e/` key; [`LAST_SEQUENCE`] →
//! the last sequence given; [`COUNT`] → how many events are kept; the search indexes (`index`)
//! and the statistics buckets (`stats`) are written and pruned in the same transactions.
//! Sequences number the events in the order they were stored (a request's event is keyed by its
//! arrival, but stored when it ends), so a collector reading after the last sequence it saw
//! misses none (`super::feed`). The last sequence is kept apart from the `w/` keys, which go with
//! their events: a log pruned empty and then restarted goes on numbering after it, and a
//! collector's cursor never skips the first events stored after the restart.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use portcullis_engine::SecurityEvent;
use portcullis_proxy::EventStream;
use portcullis_store::{Result, Retention, Store, Table, WriteTx};
use portcullis_support::now_micros;

pub const ITEMS: &str = "e/";
pub const INDEX: &str = "i/";
pub const SEQUENCE: &str = "w/";
/// The last write sequence given (never pruned).
pub const LAST_SEQUENCE: &str = "n/last-sequence";
/// The number of stored events (so a count needs no scan of a million keys).
pub const COUNT: &str = "n/count";
/// Most events written in one store transaction.
pub const BATCH: usize = 512;
/// Age pruning runs at least this often.
pub const PRUNE_EVERY: Duration = Duration::from_secs(30);
const PRUNE_CHUNK: usize = 1024;

pub fn item_key(time_micros: u64, support_id: &str) -> String {
    format!("{ITEMS}{time_micros:020}/{support_id}")
}

fn index_key(support_id: &str) -> String {
    format!("{INDEX}{support_id}")
}

pub fn sequence_key(sequence: u64) -> String {
    format!("{SEQUENCE}{sequence:020}")
}

/// The sequence the next stored event gets.
pub fn next_sequence(store: &Store) -> Result<u64> {
    Ok(store
        .get(Table::Events, LAST_SEQUENCE)?
        .and_then(|v| v.as_u64())
        .map_or(1, |last| last + 1))
}

/// The stored event with support id `id`.
pub fn get(store: &Store, id: &str) -> Result<Option<Value>> {
    let Some(Value::String(key)) = store.get(Table::Events, &index_key(id))? else {
        return Ok(None);
    };
    store.get(Table::Events, &key)
}

/// Visits stored events newest first until `f` returns false.
pub fn newest_first(store: &Store, f: impl FnMut(&str, Value) -> bool) -> Result<()> {
    store.scan_rev(Table::Events, ITEMS, f)
}

/// How many events are stored.
pub fn count(store: &Store) -> Result<usize> {
    match store.get(Table::Events, COUNT)? {
        Some(v) => Ok(v.as_u64().unwrap_or(0) as usize),
        None => store.count(Table::Events, ITEMS),
    }
}

fn delete_item(tx: &mut WriteTx<'_>, key: &str) -> Result<()> {
    if let Some(e) = tx.get(Table::Events, key)? {
        for k in super::index::keys_of(&e, super::index::time_and_id(key)) {
            tx.delete(Table::Events, &k)?;
        }
        if let Some(seq) = e.get("sequence").and_then(Value::as_u64) {
            tx.delete(Table::Events, &sequence_key(seq))?;
        }
    }
    tx.delete(Table::Events, key)?;
    if let Some(id) = key.rsplit('/').next() {
        let ix = index_key(id);
        if tx
            .get(Table::Events, &ix)?
            .and_then(|v| v.as_str().map(str::to_string))
            == Some(key.to_string())
        {
            tx.delete(Table::Events, &ix)?;
        }
    }
    Ok(())
}

/// Deletes what `keep` no longer allows; returns the new count.
fn prune(tx: &mut WriteTx<'_>, mut count: usize, keep: Retention) -> Result<usize> {
    let over = keep.excess(count as u64) as usize;
    if over > 0 {
        for k in tx.first_keys(Table::Events, ITEMS, over)? {
            delete_item(tx, &k)?;
            count -= 1;
        }
    }
    if let Some(cutoff) = keep.cutoff_micros(now_micros()) {
        let bound = format!("{ITEMS}{cutoff:020}");
        loop {
            let keys = tx.first_keys(Table::Events, ITEMS, PRUNE_CHUNK)?;
            let old: Vec<&String> = keys.iter().take_while(|k| **k < bound).collect();
            for k in &old {
                delete_item(tx, k)?;
                count = count.saturating_sub(1);
            }
            if old.len() < PRUNE_CHUNK {
                break;
            }
        }
    }
    super::stats::prune(tx, now_micros())?;
    Ok(count)
}

/// Writes `batch` and prunes, in one transaction; returns the new count. Each stored event gets
/// `policyFullPath` from `policy_of` and the next write sequence (`sequence` is advanced once the
/// transaction is committed).
pub fn write_batch(
    store: &Store,
    batch: &[Arc<SecurityEvent>],
    policy_of: &dyn Fn(&SecurityEvent) -> String,
    count: usize,
    sequence: &mut u64,
    keep: Retention,
) -> Result<usize> {
    let mut next = *sequence;
    let count = store.write(|tx| -> Result<usize> {
        next = *sequence;
        let mut count = count;
        let mut stored = Vec::with_capacity(batch.len());
        for ev in batch {
            let key = item_key(ev.time_micros, &ev.support_id);
            let mut value = serde_json::to_value(&**ev).map_err(|source| {
                portcullis_store::StoreError::Value {
                    key: key.clone(),
                    source,
                }
            })?;
            value["policyFullPath"] = json!(policy_of(ev));
            value["sequence"] = json!(next);
            match tx.get(Table::Events, &key)? {
                None => count += 1,
                // The same event again: its old index entries and sequence go first, and it is
                // numbered anew so collectors see the replacement.
                Some(_) => delete_item(tx, &key)?,
            }
            tx.put(Table::Events, &key, &value)?;
            tx.put(Table::Events, &index_key(&ev.support_id), &json!(key))?;
            tx.put(Table::Events, &sequence_key(next), &json!(key))?;
            next += 1;
            for k in super::index::keys_of(&value, super::index::time_and_id(&key)) {
                tx.put(Table::Events, &k, &Value::Null)?;
            }
            stored.push((ev.time_micros, value));
        }
        let refs: Vec<(u64, &Value)> = stored.iter().map(|(t, v)| (*t, v)).collect();
        super::stats::add_events(tx, &refs)?;
        if next > *sequence {
            tx.put(Table::Events, LAST_SEQUENCE, &json!(next - 1))?;
        }
        let count = prune(tx, count, keep)?;
        tx.put(Table::Events, COUNT, &json!(count))?;
        Ok(count)
    })?;
    *sequence = next;
    Ok(count)
}

/// The store writer: runs until the event sink is gone. `select` removes from each batch the
/// events not kept locally (a virtual's log profiles may turn local storage off) and returns how
/// to name the policy of each.
pub fn run_writer<P: Fn(&SecurityEvent) -> String>(
    stream: EventStream,
    store: Arc<Store>,
    keep: Retention,
    select: impl Fn(&mut Vec<Arc<SecurityEvent>>) -> P,
) {
    let mut count = self::count(&store).unwrap_or(0);
    let mut sequence = next_sequence(&store).unwrap_or(1);
    let mut batch = Vec::with_capacity(BATCH);
    loop {
        match stream.recv_timeout(PRUNE_EVERY) {
            Err(()) => return,
            Ok(None) => {}
            Ok(Some(ev)) => {
                batch.push(ev);
                stream.drain_into(&mut batch, BATCH - 1);
            }
        }
        let policy_of = select(&mut batch);
        match write_batch(&store, &batch, &policy_of, count, &mut sequence, keep) {
            Ok(n) => count = n,
            Err(e) => tracing::error!(events = batch.len(), "cannot store request events: {e}"),
        }
        batch.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(t: u64, id: &str) -> Arc<SecurityEvent> {
        Arc::new(SecurityEvent {
            time_micros: t,
            ..SecurityEvent::sample(id)
        })
    }

    fn ids(store: &Store) -> Vec<String> {
        let mut out = Vec::new();
        newest_first(store, |_, v| {
            out.push(v["supportId"].as_str().unwrap_or_default().to_string());
            true
        })
        .unwrap();
        out
    }

    #[test]
    fn count_and_age_bounds_prune_the_oldest() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let now = now_micros();
        let keep = Retention {
            max_events: 3,
            max_age: Duration::from_secs(3600),
        };
        let batch: Vec<_> = (1..=5).map(|i| ev(now + i, &format!("{i}"))).collect();
        let named = |e: &SecurityEvent| format!("/Common/{}", e.policy);
        let mut seq = 1;
        let n = write_batch(&store, &batch, &named, 0, &mut seq, keep).unwrap();
        assert_eq!(n, 3);
        assert_eq!(seq, 6);
        assert_eq!(next_sequence(&store).unwrap(), 6);
        assert_eq!(ids(&store), ["5", "4", "3"]);
        assert!(
            get(&store, "1").unwrap().is_none(),
            "the index goes with the event"
        );
        let four = get(&store, "4").unwrap().unwrap();
        assert_eq!(four["timeMicros"], now + 4);
        assert_eq!(four["policyFullPath"], "/Common/p");
        let old = ev(now - 7200 * 1_000_000, "old");
        let n = write_batch(&store, &[old], &named, n, &mut seq, keep).unwrap();
        assert_eq!(n, 3, "an event past the age bound is pruned at once");
        assert_eq!(ids(&store), ["5", "4", "3"]);
        assert_eq!(store.count(Table::Events, ITEMS).unwrap(), 3);
        assert_eq!(store.count(Table::Events, INDEX).unwrap(), 3);
        assert_eq!(
            store.count(Table::Events, SEQUENCE).unwrap(),
            3,
            "sequences go with their events"
        );
        assert_eq!(four["sequence"], 4);
    }

    #[test]
    fn the_same_event_stored_again_is_numbered_anew_and_counted_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let keep = Retention {
            max_events: 0,
            max_age: Duration::from_secs(0),
        };
        let named = |e: &SecurityEvent| e.policy.clone();
        let again = ev(now_micros(), "again");
        let mut seq = 1;
        write_batch(
            &store,
            std::slice::from_ref(&again),
            &named,
            0,
            &mut seq,
            keep,
        )
        .unwrap();
        let n = write_batch(&store, &[again], &named, 1, &mut seq, keep).unwrap();
        assert_eq!(n, 1);
        assert_eq!(get(&store, "again").unwrap().unwrap()["sequence"], 2);
        assert_eq!(
            store.count(Table::Events, SEQUENCE).unwrap(),
            1,
            "the replaced event's sequence goes with it"
        );
    }

    #[test]
    fn a_log_pruned_empty_goes_on_numbering_after_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let keep = Retention {
            max_events: 0,
            max_age: Duration::from_secs(3600),
        };
        let named = |e: &SecurityEvent| e.policy.clone();
        let old = now_micros() - 7200 * 1_000_000;
        {
            let store = Store::open(dir.path()).unwrap();
            let mut seq = next_sequence(&store).unwrap();
            let batch: Vec<_> = (1..=3).map(|i| ev(old + i, &format!("{i}"))).collect();
            assert_eq!(
                write_batch(&store, &batch, &named, 0, &mut seq, keep).unwrap(),
                0
            );
            assert_eq!(
                store.count(Table::Events, SEQUENCE).unwrap(),
                0,
                "all pruned"
            );
        }
        let store = Store::open(dir.path()).unwrap();
        let mut seq = next_sequence(&store).unwrap();
        assert_eq!(
            seq, 4,
            "a collector whose cursor is at 3 must see the next event"
        );
        write_batch(
            &store,
            &[ev(now_micros(), "new")],
            &named,
            0,
            &mut seq,
            keep,
        )
        .unwrap();
        assert_eq!(get(&store, "new").unwrap().unwrap()["sequence"], 4);
    }
}
