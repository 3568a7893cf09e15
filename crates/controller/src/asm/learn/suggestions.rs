//! Learning suggestions: the fixes of a policy's alarmed and blocked requests, aggregated per fix
//! with their evidence, kept in `Table::Events` under `l/<policy id>/<suggestion id>` (updated by
//! the learner as events arrive, so listing them reads a few records whatever the event log holds).
//! The addresses behind the distinct-source counts are kept apart, under
//! `L/<policy id>/<suggestion id>`, read only by the learner, so a listing reads small records.
//!
//! Evidence per suggestion: requests, distinct sources (trusted and not, counted up to
//! [`SOURCES_KEPT`] each), first and last seen, the support ids of the latest
//! [`EVENTS_KEPT`] requests, requests that also carried a high-accuracy attack signature, and what
//! was learned (data type, longest value). The learning score (0–100) is computed when read, from
//! the evidence and the policy's `policy-builder` settings (see [`score`] and docs/asm.md).

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Map, Value, json};
use sha2::{Digest as _, Sha256};

use super::fix::{Fix, Learned};
use super::settings::{Loosen, Settings};
use portcullis_store::{Result, Store, Table, WriteTx};
use portcullis_support::iso8601_utc;

pub const SOURCES_KEPT: usize = 128;
pub const EVENTS_KEPT: usize = 20;
/// Highest score of a suggestion seen from one source only.
pub const ONE_SOURCE_MAX: u8 = 20;
/// Highest score of a suggestion whose evidence includes high-accuracy attack signatures.
pub const ATTACK_MAX: u8 = 5;

/// `l/<policy id>/`: every suggestion of a policy.
pub fn prefix(policy_id: &str) -> String {
    format!("l/{policy_id}/")
}

/// `L/<policy id>/`: the source addresses of every suggestion of a policy.
pub fn sources_prefix(policy_id: &str) -> String {
    format!("L/{policy_id}/")
}

/// The id of a suggestion: URL-safe base64 of the first 12 bytes of SHA-256 of its fix key.
pub fn id_of(fix_key: &str) -> String {
    URL_SAFE_NO_PAD.encode(&Sha256::digest(fix_key.as_bytes())[..12])
}

/// One request's contribution to a suggestion.
pub struct Sample<'a> {
    pub support_id: &'a str,
    pub time_micros: u64,
    pub client: &'a str,
    pub trusted: bool,
    pub attack: bool,
    pub violation: &'a str,
}

fn push_bounded(list: &mut Vec<Value>, v: &str, max: usize) -> bool {
    if list.iter().any(|x| x == v) || list.len() >= max {
        return false;
    }
    list.push(json!(v));
    true
}

