//! The data plane as a whole: many listeners (one per virtual server), reconciled by
//! [`Topology::apply`]. A listener whose address stays is updated in place (new requests see the
//! new site, new connections the new TLS; requests in flight finish as they started); new
//! addresses are bound; listeners no longer wanted are stopped and drained.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use arc_swap::{ArcSwap, ArcSwapOption};
use parking_lot::Mutex;
use tokio::runtime::Handle;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::access::{Gate, Stores};
use super::handler::{Shared, Site};
use super::listener::{self, Swappable};
use super::topology::{ListenerSpec, ListenerStatus, Topology};
use super::upstream::{Member, Pool};

struct Running {
    name: String,
    state: Arc<Swappable>,
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

/// Runs the listeners of one process. Create it inside a tokio runtime.
pub struct Dataplane {
    shared: Arc<Shared>,
    rt: Handle,
    running: Mutex<HashMap<SocketAddr, Running>>,
    gates: Mutex<HashMap<String, Arc<Gate>>>,
    /// The shared stores (Redis) the listeners' access profiles name, one set for the process.
    stores: Arc<Stores>,
}

impl Dataplane {
    /// A data plane without listeners, spawning its tasks on the current runtime.
    pub fn new(shared: Arc<Shared>) -> Dataplane {
        Dataplane {
            rt: Handle::current(),
            running: Mutex::new(HashMap::new()),
            gates: Mutex::new(HashMap::new()),
            stores: Stores::new(shared.metrics.clone()),
            shared,
        }
    }

    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// The shared stores of the process's access profiles.
    pub fn stores(&self) -> &Arc<Stores> {
        &self.stores
    }

    /// The bound address of listener `name` (useful when it was asked to bind port 0).
    pub fn local_addr(&self, name: &str) -> Option<SocketAddr> {
        self.running
            .lock()
            .iter()
            .find(|(_, r)| r.name == name)
            .map(|(a, _)| *a)
    }

    /// Stops every listener and waits until their connections are drained.
    pub async fn shutdown(&self) {
        let all: Vec<Running> = self.running.lock().drain().map(|(_, r)| r).collect();
        for r in &all {
            let _ = r.stop.send(true);
        }
        for r in all {
            let _ = r.task.await;
        }
    }

    fn site(&self, spec: &ListenerSpec) -> Result<Site, String> {
        let members = spec
            .upstreams
            .iter()
            .map(|u| Member::parse(&u.url, u.healthy).map_err(|e| e.to_string()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Site {
            name: spec.name.clone(),
            engine: spec.engine.clone(),
            pool: Pool::new(members, self.shared.limits.upstream_down_for),
            x_forwarded_for: spec.x_forwarded_for,
            redirect_to_https: spec.redirect_to_https,
            counters: self.shared.metrics.listener(&spec.name),
            access: self.gate(spec),
        })
    }

    /// The access gate of a listener: the running one reconfigured (its caches and rate-limit
    /// buckets survive an apply), a new one, or none.
    fn gate(&self, spec: &ListenerSpec) -> Option<Arc<Gate>> {
        let mut gates = self.gates.lock();
        let Some(profile) = &spec.access else {
            gates.remove(&spec.name);
            return None;
        };
        // A profile naming a shared store starts its connection tasks on the data plane's runtime.
        let _rt = self.rt.enter();
        if let Some(gate) = gates.get(&spec.name) {
            gate.configure(profile.clone());
            return Some(gate.clone());
        }
        let gate = Arc::new(Gate::new(
            profile.clone(),
            self.shared.clients.clone(),
            self.stores.clone(),
        ));
        gates.insert(spec.name.clone(), gate.clone());
        Some(gate)
    }

    /// The access gate of listener `name`, if it has one.
    pub fn access_gate(&self, name: &str) -> Option<Arc<Gate>> {
        self.gates.lock().get(name).cloned()
    }

    fn start(
        &self,
        spec: &ListenerSpec,
        state: Arc<Swappable>,
    ) -> Result<(SocketAddr, Running), String> {
        let std_listener = std::net::TcpListener::bind(spec.bind)
            .map_err(|e| format!("cannot listen on {}: {e}", spec.bind))?;
        std_listener
            .set_nonblocking(true)
            .map_err(|e| e.to_string())?;
        let addr = std_listener.local_addr().map_err(|e| e.to_string())?;
        let _guard = self.rt.enter();
        let listener = listener::Acceptor::new(std_listener).map_err(|e| e.to_string())?;
        let (stop, stop_rx) = watch::channel(false);
        let task = portcullis_support::task::spawn_on(
            &self.rt,
            listener::run(listener, state.clone(), self.shared.clone(), stop_rx),
        );
        tracing::info!(listener = %spec.name, %addr, "listening");
        Ok((
            addr,
            Running {
                name: spec.name.clone(),
                state,
                stop,
                task,
            },
        ))
    }
}

impl Topology for Dataplane {
    fn requests_answered(&self, name: &str) -> u64 {
        self.shared.metrics.listener(name).total()
    }

    fn apply(&self, listeners: Vec<ListenerSpec>) -> Vec<ListenerStatus> {
        let mut running = self.running.lock();
        let mut old = std::mem::take(&mut *running);
        let mut statuses = Vec::with_capacity(listeners.len());
        let mut pending = Vec::new();
        for spec in &listeners {
            let prepared = self.site(spec).and_then(|site| {
                let tls = match &spec.tls {
                    Some(t) => Some(
                        super::tls::server_config(t.cert_pem.as_bytes(), t.key_pem.as_bytes())
                            .map_err(|e| e.to_string())?,
                    ),
                    None => None,
                };
                Ok((site, tls))
            });
            let (site, tls) = match prepared {
                Ok(x) => x,
                Err(e) => {
                    statuses.push(status(&spec.name, Some(e)));
                    continue;
                }
            };
            // Same address as a running listener (whatever its name; for port 0, the same name):
            // update it in place.
            let key = if old.contains_key(&spec.bind) {
                Some(spec.bind)
            } else if spec.bind.port() == 0 {
                old.iter()
                    .find(|(_, r)| r.name == spec.name)
                    .map(|(a, _)| *a)
            } else {
                None
            };
            if let Some((addr, mut r)) = key.and_then(|k| old.remove(&k).map(|r| (k, r))) {
                r.state.site.store(Arc::new(site));
                r.state.tls.store(tls);
                r.name = spec.name.clone();
                running.insert(addr, r);
                statuses.push(status(&spec.name, None));
            } else {
                let state = Arc::new(Swappable {
                    site: ArcSwap::from_pointee(site),
                    tls: ArcSwapOption::new(tls),
                });
                statuses.push(status(&spec.name, None));
                pending.push((statuses.len() - 1, spec, state));
            }
        }
        self.gates
            .lock()
            .retain(|n, _| listeners.iter().any(|l| &l.name == n));
        // Stop what is no longer wanted before binding, so a moved address is free again.
        for (_, r) in old.drain() {
            tracing::info!(listener = %r.name, "stopping");
            let _ = r.stop.send(true);
        }
        for (i, spec, state) in pending {
            match self.start(spec, state) {
                Ok((addr, r)) => {
                    running.insert(addr, r);
                }
                // Returned, not logged: the caller reports it once (an exit message, a
                // virtual server's status).
                Err(e) => statuses[i].error = Some(e),
            }
        }
        statuses
    }
}

fn status(name: &str, error: Option<String>) -> ListenerStatus {
    ListenerStatus {
        name: name.to_string(),
        error,
    }
}
