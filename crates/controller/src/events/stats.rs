//! Traffic statistics of the controller, kept beside the request events so the console's
//! overview reads a few small records instead of scanning events: per-minute and per-hour buckets
//! in `Table::Events` (`m/<minute>`, `h/<hour>`, both since the epoch) counting requests answered
//! (sampled from the data plane's counters every [`SAMPLE_EVERY`]), blocked and alarmed
//! requests, and the top violations, signatures, URLs, sources and policies of the events.
//!
//! The event writer adds each batch to its buckets in the same transaction that stores it. A
//! bucket keeps at most [`MINUTE_KEYS`] / [`HOUR_KEYS`] distinct values per dimension; later values
//! count under `(other)`, so a scan from many addresses cannot grow a bucket without bound (the
//! tops are exact while a dimension has fewer values than that). Minute buckets are kept for
//! [`MINUTES_KEPT`], hour buckets for [`HOURS_KEPT`].

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::index::signature_ids;
use super::syslog::split_uri;
use crate::PlaneState;
use portcullis_admin::MgmtState;
use portcullis_store::{Result, Store, Table, WriteTx};
use portcullis_support::now_micros;

pub const MINUTE_PREFIX: &str = "m/";
pub const HOUR_PREFIX: &str = "h/";
pub const MINUTE_KEYS: usize = 50;
pub const HOUR_KEYS: usize = 200;
pub const MINUTES_KEPT: u64 = 25 * 60;
pub const HOURS_KEPT: u64 = 8 * 24;
/// How often the data plane's request counters are sampled.
pub const SAMPLE_EVERY: Duration = Duration::from_secs(5);
/// The dimensions counted per bucket (field of the bucket → what it counts).
pub const DIMENSIONS: [&str; 5] = ["violations", "signatures", "urls", "sources", "policies"];
const OTHER: &str = "(other)";

fn minute_key(minute: u64) -> String {
    format!("{MINUTE_PREFIX}{minute:010}")
}

fn hour_key(hour: u64) -> String {
    format!("{HOUR_PREFIX}{hour:010}")
}

/// What one stored event adds to its buckets.
struct Counts {
    blocked: bool,
    values: Vec<(&'static str, String)>,
}

fn counts_of(e: &Value) -> Counts {
    let s = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or_default();
    let mut values = vec![
        ("urls", split_uri(s("uri")).0.to_string()),
        ("sources", s("clientIp").to_string()),
        ("policies", s("policyFullPath").to_string()),
    ];
    for v in e
        .get("violations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(k) = v.get("kind").and_then(Value::as_str) {
            values.push(("violations", k.to_string()));
        }
        values.extend(signature_ids(v).map(|id| ("signatures", id.to_string())));
    }
    values.sort();
    values.dedup();
    Counts {
        blocked: s("action") == "block",
        values,
    }
}

fn bump(bucket: &mut Map<String, Value>, field: &str, key: &str, by: u64, cap: usize) {
    let m = bucket
        .entry(field)
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(m) = m else { return };
    let slot = if m.contains_key(key) || m.len() < cap {
        key
    } else {
        OTHER
    };
    let n = m.get(slot).and_then(Value::as_u64).unwrap_or(0) + by;
    m.insert(slot.to_string(), json!(n));
}

fn add_to(bucket: &mut Map<String, Value>, field: &str, by: u64) {
    let n = bucket.get(field).and_then(Value::as_u64).unwrap_or(0) + by;
    bucket.insert(field.to_string(), json!(n));
}

/// Reads, changes and writes back the minute and hour buckets of `micros`.
fn update(
    tx: &mut WriteTx<'_>,
    micros: u64,
    f: impl Fn(&mut Map<String, Value>, usize),
) -> Result<()> {
    let minute = micros / 60_000_000;
    for (key, cap) in [
        (minute_key(minute), MINUTE_KEYS),
        (hour_key(minute / 60), HOUR_KEYS),
    ] {
        let mut b = match tx.get(Table::Events, &key)? {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        };
        f(&mut b, cap);
        tx.put(Table::Events, &key, &Value::Object(b))?;
    }
    Ok(())
}

