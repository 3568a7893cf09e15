//! The fleet's security events in one store: the central manager collects the request events of
//! every trusted controller ([`collect`], through each controller's `/mgmt/tm/asm/events/feed`
//! with the pinned certificate and the account the trust created), keeps them in the embedded
//! store ([`embedded`], the default) or PostgreSQL ([`postgres`], `--events-db postgres://…`),
//! prunes them by age and count, and answers one search across the fleet
//! (`/mgmt/cm/asm/events/requests`, [`search`]). docs/central.md describes the whole.

mod collect;
mod embedded;
mod postgres;
pub(crate) mod search;

use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use super::devices::Device;
use portcullis_admin::MgmtState;
pub use portcullis_store::Retention;
use portcullis_store::Store;

pub use postgres::Postgres;

/// The `central.events` section of the config file.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EventsConfig {
    /// `postgres://user:password@host:port/db`; none: the embedded store (`--events-db`).
    pub db: Option<String>,
    /// CA certificates (PEM) the database's certificate must chain to when TLS is used (default:
    /// the built-in web roots).
    pub db_ca_file: Option<std::path::PathBuf>,
    /// Seconds between two collections from a controller.
    pub poll_secs: u64,
    /// Events older than this many seconds are deleted (0: no age bound).
    pub max_age_secs: u64,
    /// Most events kept; the oldest beyond are deleted (0: no count bound).
    pub max_events: u64,
    /// Connections of the PostgreSQL pool.
    pub pool_size: usize,
}

impl Default for EventsConfig {
    fn default() -> Self {
        EventsConfig {
            db: None,
            db_ca_file: None,
            poll_secs: 5,
            max_age_secs: 30 * 86_400,
            max_events: 1_000_000,
            pool_size: 8,
        }
    }
}

impl EventsConfig {
    pub fn retention(&self) -> Retention {
        Retention {
            max_age: Duration::from_secs(self.max_age_secs),
            max_events: self.max_events,
        }
    }
}

/// One collected event: the controller's REST item (with the device added) and the fields the
/// store indexes.
#[derive(Clone, Debug, PartialEq)]
pub struct FleetEvent {
    /// The controller's machine id.
    pub device: String,
    pub support_id: String,
    pub time_micros: u64,
    pub client_ip: String,
    /// The policy's fullPath.
    pub policy: String,
    pub virtual_server: String,
    pub violations: Vec<String>,
    pub signatures: Vec<i64>,
    pub item: Value,
}

