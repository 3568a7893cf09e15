//! `portcullis serve`: the admin API over HTTPS (rustls, ring), HTTP/1.1 and h2. The certificate
//! is configured, or generated self-signed (rcgen) into the data directory on first start and
//! reused afterwards.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use serde::Deserialize;
use tower::ServiceExt as _;

use portcullis_admin::Peer;
use portcullis_admin::{ConfigError, MgmtConfig, MgmtError};
use portcullis_proxy::Topology;

/// The `serve` configuration file (JSON); command-line flags override it.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServeConfig {
    pub admin_listen: Option<SocketAddr>,
    pub data_dir: Option<PathBuf>,
    pub dns_listen: Option<SocketAddr>,
    /// PEM certificate chain and key for the admin API (else generated).
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
    pub mgmt: Option<MgmtConfig>,
}

impl ServeConfig {
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        ConfigError::read_json(path)
    }
}

/// Why the admin server cannot start; `Display` is what `serve` and `central` print before they
/// exit.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Tls(#[from] AdminTlsError),
    /// The state over the data directory cannot be opened.
    #[error("{}", .0.message)]
    State(MgmtError),
    #[error("admin listener {addr}: {source}")]
    Listener {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("{0}")]
    LocalAddr(#[source] std::io::Error),
    /// What the services attached to the admin server (`Attach`) reported.
    #[error("{0}")]
    Attach(String),
}

/// Why the admin API's certificate cannot be loaded or generated; `Display` names the file.
#[derive(Debug, thiserror::Error)]
pub enum AdminTlsError {
    #[error("tls_cert and tls_key must be given together")]
    Unpaired,
    #[error("generating the admin certificate: {0}")]
    Generate(#[source] rcgen::Error),
    /// The generated certificate or key cannot be written to the data directory.
    #[error("{}: {source}", .path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: not a PEM certificate file ({source})", .path.display())]
    NotPem {
        path: PathBuf,
        source: rustls_pki_types::pem::Error,
    },
    #[error(
        "{}: no certificate in the file (expected PEM 'BEGIN CERTIFICATE' blocks)",
        .0.display()
    )]
    NoCertificate(PathBuf),
    /// Certificate `index` (1-based) of the file does not parse as X.509.
    #[error(
        "{}: certificate {index} of the file is not a valid X.509 certificate",
        .path.display()
    )]
    NotX509 { path: PathBuf, index: usize },
    #[error(
        "{}: no usable private key in the file (expected a PEM private key; {source})",
        .path.display()
    )]
    NoKey {
        path: PathBuf,
        source: rustls_pki_types::pem::Error,
    },
    /// The provider offers no safe protocol version.
    #[error("{0}")]
    Protocols(#[source] rustls::Error),
    /// rustls refuses the pair (the key does not match the certificate).
    #[error("{} with {}: {source}", .cert.display(), .key.display())]
    Pair {
        cert: PathBuf,
        key: PathBuf,
        source: rustls::Error,
    },
}

/// Loads the configured certificate, or the one generated earlier, or generates one.
pub fn admin_tls(
    data_dir: &Path,
    cert: Option<&Path>,
    key: Option<&Path>,
) -> Result<Arc<rustls::ServerConfig>, AdminTlsError> {
    let write = |path: &Path| {
        let path = path.to_path_buf();
        move |source| AdminTlsError::Write { path, source }
    };
    let (cert_path, key_path) = match (cert, key) {
        (Some(c), Some(k)) => (c.to_path_buf(), k.to_path_buf()),
        (None, None) => {
            let c = data_dir.join("admin-cert.pem");
            let k = data_dir.join("admin-key.pem");
            if !c.exists() || !k.exists() {
                let ck = rcgen::generate_simple_self_signed(vec![
                    "localhost".into(),
                    "127.0.0.1".into(),
                ])
                .map_err(AdminTlsError::Generate)?;
                std::fs::create_dir_all(data_dir).map_err(write(data_dir))?;
                std::fs::write(&c, ck.cert.pem()).map_err(write(&c))?;
                std::fs::write(&k, ck.signing_key.serialize_pem()).map_err(write(&k))?;
                #[cfg(unix)]
                {
                    use std::os::unix::fs::PermissionsExt as _;
                    std::fs::set_permissions(&k, std::fs::Permissions::from_mode(0o600))
                        .map_err(write(&k))?;
                }
            }
            (c, k)
        }
        _ => return Err(AdminTlsError::Unpaired),
    };
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&cert_path)
        .and_then(|it| it.collect())
        .map_err(|source| AdminTlsError::NotPem {
            path: cert_path.clone(),
            source,
        })?;
    if certs.is_empty() {
        return Err(AdminTlsError::NoCertificate(cert_path));
    }
    if let Some(i) = certs
        .iter()
        .position(|c| <x509_cert::Certificate as x509_cert::der::Decode>::from_der(c).is_err())
    {
        return Err(AdminTlsError::NotX509 {
            path: cert_path,
            index: i + 1,
        });
    }
    let key = PrivateKeyDer::from_pem_file(&key_path).map_err(|source| AdminTlsError::NoKey {
        path: key_path.clone(),
        source,
    })?;
    let mut cfg = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(AdminTlsError::Protocols)?
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .map_err(|source| AdminTlsError::Pair {
        cert: cert_path,
        key: key_path,
        source,
    })?;
    cfg.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(cfg))
}

