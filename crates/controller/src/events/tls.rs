//! TLS towards a collector (syslog over TLS, JSON lines over TLS, Splunk HEC over HTTPS): rustls
//! with the ring provider, the profile's CA certificates (or the built-in webpki roots) and an
//! optional client certificate.

use std::sync::Arc;

use rustls_pki_types::pem::{self, PemObject};
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tokio_rustls::TlsConnector;

use super::config::TlsSettings;

/// Why a log profile's TLS settings cannot reach a collector; the sender logs it.
#[derive(Debug, thiserror::Error)]
pub enum CollectorTlsError {
    #[error("CA certificate: {0}")]
    CaPem(#[source] pem::Error),
    #[error("CA certificate: {0}")]
    Ca(#[source] rustls::Error),
    #[error("{0}")]
    Versions(#[source] rustls::Error),
    #[error("client certificate: {0}")]
    ClientCertPem(#[source] pem::Error),
    #[error("client key: {0}")]
    ClientKey(#[source] pem::Error),
    #[error("client certificate: {0}")]
    ClientCert(#[source] rustls::Error),
    #[error("'{name}' is not a valid TLS name")]
    ServerName { name: String },
}

/// A connector verifying collectors as `s` says; `alpn` protocols offered (none for syslog).
pub fn connector(s: &TlsSettings, alpn: &[&[u8]]) -> Result<TlsConnector, CollectorTlsError> {
    let mut roots = rustls::RootCertStore::empty();
    match &s.ca_pem {
        Some(pem) => {
            for c in CertificateDer::pem_slice_iter(pem.as_bytes()) {
                roots
                    .add(c.map_err(CollectorTlsError::CaPem)?)
                    .map_err(CollectorTlsError::Ca)?;
            }
        }
        None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
    }
    let builder = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(CollectorTlsError::Versions)?
    .with_root_certificates(roots);
    let mut cfg = match (&s.client_cert_pem, &s.client_key_pem) {
        (Some(c), Some(k)) => {
            let chain = CertificateDer::pem_slice_iter(c.as_bytes())
                .collect::<Result<Vec<_>, _>>()
                .map_err(CollectorTlsError::ClientCertPem)?;
            let key = PrivateKeyDer::from_pem_slice(k.as_bytes())
                .map_err(CollectorTlsError::ClientKey)?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(CollectorTlsError::ClientCert)?
        }
        _ => builder.with_no_client_auth(),
    };
    cfg.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Ok(TlsConnector::from(Arc::new(cfg)))
}

/// The name the collector's certificate must carry: `serverName`, else `host` (a DNS name or an
/// IP address).
pub fn server_name(s: &TlsSettings, host: &str) -> Result<ServerName<'static>, CollectorTlsError> {
    let name = s.server_name.as_deref().unwrap_or(host);
    let name = name.trim_start_matches('[').trim_end_matches(']');
    ServerName::try_from(name.to_string()).map_err(|_| CollectorTlsError::ServerName {
        name: name.to_string(),
    })
}
