//! Which events go where: for every virtual server, the `application` entries of its
//! `securityLogProfiles` decide whether its events are kept in the local store and which remote
//! destinations (syslog servers, files) receive them. The table is rebuilt when the
//! configuration generation changes; destinations whose settings did not change keep their
//! sender (and its TCP connection).

use std::collections::HashMap;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use serde_json::Value;
use tokio::runtime::Handle;

use super::config::{LogApp, Remote, RequestType, Transport, parse_app};
use super::sender::{self, Framing, MAX_DATAGRAM, Output};
use super::siem::{self, HecMeta};
use super::syslog::{self, Header};
use crate::asm::policies::{POLICIES, virtuals_of};
use portcullis_admin::MgmtState;
use portcullis_admin::children;
use portcullis_engine::{Action, SecurityEvent};
use portcullis_store::Table as StoreTable;

/// Built-in profiles (names with spaces, so never stored objects): local storage only.
pub const BUILTIN_PROFILES: &[&str] = &["/Common/Log illegal requests", "/Common/Log all requests"];

/// The collection of security log profiles.
pub const PROFILE_PATH: &str = "/mgmt/tm/security/log/profile";

/// A table is rebuilt when the configuration generation changes, and at least this often (for
/// writers that do not count generations).
pub const MAX_TABLE_AGE: Duration = Duration::from_secs(1);

/// The fullPath of the ASM policy attached to each virtual server.
pub type Attached = HashMap<String, String>;

/// Reads which policy is attached to which virtual server (fresh: policies are attached and
/// applied outside the configuration generation).
pub fn attached_policies(st: &MgmtState) -> Attached {
    let mut out = Attached::new();
    for p in children(st, POLICIES).unwrap_or_default() {
        let Some(full_path) = p.get("fullPath").and_then(Value::as_str) else {
            continue;
        };
        for v in virtuals_of(&p) {
            out.insert(v, full_path.to_string());
        }
    }
    out
}

/// The policy fullPath of `ev` given the attachments `attached`.
pub fn policy_of(ev: &SecurityEvent, attached: &Attached) -> String {
    syslog::policy_path(
        &ev.policy,
        attached.get(&ev.virtual_server).map(String::as_str),
    )
}

/// One `application` entry with its senders.
pub struct Destination {
    /// The fullPath of the log profile the entry belongs to.
    profile: String,
    app: LogApp,
    outputs: Vec<Output>,
    hostname: Arc<str>,
    procid: Arc<str>,
}

impl Destination {
    fn wants(&self, ev: &SecurityEvent) -> bool {
        self.app.request_type == RequestType::Illegal || ev.action == Action::Block
    }

    /// Formats and queues `ev` (decided by the policy `policy`) for every sender of this entry
    /// (never waits).
    pub fn send(&self, ev: &SecurityEvent, policy: &str) {
        if self.outputs.is_empty() || !self.wants(ev) {
            return;
        }
        let udp = matches!(
            self.app.remote,
            Remote::Syslog {
                transport: Transport::Udp,
                ..
            }
        );
        let max_len = if udp {
            self.app.max_entry.min(MAX_DATAGRAM)
        } else {
            self.app.max_entry
        };
        let h = Header {
            facility: self.app.facility,
            hostname: &self.hostname,
            app_name: "portcullis",
            procid: &self.procid,
            max_len,
            policy,
        };
        let msg = match &self.app.remote {
            Remote::JsonLines { .. } => siem::json_event(ev, &h).to_string(),
            Remote::Hec(hec) => siem::hec_event(
                ev,
                &h,
                &HecMeta {
                    index: hec.index.as_deref(),
                    source: &hec.source,
                    sourcetype: &hec.sourcetype,
                },
            ),
            _ => syslog::message(&h, ev, &self.app.format),
        };
        for o in &self.outputs {
            o.send(&msg);
        }
    }

    pub fn outputs(&self) -> &[Output] {
        &self.outputs
    }

    pub fn profile(&self) -> &str {
        &self.profile
    }

    /// The entry's name.
    pub fn name(&self) -> &str {
        &self.app.name
    }
}

/// What happens to the events of one virtual server.
#[derive(Default)]
pub struct VirtualLog {
    /// Request types kept locally; empty: not stored.
    local: Vec<RequestType>,
    pub remote: Vec<Arc<Destination>>,
}

/// The routing table of one configuration generation.
pub struct Table {
    generation: u64,
    built: Instant,
    virtuals: HashMap<String, VirtualLog>,
    /// Destinations by (profile, entry settings), for reuse by the next table.
    by_key: HashMap<String, Arc<Destination>>,
}

impl Table {
    /// Whether `ev` goes to the local store: yes for a virtual without log profiles (or one
    /// unknown to the configuration), else when one of its entries keeps it locally.
    pub fn stores_locally(&self, ev: &SecurityEvent) -> bool {
        match self.virtuals.get(&ev.virtual_server) {
            None => true,
            Some(v) => v
                .local
                .iter()
                .any(|t| *t == RequestType::Illegal || ev.action == Action::Block),
        }
    }

    /// The remote destinations of `virtual_server`.
    pub fn remote(&self, virtual_server: &str) -> &[Arc<Destination>] {
        self.virtuals
            .get(virtual_server)
            .map_or(&[], |v| v.remote.as_slice())
    }