/// Adds stored events (JSON, with their arrival time) to their buckets.
pub fn add_events(tx: &mut WriteTx<'_>, events: &[(u64, &Value)]) -> Result<()> {
    // One read-modify-write per minute of the batch, not per event.
    let mut by_minute: HashMap<u64, Vec<Counts>> = HashMap::new();
    for (t, e) in events {
        by_minute
            .entry(t / 60_000_000)
            .or_default()
            .push(counts_of(e));
    }
    for (minute, list) in by_minute {
        update(tx, minute * 60_000_000, |b, cap| {
            for c in &list {
                add_to(b, if c.blocked { "blocked" } else { "alarmed" }, 1);
                for (field, v) in &c.values {
                    if !v.is_empty() {
                        bump(b, field, v, 1, cap);
                    }
                }
            }
        })?;
    }
    Ok(())
}

/// Adds requests answered by virtual server `vs` during the minute of `micros`.
pub fn add_requests(store: &Store, micros: u64, by_virtual: &[(String, u64)]) -> Result<()> {
    store.write(|tx| {
        update(tx, micros, |b, cap| {
            for (vs, n) in by_virtual {
                add_to(b, "requests", *n);
                bump(b, "requestsBy", vs, *n, cap);
            }
        })
    })
}

/// Deletes the buckets past their retention.
pub fn prune(tx: &mut WriteTx<'_>, now: u64) -> Result<()> {
    let minute = now / 60_000_000;
    for (prefix, bound) in [
        (
            MINUTE_PREFIX,
            minute_key(minute.saturating_sub(MINUTES_KEPT)),
        ),
        (
            HOUR_PREFIX,
            hour_key((minute / 60).saturating_sub(HOURS_KEPT)),
        ),
    ] {
        for k in tx.first_keys(Table::Events, prefix, 256)? {
            if k >= bound {
                break;
            }
            tx.delete(Table::Events, &k)?;
        }
    }
    Ok(())
}

/// A window of the overview: the last hour (by minute) or the last day (by hour).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Span {
    Hour,
    Day,
}

impl Span {
    pub fn parse(s: &str) -> Option<Span> {
        match s {
            "hour" | "" => Some(Span::Hour),
            "day" => Some(Span::Day),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Span::Hour => "hour",
            Span::Day => "day",
        }
    }
    /// Seconds per point of the series.
    pub fn step_secs(self) -> u64 {
        match self {
            Span::Hour => 60,
            Span::Day => 3600,
        }
    }
}

/// One point of a series: its start (seconds since the epoch) and its counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Point {
    pub start: u64,
    pub requests: u64,
    pub blocked: u64,
    pub alarmed: u64,
}

