//! Searching the local request-event log, newest first, in pages: by support id (the `i/` index),
//! by client address, URL, violation, signature or policy (the `x/` indexes of `index`) and by
//! time range (the time-ordered `e/` keys). The most selective indexed criterion drives the scan
//! and the others are checked on the events it yields; a page ends after `limit` matches or after
//! [`EXAMINE_MAX`] candidates, so one page costs a bounded amount of work whatever the store
//! holds, and the next page starts at the cursor the previous one returned.

use serde_json::Value;

use super::index::{self, Field};
use super::local::{self, ITEMS};
use portcullis_store::{Result, Store, Table};

/// Most candidates examined for one page (an unselective combination of criteria ends the page
/// early with a cursor rather than scanning the whole log).
pub const EXAMINE_MAX: usize = 20_000;
/// Most matches counted for a total; beyond, the total is "at least".
pub const COUNT_MAX: usize = 100_000;

/// What to look for; empty fields match everything.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Criteria {
    pub support_id: Option<String>,
    pub client: Option<String>,
    /// The URL path (without the query string), exactly.
    pub url: Option<String>,
    pub violation: Option<String>,
    pub signature: Option<u64>,
    /// The policy fullPath.
    pub policy: Option<String>,
    /// `blocked` or `alerted`.
    pub status: Option<String>,
    /// Arrival time bounds, microseconds since the epoch (`from` inclusive, `to` exclusive).
    pub from: Option<u64>,
    pub to: Option<u64>,
}

/// How many events match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Total {
    Exact(usize),
    AtLeast(usize),
    /// Several criteria: not counted (it would cost a scan).
    Unknown,
}

/// One page of results.
#[derive(Clone, Debug, Default)]
pub struct Page {
    /// The stored events, newest first.
    pub items: Vec<Value>,
    /// Where the next page starts, when there may be one.
    pub next: Option<String>,
}

fn str_eq(e: &Value, k: &str, want: &Option<String>) -> bool {
    want.as_ref()
        .is_none_or(|w| e.get(k).and_then(Value::as_str) == Some(w.as_str()))
}

impl Criteria {
    /// The indexed criterion that drives the scan: the one likely to match the fewest events.
    fn driver(&self) -> Option<(Field, String)> {
        if let Some(s) = self.signature {
            return Some((Field::Signature, s.to_string()));
        }
        let by = [
            (Field::Client, &self.client),
            (Field::Url, &self.url),
            (Field::Violation, &self.violation),
            (Field::Policy, &self.policy),
        ];
        by.into_iter()
            .find_map(|(f, v)| v.as_ref().map(|v| (f, v.clone())))
    }

    fn indexed(&self) -> usize {
        [&self.client, &self.url, &self.violation, &self.policy]
            .iter()
            .filter(|c| c.is_some())
            .count()
            + usize::from(self.signature.is_some())
            + usize::from(self.status.is_some())
    }

    /// Whether a stored event matches every criterion.
    pub fn matches(&self, e: &Value) -> bool {
        let t = e.get("timeMicros").and_then(Value::as_u64).unwrap_or(0);
        let url_ok = self.url.as_ref().is_none_or(|u| {
            let uri = e.get("uri").and_then(Value::as_str).unwrap_or_default();
            super::syslog::split_uri(uri).0 == u
        });
        let violations = || {
            e.get("violations")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
        };
        let status_ok = self.status.as_ref().is_none_or(|s| {
            let blocked = e.get("action").and_then(Value::as_str) == Some("block");
            (s == "blocked") == blocked
        });
        str_eq(e, "supportId", &self.support_id)
            && str_eq(e, "clientIp", &self.client)
            && str_eq(e, "policyFullPath", &self.policy)
            && url_ok
            && status_ok
            && self.from.is_none_or(|f| t >= f)
            && self.to.is_none_or(|to| t < to)
            && self.violation.as_ref().is_none_or(|want| {
                violations().any(|v| v.get("kind").and_then(Value::as_str) == Some(want))
            })
            && self
                .signature
                .is_none_or(|s| violations().any(|v| index::signature_ids(v).any(|id| id == s)))
    }

    /// The key range (`lo..hi`) the scan walks, below the cursor `before` when given.
    fn range(&self, before: Option<&str>) -> (String, String) {
        let prefix = match self.driver() {
            Some((f, v)) => index::value_prefix(f, &v),
            None => ITEMS.to_string(),
        };
        let lo = format!("{prefix}{:020}", self.from.unwrap_or(0));
        let mut hi = match self.to {
            Some(t) => format!("{prefix}{t:020}"),
            None => format!("{prefix}\u{10FFFF}"),
        };
        if let Some(b) = before {
            hi = hi.min(format!("{prefix}{b}"));
        }
        (lo, hi)
    }
}

/// Keys read per step of a scan.
const CHUNK: usize = 256;

/// One page of the events matching `c`, newest first, starting below the cursor `before`.
pub fn search(store: &Store, c: &Criteria, before: Option<&str>, limit: usize) -> Result<Page> {
    if let Some(id) = &c.support_id {
        let items: Vec<Value> = local::get(store, id)?
            .into_iter()
            .filter(|e| c.matches(e))
            .collect();
        return Ok(Page { items, next: None });
    }
    let mut page = Page::default();
    let mut cursor = before.map(str::to_string);
    let mut examined = 0;
    loop {
        let (lo, hi) = c.range(cursor.as_deref());
        let mut tails = Vec::with_capacity(CHUNK);
        store.keys_rev(Table::Events, &lo, &hi, |k| {
            tails.push(index::time_and_id(k).to_string());
            tails.len() < CHUNK
        })?;
        let Some(oldest) = tails.last().cloned() else {
            return Ok(page);
        };
        examined += tails.len();
        let keys: Vec<String> = tails.iter().map(|t| format!("{ITEMS}{t}")).collect();
        for (tail, e) in tails.iter().zip(store.get_many(Table::Events, &keys)?) {
            if let Some(e) = e.filter(|e| c.matches(e)) {
                page.items.push(e);
                if page.items.len() >= limit {
                    cursor = Some(tail.clone());
                    break;
                }
            }
        }
        if page.items.len() < limit {
            cursor = Some(oldest);
            if examined < EXAMINE_MAX {
                continue;
            }
        }
        // The page is full, or ends early on the examination bound: go on below the cursor,
        // unless nothing lies there.
        let (lo, hi) = c.range(cursor.as_deref());
        if store.count_range(Table::Events, &lo, &hi, 1)? > 0 {
            page.next = cursor;
        }
        return Ok(page);
    }
}

/// How many stored events match `c` (counted on the driving index; exact for one criterion),
/// counting up to [`COUNT_MAX`].
pub fn total(store: &Store, c: &Criteria) -> Result<Total> {
    total_up_to(store, c, COUNT_MAX)
}

/// [`total`], counting up to `limit`.
pub fn total_up_to(store: &Store, c: &Criteria, limit: usize) -> Result<Total> {
    if c.support_id.is_some() {
        return Ok(Total::Exact(search(store, c, None, 1)?.items.len()));
    }
    if c.indexed() > 1 || (c.indexed() == 1 && c.status.is_some()) {
        return Ok(Total::Unknown);
    }
    if c.indexed() == 0 && c.from.is_none() && c.to.is_none() {
        return Ok(Total::Exact(local::count(store)?));
    }
    let (lo, hi) = c.range(None);
    let n = store.count_range(Table::Events, &lo, &hi, limit)?;
    Ok(if n >= limit {
        Total::AtLeast(n)
    } else {
        Total::Exact(n)
    })
}
