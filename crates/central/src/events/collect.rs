//! Collecting the fleet's events: every `poll_secs` each trusted controller that is not already
//! being read is read by a task of its own (a dead or slow controller delays nobody else), from
//! the last write sequence stored for it (`cm-events/cursor/<machineId>`), page after page of its
//! `/mgmt/tm/asm/events/feed`, with the pinned certificate and the account the trust created.
//! Each page is stored before the cursor moves, and the store keeps one copy per (device, support
//! id), so a controller that was down catches up where it stopped, and a page read twice after a
//! failure is stored once. A controller whose log started over (its last sequence is below the
//! cursor) is read again from the start. Retention runs every minute.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use super::{FleetEvent, FleetEvents};
use crate::devices::{self, Device};
use crate::{CallLimits, Central};
use portcullis_store::Table;
use portcullis_support::now_micros;
use portcullis_support::task;

/// Events asked for per page.
pub const PAGE: usize = 1000;
/// Pages read from one controller in one round (the rest waits for the next round).
const MAX_PAGES: usize = 50;
const PRUNE_EVERY: Duration = Duration::from_secs(60);
/// Where a controller serves its event feed (the controller's route; its tests check the two agree).
const FEED: &str = "/mgmt/tm/asm/events/feed";

/// How collection goes for one device.
#[derive(Clone, Debug, Default)]
pub struct DeviceStatus {
    pub cursor: u64,
    /// New events stored since this process started.
    pub collected: u64,
    pub last_success_micros: u64,
    pub last_error: Option<String>,
    pub last_error_micros: u64,
}

/// Collection status by machine id.
#[derive(Default)]
pub struct Status(Mutex<HashMap<String, DeviceStatus>>);

impl Status {
    pub fn of(&self, machine_id: &str) -> DeviceStatus {
        self.0.lock().get(machine_id).cloned().unwrap_or_default()
    }

    fn update(&self, machine_id: &str, f: impl FnOnce(&mut DeviceStatus)) {
        f(self.0.lock().entry(machine_id.to_string()).or_default());
    }
}

fn cursor_key(machine_id: &str) -> String {
    format!("cm-events/cursor/{machine_id}")
}

fn load_cursor(c: &Central, machine_id: &str) -> u64 {
    c.store
        .get(Table::Objects, &cursor_key(machine_id))
        .ok()
        .flatten()
        .and_then(|v| v["sequence"].as_u64())
        .unwrap_or(0)
}

fn save_cursor(c: &Central, machine_id: &str, sequence: u64) -> Result<(), String> {
    c.store
        .write(|tx| {
            tx.put(
                Table::Objects,
                &cursor_key(machine_id),
                &json!({"sequence": sequence}),
            )
        })
        .map_err(|e| format!("cannot save the collection cursor: {e}"))
}

/// Starts the collector on the central manager's runtime.
pub fn start(c: Arc<Central>, fleet: Arc<FleetEvents>) {
    let rt = c.rt.clone();
    task::spawn_on(&rt, supervise(c, fleet));
}

async fn supervise(c: Arc<Central>, fleet: Arc<FleetEvents>) {
    let poll = Duration::from_secs(fleet.cfg.poll_secs.max(1));
    let mut running: HashMap<String, JoinHandle<()>> = HashMap::new();
    let mut pruned = tokio::time::Instant::now();
    loop {
        let devices = devices::list(&c.store).unwrap_or_default();
        running.retain(|id, h| !h.is_finished() && devices.iter().any(|d| &d.machine_id == id));
        for d in devices {
            if running.contains_key(&d.machine_id) {
                continue;
            }
            let (c, fleet) = (c.clone(), fleet.clone());
            let id = d.machine_id.clone();
            running.insert(id, tokio::spawn(async move { round(&c, &fleet, &d).await }));
        }
        if pruned.elapsed() >= PRUNE_EVERY {
            pruned = tokio::time::Instant::now();
            match fleet.store.prune(fleet.cfg.retention()).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(events = n, "fleet events past retention deleted"),
                Err(e) => tracing::warn!("fleet event retention failed: {e}"),
            }
        }
        tokio::time::sleep(poll).await;
    }
}

/// One collection round for `dev`, with its status recorded.
async fn round(c: &Central, fleet: &FleetEvents, dev: &Device) {
    let id = &dev.machine_id;
    match collect(c, fleet, dev).await {
        Ok((added, cursor)) => {
            let was = fleet.status.of(id).last_error;
            if was.is_some() {
                tracing::info!(device = %dev.endpoint(), "collecting events works again");
            }
            fleet.status.update(id, |s| {
                s.cursor = cursor;
                s.collected += added as u64;
                s.last_success_micros = now_micros();
                s.last_error = None;
            });
        }
        Err(e) => {
            if fleet.status.of(id).last_error.is_none() {
                tracing::warn!(device = %dev.endpoint(), "collecting events failed, retrying every round: {e}");
            }
            fleet.status.update(id, |s| {
                s.last_error = Some(e);
                s.last_error_micros = now_micros();
            });
        }
    }
}

/// Reads `dev`'s feed from its cursor and stores what is new; (events added, cursor).
async fn collect(c: &Central, fleet: &FleetEvents, dev: &Device) -> Result<(usize, u64), String> {
    // One attempt per round: the next round is the retry.
    let client = dev.client(CallLimits {
        retries: 0,
        ..c.limits
    });
    let mut cursor = load_cursor(c, &dev.machine_id);
    let mut added = 0;
    for _ in 0..MAX_PAGES {
        let mut page = client
            .get_json(&format!("{FEED}?after={cursor}&limit={PAGE}"))
            .await
            .map_err(|e| e.to_string())?;
        let last = page["lastSequence"].as_u64().unwrap_or(0);
        if cursor > last {
            tracing::info!(device = %dev.endpoint(), cursor, last, "the controller's event log started over; reading it from the start");
            cursor = 0;
            save_cursor(c, &dev.machine_id, cursor)?;
            continue;
        }
        let items = match page["items"].take() {
            Value::Array(a) => a,
            _ => Vec::new(),
        };
        let n = items.len();
        let next = items
            .iter()
            .filter_map(|i| i["sequence"].as_u64())
            .max()
            .unwrap_or(cursor);
        let events: Vec<FleetEvent> = items
            .into_iter()
            .filter_map(|i| FleetEvent::from_item(dev, i))
            .collect();
        if !events.is_empty() {
            added += fleet
                .store
                .insert(&events)
                .await
                .map_err(|e| e.to_string())?;
        }
        if next > cursor {
            cursor = next;
            save_cursor(c, &dev.machine_id, cursor)?;
        }
        if n < PAGE {
            break;
        }
    }
    Ok((added, cursor))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_feed_is_pulled_where_the_controller_serves_it() {
        assert_eq!(super::FEED, portcullis_controller::events::FEED_PATH);
    }
}
