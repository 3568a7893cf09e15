//! Writing fleet-wide revocations (read by every node through `super::revocations`): revoke,
//! end a revocation, list them; and `portcullis access revoke|unrevoke|revocations`, which do it
//! from the command line. Each change is one pipeline: the sorted set changes and the change is
//! published to the nodes.

use std::time::Duration;

use redis::AsyncCommands;

pub use super::revocations::{BadRevocationId, check_id};
use super::revocations::{Revoked, key, now_ms, until_of};
use portcullis_support::redact_url;

/// Why a revocation could not be written or listed. `Display` is what `portcullis access`
/// prints; the controller answers 400 for [`RevokeError::BadId`], 503 for the rest.
#[derive(Debug, thiserror::Error)]
pub enum RevokeError {
    #[error(transparent)]
    BadId(#[from] BadRevocationId),
    /// The shared store (its URL without the password) refused or could not be reached.
    #[error("{store}: {source}")]
    Store {
        store: String,
        source: redis::RedisError,
    },
    /// `unrevoke` of an id that was not revoked.
    #[error("{0} was not revoked")]
    NotRevoked(String),
    /// The command's runtime could not start.
    #[error("{0}")]
    Runtime(#[source] std::io::Error),
}

impl RevokeError {
    fn store(url: &str) -> impl Fn(redis::RedisError) -> RevokeError + '_ {
        move |source| RevokeError::Store {
            store: redact_url(url),
            source,
        }
    }
}

async fn connection(url: &str) -> Result<redis::aio::MultiplexedConnection, RevokeError> {
    let fail = RevokeError::store(url);
    let client = redis::Client::open(url).map_err(&fail)?;
    let cfg = redis::AsyncConnectionConfig::new()
        .set_connection_timeout(Some(Duration::from_secs(5)))
        .set_response_timeout(Some(Duration::from_secs(5)));
    client
        .get_multiplexed_async_connection_with_config(&cfg)
        .await
        .map_err(fail)
}

/// Revokes `id` under `prefix` in the server at `url` for `ttl` (for ever when `None`), and tells
/// every node.
pub async fn revoke(
    url: &str,
    prefix: &str,
    id: &str,
    ttl: Option<Duration>,
) -> Result<Revoked, RevokeError> {
    check_id(id)?;
    let until = ttl.map(|t| now_ms().saturating_add(t.as_millis() as u64));
    let score = until.map_or_else(|| "+inf".to_string(), |u| u.to_string());
    let mut con = connection(url).await?;
    let k = key(prefix);
    redis::pipe()
        .zadd(&k, id, &score)
        .ignore()
        .zrembyscore(&k, "-inf", now_ms())
        .ignore()
        .publish(
            &k,
            format!("+{} {id}", until.map_or("inf".into(), |u| u.to_string())),
        )
        .ignore()
        .query_async::<()>(&mut con)
        .await
        .map_err(RevokeError::store(url))?;
    Ok(Revoked {
        id: id.to_string(),
        until,
    })
}

/// Ends the revocation of `id`; whether there was one.
pub async fn unrevoke(url: &str, prefix: &str, id: &str) -> Result<bool, RevokeError> {
    check_id(id)?;
    let mut con = connection(url).await?;
    let k = key(prefix);
    let (removed,): (u32,) = redis::pipe()
        .zrem(&k, id)
        .publish(&k, format!("-{id}"))
        .ignore()
        .query_async(&mut con)
        .await
        .map_err(RevokeError::store(url))?;
    Ok(removed > 0)
}

/// The revocations in force under `prefix`, soonest to end first.
pub async fn list(url: &str, prefix: &str) -> Result<Vec<Revoked>, RevokeError> {
    let mut con = connection(url).await?;
    let all: Vec<(String, f64)> = con
        .zrangebyscore_withscores(key(prefix), format!("({}", now_ms()), "+inf")
        .await
        .map_err(RevokeError::store(url))?;
    Ok(all
        .into_iter()
        .map(|(id, score)| Revoked {
            id,
            until: until_of(score),
        })
        .collect())
}

/// Where the revocations of `portcullis access revoke|unrevoke|revocations` are kept.
#[derive(clap::Args, Debug, Clone)]
pub struct StoreArgs {
    /// The shared store: redis://[user:password@]host[:port][/db] or rediss://… (the profile's
    /// `revocations.redis`).
    #[arg(long)]
    pub store: String,
    /// The profile's `revocations.keyPrefix`.
    #[arg(long, default_value = "portcullis:")]
    pub key_prefix: String,
}

/// Text that is not a TTL; `Display` quotes it and says what is expected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BadTtl {
    #[error("{0:?}: a TTL is a number of seconds, or N with s, m, h or d")]
    NotANumber(String),
    #[error("{0:?}: the unit must be s, m, h or d")]
    Unit(String),
    #[error("{0:?}: a TTL must be at least one second")]
    Zero(String),
}

/// A duration given as seconds, or with a unit: `90`, `90s`, `15m`, `12h`, `30d`.
pub fn parse_ttl(s: &str) -> Result<Duration, BadTtl> {
    let (n, unit) = match s.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => s.split_at(i),
        None => (s, "s"),
    };
    let n: u64 = n.parse().map_err(|_| BadTtl::NotANumber(s.to_string()))?;
    let secs = match unit {
        "s" => n,
        "m" => n.saturating_mul(60),
        "h" => n.saturating_mul(3600),
        "d" => n.saturating_mul(86_400),
        _ => return Err(BadTtl::Unit(s.to_string())),
    };
    if secs == 0 {
        return Err(BadTtl::Zero(s.to_string()));
    }
    Ok(Duration::from_secs(secs))
}

fn until_text(until: Option<u64>) -> String {
    match until {
        Some(ms) => format!("until {}", portcullis_support::iso8601_utc(ms / 1000)),
        None => "with no end".into(),
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, RevokeError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(RevokeError::Runtime)
}

/// `portcullis access revoke ID [--ttl T]`: the line to print.
pub fn revoke_cli(
    store: &StoreArgs,
    id: &str,
    ttl: Option<Duration>,
) -> Result<String, RevokeError> {
    let r = runtime()?.block_on(revoke(&store.store, &store.key_prefix, id, ttl))?;
    Ok(format!("revoked {} {}\n", r.id, until_text(r.until)))
}

/// `portcullis access unrevoke ID`.
pub fn unrevoke_cli(store: &StoreArgs, id: &str) -> Result<String, RevokeError> {
    match runtime()?.block_on(unrevoke(&store.store, &store.key_prefix, id))? {
        true => Ok(format!("{id} is no longer revoked\n")),
        false => Err(RevokeError::NotRevoked(id.to_string())),
    }
}

/// `portcullis access revocations`: one line per revocation in force.
pub fn list_cli(store: &StoreArgs) -> Result<String, RevokeError> {
    let all = runtime()?.block_on(list(&store.store, &store.key_prefix))?;
    Ok(all
        .iter()
        .map(|r| format!("{} {}\n", r.id, until_text(r.until)))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ttls_take_units() {
        assert_eq!(parse_ttl("90"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_ttl("15m"), Ok(Duration::from_secs(900)));
        assert_eq!(parse_ttl("2d"), Ok(Duration::from_secs(172_800)));
        for bad in ["", "0", "5w", "m", "-3"] {
            assert!(parse_ttl(bad).is_err(), "{bad}");
        }
    }
}