/// The connection-level bounds of the admin port (the body bounds are applied per request by
/// the `/mgmt` router and the SOAP portal).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnLimits {
    /// TLS handshake, and an HTTP/1.1 request head from its first byte (or from the end of the
    /// previous request).
    pub header_read_timeout: Duration,
    /// A connection with no request in flight for this long is closed (HTTP/2 included, whose
    /// clients may keep a connection open with nothing but pings).
    pub idle_timeout: Duration,
}

impl Default for ConnLimits {
    fn default() -> Self {
        ConnLimits::from(&MgmtConfig::default())
    }
}

impl From<&MgmtConfig> for ConnLimits {
    fn from(c: &MgmtConfig) -> Self {
        ConnLimits {
            header_read_timeout: Duration::from_secs(c.header_read_timeout),
            idle_timeout: Duration::from_secs(c.idle_timeout),
        }
    }
}

/// Requests in flight on one connection, and when the last one ended.
struct Activity {
    in_flight: AtomicUsize,
    since: parking_lot::Mutex<Instant>,
}

impl Activity {
    fn begin(self: &Arc<Self>) -> impl Drop + Send + use<> {
        struct Busy(Arc<Activity>);
        impl Drop for Busy {
            fn drop(&mut self) {
                *self.0.since.lock() = Instant::now();
                self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
            }
        }
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        Busy(self.clone())
    }

    /// When the connection goes idle for too long, if nothing is in flight.
    fn idle_deadline(&self, idle: Duration) -> Option<Instant> {
        (self.in_flight.load(Ordering::Acquire) == 0).then(|| *self.since.lock() + idle)
    }
}

/// Serves the admin API on `listener` until `shutdown` resolves, then lets open connections
/// finish for up to 5 seconds.
///
/// The protocol is the one TLS negotiated (ALPN `h2`, else HTTP/1.1), so no byte is waited for
/// before a timer runs: a connection that completes the handshake and sends nothing is closed
/// by the header timeout (HTTP/1.1) or the idle timeout (HTTP/2).
pub async fn serve(
    listener: tokio::net::TcpListener,
    tls: Arc<rustls::ServerConfig>,
    app: axum::Router,
    limits: ConnLimits,
    shutdown: impl std::future::Future<Output = ()>,
) {
    let acceptor = tokio_rustls::TlsAcceptor::from(tls);
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(128);
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    // Each connection task holds a clone; when all are gone, every connection has ended.
    let (alive_tx, mut alive_rx) = tokio::sync::mpsc::channel::<()>(1);
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            r = listener.accept() => {
                let Ok((tcp, peer)) = r else { continue };
                let (acceptor, builder, app) = (acceptor.clone(), builder.clone(), app.clone());
                let (stop, alive) = (stop_rx.clone(), alive_tx.clone());
                portcullis_support::task::spawn(async move {
                    let _alive = alive;
                    let accepted = tokio::time::timeout(limits.header_read_timeout, acceptor.accept(tcp)).await;
                    if let Ok(Ok(stream)) = accepted {
                        connection(stream, builder, app, peer, limits, stop).await;
                    }
                });
            }
            _ = &mut shutdown => break,
        }
    }
    drop(listener);
    let _ = stop_tx.send(true);
    drop(alive_tx);
    let _ = tokio::time::timeout(Duration::from_secs(5), alive_rx.recv()).await;
}

