//! The one certificate verifier for servers that are trusted by fingerprint, not by a CA: the
//! central manager's calls to controllers and the controller's HTTPS monitors. It accepts the
//! certificate a server presents only when its SHA-256 fingerprint is the pinned one (any
//! certificate when no pin is set: the trust task's first contact, a monitor probing a member),
//! records the fingerprint it saw, and always verifies the handshake signatures, so a peer must
//! hold the key of the certificate it shows.

use std::sync::Arc;

use parking_lot::Mutex;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use sha2::{Digest, Sha256};

/// Uppercase hex SHA-256 of a DER certificate, bytes separated by `:` (as `openssl x509 -fingerprint`).
pub fn fingerprint_of(der: &[u8]) -> String {
    let d = Sha256::digest(der);
    let hex: Vec<String> = d.iter().map(|b| format!("{b:02X}")).collect();
    hex.join(":")
}

/// The certificate verifier: records the leaf fingerprint and enforces the pin.
#[derive(Debug)]
pub struct Pinned {
    provider: Arc<rustls::crypto::CryptoProvider>,
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
        let fingerprint = fingerprint_of(end_entity.as_ref());
        *self.seen.lock() = Some(fingerprint.clone());
        match &self.pin {
            Some(p) if !p.eq_ignore_ascii_case(&fingerprint) => {
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
        rustls::crypto::verify_tls12_signature(
            m,
            c,
            d,
            &self.provider.signature_verification_algorithms,
        )
    }
    fn verify_tls13_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            m,
            c,
            d,
            &self.provider.signature_verification_algorithms,
        )
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

impl Pinned {
    /// The fingerprint of the certificate the last handshake presented.
    pub fn seen(&self) -> Option<String> {
        self.seen.lock().clone()
    }
}

/// A client configuration (ring, safe default protocol versions, no ALPN) enforcing `pin`, and
/// its verifier (to read what was seen).
pub fn client_config(
    pin: Option<String>,
) -> Result<(rustls::ClientConfig, Arc<Pinned>), rustls::Error> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = Arc::new(Pinned {
        provider: provider.clone(),
        pin,
        seen: Mutex::new(None),
    });
    let cfg = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .dangerous()
        .with_custom_certificate_verifier(verifier.clone())
        .with_no_client_auth();
    Ok((cfg, verifier))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprint_is_colon_separated_sha256() {
        let fingerprint = fingerprint_of(b"abc");
        assert_eq!(fingerprint.len(), 32 * 3 - 1);
        assert!(fingerprint.starts_with("BA:78:16:BF"));
    }

    fn check(v: &Pinned, der: &[u8]) -> Result<ServerCertVerified, rustls::Error> {
        let name = ServerName::try_from("controller.example").unwrap();
        v.verify_server_cert(&CertificateDer::from(der), &[], &name, &[], UnixTime::now())
    }

    #[test]
    fn a_pin_accepts_its_certificate_only_and_records_what_it_saw() {
        let (_, any) = client_config(None).unwrap();
        assert!(check(&any, b"first contact").is_ok());
        assert_eq!(any.seen(), Some(fingerprint_of(b"first contact")));

        let pinned = fingerprint_of(b"the controller").to_lowercase();
        let (_, v) = client_config(Some(pinned)).unwrap();
        assert!(check(&v, b"the controller").is_ok());
        let err = check(&v, b"an impostor").unwrap_err();
        assert!(
            err.to_string().contains("pinned fingerprint mismatch"),
            "{err}"
        );
        assert_eq!(v.seen(), Some(fingerprint_of(b"an impostor")));
    }
}
