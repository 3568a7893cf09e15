//! The fleet event store on PostgreSQL (`--events-db postgres://…`): one table, `fleet_events`,
//! keyed by (device, support id) so a collection repeated after a failure stores nothing twice,
//! with an index per search criterion (support id, time, device, policy, violation and signature
//! arrays, client address) and the controller's item as `jsonb`. Connections come from a
//! deadpool-postgres pool, over TLS when the URL's `sslmode` asks (rustls, the server's certificate
//! verified); searches are one statement built from the criteria given (so the
//! planner sees only real conditions), newest first, with the total matching count.
//! Imports: tokio-postgres, deadpool-postgres, tokio-postgres-rustls, `support`, `super::{FleetEvent, Search, Found,
//! Retention}`.

use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;
use serde_json::Value;
use tokio_postgres::types::ToSql;
use tokio_postgres_rustls::MakeRustlsConnect;

use super::{FleetEvent, Found, Retention, Search};
use crate::support::{now_micros, redact_url};

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
}

fn failed(label: &str) -> impl Fn(&dyn std::fmt::Display) -> String + '_ {
    move |e| format!("{label}: {e}")
}

/// The last segment of a policy fullPath (its name).
fn policy_name(fp: &str) -> &str {
    fp.rsplit('/').next().unwrap_or(fp)
}

/// TLS towards the database: its certificate must chain to the CA certificates of `ca_file` (PEM)
/// or, without one, to the built-in web roots, and name the host of the URL.
fn tls(ca_file: Option<&Path>) -> Result<MakeRustlsConnect, String> {
    let mut roots = rustls::RootCertStore::empty();
    match ca_file {
        Some(p) => {
            let pem = std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()))?;
            for c in CertificateDer::pem_slice_iter(&pem) {
                roots
                    .add(c.map_err(|e| format!("{}: {e}", p.display()))?)
                    .map_err(|e| format!("{}: {e}", p.display()))?;
            }
            if roots.is_empty() {
                return Err(format!("{}: no PEM certificate", p.display()));
            }
        }
        None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
    }
    let cfg = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| e.to_string())?
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
    ) -> Result<Postgres, String> {
        let label = redact_url(url);
        let cfg = tokio_postgres::Config::from_str(url).map_err(|e| format!("{label}: {e}"))?;
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
            .map_err(|e| format!("{label}: {e}"))?;
        let pg = Postgres { pool, label };
        let client = pg.client().await?;
        client
            .batch_execute(SCHEMA)
            .await
            .map_err(|e| failed(&pg.label)(&e))?;
        Ok(pg)
    }

    async fn client(&self) -> Result<deadpool_postgres::Object, String> {
        self.pool.get().await.map_err(|e| failed(&self.label)(&e))
    }

    pub async fn insert(&self, events: &[FleetEvent]) -> Result<usize, String> {
        let fail = failed(&self.label);
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(|e| fail(&e))?;
        let stmt = tx.prepare_cached(INSERT).await.map_err(|e| fail(&e))?;
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
        .map_err(|e| fail(&e))?;
        tx.commit().await.map_err(|e| fail(&e))?;
        Ok(rows.iter().sum::<u64>() as usize)
    }

    pub async fn search(&self, q: &Search) -> Result<Found, String> {
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
        let (top, skip) = (q.top as i64, q.skip as i64);
        params.push(Box::new(top));
        params.push(Box::new(skip));
        let sql = format!(
            "SELECT item, count(*) OVER () FROM fleet_events {filter} \
             ORDER BY time_micros DESC, device, support_id LIMIT ${} OFFSET ${}",
            params.len() - 1,
            params.len()
        );
        let client = self.client().await?;
        let refs: Vec<&(dyn ToSql + Sync)> = params
            .iter()
            .map(|p| p.as_ref() as &(dyn ToSql + Sync))
            .collect();
        let rows = client
            .query(&sql, &refs)
            .await
            .map_err(|e| failed(&self.label)(&e))?;
        let mut found = Found {
            total: rows.first().map_or(0, |r| r.get::<_, i64>(1) as u64),
            items: rows.iter().map(|r| r.get::<_, Value>(0)).collect(),
        };
        if found.items.is_empty() && (skip > 0 || top == 0) {
            // No row to carry the window count (past the last page, or no page asked for).
            let count = format!("SELECT count(*) FROM fleet_events {filter}");
            let row = client
                .query_one(&count, &refs[..refs.len() - 2])
                .await
                .map_err(|e| failed(&self.label)(&e))?;
            found.total = row.get::<_, i64>(0) as u64;
        }
        Ok(found)
    }

    pub async fn prune(&self, keep: Retention) -> Result<u64, String> {
        let fail = failed(&self.label);
        let client = self.client().await?;
        let mut removed = 0;
        if !keep.max_age.is_zero() {
            let cutoff = now_micros().saturating_sub(keep.max_age.as_micros() as u64) as i64;
            removed += client
                .execute(
                    "DELETE FROM fleet_events WHERE time_micros < $1",
                    &[&cutoff],
                )
                .await
                .map_err(|e| fail(&e))?;
        }
        if keep.max_events > 0 {
            // The planner's estimate first: counting millions of rows every round is not free.
            let estimate: f32 = client
                .query_one(
                    "SELECT reltuples FROM pg_class WHERE relname = 'fleet_events'",
                    &[],
                )
                .await
                .map_err(|e| fail(&e))?
                .get(0);
            if estimate < 0.0 || estimate as u64 > keep.max_events * 9 / 10 {
                removed += client
                    .execute(
                        "DELETE FROM fleet_events WHERE time_micros < (SELECT time_micros FROM \
                         fleet_events ORDER BY time_micros DESC OFFSET $1 LIMIT 1)",
                        &[&(keep.max_events as i64 - 1)],
                    )
                    .await
                    .map_err(|e| fail(&e))?;
            }
        }
        Ok(removed)
    }
}
