//! TLS servers of the tests: a listener on 127.0.0.1 presenting a given certificate (rustls with
//! the ring provider, the one the product uses), handing each completed handshake to the test's
//! own protocol code.

use std::net::SocketAddr;
use std::sync::Arc;

use rustls_pki_types::pem::PemObject;
use tokio_rustls::server::TlsStream;

/// A TLS listener presenting `cert_pem` (a chain) and `key_pem`, offering the `alpn` protocols
/// (none: no ALPN); every connection that completes its handshake is served by `serve` on its own
/// task, and a failed handshake is dropped.
pub async fn tls_listener<F, Fut>(
    cert_pem: &str,
    key_pem: &str,
    alpn: &[&[u8]],
    serve: F,
) -> SocketAddr
where
    F: Fn(TlsStream<tokio::net::TcpStream>) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let certs = rustls_pki_types::CertificateDer::pem_slice_iter(cert_pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .expect("certificate PEM");
    let key = rustls_pki_types::PrivateKeyDer::from_pem_slice(key_pem.as_bytes()).expect("key PEM");
    let mut cfg = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("versions")
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .expect("server config");
    cfg.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(cfg));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let serve = Arc::new(serve);
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (acceptor, serve) = (acceptor.clone(), serve.clone());
            tokio::spawn(async move {
                if let Ok(tls) = acceptor.accept(tcp).await {
                    serve(tls).await;
                }
            });
        }
    });
    addr
}