fn strings(rec: &Map<String, Value>, k: &str) -> Vec<Value> {
    rec.get(k)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn num(rec: &Map<String, Value>, k: &str) -> u64 {
    rec.get(k).and_then(Value::as_u64).unwrap_or(0)
}

/// Adds samples to the suggestion of `fix` (created pending when new), in `tx`.
pub fn record(
    tx: &mut WriteTx<'_>,
    policy_id: &str,
    fix: &Fix,
    samples: &[Sample<'_>],
) -> Result<()> {
    let id = id_of(&fix.key);
    let key = format!("{}{id}", prefix(policy_id));
    let mut rec = match tx.get(Table::Events, &key)? {
        Some(Value::Object(m)) => m,
        _ => {
            let mut m = Map::new();
            m.insert("id".into(), json!(id));
            m.insert("key".into(), json!(fix.key));
            m.insert("kind".into(), json!(fix.kind));
            m.insert("description".into(), json!(fix.description));
            m.insert("broad".into(), json!(fix.broad));
            m.insert("entityType".into(), json!(fix.entity_type));
            m.insert("entity".into(), Value::Object(fix.entity.clone()));
            m.insert("entityChanges".into(), Value::Object(fix.changes.clone()));
            if let Some(s) = fix.signature {
                m.insert("signatureId".into(), json!(s));
            }
            m.insert("state".into(), json!("pending"));
            m
        }
    };
    let mut learned: Option<Learned> = rec
        .get("learned")
        .and_then(|l| serde_json::from_value(l.clone()).ok());
    if let Some(l) = &fix.learned {
        match &mut learned {
            Some(old) => old.merge(l),
            None => learned = Some(l.clone()),
        }
    }
    let skey = format!("{}{id}", sources_prefix(policy_id));
    let known = tx.get(Table::Events, &skey)?.unwrap_or(Value::Null);
    let list = |k: &str| {
        known
            .get(k)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let (mut sources, mut trusted) = (list("untrusted"), list("trusted"));
    let (mut events, mut violations) = (strings(&rec, "events"), strings(&rec, "violations"));
    let (mut requests, mut attacks) = (num(&rec, "requests"), num(&rec, "attackRequests"));
    let (mut first, mut last) = (num(&rec, "firstSeen"), num(&rec, "lastSeen"));
    for s in samples {
        requests += 1;
        attacks += u64::from(s.attack);
        let list = if s.trusted {
            &mut trusted
        } else {
            &mut sources
        };
        push_bounded(list, s.client, SOURCES_KEPT);
        events.retain(|e| e != s.support_id);
        events.push(json!(s.support_id));
        if events.len() > EVENTS_KEPT {
            events.remove(0);
        }
        push_bounded(&mut violations, s.violation, 16);
        first = if first == 0 {
            s.time_micros
        } else {
            first.min(s.time_micros)
        };
        last = last.max(s.time_micros);
    }
    rec.insert("requests".into(), json!(requests));
    rec.insert("attackRequests".into(), json!(attacks));
    rec.insert("sources".into(), json!(sources.len()));
    rec.insert("trustedSources".into(), json!(trusted.len()));
    tx.put(
        Table::Events,
        &skey,
        &json!({"untrusted": sources, "trusted": trusted}),
    )?;
    rec.insert("events".into(), Value::Array(events));
    rec.insert("violations".into(), Value::Array(violations));
    rec.insert("firstSeen".into(), json!(first));
    rec.insert("lastSeen".into(), json!(last));
    if let Some(l) = learned {
        rec.insert(
            "learned".into(),
            serde_json::to_value(l).unwrap_or(Value::Null),
        );
    }
    tx.put(Table::Events, &key, &Value::Object(rec))
}

/// The learning score of a suggestion record (0–100), why, and whether automatic learning may
/// apply it.
pub fn score(rec: &Map<String, Value>, s: &Settings, now_micros: u64) -> (u8, Vec<String>, bool) {
    let (untrusted, trusted) = (num(rec, "sources"), num(rec, "trustedSources"));
    let (first, last) = (num(rec, "firstSeen"), num(rec, "lastSeen"));
    let spread_hours = last.saturating_sub(first) as f64 / 3.6e9;
    let part = |n: u64, l: &Loosen| {
        let sources = (n as f64 / l.different_sources as f64).min(1.0);
        let time = if l.min_hours > 0.0 {
            (spread_hours / l.min_hours).min(1.0)
        } else {
            1.0
        };
        sources * time
    };
    let mut why = Vec::new();
    let t = part(trusted, &s.trusted_loosen);
    let u = part(untrusted, &s.untrusted_loosen);
    let mut score = (100.0 * t.max(u)).round() as u8;
    why.push(format!(
        "{trusted} trusted source(s) of {} wanted, {untrusted} other source(s) of {} wanted, over {spread_hours:.1} h",
        s.trusted_loosen.different_sources, s.untrusted_loosen.different_sources
    ));
    let max_days = s.trusted_loosen.max_days.max(s.untrusted_loosen.max_days);
    let age_days = now_micros.saturating_sub(last) as f64 / 8.64e10;
    if max_days > 0.0 && age_days > max_days {
        score = 0;
        why.push(format!(
            "last seen {age_days:.0} days ago (maxDaysBetweenSamples {max_days})"
        ));
    }
    if trusted + untrusted <= 1 && score > ONE_SOURCE_MAX {
        score = ONE_SOURCE_MAX;
        why.push(format!("one source only: at most {ONE_SOURCE_MAX}"));
    }
    let attacks = num(rec, "attackRequests");
    if attacks > 0 && score > ATTACK_MAX {
        score = ATTACK_MAX;
        why.push(format!(
            "{attacks} of its requests carried a high-accuracy attack signature: at most {ATTACK_MAX}"
        ));
    }
    let broad = rec.get("broad").and_then(Value::as_bool).unwrap_or(false);
    if broad {
        why.push("relaxes a check of the whole policy: never applied automatically".into());
    }
    let auto = score == 100 && trusted + untrusted > 1 && attacks == 0 && !broad;
    (score, why, auto)
}

/// Whether a record is proposed at all: evidence only from requests that carried a
/// high-accuracy attack signature proposes nothing.
pub fn proposed(rec: &Map<String, Value>) -> bool {
    num(rec, "requests") > num(rec, "attackRequests")
}

/// The `modifications[]` entry of a record.
pub fn modification(rec: &Map<String, Value>) -> Value {
    let mut changes = rec
        .get("entityChanges")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    if let Some(l) = rec
        .get("learned")
        .and_then(|l| serde_json::from_value::<Learned>(l.clone()).ok())
    {
        l.apply(&mut changes);
    }
    json!({"entityType": rec.get("entityType"), "entity": rec.get("entity"),
           "entityChanges": changes, "action": "add-or-update"})
}

fn iso_micros(m: u64) -> String {
    iso8601_utc(m / 1_000_000)
}

/// The REST item of a record (`tm:asm:policies:suggestions:suggestionstate`).
pub fn item(link: &str, rec: &Map<String, Value>, s: &Settings, now: u64) -> Value {
    let (score, why, auto) = score(rec, s, now);
    json!({
        "kind": "tm:asm:policies:suggestions:suggestionstate",
        "id": rec.get("id"),
        "selfLink": link,
        "action": rec.get("kind"),
        "description": rec.get("description"),
        "status": rec.get("state"),
        "learningScore": score,
        "scoreReasons": why,
        "autoApplicable": auto,
        "broad": rec.get("broad"),
        "signatureId": rec.get("signatureId"),
        "violations": rec.get("violations"),
        "modification": modification(rec),
        "evidence": {
            "requests": num(rec, "requests"),
            "distinctSources": num(rec, "sources") + num(rec, "trustedSources"),
            "trustedSources": num(rec, "trustedSources"),
            "attackRequests": num(rec, "attackRequests"),
            "firstSeen": iso_micros(num(rec, "firstSeen")),
            "lastSeen": iso_micros(num(rec, "lastSeen")),
            "firstSeenMicros": num(rec, "firstSeen"),
            "lastSeenMicros": num(rec, "lastSeen"),
            "events": rec.get("events"),
        },
        "stateChangedBy": rec.get("stateChangedBy"),
        "stateChangedTime": rec.get("stateChangedTime"),
    })
}

/// Every suggestion record of a policy that is proposed.
pub fn records(store: &Store, policy_id: &str) -> Result<Vec<Map<String, Value>>> {
    Ok(store
        .list(Table::Events, &prefix(policy_id))?
        .into_iter()
        .filter_map(|(_, v)| match v {
            Value::Object(m) if proposed(&m) => Some(m),
            _ => None,
        })
        .collect())
}

/// Sets the state (`accepted`, `dismissed`, `pending`) of suggestions `ids`, by `user`.
pub fn set_state(
    store: &Store,
    policy_id: &str,
    ids: &[String],
    state: &str,
    user: &str,
) -> Result<()> {
    let now = portcullis_support::now_micros();
    store.write(|tx| {
        for id in ids {
            let key = format!("{}{id}", prefix(policy_id));
            if let Some(Value::Object(mut m)) = tx.get(Table::Events, &key)? {
                m.insert("state".into(), json!(state));
                m.insert("stateChangedBy".into(), json!(user));
                m.insert("stateChangedTime".into(), json!(iso_micros(now)));
                tx.put(Table::Events, &key, &Value::Object(m))?;
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(sources: usize, trusted: usize, hours: f64, attacks: u64) -> Map<String, Value> {
        let now = 1_000_000_000_000_000u64;
        json!({"requests": 50, "attackRequests": attacks, "sources": sources,
               "trustedSources": trusted, "firstSeen": now - (hours * 3.6e9) as u64,
               "lastSeen": now, "broad": false})
        .as_object()
        .unwrap()
        .clone()
    }

    #[test]
    fn scores_follow_the_evidence_and_the_caps() {
        let s = Settings::default();
        let now = 1_000_000_000_000_000u64;
        assert_eq!(score(&rec(20, 0, 2.0, 0), &s, now).0, 100);
        assert!(score(&rec(20, 0, 2.0, 0), &s, now).2, "auto-applicable");
        assert_eq!(score(&rec(10, 0, 2.0, 0), &s, now).0, 50);
        assert_eq!(
            score(&rec(20, 0, 0.5, 0), &s, now).0,
            50,
            "half the time spread"
        );
        assert_eq!(
            score(&rec(0, 2, 0.0, 0), &s, now).0,
            100,
            "trusted sources count fully"
        );
        let (one, _, auto) = score(&rec(0, 1, 0.0, 0), &s, now);
        assert_eq!(
            (one, auto),
            (ONE_SOURCE_MAX, false),
            "one source scores low"
        );
        let (att, why, auto) = score(&rec(20, 0, 2.0, 3), &s, now);
        assert_eq!((att, auto), (ATTACK_MAX, false));
        assert!(why.iter().any(|w| w.contains("high-accuracy")));
        let stale = score(&rec(20, 0, 2.0, 0), &s, now + 8 * 86_400_000_000).0;
        assert_eq!(stale, 0);
        let mut all_attack = rec(3, 0, 1.0, 50);
        assert!(!proposed(&all_attack));
        all_attack.insert("attackRequests".into(), json!(49));
        assert!(proposed(&all_attack));
    }
}
