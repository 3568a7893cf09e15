//! Readiness for blocking: for a policy (typically in transparent mode), what share of its recent
//! requests blocking mode would block, and why. Requests are the data plane's counts for the
//! policy's virtual servers (`events::stats`); the ones that would be blocked are its stored
//! events that the edited policy, judged in blocking mode (`CompiledPolicy::judge`), blocks. The
//! events of the window are counted on the policy index; the newest [`SAMPLE`] are judged, and
//! when there are more, the share found in them is scaled to all (the answer says how many were
//! judged), so the answer costs the same at a thousand events or a million.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::request::Request;
use super::{PolicyView, Version};
use crate::asm::policies::{by_path, virtuals_of};
use crate::events::{search, stats};
use portcullis_admin::MgmtState;
use portcullis_admin::{MgmtError, MgmtResult};
use portcullis_support::now_micros;

/// Most events judged for one answer: enough for the share within about ±2 points (95 %
/// confidence), whatever the window holds.
pub const SAMPLE: usize = 2_000;

/// Readiness of policy `full_path` over the last `hours`.
pub fn readiness(st: &MgmtState, full_path: &str, hours: u64) -> MgmtResult<Value> {
    let obj = by_path(st, full_path)?;
    let view = PolicyView::load(st, full_path, Version::Edited)?
        .ok_or_else(|| MgmtError::not_found("Policy", full_path))?;
    let now = now_micros();
    let from = now.saturating_sub(hours * 3_600_000_000);
    let requests = stats::requests_by(&st.store, &virtuals_of(&obj), from, now)?;
    let c = search::Criteria {
        policy: Some(view.full_path.clone()),
        from: Some(from),
        ..Default::default()
    };
    let (mut judged, mut would_block) = (0u64, 0u64);
    let mut reasons: HashMap<String, u64> = HashMap::new();
    let mut cursor: Option<String> = None;
    loop {
        let page = search::search(&st.store, &c, cursor.as_deref(), 1000)?;
        for e in &page.items {
            let r = Request::from_stored(e);
            judged += 1;
            let found = r.found();
            let j = view.compiled.judge(&found);
            if !j.block {
                continue;
            }
            would_block += 1;
            let mut why: Vec<&str> = view
                .compiled
                .blocking(&found)
                .map(|v| v.kind.name())
                .collect();
            if why.is_empty() {
                why.extend(j.derived.iter().map(|v| v.kind.name()));
            }
            why.sort_unstable();
            why.dedup();
            for w in why {
                *reasons.entry(w.to_string()).or_default() += 1;
            }
        }
        cursor = page.next;
        if cursor.is_none() || judged as usize >= SAMPLE {
            break;
        }
    }
    let events = match search::total_up_to(&st.store, &c, usize::MAX)? {
        search::Total::Exact(n) | search::Total::AtLeast(n) => (n as u64).max(judged),
        search::Total::Unknown => judged,
    };
    // Scaled from the judged sample to every event of the window.
    let scale = |n: u64| {
        if judged == 0 {
            0
        } else {
            (n as f64 * events as f64 / judged as f64).round() as u64
        }
    };
    let would_block = scale(would_block);
    let mut top: Vec<(String, u64)> = reasons.into_iter().map(|(k, n)| (k, scale(n))).collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    top.truncate(10);
    // Requests answered include the events; a window whose sampling lags counts events at least.
    let total = requests.max(events);
    let share = if total == 0 {
        0.0
    } else {
        would_block as f64 / total as f64
    };
    Ok(json!({
        "kind": "tm:asm:policies:readinessstate",
        "policyReference": {"link": obj.get("selfLink"), "fullPath": view.full_path},
        "enforcementMode": obj.get("enforcementMode"),
        "windowHours": hours,
        "requests": total,
        "events": events,
        "wouldBlock": would_block,
        "eventsJudged": judged,
        "wouldBlockShare": (share * 10_000.0).round() / 10_000.0,
        "topReasons": top.iter().map(|(v, n)| json!({"violation": v, "requests": n})).collect::<Vec<_>>(),
    }))
}
