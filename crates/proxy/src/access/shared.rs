//! Redis (or Valkey) shared by the nodes of a fleet, for rate limits. [`Stores`] keeps one
//! [`RedisStore`] per server URL for the process (and the revocation lists, `super::revocations`).
//! A store holds one multiplexed connection per runtime worker: the concurrent requests of a
//! worker are pipelined on it, one round trip each. Counting is one atomic Lua script on the
//! server with the server's clock, so every node counts the same way: GCRA for a token bucket,
//! a sorted-set log for a sliding window.
//!
//! Failure: an error or an answer later than the profile's `timeoutMs` marks the store down
//! (logged once, `portcullis_shared_store_up` 0); from then on requests are decided without it at
//! once (never waiting on a dead server) while a background task reconnects with backoff; the
//! first successful reconnect brings the store back (logged once). Requests decided without the
//! store are counted in `portcullis_shared_store_fallbacks_total`; the time of every call is in
//! `portcullis_shared_store_seconds`.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Weak};
use std::time::Duration;

use arc_swap::ArcSwapOption;
use parking_lot::Mutex;
use redis::aio::MultiplexedConnection;
use tokio::runtime::Handle;
use tokio::sync::watch;

use super::revocations::Revocations;
use crate::metrics::{Metrics, StoreCounters};
use portcullis_engine::access::{AccessProfile, RateLimit, SharedStore};
use portcullis_support::redact_url;

/// Reconnect delays: from the first to the last, doubling.
const MIN_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(1);
/// Connecting (TCP, TLS, AUTH) may take this long at least, whatever the per-request timeout.
const MIN_CONNECT_TIMEOUT: Duration = Duration::from_secs(1);

/// A token bucket as GCRA: `ARGV[1]` µs between requests, `ARGV[2]` the burst tolerance in µs.
/// Answers `{1, 0}` (admitted) or `{0, µs until one is}`. Numbers are formatted with `%d`: Lua
/// would print microsecond timestamps in 14-digit `%g` and lose precision.
static GCRA: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(
        r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local emission = tonumber(ARGV[1])
local tat = tonumber(redis.call('GET', KEYS[1])) or now
if tat < now then tat = now end
local new_tat = tat + emission
local wait = new_tat - tonumber(ARGV[2]) - now
if wait > 0 then return {0, wait} end
redis.call('SET', KEYS[1], string.format('%d', new_tat), 'PX', math.ceil((new_tat - now) / 1000) + 1)
return {1, 0}
",
    )
});

/// A sliding window: at most `ARGV[1]` requests in any `ARGV[2]` µs, each admitted request an
/// entry `ARGV[3]` (unique) scored by its time. Answers like [`GCRA`].
static WINDOW: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(
        r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%d', now - window))
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], string.format('%d', now), ARGV[3])
  redis.call('PEXPIRE', KEYS[1], math.ceil(window / 1000))
  return {1, 0}
end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {0, tonumber(first[2]) + window - now}
",
    )
});

/// The shared stores of one process, by URL (and revocation lists by URL and prefix). Entries
/// live while a gate uses them.
pub struct Stores {
    metrics: Arc<Metrics>,
    /// Names this process in sliding-window entries (unique across nodes).
    node: u64,
    redis: Mutex<HashMap<String, Weak<RedisStore>>>,
    revocations: Mutex<HashMap<(String, String), Weak<Revocations>>>,
}

/// A shared store's URL that the Redis client does not accept; the URL is shown with its
/// password redacted.
#[derive(Debug, thiserror::Error)]
#[error("{url}: {source}")]
pub struct StoreUrlError {
    /// The URL, redacted.
    pub url: String,
    pub source: redis::RedisError,
}

impl StoreUrlError {
    fn of(url: &str) -> impl FnOnce(redis::RedisError) -> StoreUrlError + '_ {
        move |source| StoreUrlError {
            url: redact_url(url),
            source,
        }
    }
}

impl Stores {
    pub fn new(metrics: Arc<Metrics>) -> Arc<Stores> {
        Arc::new(Stores {
            metrics,
            node: rand::random(),
            redis: Mutex::default(),
            revocations: Mutex::default(),
        })
    }

