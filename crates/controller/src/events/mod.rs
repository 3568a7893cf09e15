//! Request events on the management side: the data plane's events (through
//! `proxy::events::EventSink`) are kept in the store with bounded retention ([`local`]), served
//! at `/mgmt/tm/asm/events/requests` ([`rest`]) and, in storage order for collectors, at
//! `/mgmt/tm/asm/events/feed` ([`feed`]), searched through indexes ([`index`], [`search`]),
//! summed up in traffic statistics ([`stats`]), and sent to the destinations of the security log
//! profiles attached to their virtual server ([`route`], [`config`]): syslog servers and files
//! ([`syslog`]), SIEMs in CEF, LEEF, JSON lines and Splunk HEC ([`siem`], [`hec`]), each behind a
//! drop-oldest queue ([`sender`], TLS by [`tls`]), whose counters [`delivery`] serves. [`install`]
//! starts the consumers (and the learner of `asm::learn`); docs/events.md describes the whole.

pub(crate) mod config;
pub(crate) mod delivery;
pub(crate) mod feed;
mod hec;
pub(crate) mod index;
pub(crate) mod local;
pub(crate) mod rest;
pub(crate) mod route;
pub(crate) mod search;
mod sender;
mod siem;
pub(crate) mod stats;
mod syslog;
mod tls;

use std::sync::Arc;

use std::time::Duration;

use tokio::runtime::Handle;

use portcullis_admin::MgmtState;
use portcullis_proxy::EventSink;

#[cfg(fuzzing)]
pub use config::fuzz_log_profile;
pub use feed::PATH as FEED_PATH;
pub use index::signature_ids;
pub use local::{get as stored_event, write_batch};
pub use portcullis_store::Retention;
pub use route::Routing;

/// Events handed to the remote-log router per routing-table check.
const ROUTE_BATCH: usize = 256;

/// Subscribes the store writer (`store`) and the remote-log router (`remote-log`) to `sink`,
/// each on its own thread with a queue of `events_queue` events. Call inside a tokio runtime:
/// syslog and file senders are spawned on it. The threads end when the sink is dropped.
pub fn install(st: &Arc<MgmtState>, sink: &EventSink) -> std::io::Result<Arc<Routing>> {
    let routing = Arc::new(Routing::new(st, Handle::current()));
    st.attach(routing.clone());
    stats::start_sampler(st)?;
    crate::asm::learn::learner::start(st, sink, st.cfg.events_queue)?;
    let q = st.cfg.events_queue;
    let keep = Retention {
        max_events: st.cfg.events_max_count as u64,
        max_age: Duration::from_secs(st.cfg.events_max_age),
    };
    let stored = sink.subscribe("store", q);
    let (store, r) = (st.store.clone(), routing.clone());
    std::thread::Builder::new()
        .name("event-store".into())
        .spawn(move || {
            local::run_writer(stored, store, keep, |batch| {
                let t = r.current();
                batch.retain(|e| t.stores_locally(e));
                let attached = r.attached();
                move |e: &portcullis_engine::SecurityEvent| route::policy_of(e, &attached)
            })
        })?;
    let remote = sink.subscribe("remote-log", q);
    let r = routing.clone();
    std::thread::Builder::new()
        .name("event-route".into())
        .spawn(move || {
            let mut batch = Vec::with_capacity(ROUTE_BATCH);
            while let Some(ev) = remote.recv() {
                batch.push(ev);
                remote.drain_into(&mut batch, ROUTE_BATCH - 1);
                let t = r.current();
                let attached = r.attached();
                for e in &batch {
                    let dests = t.remote(&e.virtual_server);
                    if dests.is_empty() {
                        continue;
                    }
                    let policy = route::policy_of(e, &attached);
                    for d in dests {
                        d.send(e, &policy);
                    }
                }
                batch.clear();
            }
        })?;
    Ok(routing)
}