/// The statistics of a window.
#[derive(Clone, Debug, Default)]
pub struct Window {
    pub series: Vec<Point>,
    /// Per dimension (see [`DIMENSIONS`]), the values by count, most first.
    pub top: Vec<(&'static str, Vec<(String, u64)>)>,
    pub requests: u64,
    pub blocked: u64,
    pub alarmed: u64,
}

/// The statistics of the last hour (60 minutes) or day (24 hours) up to `now` (micros).
pub fn window(store: &Store, span: Span, now: u64) -> Result<Window> {
    let (prefix, unit, points) = match span {
        Span::Hour => (MINUTE_PREFIX, 60_000_000u64, 60u64),
        Span::Day => (HOUR_PREFIX, 3_600_000_000, 24),
    };
    let last = now / unit;
    let first = last + 1 - points;
    let keys: Vec<String> = (first..=last).map(|i| format!("{prefix}{i:010}")).collect();
    let buckets = store.get_many(Table::Events, &keys)?;
    let mut w = Window::default();
    let mut tops: HashMap<&'static str, HashMap<String, u64>> = HashMap::new();
    for (i, b) in (first..=last).zip(buckets) {
        let n = |k: &str| {
            b.as_ref()
                .and_then(|b| b.get(k))
                .and_then(Value::as_u64)
                .unwrap_or(0)
        };
        let p = Point {
            start: i * unit / 1_000_000,
            requests: n("requests"),
            blocked: n("blocked"),
            alarmed: n("alarmed"),
        };
        w.requests += p.requests;
        w.blocked += p.blocked;
        w.alarmed += p.alarmed;
        w.series.push(p);
        for dim in DIMENSIONS {
            if let Some(Value::Object(m)) = b.as_ref().and_then(|b| b.get(dim)) {
                let t = tops.entry(dim).or_default();
                for (k, v) in m {
                    *t.entry(k.clone()).or_default() += v.as_u64().unwrap_or(0);
                }
            }
        }
    }
    for dim in DIMENSIONS {
        let mut list: Vec<(String, u64)> =
            tops.remove(dim).unwrap_or_default().into_iter().collect();
        list.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        list.truncate(10);
        w.top.push((dim, list));
    }
    Ok(w)
}

/// Requests answered by the virtual servers `virtuals` from `from` to `to` (micros): by minute
/// within the minute buckets' retention, else by hour (whole hours).
pub fn requests_by(store: &Store, virtuals: &[String], from: u64, to: u64) -> Result<u64> {
    let by_minute = to.saturating_sub(from) <= (MINUTES_KEPT - 60) * 60_000_000;
    let (prefix, unit) = if by_minute {
        (MINUTE_PREFIX, 60_000_000u64)
    } else {
        (HOUR_PREFIX, 3_600_000_000)
    };
    let keys: Vec<String> = (from / unit..=to / unit)
        .map(|i| format!("{prefix}{i:010}"))
        .collect();
    let mut n = 0;
    for b in store.get_many(Table::Events, &keys)?.into_iter().flatten() {
        for v in virtuals {
            n += b
                .get("requestsBy")
                .and_then(|m| m.get(v))
                .and_then(Value::as_u64)
                .unwrap_or(0);
        }
    }
    Ok(n)
}

/// Samples the data plane's request counters of every virtual server every [`SAMPLE_EVERY`] and
/// adds the differences to the buckets, on a thread of its own, for as long as the state lives.
pub fn start_sampler(st: &Arc<MgmtState>) -> std::io::Result<()> {
    let weak = Arc::downgrade(st);
    std::thread::Builder::new()
        .name("request-stats".into())
        .spawn(move || {
            let mut last: HashMap<String, u64> = HashMap::new();
            loop {
                std::thread::sleep(SAMPLE_EVERY);
                let Some(st) = weak.upgrade() else { return };
                let names: Vec<String> = st
                    .store
                    .list(Table::Objects, "/mgmt/tm/ltm/virtual/")
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|(_, v)| v["fullPath"].as_str().map(str::to_string))
                    .collect();
                let mut deltas = Vec::new();
                for name in names {
                    let now = PlaneState::of(&st).topology.requests_answered(&name);
                    let before = last.insert(name.clone(), now).unwrap_or(0);
                    // A counter that went back (a listener rebuilt under the same name) restarts.
                    let d = now.checked_sub(before).unwrap_or(now);
                    if d > 0 {
                        deltas.push((name, d));
                    }
                }
                if !deltas.is_empty()
                    && let Err(e) = add_requests(&st.store, now_micros(), &deltas)
                {
                    tracing::error!(error = %e, "cannot store request statistics");
                }
            }
        })
        .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_count_and_stay_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let now = now_micros();
        let events: Vec<Value> = (0..(MINUTE_KEYS + 10))
            .map(|i| {
                json!({"clientIp": format!("10.0.0.{i}"), "uri": "/login?x=1", "action": if i % 2 == 0 {"block"} else {"alarm"},
                    "policyFullPath": "/Common/p",
                    "violations": [{"kind": "VIOL_ATTACK_SIGNATURE", "signature_ids": [200001]}]})
            })
            .collect();
        let refs: Vec<(u64, &Value)> = events.iter().map(|e| (now, e)).collect();
        store.write(|tx| add_events(tx, &refs)).unwrap();
        add_requests(&store, now, &[("/Common/vs".into(), 500)]).unwrap();
        for span in [Span::Hour, Span::Day] {
            let w = window(&store, span, now).unwrap();
            assert_eq!((w.requests, w.blocked, w.alarmed), (500, 30, 30));
            assert_eq!(w.series.len(), if span == Span::Hour { 60 } else { 24 });
            let top = |d: &str| w.top.iter().find(|t| t.0 == d).unwrap().1.clone();
            assert_eq!(top("urls"), vec![("/login".to_string(), 60)]);
            assert_eq!(top("signatures"), vec![("200001".to_string(), 60)]);
            let sources = top("sources");
            assert_eq!(sources.len(), 10);
            if span == Span::Hour {
                // 60 addresses, 50 kept per minute: the last 10 count together.
                assert_eq!(sources[0], (OTHER.to_string(), 10), "{sources:?}");
            }
        }
        store
            .write(|tx| prune(tx, now + (MINUTES_KEPT + 1) * 60_000_000))
            .unwrap();
        assert_eq!(store.count(Table::Events, MINUTE_PREFIX).unwrap(), 0);
        assert_eq!(store.count(Table::Events, HOUR_PREFIX).unwrap(), 1);
    }
}