    /// The store of `url`, connecting in the background when it is new. Call inside a runtime.
    pub fn redis(&self, url: &str) -> Result<Arc<RedisStore>, StoreUrlError> {
        let mut map = self.redis.lock();
        if let Some(s) = map.get(url).and_then(Weak::upgrade) {
            return Ok(s);
        }
        let client = redis::Client::open(url).map_err(StoreUrlError::of(url))?;
        let label = redact_url(url);
        let workers = Handle::current().metrics().num_workers().max(1);
        let (ready, _) = watch::channel(false);
        let s = Arc::new(RedisStore {
            counters: self.metrics.store(&label),
            label,
            client,
            node: self.node,
            conns: (0..workers).map(|_| ArcSwapOption::empty()).collect(),
            generation: AtomicU64::new(0),
            up: AtomicBool::new(false),
            recovering: AtomicBool::new(false),
            ready,
            entries: AtomicU64::new(0),
            rt: Handle::current(),
        });
        s.counters.up.set(0);
        s.recover();
        map.retain(|_, w| w.strong_count() > 0);
        map.insert(url.to_string(), Arc::downgrade(&s));
        Ok(s)
    }

    /// The revocation list under `store.key_prefix` in `store.url`, watched from now on.
    pub fn revocations(&self, store: &SharedStore) -> Result<Arc<Revocations>, StoreUrlError> {
        let key = (store.url.clone(), store.key_prefix.clone());
        let mut map = self.revocations.lock();
        if let Some(r) = map.get(&key).and_then(Weak::upgrade) {
            return Ok(r);
        }
        let client =
            redis::Client::open(store.url.as_str()).map_err(StoreUrlError::of(&store.url))?;
        let gauge = self
            .metrics
            .revocations(&redact_url(&store.url), &store.key_prefix);
        let r = Revocations::watch(client, store, gauge);
        map.retain(|_, w| w.strong_count() > 0);
        map.insert(key, Arc::downgrade(&r));
        Ok(r)
    }
}

/// One Redis server: a multiplexed connection per worker and whether it answers.
pub struct RedisStore {
    label: String,
    client: redis::Client,
    node: u64,
    conns: Box<[ArcSwapOption<MultiplexedConnection>]>,
    /// Incremented by every reconnect: a late failure of an older connection set does not mark
    /// the current one down.
    generation: AtomicU64,
    up: AtomicBool,
    recovering: AtomicBool,
    /// True once connected (for [`RedisStore::connected`]).
    ready: watch::Sender<bool>,
    /// Numbers the sliding-window entries of this process.
    entries: AtomicU64,
    counters: StoreCounters,
    rt: Handle,
}

/// The connection slot of the calling worker thread: threads take slots in turn, once.
fn slot(n: usize) -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local!(static SLOT: Cell<Option<usize>> = const { Cell::new(None) });
    SLOT.with(|s| {
        let i = s
            .get()
            .unwrap_or_else(|| NEXT.fetch_add(1, Ordering::Relaxed));
        s.set(Some(i));
        i % n
    })
}

impl RedisStore {
    pub fn label(&self) -> &str {
        &self.label
    }

    pub fn is_up(&self) -> bool {
        self.up.load(Ordering::Acquire)
    }

    /// Waits until the store is connected, at most `wait`; whether it is.
    pub async fn connected(&self, wait: Duration) -> bool {
        let mut rx = self.ready.subscribe();
        tokio::time::timeout(wait, rx.wait_for(|up| *up))
            .await
            .is_ok_and(|r| r.is_ok())
    }

    /// Takes one request of `key` under `rl` in the shared counters: `Some(Ok)` admitted,
    /// `Some(Err(seconds))` refused with the seconds until a request is admitted again, `None`
    /// when the store cannot decide (the caller applies `onUnavailable`).
    pub async fn take(
        self: &Arc<Self>,
        cfg: &SharedStore,
        key: &str,
        rl: &RateLimit,
    ) -> Option<Result<(), u64>> {
        let decided = self.run(cfg, key, rl).await;
        if decided.is_none() {
            self.counters.fallbacks.inc();
        }
        decided
    }

    async fn run(
        self: &Arc<Self>,
        cfg: &SharedStore,
        key: &str,
        rl: &RateLimit,
    ) -> Option<Result<(), u64>> {
        if !self.is_up() {
            return None;
        }
        let generation = self.generation.load(Ordering::Acquire);
        let mut con = (*self.conns[slot(self.conns.len())].load_full()?).clone();
        let full_key = format!("{}rl:{key}", cfg.key_prefix);
        let inv = match rl.window {
            Some(w) => {
                let n = self.entries.fetch_add(1, Ordering::Relaxed);
                let mut i = WINDOW.key(full_key);
                i.arg(rl.burst)
                    .arg(w.as_micros() as u64)
                    .arg(format!("{:x}.{n:x}", self.node));
                i
            }
            None => {
                let emission = (1e6 / rl.per_second).round().max(1.0) as u64;
                let mut i = GCRA.key(full_key);
                i.arg(emission).arg(emission * u64::from(rl.burst));
                i
            }
        };
        let started = std::time::Instant::now();
        let answer =
            tokio::time::timeout(cfg.timeout, inv.invoke_async::<(u8, u64)>(&mut con)).await;
        self.counters
            .seconds
            .observe(started.elapsed().as_secs_f64());
        let why = match answer {
            Ok(Ok((1, _))) => return Some(Ok(())),
            Ok(Ok((_, micros))) => return Some(Err(micros.div_ceil(1_000_000).max(1))),
            Ok(Err(e)) if !(e.is_io_error() || e.is_connection_dropped() || e.is_timeout()) => {
                // The server answered with an error (a foreign value under the key, a script
                // refused): this request is decided without it, the store stays up.
                tracing::debug!(store = %self.label, "shared rate limit failed: {e}");
                return None;
            }
            Ok(Err(e)) => e.to_string(),
            Err(_) => format!("no answer within {} ms", cfg.timeout.as_millis()),
        };
        self.down(generation, &why);
        None
    }

