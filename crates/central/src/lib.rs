//! The central manager (`portcullis central`): the same admin server as a controller (HTTPS,
//! authentication, roles, error objects, query engine, store) with the `/mgmt/cm/...` task API on
//! top, managing controllers over their REST API.
//!
//! Map: [`client`] calls a controller (pinned certificate, timeouts, bounded retries);
//! [`devices`] holds trusted-device records; [`tasks`] is the task state machine every central
//! task shares (store records, 202 answers, PATCH restarts, resume after a restart); the task kinds
//! are [`trust`], [`discovery`], [`import`] (with [`conflicts`]) and [`deploy`];
//! [`device_resolver`] serves the device groups and the machine-id resolver; [`modules`] what each
//! module reads from a device; [`config`] the working and current copies of imported objects;
//! [`events`] collects the controllers' security events into one searchable store. Other modules
//! add routes through [`install`] (see docs/central.md).

mod client;
mod config;
mod conflicts;
mod deploy;
mod device_resolver;
mod devices;
mod discovery;
pub mod events;
#[cfg(any(test, fuzzing))]
mod fuzz;
mod import;
mod licensing;
mod modules;
mod task_api;
mod tasks;
mod trust;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

pub use client::{Auth, CallLimits, ClientError, ControllerClient};
pub use devices::Device;
#[cfg(fuzzing)]
pub use fuzz::body as fuzz_body;
use portcullis_admin::Route;
use portcullis_admin::{ConfigError, MgmtConfig, MgmtState};
use portcullis_admin::{MgmtError, MgmtResult};
use portcullis_store::Store;

/// Version the central manager reports (f5-sdk's BIG-IQ support needs ≥ 5.3.0).
pub const VERSION: &str = "8.3.0";
/// Product name the central manager reports.
pub const PRODUCT: &str = "BIG-IQ";
/// The admin port of `portcullis central` by default: not `serve`'s 8443, so a central manager
/// and a controller run side by side on one host.
pub const DEFAULT_PORT: u16 = 9443;

/// The `central` section of the config file: outbound call limits and task retention.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OutboundConfig {
    /// Per-attempt timeout of a call to a controller, in seconds.
    pub timeout_secs: u64,
    /// Extra attempts when a controller cannot be reached.
    pub retries: u32,
    /// Back-off before the first retry, in milliseconds (doubled each time).
    pub backoff_ms: u64,
    /// Tasks kept per task collection.
    pub max_tasks: usize,
    /// The fleet event store and its collection.
    pub events: events::EventsConfig,
}

impl Default for OutboundConfig {
    fn default() -> Self {
        let l = CallLimits::default();
        OutboundConfig {
            timeout_secs: l.timeout.as_secs(),
            retries: l.retries,
            backoff_ms: l.backoff.as_millis() as u64,
            max_tasks: tasks::MAX_TASKS,
            events: events::EventsConfig::default(),
        }
    }
}

impl OutboundConfig {
    pub fn limits(&self) -> CallLimits {
        CallLimits {
            timeout: Duration::from_secs(self.timeout_secs.max(1)),
            retries: self.retries.min(10),
            backoff: Duration::from_millis(self.backoff_ms.min(60_000)),
        }
    }
}

/// The `portcullis central --config FILE` file (JSON); flags override it.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CentralConfig {
    pub admin_listen: Option<SocketAddr>,
    pub data_dir: Option<PathBuf>,
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
    /// The admin server's tunables as for `serve`; `version`/`product` default to the central
    /// manager's ([`VERSION`], [`PRODUCT`]).
    pub mgmt: Option<serde_json::Map<String, Value>>,
    pub central: OutboundConfig,
}

impl CentralConfig {
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        ConfigError::read_json(path)
    }

    /// The admin server's configuration with the central manager's version and product.
    pub fn mgmt_config(&self) -> Result<MgmtConfig, ConfigError> {
        let mut m = self.mgmt.clone().unwrap_or_default();
        m.entry("version").or_insert(Value::from(VERSION));
        m.entry("product").or_insert(Value::from(PRODUCT));
        serde_json::from_value(Value::Object(m)).map_err(|source| ConfigError::Section {
            section: "mgmt",
            source,
        })
    }
}

/// What the central manager's handlers share: found with [`state`] from any handler.
pub struct Central {
    pub store: Arc<Store>,
    /// Timeouts and retries of every outbound call.
    pub limits: CallLimits,
    /// Where task runners are spawned.
    pub rt: tokio::runtime::Handle,
    /// The central manager's own machine id (names the account created on trusted devices).
    pub machine_id: String,
    /// Task store keys whose runner is live in this process (a task never runs twice at once).
    pub running: parking_lot::Mutex<std::collections::HashSet<String>>,
    /// The task kinds registered with `tasks::register` (resumed after a restart).
    pub kinds: parking_lot::RwLock<Vec<&'static tasks::TaskKind>>,
    /// Tasks kept per collection (the oldest ended ones are removed beyond).
    pub max_tasks: usize,
}

