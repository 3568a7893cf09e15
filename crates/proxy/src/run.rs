//! `portcullis proxy`: one listener, one policy file, through the same [`Dataplane`] machinery the
//! management plane uses. SIGHUP re-reads the policy and swaps it atomically (a policy that fails
//! to load keeps the old one, and the log says why); SIGTERM or Ctrl-C drains and exits.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use super::dataplane::Dataplane;
use super::events::EventSink;
use super::handler::Shared;
use super::limits::{LimitError, Limits};
use super::metrics::{self, Metrics};
use super::resolver;
use super::tls::TlsConfigError;
use super::topology::{ListenerSpec, TlsSpec, Topology, UpstreamSpec};
use super::upstream::Clients;
use portcullis_engine::policy::{self, PolicyError};
use portcullis_engine::{CompiledPolicy, Engine};

/// The command line of `portcullis proxy`.
#[derive(clap::Args, Debug, Clone)]
pub struct ProxyOptions {
    /// Address to listen on, e.g. 127.0.0.1:8080.
    #[arg(long)]
    pub listen: SocketAddr,
    /// Upstream URL (http://, https:// or h2c://host:port); repeat for a round-robin pool.
    #[arg(long, required = true)]
    pub upstream: Vec<String>,
    /// The declarative policy (JSON); file: links in it resolve relative to its directory.
    #[arg(long)]
    pub policy: PathBuf,
    /// Runtime worker threads [default: one per CPU core]; 1 serves every connection from one
    /// thread.
    #[arg(long)]
    pub workers: Option<usize>,
    /// Server certificate chain (PEM) to terminate TLS (h2 and http/1.1 by ALPN).
    #[arg(long, requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// Private key (PEM) of --tls-cert.
    #[arg(long, requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// CA certificates (PEM) trusted for https:// upstreams instead of the built-in roots.
    #[arg(long)]
    pub upstream_ca: Option<PathBuf>,
    /// Append security events (JSON lines) to this file instead of writing them to stdout.
    #[arg(long)]
    pub event_log: Option<PathBuf>,
    /// Serve Prometheus metrics on this address (plain HTTP/1.1, as scrapers speak it).
    #[arg(long)]
    pub metrics_listen: Option<SocketAddr>,
    /// API access control profile (JSON or YAML; see docs/access.md): API keys, JWT, token
    /// introspection, Basic credentials, rate limits. SIGHUP re-reads it with the policy.
    #[arg(long)]
    pub access: Option<PathBuf>,
    /// Override one limit, NAME=VALUE (repeatable), e.g. `--limit max_body_bytes=1048576`;
    /// the names and defaults are in docs/limits.md.
    #[arg(long = "limit", value_name = "NAME=VALUE")]
    pub limits: Vec<String>,
}

