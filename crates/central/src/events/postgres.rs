//! The fleet event store on PostgreSQL (`--events-db postgres://…`): one table, `fleet_events`,
//! keyed by (device, support id) so a collection repeated after a failure stores nothing twice,
//! with an index per search criterion (support id, time, device, policy, violation and signature
//! arrays, client address) and the controller's item as `jsonb`. Connections come from a
//! deadpool-postgres pool, over TLS when the URL's `sslmode` asks (rustls, the server's certificate
//! verified); a search is a page and a count, built from the criteria given (so the planner sees
//! only real conditions), newest first.

use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;
use serde_json::Value;
use tokio_postgres::types::ToSql;
use tokio_postgres_rustls::MakeRustlsConnect;

use super::{EventStoreError, FleetEvent, Found, Retention, Search};
use portcullis_support::{now_micros, redact_url};

/// The schema, idempotent (run at every start).
const SCHEMA: &str = r"
CREATE TABLE IF NOT EXISTS fleet_events (
    device         text     NOT NULL,
    support_id     text     NOT NULL,
    time_micros    bigint   NOT NULL,
    client_ip      inet,
    policy         text     NOT NULL,
    policy_name    text     NOT NULL,
    virtual_server text     NOT NULL,
    violations     text[]   NOT NULL,
    signatures     bigint[] NOT NULL,
    item           jsonb    NOT NULL,
    PRIMARY KEY (device, support_id)
);
CREATE INDEX IF NOT EXISTS fleet_events_support_id ON fleet_events (support_id);
CREATE INDEX IF NOT EXISTS fleet_events_time ON fleet_events (time_micros DESC);
CREATE INDEX IF NOT EXISTS fleet_events_device_time ON fleet_events (device, time_micros DESC);
CREATE INDEX IF NOT EXISTS fleet_events_policy_time ON fleet_events (policy, time_micros DESC);
CREATE INDEX IF NOT EXISTS fleet_events_policy_name_time ON fleet_events (policy_name, time_micros DESC);
CREATE INDEX IF NOT EXISTS fleet_events_client_time ON fleet_events (client_ip, time_micros DESC);
CREATE INDEX IF NOT EXISTS fleet_events_violations ON fleet_events USING gin (violations);
CREATE INDEX IF NOT EXISTS fleet_events_signatures ON fleet_events USING gin (signatures);
";

const INSERT: &str = "INSERT INTO fleet_events (device, support_id, time_micros, client_ip, policy, \
    policy_name, virtual_server, violations, signatures, item) \
    VALUES ($1, $2, $3, $4::text::inet, $5, $6, $7, $8, $9, $10) \
    ON CONFLICT (device, support_id) DO NOTHING";

pub struct Postgres {
    pool: Pool,
    label: String,
    /// Rows at the last ANALYZE, and inserted since (see [`Postgres::insert`]).
    analyzed: AtomicU64,
    inserted: AtomicU64,
}

/// Rows a new table takes before its first ANALYZE.
const FIRST_ANALYZE: u64 = 10_000;

