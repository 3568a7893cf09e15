//! The learner: an event subscriber (queue `learn`) that turns each alarmed or blocked request
//! into evidence for the suggestions of the policy that judged it, one store transaction per
//! batch, on a thread of its own (a slow learner drops events, counted like any subscriber's;
//! the request path never waits).
//!
//! What it leaves out: requests of a policy whose `learningMode` is `disabled`; requests from bots
//! when `learnOnlyFromNonBotTraffic`; fixes that relax the whole policy (broad ones are offered
//! only by accepting a request); disabling a high-accuracy signature. Requests that carried a
//! high-accuracy signature count as attack evidence (see `suggestions::score`). In `automatic`
//! mode, suggestions that reach 100 and may be applied automatically are accepted and applied,
//! at most once per [`AUTO_EVERY`] per policy.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::fix::Fix;
use super::request::Request;
use super::settings::{Mode, is_bot};
use super::suggestions::{self, Sample};
use super::{PolicyView, Version, append_modifications};
use crate::events::route::{attached_policies, policy_of};
use portcullis_admin::MgmtState;
use portcullis_admin::{MgmtError, MgmtResult};
use portcullis_engine::SecurityEvent;
use portcullis_engine::signatures::{Level, SignatureDb};
use portcullis_proxy::EventSink;
use portcullis_support::now_micros;

/// Events learned from per store transaction.
const BATCH: usize = 256;
/// Automatic learning applies a policy's ripe suggestions at most this often.
pub const AUTO_EVERY: Duration = Duration::from_secs(60);

/// Subscribes the learner to `sink` with a queue of `capacity` events.
pub fn start(st: &Arc<MgmtState>, sink: &EventSink, capacity: usize) -> std::io::Result<()> {
    let stream = sink.subscribe("learn", capacity);
    let weak = Arc::downgrade(st);
    std::thread::Builder::new()
        .name("event-learn".into())
        .spawn(move || {
            let mut batch = Vec::with_capacity(BATCH);
            let mut last_auto: HashMap<String, Instant> = HashMap::new();
            while let Some(ev) = stream.recv() {
                batch.push(ev);
                stream.drain_into(&mut batch, BATCH - 1);
                let Some(st) = weak.upgrade() else { return };
                for full_path in learn(&st, &batch) {
                    // At most one automatic apply per policy and period: the period starts
                    // with an apply, not with a look that found nothing ripe.
                    if last_auto.get(&full_path).is_some_and(|t| t.elapsed() < AUTO_EVERY) {
                        continue;
                    }
                    match auto_apply(&st, &full_path) {
                        Ok(0) => {}
                        Ok(_) => {
                            last_auto.insert(full_path, Instant::now());
                        }
                        Err(e) => {
                            tracing::error!(policy = %full_path, error = %e.message, "automatic learning failed")
                        }
                    }
                }
                batch.clear();
            }
        })
        .map(|_| ())
}

fn high_accuracy(id: u32) -> bool {
    SignatureDb::builtin()
        .get(id)
        .is_some_and(|s| s.accuracy == Level::High)
}

/// Learns from a batch; returns the policies in automatic mode that learned something.
pub fn learn(st: &MgmtState, batch: &[Arc<SecurityEvent>]) -> Vec<String> {
    let attached = attached_policies(st);
    let mut by_policy: HashMap<String, Vec<Request>> = HashMap::new();
    for ev in batch {
        let full_path = policy_of(ev, &attached);
        let Ok(mut stored) = serde_json::to_value(&**ev) else {
            continue;
        };
        stored["policyFullPath"] = json!(full_path);
        by_policy
            .entry(full_path)
            .or_default()
            .push(Request::from_stored(&stored));
    }
    let mut automatic = Vec::new();
    for (full_path, requests) in by_policy {
        let view = match PolicyView::load(st, &full_path, Version::Applied) {
            Ok(Some(v)) => v,
            // Not an ASM policy of this controller (a standalone one), or never applied.
            _ => continue,
        };
        if view.settings.mode == Mode::Disabled {
            continue;
        }
        let mut fixes: HashMap<String, (Fix, Vec<(usize, String)>)> = HashMap::new();
        let mut learned_any = false;
        for (i, r) in requests.iter().enumerate() {
            if view.settings.non_bot_only && is_bot(r.header("user-agent")) {
                continue;
            }
            for (v, list) in view.fixes(r) {
                for f in list {
                    if f.broad || f.signature.is_some_and(high_accuracy) {
                        continue;
                    }
                    fixes
                        .entry(f.key.clone())
                        .or_insert_with(|| (f.clone(), Vec::new()))
                        .1
                        .push((i, v.kind.name().to_string()));
                }
            }
        }
        let attack: Vec<bool> = requests.iter().map(|r| view.is_attack(r)).collect();
        let r = st.store.write(|tx| {
            for (f, uses) in fixes.values() {
                let samples: Vec<Sample<'_>> = uses
                    .iter()
                    .map(|(i, viol)| {
                        let r = &requests[*i];
                        Sample {
                            support_id: &r.support_id,
                            time_micros: r.time_micros,
                            client: &r.client,
                            trusted: view.settings.trusts(&r.client),
                            attack: attack[*i],
                            violation: viol,
                        }
                    })
                    .collect();
                suggestions::record(tx, &view.id, f, &samples)?;
                learned_any = true;
            }
            Ok::<_, MgmtError>(())
        });
        if let Err(e) = r {
            tracing::error!(policy = %full_path, error = %e.message, "cannot store learning suggestions");
        }
        if learned_any && view.settings.mode == Mode::Automatic {
            automatic.push(full_path);
        }
    }
    automatic
}

/// Accepts and applies the pending suggestions of `full_path` that automatic learning may apply.
pub fn auto_apply(st: &MgmtState, full_path: &str) -> MgmtResult<usize> {
    let Some(view) = PolicyView::load(st, full_path, Version::Edited)? else {
        return Ok(0);
    };
    if view.settings.mode != Mode::Automatic {
        return Ok(0);
    }
    let now = now_micros();
    let ripe: Vec<_> = suggestions::records(&st.store, &view.id)?
        .into_iter()
        .filter(|r| r.get("state").and_then(Value::as_str) == Some("pending"))
        .filter(|r| suggestions::score(r, &view.settings, now).2)
        .collect();
    if ripe.is_empty() {
        return Ok(0);
    }
    let mods: Vec<Value> = ripe.iter().map(suggestions::modification).collect();
    let ids: Vec<String> = ripe
        .iter()
        .filter_map(|r| r.get("id").and_then(Value::as_str).map(str::to_string))
        .collect();
    append_modifications(st, full_path, &mods)?;
    suggestions::set_state(&st.store, &view.id, &ids, "accepted", "policy-builder")?;
    let obj = crate::asm::policies::by_path(st, full_path)?;
    crate::asm::apply::start_apply(st, &Value::Object(obj))?;
    tracing::info!(
        policy = full_path,
        suggestions = ids.len(),
        "automatic learning applied suggestions"
    );
    Ok(ids.len())
}
