//! TLS configuration with rustls and the ring provider (one provider compiled, selected
//! explicitly so feature unification cannot change it): the server side for listeners (ALPN `h2`
//! and `http/1.1`) and the client side for `https://` upstreams (webpki roots or a given CA).

use std::sync::Arc;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A server configuration from a PEM certificate chain and a PEM private key.
pub fn server_config(cert_pem: &[u8], key_pem: &[u8]) -> Result<Arc<rustls::ServerConfig>, String> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(cert_pem)
        .collect::<Result<_, _>>()
        .map_err(|e| format!("certificate: {e}"))?;
    if certs.is_empty() {
        return Err("certificate: no PEM certificate found".into());
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|e| format!("private key: {e}"))?;
    let mut cfg = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| format!("certificate and key: {e}"))?;
    cfg.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(cfg))
}

/// A client configuration trusting `ca_pem` when given, else the webpki (Mozilla) roots.
pub fn client_config(ca_pem: Option<&[u8]>) -> Result<Arc<rustls::ClientConfig>, String> {
    let mut roots = rustls::RootCertStore::empty();
    match ca_pem {
        Some(pem) => {
            for cert in CertificateDer::pem_slice_iter(pem) {
                let cert = cert.map_err(|e| format!("upstream CA: {e}"))?;
                roots.add(cert).map_err(|e| format!("upstream CA: {e}"))?;
            }
            if roots.is_empty() {
                return Err("upstream CA: no PEM certificate found".into());
            }
        }
        None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
    }
    // The ALPN list is set per connection kind by `super::conns::Clients`.
    let cfg = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
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
