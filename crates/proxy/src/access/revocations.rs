//! Fleet-wide revocations of API keys (`key:<key id>`) and token ids (`jti:<jti>`), kept in Redis
//! and known by every node within a second.
//!
//! Redis holds them in the sorted set `<prefix>revoked` (member: the id; score: when the
//! revocation ends, in Unix milliseconds, or `+inf`), so they outlive any node. A writer
//! ([`revoke`], [`unrevoke`]: `portcullis access revoke`, the controller's REST) changes the set
//! and publishes the change on the channel `<prefix>revoked` (`+<until> <id>` or `-<id>`). Each
//! node's [`Revocations`] subscribes to the channel, then reads the whole set (so nothing published
//! in between is missed), reads it again every [`RESYNC_EVERY`] and after every reconnect (so
//! messages lost during a disconnection are made up for), and answers [`Revocations::is_revoked`]
//! from memory: the request path never waits on Redis. While Redis is unreachable the last list
//! read stays in force. Redis is the source of truth: run it with persistence (AOF) so the list
//! survives a Redis restart.

use std::collections::HashMap;
use std::sync::{Arc, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures_util::StreamExt;
use parking_lot::RwLock;
use prometheus_client::metrics::gauge::Gauge;
use redis::AsyncCommands;
use tokio::sync::watch;

use portcullis_engine::access::SharedStore;
use portcullis_support::redact_url;

/// The whole list is read again this often, besides after every reconnect.
pub const RESYNC_EVERY: Duration = Duration::from_secs(30);
const MIN_BACKOFF: Duration = Duration::from_millis(100);
/// At most this long between two reconnects: a revocation written as soon as Redis is back
/// reaches every node within a second (the reconnect reads the whole list).
const MAX_BACKOFF: Duration = Duration::from_millis(500);
/// Longest revoked id (the `key:`/`jti:` kind included).
const MAX_ID: usize = 512;

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// The sorted set, and the channel, of the revocations under `prefix`.
pub fn key(prefix: &str) -> String {
    format!("{prefix}revoked")
}

/// Checks a revocation id: `key:<API key id>` or `jti:<token id>`.
pub fn check_id(id: &str) -> Result<(), BadRevocationId> {
    let rest = id
        .strip_prefix("key:")
        .or_else(|| id.strip_prefix("jti:"))
        .ok_or_else(|| BadRevocationId::Kind(id.to_string()))?;
    if rest.is_empty() || id.len() > MAX_ID || id.chars().any(char::is_control) {
        return Err(BadRevocationId::Length(id.to_string()));
    }
    Ok(())
}

/// A revocation id that [`check_id`] refuses; `Display` quotes the id and says what is expected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BadRevocationId {
    #[error("{0:?}: a revocation is key:<API key id> or jti:<token id>")]
    Kind(String),
    #[error(
        "{0:?}: the id must have 1 to {max} characters, without control characters",
        max = MAX_ID - 4
    )]
    Length(String),
}

/// One revocation in force.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revoked {
    pub id: String,
    /// Unix milliseconds when it ends; `None`: never.
    pub until: Option<u64>,
}

/// A sorted-set score (`inf` or milliseconds) as an end time.
pub fn until_of(score: f64) -> Option<u64> {
    score.is_finite().then_some(score as u64)
}

/// The revocation list of one (server, prefix), as this node knows it.
pub struct Revocations {
    label: String,
    key: String,
    /// id → end (Unix ms; `u64::MAX` never).
    list: RwLock<HashMap<String, u64>>,
    loaded: watch::Sender<bool>,
    gauge: Gauge,
}

impl Revocations {
    /// Starts watching the list under `store.key_prefix` in `client`'s server. Call inside a
    /// runtime; the watch ends when the returned value is dropped.
    pub fn watch(client: redis::Client, store: &SharedStore, gauge: Gauge) -> Arc<Revocations> {
        let r = Arc::new(Revocations {
            label: redact_url(&store.url),
            key: key(&store.key_prefix),
            list: RwLock::default(),
            loaded: watch::channel(false).0,
            gauge,
        });
        let timeout = store.timeout.max(Duration::from_secs(1));
        portcullis_support::task::spawn(run(Arc::downgrade(&r), client, timeout));
        r
    }

    /// Whether `id` is revoked now.
    pub fn is_revoked(&self, id: &str) -> bool {
        self.list
            .read()
            .get(id)
            .is_some_and(|until| *until > now_ms())
    }

    /// Waits until the list was read once, at most `wait`; whether it was.
    pub async fn loaded(&self, wait: Duration) -> bool {
        let mut rx = self.loaded.subscribe();
        tokio::time::timeout(wait, rx.wait_for(|l| *l))
            .await
            .is_ok_and(|r| r.is_ok())
    }

