//! Serving the portal on its own over HTTPS (the admin server merges [`super::router`] instead):
//! a self-signed rustls configuration (ring provider) and an accept loop with graceful shutdown.
//! Used by the integration tests and `examples/soap_server.rs`; listens where it is told.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::net::TcpListener;

/// Why no self-signed configuration could be made: the certificate could not be generated, or
/// rustls refused it.
#[derive(Debug, thiserror::Error)]
pub enum SelfSignedError {
    #[error(transparent)]
    Generate(#[from] rcgen::Error),
    #[error(transparent)]
    Rustls(#[from] rustls::Error),
}

/// A self-signed certificate for `names`, as a rustls server config, plus the certificate's DER
/// (for clients that want to trust exactly it).
pub fn self_signed_tls(
    names: &[&str],
) -> Result<(Arc<rustls::ServerConfig>, Vec<u8>), SelfSignedError> {
    let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    let ck = rcgen::generate_simple_self_signed(names)?;
    let der = ck.cert.der().to_vec();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(ck.signing_key.serialize_der()));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut cfg = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(vec![CertificateDer::from(der.clone())], key)?;
    cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok((Arc::new(cfg), der))
}

/// Serves `router` over TLS on `listener` until `shutdown` completes, then lets open connections
/// finish for up to 5 seconds.
pub async fn serve_https(
    listener: TcpListener,
    tls: Arc<rustls::ServerConfig>,
    router: Router,
    shutdown: impl Future<Output = ()>,
) {
    let acceptor = tokio_rustls::TlsAcceptor::from(tls);
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(Duration::from_secs(10));
    let svc = TowerToHyperService::new(router);
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            r = listener.accept() => {
                let Ok((tcp, _)) = r else { continue };
                let (builder, svc, acceptor) = (builder.clone(), svc.clone(), acceptor.clone());
                let watcher = graceful.watcher();
                portcullis_support::task::spawn(async move {
                    let Ok(Ok(tls)) = tokio::time::timeout(Duration::from_secs(10), acceptor.accept(tcp)).await else {
                        return;
                    };
                    let conn = builder.serve_connection_with_upgrades(TokioIo::new(tls), svc);
                    let _ = watcher.watch(conn.into_owned()).await;
                });
            }
            _ = &mut shutdown => break,
        }
    }
    drop(listener);
    let _ = tokio::time::timeout(Duration::from_secs(5), graceful.shutdown()).await;
}
