//! The TLS and WAF classes of an AS3 application: TLS_Server, Certificate (inline PEM, checked
//! to parse and to match its key) and WAF_Policy (`url`, `file` or inline `policy`).
//! Pure: no IO.

use std::sync::Arc;

use base64::Engine as _;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::Value;

use super::classes::{Item, Pem, Ptr, Target, WafSource, pointer};
use super::props::{Errors, Props, valid_bigip_path};
use crate::objects::sys_file::parse_certificate;

pub fn tls_server(p: &Props<'_>, errs: &mut Errors) -> Item {
    p.only(&["certificates"], errs);
    let mut certificates = Vec::new();
    match p.array("certificates", errs) {
        Some(a) if !a.is_empty() => {
            for (i, c) in a.iter().enumerate() {
                let at = format!("{}/{i}", p.at("certificates"));
                let Some(cm) = c.as_object() else {
                    errs.push(&at, "should be object");
                    continue;
                };
                let cp = Props::new(at.clone(), cm);
                cp.only(&["certificate", "matchToSNI", "sniDefault"], errs);
                cp.str("matchToSNI", errs);
                cp.bool("sniDefault", false, errs);
                match cm.get("certificate").map(|v| pointer(&cp, "certificate", v, &["Certificate"], errs)) {
                    // A certificate and its key come together from a declared Certificate item
                    // (which may itself name existing files with `bigip`).
                    Some(Some(Ptr { target: Target::Bigip(_), .. })) => errs.push(
                        &cp.at("certificate"),
                        "should point to a Certificate of the declaration (a Certificate may use bigip files)",
                    ),
                    Some(Some(mut x)) => {
                        x.prop = format!("certificates/{i}/certificate");
                        certificates.push(x);
                    }
                    Some(None) => {}
                    None => errs.push(&at, "should have required property 'certificate'"),
                }
            }
        }
        _ => errs.push(
            &p.path,
            "should have required property 'certificates' (a non-empty array)",
        ),
    }
    Item::TlsServer { certificates }
}

fn pem(p: &Props<'_>, key: &str, errs: &mut Errors) -> Option<Pem> {
    match p.map.get(key)? {
        Value::String(s) => Some(Pem::Inline(s.clone())),
        Value::Object(o) => match o.get("bigip").and_then(Value::as_str) {
            Some(b) if valid_bigip_path(b) && o.len() == 1 => Some(Pem::Bigip(b.to_string())),
            _ => {
                errs.push(&p.at(key), "should be a PEM string or {\"bigip\": path}");
                None
            }
        },
        _ => {
            errs.push(&p.at(key), "should be a PEM string or {\"bigip\": path}");
            None
        }
    }
}

pub fn certificate(p: &Props<'_>, errs: &mut Errors) -> Option<Item> {
    p.only(&["certificate", "privateKey", "chainCA"], errs);
    let before = errs.0.len();
    let cert = pem(p, "certificate", errs);
    let key = pem(p, "privateKey", errs);
    let chain = pem(p, "chainCA", errs);
    if cert.is_none() && errs.0.len() == before {
        errs.push(&p.path, "should have required property 'certificate'");
    }
    if key.is_none() && errs.0.len() == before {
        errs.push(&p.path, "should have required property 'privateKey'");
    }
    let (cert, key) = (cert?, key?);
    if let Pem::Inline(c) = &cert
        && parse_certificate(c.as_bytes()).is_none()
    {
        errs.push(&p.at("certificate"), "is not a PEM X.509 certificate");
    }
    if let Some(Pem::Inline(c)) = &chain
        && parse_certificate(c.as_bytes()).is_none()
    {
        errs.push(&p.at("chainCA"), "is not a PEM X.509 certificate");
    }
    if let Pem::Inline(k) = &key {
        if let Ok(der) = PrivateKeyDer::from_pem_slice(k.as_bytes()) {
            if let Pem::Inline(c) = &cert
                && let Ok(cd) = CertificateDer::from_pem_slice(c.as_bytes())
                && !key_matches(cd, der)
            {
                errs.push(&p.at("privateKey"), "does not match the certificate");
            }
        } else {
            errs.push(&p.at("privateKey"), "is not an unencrypted PEM private key");
        }
    }
    Some(Item::Certificate { cert, key, chain })
}

/// Whether a TLS server could be built from this certificate and key (rustls checks that the
/// key belongs to the certificate).
fn key_matches(cert: CertificateDer<'static>, key: PrivateKeyDer<'static>) -> bool {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map(|b| {
            b.with_no_client_auth()
                .with_single_cert(vec![cert], key)
                .is_ok()
        })
        .unwrap_or(false)
}

pub fn waf_policy(p: &Props<'_>, errs: &mut Errors) -> Option<Item> {
    p.only(
        &["url", "ignoreChanges", "file", "policy", "enforcementMode"],
        errs,
    );
    let given: Vec<&str> = ["url", "file", "policy"]
        .into_iter()
        .filter(|k| p.map.contains_key(*k))
        .collect();
    if given.len() != 1 {
        errs.push(
            &p.path,
            "should have exactly one of the properties url, file, policy",
        );
        return None;
    }
    let enforcement = p.map.get("enforcementMode").map(|_| {
        p.choice(
            "enforcementMode",
            "blocking",
            &["blocking", "transparent"],
            errs,
        )
    });
    let ignore_changes = p.bool("ignoreChanges", false, errs);
    let source = match given[0] {
        "url" => {
            let url = match &p.map["url"] {
                Value::String(s) => Some(s.clone()),
                Value::Object(o) => {
                    Props::new(p.at("url"), o).only(&["url"], errs);
                    o.get("url").and_then(Value::as_str).map(str::to_string)
                }
                _ => None,
            };
            match url.filter(|u| {
                u.starts_with("http://") || u.starts_with("https://") || u.starts_with("file:")
            }) {
                Some(url) => WafSource::Url {
                    url,
                    ignore_changes,
                },
                None => {
                    errs.push(
                        &p.at("url"),
                        "should be an http, https or file URL (or {\"url\": ...})",
                    );
                    return None;
                }
            }
        }
        "file" => WafSource::File(p.str("file", errs)?.to_string()),
        _ => match inline_policy(&p.map["policy"]) {
            Ok(v) => WafSource::Inline(v),
            Err(e) => {
                errs.push(&p.at("policy"), e);
                return None;
            }
        },
    };
    Some(Item::WafPolicy {
        source,
        enforcement,
    })
}

/// An inline policy: the document itself, its JSON text, `{text}` or `{base64}`.
fn inline_policy(v: &Value) -> Result<Value, String> {
    let text =
        match v {
            Value::Object(o) if o.len() == 1 && o.contains_key("text") => o["text"]
                .as_str()
                .ok_or("text should be string")?
                .to_string(),
            Value::Object(o) if o.len() == 1 && o.contains_key("base64") => {
                let b = o["base64"].as_str().ok_or("base64 should be string")?;
                let raw = base64::engine::general_purpose::STANDARD
                    .decode(b.trim())
                    .map_err(|e| format!("base64 does not decode: {e}"))?;
                String::from_utf8(raw).map_err(|_| "the decoded policy is not UTF-8 text")?
            }
            Value::Object(_) => return Ok(v.clone()),
            Value::String(s) => s.clone(),
            _ => return Err(
                "should be a policy object, its JSON text, {\"text\": ...} or {\"base64\": ...}"
                    .into(),
            ),
        };
    match serde_json::from_str::<Value>(&text) {
        Ok(doc @ Value::Object(_)) => Ok(doc),
        _ => Err("is not a JSON policy document".into()),
    }
}