/// The database at `label` (its URL, redacted) failed with `e`.
fn failed(label: &str, e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> EventStoreError {
    EventStoreError::Postgres {
        label: label.to_string(),
        source: e.into(),
    }
}

/// The last segment of a policy fullPath (its name).
fn policy_name(full_path: &str) -> &str {
    full_path.rsplit('/').next().unwrap_or(full_path)
}

/// TLS towards the database: its certificate must chain to the CA certificates of `ca_file` (PEM)
/// or, without one, to the built-in web roots, and name the host of the URL.
fn tls(ca_file: Option<&Path>) -> Result<MakeRustlsConnect, EventStoreError> {
    let mut roots = rustls::RootCertStore::empty();
    match ca_file {
        Some(p) => {
            let bad = |e: Box<dyn std::error::Error + Send + Sync>| EventStoreError::CaFile {
                path: p.to_path_buf(),
                source: e,
            };
            let pem = std::fs::read(p).map_err(|e| bad(e.into()))?;
            for c in CertificateDer::pem_slice_iter(&pem) {
                roots
                    .add(c.map_err(|e| bad(e.into()))?)
                    .map_err(|e| bad(e.into()))?;
            }
            if roots.is_empty() {
                return Err(EventStoreError::NoCertificate {
                    path: p.to_path_buf(),
                });
            }
        }
        None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
    }
    let cfg = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(EventStoreError::Tls)?
    .with_root_certificates(roots)
    .with_no_client_auth();
    Ok(MakeRustlsConnect::new(cfg))
}

impl Postgres {
    /// Connects a pool of `size` to `url` (TLS as its `sslmode` says, verified with `ca_file`) and
    /// creates the schema.
    pub async fn connect(
        url: &str,
        ca_file: Option<&Path>,
        size: usize,
    ) -> Result<Postgres, EventStoreError> {
        let label = redact_url(url);
        let cfg = tokio_postgres::Config::from_str(url).map_err(|e| failed(&label, e))?;
        let mgr = Manager::from_config(
            cfg,
            tls(ca_file)?,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(mgr)
            .max_size(size.max(1))
            .build()
            .map_err(|e| failed(&label, e))?;
        let pg = Postgres {
            pool,
            label,
            analyzed: AtomicU64::new(0),
            inserted: AtomicU64::new(0),
        };
        let client = pg.client().await?;
        client
            .batch_execute(SCHEMA)
            .await
            .map_err(|e| failed(&pg.label, e))?;
        pg.analyze(&client).await?;
        Ok(pg)
    }

    /// Refreshes the planner's statistics of the table. Without them (a new table, or one that
    /// grew fast, as when a fleet's backlog is collected) the planner walks the time index for a
    /// search by support id instead of using its index: tens of milliseconds instead of a fraction
    /// of one. Autovacuum keeps them current in the long run; this covers the minutes before it.
    async fn analyze(&self, client: &deadpool_postgres::Object) -> Result<(), EventStoreError> {
        client
            .batch_execute("ANALYZE fleet_events")
            .await
            .map_err(|e| failed(&self.label, e))?;
        let rows = self.planner_rows(client).await?;
        self.analyzed.store(rows.max(0.0) as u64, Ordering::Relaxed);
        self.inserted.store(0, Ordering::Relaxed);
        Ok(())
    }

    async fn client(&self) -> Result<deadpool_postgres::Object, EventStoreError> {
        self.pool.get().await.map_err(|e| failed(&self.label, e))
    }

    /// The planner's row count of the table (-1 before its first ANALYZE).
    async fn planner_rows(
        &self,
        client: &deadpool_postgres::Object,
    ) -> Result<f32, EventStoreError> {
        Ok(client
            .query_one(
                "SELECT reltuples FROM pg_class WHERE relname = 'fleet_events'",
                &[],
            )
            .await
            .map_err(|e| failed(&self.label, e))?
            .get(0))
    }

    pub async fn insert(&self, events: &[FleetEvent]) -> Result<usize, EventStoreError> {
        let mut client = self.client().await?;
        let tx = client
            .transaction()
            .await
            .map_err(|e| failed(&self.label, e))?;
        let stmt = tx
            .prepare_cached(INSERT)
            .await
            .map_err(|e| failed(&self.label, e))?;
        // Sent together: tokio-postgres pipelines the statements of one connection.
        let rows = futures_util::future::try_join_all(events.iter().map(|e| {
            let client_ip = e
                .client_ip
                .parse::<std::net::IpAddr>()
                .ok()
                .map(|ip| ip.to_string());
            let stmt = stmt.clone();
            let tx = &tx;
            async move {
                tx.execute(
                    &stmt,
                    &[
                        &e.device,
                        &e.support_id,
                        &(e.time_micros as i64),
                        &client_ip,
                        &e.policy,
                        &policy_name(&e.policy),
                        &e.virtual_server,
                        &e.violations,
                        &e.signatures,
                        &e.item,
                    ],
                )
                .await
            }
        }))
        .await
        .map_err(|e| failed(&self.label, e))?;
        tx.commit().await.map_err(|e| failed(&self.label, e))?;
        let added = rows.iter().sum::<u64>();
        // Statistics are refreshed each time the table has doubled since they were taken.
        let since = self.inserted.fetch_add(added, Ordering::Relaxed) + added;
        if since >= self.analyzed.load(Ordering::Relaxed).max(FIRST_ANALYZE) {
            self.analyze(&client).await?;
        }
        Ok(added as usize)
    }

    pub async fn search(&self, q: &Search) -> Result<Found, EventStoreError> {
        let mut cond: Vec<String> = Vec::new();
        let mut params: Vec<Box<dyn ToSql + Sync + Send>> = Vec::new();
        let mut add = |sql: &str, p: Box<dyn ToSql + Sync + Send>| {
            params.push(p);
            cond.push(sql.replace('?', &format!("${}", params.len())));
        };
        if let Some(id) = &q.support_id {
            add("support_id = ?", Box::new(id.clone()));
        }
        if let Some(ids) = &q.devices {
            add("device = ANY(?)", Box::new(ids.clone()));
        }
        if let Some(p) = &q.policy {
            if p.contains('/') {
                add("policy = ?", Box::new(p.clone()));
            } else {
                add("policy_name = ?", Box::new(p.clone()));
            }
        }
        if let Some(v) = &q.violation {
            add("violations @> ARRAY[?]::text[]", Box::new(v.clone()));
        }
        if let Some(s) = q.signature {
            add("signatures @> ARRAY[?]::bigint[]", Box::new(s));
        }
        if let Some(c) = q.client {
            add("client_ip <<= ?::text::inet", Box::new(c.to_string()));
        }
        if let Some(t) = q.since_micros {
            add("time_micros >= ?", Box::new(t as i64));
        }
        if let Some(t) = q.until_micros {
            add("time_micros <= ?", Box::new(t as i64));
        }
        let filter = if cond.is_empty() {
            String::new()
        } else {
            format!("WHERE {}", cond.join(" AND "))
        };
        let count_sql = format!("SELECT count(*) FROM fleet_events {filter}");
        params.push(Box::new(q.top as i64));
        params.push(Box::new(q.skip as i64));
        let page_sql = format!(
            "SELECT item FROM fleet_events {filter} \
             ORDER BY time_micros DESC, device, support_id LIMIT ${} OFFSET ${}",
            params.len() - 1,
            params.len()
        );
        let client = self.client().await?;
        let refs: Vec<&(dyn ToSql + Sync)> = params
            .iter()
            .map(|p| p.as_ref() as &(dyn ToSql + Sync))
            .collect();
        // Two statements, pipelined on one connection: the page walks the time index (or the
        // criterion's) and stops at its end; the count reads no item. One statement with a window
        // count would sort every matching item first.
        let (rows, count) = tokio::try_join!(
            client.query(&page_sql, &refs),
            client.query_one(&count_sql, &refs[..refs.len() - 2]),
        )
        .map_err(|e| failed(&self.label, e))?;
        Ok(Found {
            total: count.get::<_, i64>(0) as u64,
            items: rows.iter().map(|r| r.get::<_, Value>(0)).collect(),
        })
    }

    pub async fn prune(&self, keep: Retention) -> Result<u64, EventStoreError> {
        let client = self.client().await?;
        let mut removed = 0;
        if let Some(cutoff) = keep.cutoff_micros(now_micros()) {
            let cutoff = cutoff as i64;
            removed += client
                .execute(
                    "DELETE FROM fleet_events WHERE time_micros < $1",
                    &[&cutoff],
                )
                .await
                .map_err(|e| failed(&self.label, e))?;
        }
        if keep.max_events > 0 {
            // An estimate first (the planner's, or what this process stored since its last
            // ANALYZE): counting millions of rows every round is not free.
            let planner = self.planner_rows(&client).await?;
            let ours =
                self.analyzed.load(Ordering::Relaxed) + self.inserted.load(Ordering::Relaxed);
            let estimate = (planner.max(0.0) as u64).max(ours);
            if planner < 0.0 || estimate > keep.max_events * 9 / 10 {
                removed += client
                    .execute(
                        "DELETE FROM fleet_events WHERE time_micros < (SELECT time_micros FROM \
                         fleet_events ORDER BY time_micros DESC OFFSET $1 LIMIT 1)",
                        &[&(keep.max_events as i64 - 1)],
                    )
                    .await
                    .map_err(|e| failed(&self.label, e))?;
            }
        }
        Ok(removed)
    }
}