impl FleetEvent {
    /// The event of a controller's item (`/mgmt/tm/asm/events/requests` shape); `None` without a
    /// support id.
    pub fn from_item(dev: &Device, mut item: Value) -> Option<FleetEvent> {
        let s = |k: &str| item[k].as_str().unwrap_or_default().to_string();
        let support_id = s("supportId");
        if support_id.is_empty() {
            return None;
        }
        let violations: Vec<String> = item["violations"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v["name"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        let mut signatures: Vec<i64> = item["violations"]
            .as_array()
            .map(|a| {
                a.iter()
                    .flat_map(|v| v["signatureIds"].as_array().cloned().unwrap_or_default())
                    .filter_map(|s| s.as_i64())
                    .collect()
            })
            .unwrap_or_default();
        signatures.sort_unstable();
        signatures.dedup();
        let ev = FleetEvent {
            device: dev.machine_id.clone(),
            time_micros: item["timeMicros"].as_u64().unwrap_or(0),
            client_ip: s("clientIp"),
            policy: s("policyName"),
            virtual_server: s("virtualServerName"),
            support_id,
            violations,
            signatures,
            item: Value::Null,
        };
        if let Some(m) = item.as_object_mut() {
            m.remove("selfLink");
            m.remove("sequence");
            m.insert(
                "device".into(),
                json!({"machineId": dev.machine_id, "hostname": dev.hostname, "address": dev.endpoint()}),
            );
            m.insert("deviceReference".into(), json!({"link": dev.reference()}));
        }
        Some(FleetEvent { item, ..ev })
    }
}

/// A fleet search: every given criterion must hold.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Search {
    pub support_id: Option<String>,
    /// Machine ids (a `device` criterion resolved against the trusted devices).
    pub devices: Option<Vec<String>>,
    /// A policy fullPath, or a bare name matching the last segment of one.
    pub policy: Option<String>,
    pub violation: Option<String>,
    pub signature: Option<i64>,
    /// An address or a CIDR block.
    pub client: Option<portcullis_support::Cidr>,
    pub since_micros: Option<u64>,
    pub until_micros: Option<u64>,
    pub top: usize,
    pub skip: usize,
}

/// What a search found: how many match, and the page asked for (newest first).
#[derive(Debug, Default)]
pub struct Found {
    pub total: u64,
    pub items: Vec<Value>,
}

/// Why the fleet event store cannot be opened or failed an operation; the search API answers it
/// as unavailable, the collector logs it, `central` prints it before it exits.
#[derive(Debug, thiserror::Error)]
pub enum EventStoreError {
    #[error(transparent)]
    Embedded(#[from] portcullis_store::StoreError),
    /// The PostgreSQL database (`label`: its URL, password redacted) refused or failed.
    #[error("{label}: {source}")]
    Postgres {
        label: String,
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The CA file given for the database's certificate cannot be read or parsed.
    #[error("{}: {source}", .path.display())]
    CaFile {
        path: std::path::PathBuf,
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error("{}: no PEM certificate", .path.display())]
    NoCertificate { path: std::path::PathBuf },
    #[error("{0}")]
    Tls(#[source] rustls::Error),
}

/// Why the fleet events cannot be installed on an admin server.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// The admin server has no central manager installed (the admin API's message).
    #[error("{message}")]
    NoCentral { message: String },
    #[error(transparent)]
    Store(#[from] EventStoreError),
}

/// Where the fleet's events are kept.
pub enum EventStore {
    Embedded(embedded::Embedded),
    Postgres(postgres::Postgres),
}

impl EventStore {
    /// The store `cfg` names: PostgreSQL (connected, schema created) or the embedded one in
    /// `store`.
    pub async fn open(
        cfg: &EventsConfig,
        store: Arc<Store>,
    ) -> Result<EventStore, EventStoreError> {
        match &cfg.db {
            Some(url) => Ok(EventStore::Postgres(
                postgres::Postgres::connect(url, cfg.db_ca_file.as_deref(), cfg.pool_size).await?,
            )),
            None => Ok(EventStore::Embedded(embedded::Embedded::new(store))),
        }
    }

    /// Stores `events` (those already stored are skipped); how many were new.
    pub async fn insert(&self, events: &[FleetEvent]) -> Result<usize, EventStoreError> {
        match self {
            EventStore::Embedded(e) => e.insert(events),
            EventStore::Postgres(p) => p.insert(events).await,
        }
    }

    pub async fn search(&self, q: &Search) -> Result<Found, EventStoreError> {
        match self {
            EventStore::Embedded(e) => e.search(q),
            EventStore::Postgres(p) => p.search(q).await,
        }
    }

    /// Deletes what `keep` no longer allows; how many events went.
    pub async fn prune(&self, keep: Retention) -> Result<u64, EventStoreError> {
        match self {
            EventStore::Embedded(e) => e.prune(keep),
            EventStore::Postgres(p) => p.prune(keep).await,
        }
    }

    /// `embedded` or `postgresql`, for the status endpoint.
    pub fn kind(&self) -> &'static str {
        match self {
            EventStore::Embedded(_) => "embedded",
            EventStore::Postgres(_) => "postgresql",
        }
    }
}

/// What the event routes share (attached to the admin state).
pub struct FleetEvents {
    pub store: EventStore,
    pub cfg: EventsConfig,
    pub status: collect::Status,
}

/// Opens the event store, registers the search routes and starts collecting. Call inside the
/// runtime, after `central::install`.
pub async fn install(st: &MgmtState, cfg: EventsConfig) -> Result<(), InstallError> {
    let c = super::state(st).map_err(|e| InstallError::NoCentral { message: e.message })?;
    let store = EventStore::open(&cfg, c.store.clone()).await?;
    let fleet = Arc::new(FleetEvents {
        store,
        cfg,
        status: collect::Status::default(),
    });
    st.attach(fleet.clone());
    st.extend(search::ROUTES, &[]);
    collect::start(c, fleet);
    Ok(())
}