    /// Marks the connection set of `generation` down and starts reconnecting.
    fn down(self: &Arc<Self>, generation: u64, why: &str) {
        if self.generation.load(Ordering::Acquire) != generation {
            return;
        }
        if self.up.swap(false, Ordering::AcqRel) {
            self.counters.up.set(0);
            tracing::warn!(store = %self.label, "shared store unavailable, deciding without it until it answers again: {why}");
        }
        self.recover();
    }

    /// Reconnects in the background (once at a time) with backoff until the server answers.
    fn recover(self: &Arc<Self>) {
        if self.recovering.swap(true, Ordering::AcqRel) {
            return;
        }
        let weak = Arc::downgrade(self);
        portcullis_support::task::spawn_on(&self.rt, async move {
            let mut backoff = MIN_BACKOFF;
            let mut first = true;
            loop {
                let Some(s) = weak.upgrade() else { return };
                match s.connect_all().await {
                    Ok(()) => {
                        s.generation.fetch_add(1, Ordering::AcqRel);
                        s.recovering.store(false, Ordering::Release);
                        s.up.store(true, Ordering::Release);
                        s.counters.up.set(1);
                        s.ready.send_replace(true);
                        tracing::info!(store = %s.label, "shared store connected");
                        return;
                    }
                    Err(e) if first => {
                        first = false;
                        tracing::warn!(store = %s.label, "shared store cannot be reached yet, retrying: {e}");
                    }
                    Err(e) => {
                        tracing::debug!(store = %s.label, "shared store reconnect failed: {e}")
                    }
                }
                drop(s);
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        });
    }

    /// Opens a fresh connection per slot, loads the scripts, and swaps them in.
    async fn connect_all(&self) -> redis::RedisResult<()> {
        let cfg = redis::AsyncConnectionConfig::new()
            .set_connection_timeout(Some(MIN_CONNECT_TIMEOUT))
            .set_response_timeout(Some(MIN_CONNECT_TIMEOUT));
        let mut fresh = Vec::with_capacity(self.conns.len());
        for _ in 0..self.conns.len() {
            let mut c = self
                .client
                .get_multiplexed_async_connection_with_config(&cfg)
                .await?;
            fresh.push(c.clone());
            // The scripts are cached by the server: load them now so the first requests after a
            // (re)connect cost one EVALSHA, not a NOSCRIPT round trip.
            if fresh.len() == 1 {
                GCRA.prepare_invoke().load_async(&mut c).await?;
                WINDOW.prepare_invoke().load_async(&mut c).await?;
            }
        }
        for (slot, c) in self.conns.iter().zip(fresh) {
            slot.store(Some(Arc::new(c)));
        }
        Ok(())
    }
}

/// The stores [`prepare`] connected, kept alive by holding this.
pub struct Prepared {
    _store: Option<Arc<RedisStore>>,
    _revocations: Option<Arc<Revocations>>,
}

/// Connects the store `profile`'s rate limit names and loads its revocations, waiting at most
/// `wait` for each: called before a listener opens, so its first requests are counted in the
/// shared store. Errors are left to the gate, which reports them.
pub async fn prepare(stores: &Stores, profile: &AccessProfile, wait: Duration) -> Prepared {
    let store = profile
        .rate_limit
        .as_ref()
        .and_then(|r| r.store.as_ref())
        .and_then(|s| stores.redis(&s.url).ok());
    if let Some(s) = &store {
        s.connected(wait).await;
    }
    let revocations = profile
        .revocations
        .as_ref()
        .and_then(|s| stores.revocations(s).ok());
    if let Some(r) = &revocations {
        r.loaded(wait).await;
    }
    Prepared {
        _store: store,
        _revocations: revocations,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_stable_per_thread() {
        let a = slot(4);
        assert_eq!(slot(4), a);
        let b = std::thread::spawn(|| slot(4)).join().unwrap();
        assert!(a < 4 && b < 4);
    }
}