/// The central manager's state attached to `st`, or 503 when `install` did not run.
pub fn state(st: &MgmtState) -> MgmtResult<Arc<Central>> {
    st.attached::<Central>().ok_or_else(|| {
        MgmtError::new(
            http::StatusCode::SERVICE_UNAVAILABLE,
            "The central manager's task runner is not running on this node.",
        )
    })
}

/// Every fixed route of the central manager (checked before the controller's own routes).
pub static ROUTES: &[Route] = &[
    Route {
        path: "/mgmt/shared/resolver/device-groups",
        prefix: true,
        handler: device_resolver::device_groups,
    },
    Route {
        path: "/mgmt/cm/system/machineid-resolver",
        prefix: true,
        handler: device_resolver::machine_ids,
    },
    Route {
        path: "/mgmt/cm/global/tasks/device-trust",
        prefix: true,
        handler: trust::handle,
    },
    Route {
        path: "/mgmt/cm/global/tasks/device-discovery",
        prefix: true,
        handler: discovery::handle,
    },
    Route {
        path: "/mgmt/cm/adc-core/tasks/declare-mgmt-authority",
        prefix: true,
        handler: import::handle,
    },
    Route {
        path: "/mgmt/cm/asm/tasks/declare-mgmt-authority",
        prefix: true,
        handler: import::handle,
    },
    Route {
        path: "/mgmt/cm/firewall/tasks/declare-mgmt-authority",
        prefix: true,
        handler: import::handle,
    },
    Route {
        path: "/mgmt/cm/adc-core/tasks/deploy-configuration",
        prefix: true,
        handler: deploy::handle,
    },
    Route {
        path: "/mgmt/cm/asm/tasks/deploy-configuration",
        prefix: true,
        handler: deploy::handle,
    },
    Route {
        path: "/mgmt/cm/firewall/tasks/deploy-configuration",
        prefix: true,
        handler: deploy::handle,
    },
    Route {
        path: "/mgmt/cm/adc-core/working-config",
        prefix: true,
        handler: config::handle,
    },
    Route {
        path: "/mgmt/cm/asm/working-config",
        prefix: true,
        handler: config::handle,
    },
    Route {
        path: "/mgmt/cm/firewall/working-config",
        prefix: true,
        handler: config::handle,
    },
    Route {
        path: "/mgmt/cm/adc-core/current-config",
        prefix: true,
        handler: config::handle,
    },
    Route {
        path: "/mgmt/cm/asm/current-config",
        prefix: true,
        handler: config::handle,
    },
    Route {
        path: "/mgmt/cm/firewall/current-config",
        prefix: true,
        handler: config::handle,
    },
];

/// Turns an opened admin state into a central manager: attaches [`Central`], registers the
/// `/mgmt/cm` routes, and resumes the tasks a previous run left in progress. Must run inside a
/// tokio runtime. Other central modules add their routes here, with one `x::install(st)` line.
pub fn install(st: &MgmtState, limits: CallLimits) -> MgmtResult<()> {
    install_with(st, limits, tasks::MAX_TASKS)
}

/// [`install`] with the number of tasks kept per collection (`central.max_tasks`).
pub fn install_with(st: &MgmtState, limits: CallLimits, max_tasks: usize) -> MgmtResult<()> {
    let machine_id = st
        .meta("machineId")
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let rt = tokio::runtime::Handle::try_current()
        .map_err(|e| MgmtError::internal(format!("central manager outside a runtime: {e}")))?;
    let c = Arc::new(Central {
        store: st.store.clone(),
        limits,
        rt,
        machine_id,
        running: Default::default(),
        kinds: Default::default(),
        max_tasks: max_tasks.max(1),
    });
    tasks::register(&c, &trust::KIND);
    tasks::register(&c, &discovery::KIND);
    for k in import::KINDS.iter().chain(deploy::KINDS) {
        tasks::register(&c, k);
    }
    st.attach(c);
    st.extend(ROUTES, &[]);
    licensing::install(st)?;
    tasks::resume_all(st)?;
    Ok(())
}

/// Everything `portcullis central` needs, resolved from flags and the config file.
pub struct CentralArgs {
    pub admin_listen: SocketAddr,
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
    pub mgmt: MgmtConfig,
    pub limits: CallLimits,
    pub max_tasks: usize,
    pub events: events::EventsConfig,
}
