//! The security event fan-out: every blocked or alarmed request's [`SecurityEvent`] goes to each
//! subscriber through its own bounded queue. The request path never waits: when a subscriber's
//! queue is full the event is dropped for that subscriber and counted
//! (`portcullis_events_dropped_total{subscriber}`). Subscribers consume on their own threads or
//! tasks: the JSON-line event log (file or stdout) is one; a management plane adds its own
//! (store, remote logging) with [`EventSink::subscribe`] without the data plane knowing them.
//!
//! The event log needs the event's JSON line only. While it is the only subscriber, the data
//! plane writes that line straight from the transaction ([`EventSink::wants_records`],
//! [`EventSink::write_line`]) and no [`SecurityEvent`] is built for it.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError, sync_channel};
use std::time::Duration;

use arc_swap::ArcSwap;
use prometheus_client::metrics::counter::Counter;

use super::metrics::Metrics;
use portcullis_engine::SecurityEvent;

/// Queue length of the built-in JSON-line event log.
pub const LOG_QUEUE: usize = 8192;
/// Most events the event log writes at once.
const WRITE_BATCH: usize = 256;
/// How long the event log lets events gather after a write that did not fill a batch. Without
/// the pause, a thread that keeps up is woken once per event: under a flood of blocked requests
/// every request would pay a futex wake-up and the machine a context switch. With it, an event
/// reaches the log at most this much later than the one before it, and one wake-up and one write
/// serve the whole interval. The queue holds far more than an interval of any realistic flood.
const GATHER: Duration = Duration::from_millis(5);

struct Subscription {
    name: String,
    tx: Queue,
    dropped: Counter,
}

/// A subscriber's queue: events as records, or (the event log) what it writes.
enum Queue {
    Records(SyncSender<Arc<SecurityEvent>>),
    Lines(SyncSender<Logged>),
}

/// What the event log receives: an event to write, or its line already written (no newline).
enum Logged {
    Record(Arc<SecurityEvent>),
    Line(Vec<u8>),
}

/// Where the data plane publishes events; shared by every listener.
pub struct EventSink {
    subs: ArcSwap<Vec<Arc<Subscription>>>,
    metrics: Option<Arc<Metrics>>,
}

/// The receiving end of one subscription. Dropping it ends the subscription (later events are
/// no longer queued for it).
pub struct EventStream {
    rx: Receiver<Arc<SecurityEvent>>,
}

impl EventStream {
    /// Waits for the next event; `None` once the sink is gone.
    pub fn recv(&self) -> Option<Arc<SecurityEvent>> {
        self.rx.recv().ok()
    }

    /// Waits at most `d`: `Ok(None)` on timeout, `Err(())` once the sink is gone.
    #[allow(clippy::result_unit_err)]
    pub fn recv_timeout(&self, d: Duration) -> Result<Option<Arc<SecurityEvent>>, ()> {
        match self.rx.recv_timeout(d) {
            Ok(e) => Ok(Some(e)),
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => Err(()),
        }
    }

    /// Appends up to `max` events already queued, without waiting.
    pub fn drain_into(&self, out: &mut Vec<Arc<SecurityEvent>>, max: usize) {
        for _ in 0..max {
            match self.rx.try_recv() {
                Ok(e) => out.push(e),
                Err(_) => break,
            }
        }
    }
}

impl EventSink {
    /// A sink without subscribers; drops are counted in `metrics` when given.
    pub fn new(metrics: Option<Arc<Metrics>>) -> EventSink {
        EventSink {
            subs: ArcSwap::from_pointee(Vec::new()),
            metrics,
        }
    }

    /// A sink whose one subscriber appends JSON lines to `path` (created if missing), or writes
    /// them to stdout when `path` is `None`: their own stream, apart from the diagnostic logs on
    /// stderr, so `portcullis proxy ... | jq` reads nothing but events.
    pub fn open(path: Option<&Path>) -> std::io::Result<EventSink> {
        Self::open_counted(path, None)
    }

