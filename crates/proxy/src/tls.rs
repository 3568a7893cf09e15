//! TLS configuration with rustls and the ring provider (one provider compiled, selected
//! explicitly so feature unification cannot change it): the server side for listeners (ALPN `h2`
//! and `http/1.1`) and the client side for `https://` upstreams (webpki roots or a given CA).

use std::sync::Arc;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

/// Why PEM material gives no TLS configuration; `Display` names the part at fault.
#[derive(Debug, thiserror::Error)]
pub enum TlsConfigError {
    #[error("certificate: {0}")]
    Certificate(#[source] rustls_pki_types::pem::Error),
    #[error("certificate: no PEM certificate found")]
    NoCertificate,
    #[error("private key: {0}")]
    PrivateKey(#[source] rustls_pki_types::pem::Error),
    /// The key does not match the certificate, or rustls refuses them.
    #[error("certificate and key: {0}")]
    CertificateAndKey(#[source] rustls::Error),
    #[error("upstream CA: {0}")]
    UpstreamCaPem(#[source] rustls_pki_types::pem::Error),
    #[error("upstream CA: {0}")]
    UpstreamCa(#[source] rustls::Error),
    #[error("upstream CA: no PEM certificate found")]
    NoUpstreamCa,
    /// The provider offers no safe protocol version.
    #[error("{0}")]
    Protocols(#[source] rustls::Error),
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A server configuration from a PEM certificate chain and a PEM private key.
pub fn server_config(
    cert_pem: &[u8],
    key_pem: &[u8],
) -> Result<Arc<rustls::ServerConfig>, TlsConfigError> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(cert_pem)
        .collect::<Result<_, _>>()
        .map_err(TlsConfigError::Certificate)?;
    if certs.is_empty() {
        return Err(TlsConfigError::NoCertificate);
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(TlsConfigError::PrivateKey)?;
    let mut cfg = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(TlsConfigError::Protocols)?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(TlsConfigError::CertificateAndKey)?;
    cfg.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(cfg))
}

/// A client configuration trusting `ca_pem` when given, else the webpki (Mozilla) roots.
pub fn client_config(ca_pem: Option<&[u8]>) -> Result<Arc<rustls::ClientConfig>, TlsConfigError> {
    let mut roots = rustls::RootCertStore::empty();
    match ca_pem {
        Some(pem) => {
            for cert in CertificateDer::pem_slice_iter(pem) {
                let cert = cert.map_err(TlsConfigError::UpstreamCaPem)?;
                roots.add(cert).map_err(TlsConfigError::UpstreamCa)?;
            }
            if roots.is_empty() {
                return Err(TlsConfigError::NoUpstreamCa);
            }
        }
        None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
    }
    // The ALPN list is set per connection kind by `super::conns::Clients`.
    let cfg = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(TlsConfigError::Protocols)?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(cfg))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pem_pairs_load_and_garbage_is_refused() {
        let ck = rcgen::generate_simple_self_signed(vec!["localhost".into()]).expect("rcgen");
        let cert = ck.cert.pem();
        let key = ck.signing_key.serialize_pem();
        assert!(server_config(cert.as_bytes(), key.as_bytes()).is_ok());
        assert!(server_config(b"nope", key.as_bytes()).is_err());
        assert!(client_config(Some(cert.as_bytes())).is_ok());
        assert!(client_config(Some(b"nope")).is_err());
        assert!(client_config(None).is_ok());
    }
}