    /// Every remote destination in use (each once, however many virtuals share it).
    pub fn destinations(&self) -> impl Iterator<Item = &Arc<Destination>> {
        self.by_key.values()
    }
}

/// The routing table, rebuilt on configuration changes; shared by the store writer and the
/// remote-log router. It holds the state weakly: the state owns the data plane whose event sink
/// feeds these threads, so a strong reference would keep both alive forever.
pub struct Routing {
    st: Weak<MgmtState>,
    rt: Handle,
    hostname: Arc<str>,
    procid: Arc<str>,
    current: Mutex<Option<Arc<Table>>>,
}

fn hostname() -> String {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "-".into())
}

impl Routing {
    /// Senders are spawned on `rt`.
    pub fn new(st: &Arc<MgmtState>, rt: Handle) -> Routing {
        Routing {
            st: Arc::downgrade(st),
            rt,
            hostname: hostname().into(),
            procid: std::process::id().to_string().into(),
            current: Mutex::new(None),
        }
    }

    /// Which policy is attached to which virtual server, now.
    pub fn attached(&self) -> Attached {
        self.state()
            .map(|s| attached_policies(&s))
            .unwrap_or_default()
    }

    /// The management state, while it exists.
    pub fn state(&self) -> Option<Arc<MgmtState>> {
        self.st.upgrade()
    }

    fn generation(st: &MgmtState) -> u64 {
        st.store
            .get(StoreTable::Meta, "generation")
            .ok()
            .flatten()
            .and_then(|v| v.as_u64())
            .unwrap_or(0)
    }

    /// The table of the current configuration (rebuilt if the configuration changed).
    pub fn current(&self) -> Arc<Table> {
        let Some(st) = self.state() else {
            return Arc::new(Table {
                generation: 0,
                built: Instant::now(),
                virtuals: HashMap::new(),
                by_key: HashMap::new(),
            });
        };
        let g = Self::generation(&st);
        let mut cur = self.current.lock();
        if let Some(t) = cur.as_ref()
            && t.generation == g
            && t.built.elapsed() < MAX_TABLE_AGE
        {
            return t.clone();
        }
        let t = Arc::new(self.build(&st, g, cur.as_deref()));
        *cur = Some(t.clone());
        t
    }

    fn destination(&self, st: &MgmtState, profile: &str, app: LogApp) -> Destination {
        let q = st.cfg.events_queue;
        let outputs = match &app.remote {
            Remote::None => Vec::new(),
            Remote::Syslog { servers, transport } => servers
                .iter()
                .map(|a| match transport {
                    Transport::Udp => sender::udp(&self.rt, *a, q),
                    t => sender::stream(&self.rt, *a, t, Framing::OctetCounted, q),
                })
                .collect(),
            Remote::JsonLines { servers, transport } => servers
                .iter()
                .map(|a| sender::stream(&self.rt, *a, transport, Framing::Line, q))
                .collect(),
            Remote::Hec(hec) => match super::hec::sender(&self.rt, hec, q) {
                Ok(o) => vec![o],
                Err(e) => {
                    tracing::error!(url = %hec.url, "security log: HEC endpoint not usable: {e}");
                    Vec::new()
                }
            },
            Remote::File(name) => {
                let path = st.cfg.data_dir.join("security-logs").join(name);
                vec![sender::file(&self.rt, path, q)]
            }
        };
        Destination {
            profile: profile.to_string(),
            app,
            outputs,
            hostname: self.hostname.clone(),
            procid: self.procid.clone(),
        }
    }

    fn build(&self, st: &MgmtState, generation: u64, old: Option<&Table>) -> Table {
        let mut by_key = HashMap::new();
        let mut virtuals = HashMap::new();
        let vss = children(st, "/mgmt/tm/ltm/virtual").unwrap_or_default();
        for vs in vss {
            let Some(full_path) = vs.get("fullPath").and_then(Value::as_str) else {
                continue;
            };
            let Some(profiles) = vs.get("securityLogProfiles").and_then(Value::as_array) else {
                continue;
            };
            if profiles.is_empty() {
                continue;
            }
            let mut log = VirtualLog::default();
            for p in profiles.iter().filter_map(Value::as_str) {
                if BUILTIN_PROFILES.contains(&p) {
                    log.local.push(RequestType::Illegal);
                    continue;
                }
                let key = format!("{PROFILE_PATH}/{}/application", p.replace('/', "~"));
                let entries = children(st, &key).unwrap_or_default();
                let apps = entries.iter().filter_map(|m| {
                    let name = m.get("name").and_then(Value::as_str).unwrap_or_default();
                    parse_app(m, name)
                        .inspect_err(
                            |e| tracing::warn!(profile = %p, "log profile entry not usable: {e}"),
                        )
                        .ok()
                });
                for app in apps {
                    if app.local_storage {
                        log.local.push(app.request_type);
                    }
                    if app.remote == Remote::None {
                        continue;
                    }
                    let dkey = format!("{p}\u{0}{app:?}");
                    let d = by_key
                        .get(&dkey)
                        .or_else(|| old.and_then(|o| o.by_key.get(&dkey)))
                        .cloned()
                        .unwrap_or_else(|| Arc::new(self.destination(st, p, app)));
                    by_key.insert(dkey, d.clone());
                    log.remote.push(d);
                }
            }
            virtuals.insert(full_path.to_string(), log);
        }
        Table {
            generation,
            built: Instant::now(),
            virtuals,
            by_key,
        }
    }
}
