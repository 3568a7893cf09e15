//! This node's token buckets per client: `burst` requests at once, refilled continuously at
//! `per_second` (a window limit, `requests` per `windowSeconds`, is the bucket of the same rate;
//! shared counting in Redis is `super::shared`).
//! A refused request learns how many whole seconds until one token is back (`Retry-After`).
//! The table is bounded by `max_clients`: when full, buckets that are full again (idle clients)
//! are forgotten first, then all of them.

use std::collections::HashMap;
use std::time::Instant;

use parking_lot::Mutex;

use portcullis_engine::access::RateLimit;

struct Bucket {
    tokens: f64,
    at: Instant,
}

#[derive(Default)]
pub struct Limiter {
    buckets: Mutex<HashMap<String, Bucket>>,
}

impl Limiter {
    /// Takes one token for `key`; `Err(seconds)` when none is left.
    pub fn take(&self, key: &str, rl: &RateLimit, now: Instant) -> Result<(), u64> {
        let burst = f64::from(rl.burst);
        let mut map = self.buckets.lock();
        if !map.contains_key(key) && map.len() >= rl.max_clients {
            map.retain(|_, b| {
                b.tokens + now.saturating_duration_since(b.at).as_secs_f64() * rl.per_second < burst
            });
            if map.len() >= rl.max_clients {
                map.clear();
            }
        }
        let b = map.entry(key.to_string()).or_insert(Bucket {
            tokens: burst,
            at: now,
        });
        let elapsed = now.saturating_duration_since(b.at).as_secs_f64();
        b.tokens = (b.tokens + elapsed * rl.per_second).min(burst);
        b.at = now;
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            Ok(())
        } else {
            Err(((1.0 - b.tokens) / rl.per_second).ceil().max(1.0) as u64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use portcullis_engine::access::RateKey;
    use std::time::Duration;

    #[test]
    fn bucket_refills_and_reports_retry_after() {
        let rl = RateLimit {
            per_second: 0.5,
            burst: 2,
            window: None,
            by: RateKey::Ip,
            max_clients: 2,
            store: None,
        };
        let l = Limiter::default();
        let t = Instant::now();
        assert_eq!(l.take("a", &rl, t), Ok(()));
        assert_eq!(l.take("a", &rl, t), Ok(()));
        assert_eq!(l.take("a", &rl, t), Err(2));
        assert_eq!(l.take("b", &rl, t), Ok(()));
        assert_eq!(l.take("a", &rl, t + Duration::from_secs(2)), Ok(()));
        // A third client: the table is full of non-idle buckets, so it is reset, not grown.
        assert_eq!(l.take("c", &rl, t + Duration::from_secs(2)), Ok(()));
        assert!(l.buckets.lock().len() <= 2);
    }
}
