//! JWKS from a URL: fetched on first use, used for `refresh` then fetched again, and refetched
//! early when a token names an unknown `kid` — at most once per `min_refresh`, with concurrent
//! requests waiting on one fetch. A failed fetch keeps the previous keys (and is logged).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use arc_swap::ArcSwapOption;

use crate::fetch::exchange;
use crate::upstream::Clients;
use portcullis_engine::access::KeySet;
use portcullis_support::OutboundError;

/// Largest JWKS document read.
const MAX_JWKS_BYTES: usize = 256 << 10;

/// Keys fetched at one time.
pub struct Fetched {
    pub keys: KeySet,
    pub at: Instant,
}

/// The keys of one JWKS URL.
pub struct Jwks {
    url: String,
    current: ArcSwapOption<Fetched>,
    /// Held while fetching (single flight); records the time of the last attempt.
    attempt: tokio::sync::Mutex<Option<Instant>>,
    fetches: AtomicU64,
}

impl Jwks {
    pub fn new(url: &str) -> Jwks {
        Jwks {
            url: url.to_string(),
            current: ArcSwapOption::empty(),
            attempt: tokio::sync::Mutex::new(None),
            fetches: AtomicU64::new(0),
        }
    }

    /// How many fetches were attempted (for tests and metrics).
    pub fn fetches(&self) -> u64 {
        self.fetches.load(Ordering::Relaxed)
    }

    /// The keys, fetched if there are none yet or they are older than `refresh`.
    pub async fn keys(
        &self,
        clients: &Clients,
        refresh: Duration,
        min_refresh: Duration,
        timeout: Duration,
    ) -> Option<Arc<Fetched>> {
        if let Some(f) = self.current.load_full()
            && f.at.elapsed() < refresh
        {
            return Some(f);
        }
        self.fetch(clients, min_refresh, timeout).await
    }

    /// Refetches because a token names an unknown `kid`, unless a fetch happened within `min_refresh`.
    pub async fn refresh_for(
        &self,
        clients: &Clients,
        min_refresh: Duration,
        timeout: Duration,
    ) -> Option<Arc<Fetched>> {
        self.fetch(clients, min_refresh, timeout).await
    }

    async fn fetch(
        &self,
        clients: &Clients,
        min_refresh: Duration,
        timeout: Duration,
    ) -> Option<Arc<Fetched>> {
        let mut last = self.attempt.lock().await;
        let current = self.current.load_full();
        // Bounded: at most one attempt per `min_refresh`, whatever the tokens say (requests that
        // waited for a concurrent fetch get its result here).
        if last.is_some_and(|t| t.elapsed() < min_refresh) {
            return current;
        }
        *last = Some(Instant::now());
        self.fetches.fetch_add(1, Ordering::Relaxed);
        match self.download(clients, timeout).await {
            Ok(keys) => {
                let f = Arc::new(Fetched {
                    keys,
                    at: Instant::now(),
                });
                self.current.store(Some(f.clone()));
                Some(f)
            }
            Err(e) => {
                tracing::warn!(url = %self.url, "JWKS fetch failed, keeping the previous keys: {e}");
                current
            }
        }
    }

    async fn download(&self, clients: &Clients, timeout: Duration) -> Result<KeySet, String> {
        let (status, body) = exchange(
            clients,
            http::Method::GET,
            &self.url,
            &[("accept", "application/json".into())],
            None,
            timeout,
            MAX_JWKS_BYTES,
        )
        .await
        .map_err(|e: OutboundError| e.to_string())?;
        if status != 200 {
            return Err(format!("HTTP status {status}"));
        }
        let (keys, skipped) = KeySet::from_jwks(&body).map_err(|e| e.to_string())?;
        if skipped > 0 {
            tracing::info!(url = %self.url, skipped, "JWKS keys that cannot verify signatures were skipped");
        }
        Ok(keys)
    }
}
