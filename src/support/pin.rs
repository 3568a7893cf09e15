//! Certificate pinning for calls to controllers: a rustls verifier that accepts the certificate a
//! controller presents only when its SHA-256 fingerprint is the pinned one (any certificate when no
//! pin is set, the trust task's first contact), records the fingerprint it saw, and always verifies
//! the handshake signatures. Imports: `mgmt::monitor::AnyCert` (signature checks).

use std::sync::Arc;

use parking_lot::Mutex;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use sha2::{Digest, Sha256};

use crate::mgmt::monitor::AnyCert;

/// Uppercase hex SHA-256 of a DER certificate, bytes separated by `:` (as `openssl x509 -fingerprint`).
pub fn fingerprint_of(der: &[u8]) -> String {
    let d = Sha256::digest(der);
    let hex: Vec<String> = d.iter().map(|b| format!("{b:02X}")).collect();
    hex.join(":")
}

/// The certificate verifier: records the leaf fingerprint and enforces the pin.
#[derive(Debug)]
pub struct Pinned {
    inner: AnyCert,
    pin: Option<String>,
    seen: Mutex<Option<String>>,
}

impl ServerCertVerifier for Pinned {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let fp = fingerprint_of(end_entity.as_ref());
        *self.seen.lock() = Some(fp.clone());
        match &self.pin {
            Some(p) if !p.eq_ignore_ascii_case(&fp) => {
                Err(rustls::Error::General("pinned fingerprint mismatch".into()))
            }
            _ => Ok(ServerCertVerified::assertion()),
        }
    }
    fn verify_tls12_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(m, c, d)
    }
    fn verify_tls13_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(m, c, d)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

impl Pinned {
    /// The fingerprint of the certificate the last handshake presented.
    pub fn seen(&self) -> Option<String> {
        self.seen.lock().clone()
    }
}

/// A TLS connector (HTTP/1.1 ALPN) enforcing `pin`, and its verifier (to read what was seen).
pub fn connector(
    pin: Option<String>,
) -> Result<(tokio_rustls::TlsConnector, Arc<Pinned>), rustls::Error> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = Arc::new(Pinned {
        inner: AnyCert(provider.clone()),
        pin,
        seen: Mutex::new(None),
    });
    let mut cfg = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .dangerous()
        .with_custom_certificate_verifier(verifier.clone())
        .with_no_client_auth();
    cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok((tokio_rustls::TlsConnector::from(Arc::new(cfg)), verifier))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprint_is_colon_separated_sha256() {
        let fp = fingerprint_of(b"abc");
        assert_eq!(fp.len(), 32 * 3 - 1);
        assert!(fp.starts_with("BA:78:16:BF"));
    }
}
