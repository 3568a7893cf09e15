//! `portcullis serve`: the admin API over HTTPS (rustls, ring), HTTP/1.1 and h2. The certificate
//! is configured, or generated self-signed (rcgen) into the data directory on first start and
//! reused afterwards. Imports: `mgmt::*`, `proxy::topology`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use serde::Deserialize;
use tower::ServiceExt as _;

use super::dispatch::Peer;
use super::state::MgmtConfig;
use crate::proxy::topology::Topology;

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
    pub fn load(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// Loads the configured certificate, or the one generated earlier, or generates one.
pub fn admin_tls(
    data_dir: &Path,
    cert: Option<&Path>,
    key: Option<&Path>,
) -> Result<Arc<rustls::ServerConfig>, String> {
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
                .map_err(|e| format!("generating the admin certificate: {e}"))?;
                std::fs::create_dir_all(data_dir)
                    .map_err(|e| format!("{}: {e}", data_dir.display()))?;
                std::fs::write(&c, ck.cert.pem()).map_err(|e| format!("{}: {e}", c.display()))?;
                std::fs::write(&k, ck.signing_key.serialize_pem())
                    .map_err(|e| format!("{}: {e}", k.display()))?;
                #[cfg(unix)]
                {
                    use std::os::unix::fs::PermissionsExt as _;
                    std::fs::set_permissions(&k, std::fs::Permissions::from_mode(0o600))
                        .map_err(|e| format!("{}: {e}", k.display()))?;
                }
            }
            (c, k)
        }
        _ => return Err("tls_cert and tls_key must be given together".into()),
    };
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&cert_path)
        .and_then(|it| it.collect())
        .map_err(|e| format!("{}: {e}", cert_path.display()))?;
    let key = PrivateKeyDer::from_pem_file(&key_path)
        .map_err(|e| format!("{}: {e}", key_path.display()))?;
    let mut cfg = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| e.to_string())?
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .map_err(|e| format!("admin certificate: {e}"))?;
    cfg.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(cfg))
}

/// Serves the admin API on `listener` until `shutdown` resolves.
pub async fn serve(
    listener: tokio::net::TcpListener,
    tls: Arc<rustls::ServerConfig>,
    app: axum::Router,
    shutdown: impl std::future::Future<Output = ()>,
) {
    let acceptor = tokio_rustls::TlsAcceptor::from(tls);
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(Duration::from_secs(30));
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(128);
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            r = listener.accept() => {
                let Ok((tcp, peer)) = r else { continue };
                let (acceptor, builder, app, watcher) = (acceptor.clone(), builder.clone(), app.clone(), graceful.watcher());
                tokio::spawn(async move {
                    let Ok(Ok(stream)) = tokio::time::timeout(Duration::from_secs(10), acceptor.accept(tcp)).await else { return };
                    let svc = tower::service_fn(move |mut req: http::Request<hyper::body::Incoming>| {
                        req.extensions_mut().insert(Peer(peer));
                        app.clone().oneshot(req)
                    });
                    let conn = builder.serve_connection_with_upgrades(TokioIo::new(stream), TowerToHyperService::new(svc));
                    let _ = watcher.watch(conn.into_owned()).await;
                });
            }
            _ = &mut shutdown => break,
        }
    }
    drop(listener);
    let _ = tokio::time::timeout(Duration::from_secs(5), graceful.shutdown()).await;
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

/// Runs a controller's admin API until SIGINT/SIGTERM.
pub async fn run(
    args: ServeArgs,
    topology: Arc<dyn Topology>,
    attach: Attach,
) -> Result<(), String> {
    let tls = admin_tls(
        &args.mgmt.data_dir,
        args.tls_cert.as_deref(),
        args.tls_key.as_deref(),
    )?;
    let password = std::env::var("PORTCULLIS_ADMIN_PASSWORD").ok();
    let (st, generated) = super::open(args.mgmt, topology, password).map_err(|e| e.message)?;
    if let Some(p) = generated {
        println!("portcullis: created user 'admin' with generated password: {p}");
        println!(
            "portcullis: (shown once; set PORTCULLIS_ADMIN_PASSWORD at first start to choose it)"
        );
    }
    let listener = tokio::net::TcpListener::bind(args.admin_listen)
        .await
        .map_err(|e| format!("admin listener {}: {e}", args.admin_listen))?;
    let local = listener.local_addr().map_err(|e| e.to_string())?;
    println!("portcullis: admin API listening on https://{local}/mgmt");
    let extra = attach(st.clone(), args.dns_listen).await?;
    let monitors = tokio::spawn(st.clone().run_monitors());
    serve(
        listener,
        tls,
        extra
            .merge(super::console::router(st.clone()))
            .merge(super::router(st)),
        shutdown_signal(),
    )
    .await;
    monitors.abort();
    Ok(())
}

async fn shutdown_signal() {
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