/// Why `portcullis proxy` cannot start, or why a reload keeps what runs. `Display` is what the
/// command prints (after `portcullis: `) before it exits, and what the log says on a reload.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// A `--limit NAME=VALUE` naming no limit, or with a value of the wrong kind.
    #[error(transparent)]
    Limit(#[from] LimitError),
    /// A file named on the command line cannot be read.
    #[error("{}: {source}", .path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The policy file does not load (the JSON path of the member at fault, and the problem).
    #[error("{}: {source}", .path.display())]
    Policy { path: PathBuf, source: PolicyError },
    /// A TLS configuration (the upstream CA, the roots of fetched links) is unusable.
    #[error(transparent)]
    Tls(#[from] TlsConfigError),
    #[error("event log: {0}")]
    EventLog(#[source] std::io::Error),
    #[error("metrics listener {addr}: {source}")]
    Metrics {
        addr: SocketAddr,
        source: std::io::Error,
    },
    /// The access profile does not load (the file and the field).
    #[error(transparent)]
    Access(#[from] super::access::LoadError),
    /// The listener did not start (its address cannot be bound, its certificate is unusable).
    #[error("{0}")]
    Listener(String),
    /// The signal handlers could not be installed.
    #[error("{0}")]
    Signals(#[source] std::io::Error),
    /// A loading step on the blocking pool panicked.
    #[error("{0}")]
    Task(#[from] tokio::task::JoinError),
}

/// Longest wait at start-up for the access profile's shared store (then requests are decided
/// without it until it answers).
const SHARED_STORE_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// Loads the policy file with the file/http resolver.
pub fn load_policy(path: &Path) -> Result<CompiledPolicy, StartError> {
    let bytes = read(path)?;
    let resolver = resolver::policy_links(path)?;
    let loaded = policy::load(&bytes, &resolver::base_link(path), &resolver).map_err(|source| {
        StartError::Policy {
            path: path.to_path_buf(),
            source,
        }
    })?;
    for w in &loaded.warnings {
        tracing::warn!(policy = %path.display(), "{w}");
    }
    Ok(loaded.policy)
}

/// Builds the runtime `--workers` asks for.
pub fn runtime(workers: Option<usize>) -> std::io::Result<tokio::runtime::Runtime> {
    match workers {
        Some(1) => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build(),
        Some(n) => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(n.max(1))
            .enable_all()
            .build(),
        None => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build(),
    }
}

/// Runs `portcullis proxy` to completion. `settled` is called each time the work of the start, or
/// of a reload, is over (the listener is up, the policy in place): the binary hands back there
/// the pages of code and data only that work touched.
pub fn run(opts: ProxyOptions, settled: fn()) -> ExitCode {
    let rt = match runtime(opts.workers) {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("portcullis: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match rt.block_on(serve(opts, settled)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("portcullis: {e}");
            ExitCode::FAILURE
        }
    }
}

fn read(path: &Path) -> Result<Vec<u8>, StartError> {
    std::fs::read(path).map_err(|source| StartError::Read {
        path: path.to_path_buf(),
        source,
    })
}

async fn serve(opts: ProxyOptions, settled: fn()) -> Result<(), StartError> {
    let mut limits = Limits::default();
    for l in &opts.limits {
        limits.set(l)?;
    }
    let path = opts.policy.clone();
    let first = tokio::task::spawn_blocking(move || load_policy(&path)).await??;
    let engine = Arc::new(Engine::new(first));
    let ca = opts.upstream_ca.as_deref().map(read).transpose()?;
    let client_tls = super::tls::client_config(ca.as_deref())?;
    let tls = match (&opts.tls_cert, &opts.tls_key) {
        (Some(c), Some(k)) => Some(TlsSpec {
            cert_pem: String::from_utf8_lossy(&read(c)?).into_owned(),
            key_pem: String::from_utf8_lossy(&read(k)?).into_owned(),
        }),
        _ => None,
    };
    let metrics = Arc::new(Metrics::default());
    let events = EventSink::open_counted(opts.event_log.as_deref(), Some(metrics.clone()))
        .map_err(StartError::EventLog)?;
    let shared = Arc::new(Shared {
        limits,
        clients: Clients::new(client_tls, limits.upstream_connect_timeout),
        metrics: metrics.clone(),
        events,
    });
    if let Some(addr) = opts.metrics_listen {
        let l = metrics::bind(addr)
            .await
            .map_err(|source| StartError::Metrics { addr, source })?;
        portcullis_support::task::spawn(metrics::serve(l, metrics));
    }
    let access = match &opts.access {
        Some(p) => {
            let p = p.clone();
            Some(Arc::new(
                tokio::task::spawn_blocking(move || super::access::load_file(&p)).await??,
            ))
        }
        None => None,
    };
    let dp = Dataplane::new(shared);
    // The shared stores connect (and revocations load) before the listener opens, so its first
    // requests are counted across the fleet; they are held until the listener's gate has them.
    let _prepared = match &access {
        Some(p) => Some(super::access::shared::prepare(dp.stores(), p, SHARED_STORE_WAIT).await),
        None => None,
    };
    let mut spec = ListenerSpec {
        name: "proxy".into(),
        bind: opts.listen,
        tls,
        upstreams: opts
            .upstream
            .iter()
            .map(|u| UpstreamSpec {
                url: u.clone(),
                healthy: true,
            })
            .collect(),
        engine: engine.clone(),
        x_forwarded_for: true,
        redirect_to_https: false,
        access,
    };
    if let Some(e) = dp
        .apply(vec![spec.clone()])
        .into_iter()
        .find_map(|s| s.error)
    {
        return Err(StartError::Listener(e));
    }
    // stdout carries the security events only.
    eprintln!("portcullis proxy listening on {}", opts.listen);
    settled();
    wait_for_signals(&opts.policy, &engine, || {
        // The listener keeps its address, so the apply updates it in place.
        if let Some(path) = &opts.access {
            match super::access::load_file(path) {
                Ok(p) => {
                    spec.access = Some(Arc::new(p));
                    dp.apply(vec![spec.clone()]);
                    tracing::info!(access = %path.display(), "access profile reloaded");
                }
                Err(e) => tracing::error!("access profile reload failed, keeping the old one: {e}"),
            }
        }
        settled();
    })
    .await?;
    tracing::info!("draining");
    dp.shutdown().await;
    Ok(())
}

/// Returns on SIGTERM or SIGINT; reloads the policy on SIGHUP.
async fn wait_for_signals(
    policy: &Path,
    engine: &Arc<Engine>,
    mut on_hup: impl FnMut(),
) -> Result<(), StartError> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).map_err(StartError::Signals)?;
    let mut int = signal(SignalKind::interrupt()).map_err(StartError::Signals)?;
    let mut hup = signal(SignalKind::hangup()).map_err(StartError::Signals)?;
    loop {
        tokio::select! {
            _ = term.recv() => return Ok(()),
            _ = int.recv() => return Ok(()),
            _ = hup.recv() => {
                let path = policy.to_path_buf();
                match tokio::task::spawn_blocking(move || load_policy(&path)).await {
                    Ok(Ok(p)) => {
                        engine.apply(p);
                        tracing::info!(policy = %policy.display(), "policy reloaded");
                    }
                    Ok(Err(e)) => tracing::error!("policy reload failed, keeping the old policy: {e}"),
                    Err(e) => tracing::error!("policy reload failed, keeping the old policy: {e}"),
                }
                on_hup();
            }
        }
    }
}