/// Serves one TLS connection until it ends, goes idle for `limits.idle_timeout`, or the server
/// stops (`stop`); the last two end it gracefully.
async fn connection(
    stream: tokio_rustls::server::TlsStream<tokio::net::TcpStream>,
    builder: auto::Builder<TokioExecutor>,
    app: axum::Router,
    peer: SocketAddr,
    limits: ConnLimits,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    let builder = if stream.get_ref().1.alpn_protocol() == Some(b"h2") {
        builder.http2_only()
    } else {
        builder.http1_only()
    };
    let activity = Arc::new(Activity {
        in_flight: AtomicUsize::new(0),
        since: parking_lot::Mutex::new(Instant::now()),
    });
    let act = activity.clone();
    let svc = tower::service_fn(move |mut req: http::Request<hyper::body::Incoming>| {
        req.extensions_mut().insert(Peer(peer));
        let busy = act.begin();
        let call = app.clone().oneshot(req);
        async move {
            let res = call.await;
            drop(busy);
            res
        }
    });
    let conn =
        builder.serve_connection_with_upgrades(TokioIo::new(stream), TowerToHyperService::new(svc));
    tokio::pin!(conn);
    let mut closing = false;
    loop {
        // Re-checked at least once per idle period while requests are in flight.
        let wake = activity
            .idle_deadline(limits.idle_timeout)
            .unwrap_or_else(|| Instant::now() + limits.idle_timeout);
        tokio::select! {
            _ = conn.as_mut() => break,
            _ = tokio::time::sleep_until(wake.into()), if !closing => {
                if activity.idle_deadline(limits.idle_timeout).is_some_and(|d| d <= Instant::now()) {
                    conn.as_mut().graceful_shutdown();
                    closing = true;
                }
            }
            _ = stop.wait_for(|s| *s), if !closing => {
                conn.as_mut().graceful_shutdown();
                closing = true;
            }
        }
    }
}

/// Everything `portcullis serve` needs, resolved from flags and the config file.
pub struct ServeArgs {
    pub admin_listen: SocketAddr,
    pub dns_listen: Option<SocketAddr>,
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
    pub mgmt: MgmtConfig,
}

/// What `main` mounts beside `/mgmt` once the state is open (the SOAP portal) and starts with the API
/// (the DNS listener on `dns_listen`): a router merged in front of the `/mgmt` router.
pub type Attach = Box<
    dyn FnOnce(
            Arc<super::MgmtState>,
            Option<SocketAddr>,
        ) -> std::pin::Pin<
            Box<dyn std::future::Future<Output = Result<axum::Router, String>> + Send>,
        > + Send,
>;

/// A controller whose state is open and whose admin port is bound, not serving yet.
pub struct AdminServer {
    pub state: Arc<super::MgmtState>,
    /// The bound admin address.
    pub local: SocketAddr,
    /// The `admin` password generated at the first start of the data directory (shown once).
    pub generated_password: Option<String>,
    listener: tokio::net::TcpListener,
    tls: Arc<rustls::ServerConfig>,
}

impl AdminServer {
    /// Loads (or generates) the certificate, opens the state over the data directory (creating
    /// `admin` with `admin_password`, or a generated one, at its first start) and binds the port.
    pub async fn start(
        args: &ServeArgs,
        topology: Arc<dyn Topology>,
        admin_password: Option<String>,
    ) -> Result<AdminServer, ServeError> {
        let tls = admin_tls(
            &args.mgmt.data_dir,
            args.tls_cert.as_deref(),
            args.tls_key.as_deref(),
        )?;
        let (state, generated_password) =
            super::open(args.mgmt.clone(), topology, admin_password).map_err(ServeError::State)?;
        let listener = tokio::net::TcpListener::bind(args.admin_listen)
            .await
            .map_err(|source| ServeError::Listener {
                addr: args.admin_listen,
                source,
            })?;
        let local = listener.local_addr().map_err(ServeError::LocalAddr)?;
        Ok(AdminServer {
            state,
            local,
            generated_password,
            listener,
            tls,
        })
    }

    /// Serves `/mgmt` and the console at `/ui/` (with `extra` routes in front) and runs the
    /// health monitors until `shutdown` resolves.
    pub async fn serve(self, extra: axum::Router, shutdown: impl std::future::Future<Output = ()>) {
        let st = self.state;
        let monitors = portcullis_support::task::spawn(super::monitor::run_monitors(st.clone()));
        let limits = ConnLimits::from(&st.cfg);
        serve(
            self.listener,
            self.tls,
            extra
                .merge(super::console::router(st.clone()))
                .merge(portcullis_admin::router(st)),
            limits,
            shutdown,
        )
        .await;
        monitors.abort();
    }
}

/// Runs a controller's admin API until SIGINT/SIGTERM.
pub async fn run(
    args: ServeArgs,
    topology: Arc<dyn Topology>,
    attach: Attach,
) -> Result<(), ServeError> {
    let password = std::env::var("PORTCULLIS_ADMIN_PASSWORD").ok();
    let server = AdminServer::start(&args, topology, password).await?;
    if let Some(p) = &server.generated_password {
        println!("portcullis: created user 'admin' with generated password: {p}");
        println!(
            "portcullis: (shown once; set PORTCULLIS_ADMIN_PASSWORD at first start to choose it)"
        );
    }
    println!(
        "portcullis: admin API listening on https://{}/mgmt",
        server.local
    );
    let extra = attach(server.state.clone(), args.dns_listen)
        .await
        .map_err(ServeError::Attach)?;
    server.serve(extra, shutdown_signal()).await;
    Ok(())
}

/// Resolves on SIGINT (Ctrl-C) or SIGTERM.
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