    fn replace(&self, all: Vec<(String, f64)>) {
        let map: HashMap<String, u64> = all
            .into_iter()
            .map(|(id, score)| (id, until_of(score).unwrap_or(u64::MAX)))
            .collect();
        self.gauge.set(map.len() as i64);
        *self.list.write() = map;
        self.loaded.send_replace(true);
    }

    /// Applies one published change (`+<until|inf> <id>` or `-<id>`).
    fn apply(&self, msg: &str) {
        let mut list = self.list.write();
        if let Some(id) = msg.strip_prefix('-') {
            list.remove(id);
        } else if let Some((until, id)) = msg.strip_prefix('+').and_then(|m| m.split_once(' ')) {
            let until = until.parse::<f64>().ok().and_then(until_of);
            list.insert(id.to_string(), until.unwrap_or(u64::MAX));
        }
        self.gauge.set(list.len() as i64);
    }
}

/// Keeps the list of `weak` current until it is dropped: subscribe, read, follow; reconnect with
/// backoff after a failure (logged once per outage).
async fn run(weak: Weak<Revocations>, client: redis::Client, timeout: Duration) {
    let mut backoff = MIN_BACKOFF;
    let mut failing = false;
    loop {
        match follow(&weak, &client, timeout, &mut backoff, &mut failing).await {
            Ok(()) => return,
            Err(e) => {
                let Some(r) = weak.upgrade() else { return };
                if !failing {
                    failing = true;
                    tracing::warn!(store = %r.label, "revocations: shared store unavailable, keeping the last list read: {e}");
                }
            }
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// One connection's worth of [`run`]: returns `Ok` when the list is no longer wanted.
async fn follow(
    weak: &Weak<Revocations>,
    client: &redis::Client,
    timeout: Duration,
    backoff: &mut Duration,
    failing: &mut bool,
) -> redis::RedisResult<()> {
    let Some(key) = weak.upgrade().map(|r| r.key.clone()) else {
        return Ok(());
    };
    let within =
        |what: &'static str| move |_| redis::RedisError::from((redis::ErrorKind::Io, what));
    let mut pubsub = tokio::time::timeout(timeout, client.get_async_pubsub())
        .await
        .map_err(within("connect timed out"))??;
    pubsub.subscribe(&key).await?;
    let cfg = redis::AsyncConnectionConfig::new()
        .set_connection_timeout(Some(timeout))
        .set_response_timeout(Some(timeout));
    let mut con = client
        .get_multiplexed_async_connection_with_config(&cfg)
        .await?;
    let mut messages = pubsub.on_message();
    let mut tick = tokio::time::interval(RESYNC_EVERY);
    loop {
        tokio::select! {
            msg = messages.next() => {
                let Some(msg) = msg else {
                    return Err(redis::RedisError::from((redis::ErrorKind::Io, "subscription closed")));
                };
                let Some(r) = weak.upgrade() else { return Ok(()) };
                if let Ok(text) = msg.get_payload::<String>() {
                    r.apply(&text);
                }
            }
            _ = tick.tick() => {
                let all: Vec<(String, f64)> = con
                    .zrangebyscore_withscores(&key, format!("({}", now_ms()), "+inf")
                    .await?;
                let Some(r) = weak.upgrade() else { return Ok(()) };
                r.replace(all);
                if *failing {
                    *failing = false;
                    tracing::info!(store = %r.label, "revocations: shared store connected");
                }
                *backoff = MIN_BACKOFF;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_name_their_kind() {
        assert!(check_id("key:partner-a").is_ok());
        assert!(check_id("jti:7f3c").is_ok());
        for bad in ["partner-a", "key:", "jti:a\nb", "sub:x"] {
            assert!(check_id(bad).is_err(), "{bad}");
        }
        assert!(check_id(&format!("key:{}", "k".repeat(600))).is_err());
    }

    #[test]
    fn published_changes_apply_in_order() {
        let r = Revocations {
            label: "redis://h".into(),
            key: key("p:"),
            list: RwLock::default(),
            loaded: watch::channel(false).0,
            gauge: Gauge::default(),
        };
        r.apply("+inf key:a");
        r.apply(&format!("+{} jti:b", now_ms() + 60_000));
        r.apply(&format!("+{} jti:old", now_ms() - 1));
        assert!(r.is_revoked("key:a") && r.is_revoked("jti:b"));
        assert!(
            !r.is_revoked("jti:old"),
            "an ended revocation no longer applies"
        );
        r.apply("-key:a");
        assert!(!r.is_revoked("key:a"));
        r.replace(vec![("key:z".into(), f64::INFINITY)]);
        assert!(r.is_revoked("key:z") && !r.is_revoked("jti:b"));
        assert_eq!(r.gauge.get(), 1);
    }
}