    /// [`EventSink::open`], counting drops in `metrics`.
    pub fn open_counted(
        path: Option<&Path>,
        metrics: Option<Arc<Metrics>>,
    ) -> std::io::Result<EventSink> {
        let mut out: Box<dyn Write + Send> = match path {
            Some(p) => Box::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(p)?,
            ),
            None => Box::new(std::io::stdout()),
        };
        let sink = EventSink::new(metrics);
        let (tx, rx) = sync_channel(LOG_QUEUE);
        sink.add("log", Queue::Lines(tx));
        std::thread::Builder::new()
            .name("event-log".into())
            .spawn(move || {
                // The events queued by the time the thread wakes go out in one write: under a
                // flood of blocked requests, one system call per batch rather than per event.
                let mut batch = Vec::new();
                let mut lines = Vec::with_capacity(16 * 1024);
                while let Ok(first) = rx.recv() {
                    batch.push(first);
                    batch.extend(rx.try_iter().take(WRITE_BATCH - 1));
                    lines.clear();
                    let written = batch.len();
                    for logged in batch.drain(..) {
                        match logged {
                            Logged::Record(ev) => ev.write_json(&mut lines),
                            Logged::Line(line) => lines.extend_from_slice(&line),
                        }
                        lines.push(b'\n');
                    }
                    if out.write_all(&lines).is_ok() {
                        let _ = out.flush();
                    }
                    if lines.capacity() > 1 << 20 {
                        lines = Vec::with_capacity(16 * 1024);
                    }
                    if written < WRITE_BATCH {
                        std::thread::sleep(GATHER);
                    }
                }
                let _ = out.flush();
            })?;
        Ok(sink)
    }

    /// Adds a subscriber named `name` with a queue of `capacity` events (at least 1).
    pub fn subscribe(&self, name: &str, capacity: usize) -> EventStream {
        let (tx, rx) = sync_channel(capacity.max(1));
        self.add(name, Queue::Records(tx));
        EventStream { rx }
    }

    fn add(&self, name: &str, tx: Queue) {
        let dropped = match &self.metrics {
            Some(m) => m.events_dropped(name),
            None => Counter::default(),
        };
        let sub = Arc::new(Subscription {
            name: name.to_string(),
            tx,
            dropped,
        });
        self.subs.rcu(|cur| {
            let mut v = Vec::clone(cur);
            v.push(sub.clone());
            v
        });
    }

    /// Whether a subscriber reads events as records: while none does, the data plane may write
    /// each event's line itself ([`Self::write_line`]) instead of building the event.
    pub fn wants_records(&self) -> bool {
        self.subs
            .load()
            .iter()
            .any(|s| matches!(s.tx, Queue::Records(_)))
    }

    /// Publishes an event given as its JSON line (`SecurityEvent::write_json`'s text) to the
    /// subscribers that write lines; those that read records do not receive it (the caller asked
    /// [`Self::wants_records`] first).
    pub fn write_line(&self, line: Vec<u8>) {
        let subs = self.subs.load();
        // A sink has one event log at most (`open_counted`): the line moves into its queue.
        let Some(s) = subs.iter().find(|s| matches!(s.tx, Queue::Lines(_))) else {
            return;
        };
        if let Queue::Lines(tx) = &s.tx
            && let Err(TrySendError::Full(_)) = tx.try_send(Logged::Line(line))
        {
            s.dropped.inc();
        }
    }

    /// Publishes one event to every subscriber without waiting; a full queue drops and counts.
    pub fn write(&self, event: SecurityEvent) {
        let subs = self.subs.load();
        if subs.is_empty() {
            return;
        }
        let event = Arc::new(event);
        let mut gone: Vec<*const Subscription> = Vec::new();
        for s in subs.iter() {
            let sent = match &s.tx {
                Queue::Records(tx) => tx.try_send(event.clone()).map_err(|e| full(&e)),
                Queue::Lines(tx) => tx
                    .try_send(Logged::Record(event.clone()))
                    .map_err(|e| full(&e)),
            };
            match sent {
                Ok(()) => {}
                Err(true) => {
                    s.dropped.inc();
                }
                Err(false) => gone.push(Arc::as_ptr(s)),
            }
        }
        if !gone.is_empty() {
            self.subs.rcu(|cur| {
                cur.iter()
                    .filter(|s| !gone.contains(&Arc::as_ptr(s)))
                    .cloned()
                    .collect::<Vec<_>>()
            });
        }
    }

    /// Events dropped so far for subscriber `name` (its queue was full).
    pub fn dropped(&self, name: &str) -> u64 {
        self.subs
            .load()
            .iter()
            .filter(|s| s.name == name)
            .map(|s| s.dropped.get())
            .sum()
    }

    /// The names of the current subscribers.
    pub fn subscribers(&self) -> Vec<String> {
        self.subs.load().iter().map(|s| s.name.clone()).collect()
    }
}

/// Whether a failed send found the queue full (else the subscriber is gone).
fn full<T>(e: &TrySendError<T>) -> bool {
    matches!(e, TrySendError::Full(_))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_subscriber_gets_every_event_and_a_full_queue_drops_and_counts() {
        let metrics = Arc::new(Metrics::default());
        let sink = EventSink::new(Some(metrics.clone()));
        let fast = sink.subscribe("fast", 16);
        let slow = sink.subscribe("slow", 2);
        for i in 0..5 {
            sink.write(SecurityEvent::sample(&i.to_string()));
        }
        let mut got = Vec::new();
        fast.drain_into(&mut got, 100);
        assert_eq!(got.len(), 5);
        assert_eq!(got[4].support_id, "4");
        let mut got = Vec::new();
        slow.drain_into(&mut got, 100);
        assert_eq!(got.len(), 2, "the slow subscriber kept what fit");
        assert_eq!(sink.dropped("slow"), 3);
        assert_eq!(sink.dropped("fast"), 0);
        assert!(
            metrics
                .render()
                .contains("portcullis_events_dropped_total{subscriber=\"slow\"} 3"),
            "{}",
            metrics.render()
        );
        drop(slow);
        sink.write(SecurityEvent::sample("5"));
        assert_eq!(sink.subscribers(), ["fast"], "a gone subscriber is removed");
        assert_eq!(
            fast.recv_timeout(Duration::from_secs(1))
                .unwrap()
                .unwrap()
                .support_id,
            "5"
        );
    }

    #[test]
    fn the_json_line_log_writes_each_event_with_its_virtual_server() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.log");
        let sink = EventSink::open(Some(&path)).unwrap();
        sink.write(SecurityEvent::sample("77"));
        // The log alone reads lines: a line written by the data plane goes out as it is.
        assert!(!sink.wants_records());
        let mut line = Vec::new();
        SecurityEvent::sample("78").write_json(&mut line);
        sink.write_line(line);
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        loop {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            if lines.len() == 2 {
                for (line, id) in lines.into_iter().zip(["77", "78"]) {
                    let v: serde_json::Value = serde_json::from_str(line).unwrap();
                    assert_eq!(v["supportId"], id);
                    assert_eq!(v["virtualServerName"], "/Common/vs");
                    assert_eq!(v["responseCode"], 403);
                }
                let _store = sink.subscribe("store", 4);
                assert!(sink.wants_records(), "a store reads records");
                break;
            }
            assert!(std::time::Instant::now() < deadline, "no line written");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}
