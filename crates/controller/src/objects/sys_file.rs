//! `sys file ifile`, `sys file ssl-cert`, `sys file ssl-key` (created from a `sourcePath` under
//! the downloads directory; the bytes are copied into the file store, checksum
//! `SHA1:<size>:<hex>`; PUT points the object at a new file), and the `sys crypto cert|key`
//! install command with real X.509 / private-key parsing.

use std::io::Write as _;
use std::path::PathBuf;

use base64::Engine as _;
use http::Method;
use rustls_pki_types::PrivateKeyDer;
use rustls_pki_types::pem::PemObject;
use serde_json::{Map, Value, json};
use sha1::{Digest, Sha1};

use portcullis_admin::Reply;
use portcullis_admin::{Coll, KindSpec, PendingWrite, str_field};
use portcullis_admin::{Ctx, MgmtState};
use portcullis_admin::{MgmtError, MgmtResult};
use portcullis_admin::{ObjName, check_name};
use portcullis_admin::{commit, parse_object};
use portcullis_store::Table;
use portcullis_support::{iso8601_utc, unix_seconds};

pub static IFILE: KindSpec = KindSpec {
    path: "/mgmt/tm/sys/file/ifile",
    label: "iFile",
    prepare: prepare_file,
    ..KindSpec::BASE
};
pub static SSL_CERT: KindSpec = KindSpec {
    path: "/mgmt/tm/sys/file/ssl-cert",
    label: "Certificate",
    prepare: prepare_file,
    data_plane: true,
    ..KindSpec::BASE
};
pub static SSL_KEY: KindSpec = KindSpec {
    path: "/mgmt/tm/sys/file/ssl-key",
    label: "Key",
    prepare: prepare_file,
    data_plane: true,
    ..KindSpec::BASE
};

/// The message real systems give for a file that is not a certificate (or key).
pub const BAD_CERT: &str = "Key management library returned bad status: -4, Invalid Parameter";

/// The documented downloads path clients use in `sourcePath` / `from-local-file`.
pub const DOWNLOADS: &str = "/var/config/rest/downloads/";

/// Maps `file:/var/config/rest/downloads/x`, `file:///...`, `/var/.../x`, `x` or a path under
/// our own downloads dir to the file in `<data-dir>/downloads`, refusing anything outside it.
pub fn resolve_download(st: &MgmtState, source: &str) -> MgmtResult<PathBuf> {
    let s = source
        .strip_prefix("file://localhost")
        .or_else(|| source.strip_prefix("file://"))
        .or_else(|| source.strip_prefix("file:"))
        .unwrap_or(source);
    let own = st.downloads_dir();
    let own = own.to_string_lossy();
    let name = s
        .strip_prefix(DOWNLOADS)
        .or_else(|| {
            s.strip_prefix(own.as_ref())
                .map(|r| r.trim_start_matches('/'))
        })
        .unwrap_or(s);
    check_name(name).map_err(|_| {
        MgmtError::bad_request(format!(
            "The source path {source} is not a file under {DOWNLOADS}."
        ))
    })?;
    let p = st.downloads_dir().join(name);
    if !p.is_file() {
        return Err(MgmtError::bad_request(format!(
            "01070712:3: File not found: {DOWNLOADS}{name}"
        )));
    }
    Ok(p)
}

fn kind_dir(key: &str) -> &'static str {
    if key.starts_with(SSL_CERT.path) {
        "ssl-cert"
    } else if key.starts_with(SSL_KEY.path) {
        "ssl-key"
    } else {
        "ifile"
    }
}

/// Where the stored copy of a file object lives.
pub fn stored_path(st: &MgmtState, key: &str) -> PathBuf {
    let seg = key.rsplit('/').next().unwrap_or_default();
    st.filestore_dir().join(kind_dir(key)).join(seg)
}

fn prepare_file(p: &mut PendingWrite<'_, '_>) -> MgmtResult<()> {
    let src = str_field(p.obj, "sourcePath")?
        .ok_or_else(|| {
            MgmtError::bad_request(
                "sourcePath is required (file:/var/config/rest/downloads/<name>).",
            )
        })?
        .to_string();
    let path = resolve_download(p.st, &src)?;
    let bytes = std::fs::read(&path)
        .map_err(|e| MgmtError::internal(format!("reading {}: {e}", path.display())))?;
    let kind = kind_dir(p.key);
    let stored = match kind {
        "ssl-cert" => {
            let (pem, info) =
                parse_certificate(&bytes).ok_or_else(|| MgmtError::bad_request(BAD_CERT))?;
            p.obj.extend(info);
            pem.into_bytes()
        }
        "ssl-key" => {
            PrivateKeyDer::from_pem_slice(&bytes).map_err(|_| MgmtError::bad_request(BAD_CERT))?;
            p.obj.insert("securityType".into(), json!("normal"));
            bytes
        }
        _ => bytes,
    };
    let dest = stored_path(p.st, p.key);
    if kind == "ssl-key" {
        write_private(&dest, &stored)?;
    } else {
        write_durably(&dest, &stored)?;
    }
    let existing = p.tx.get(Table::Objects, p.key)?;
    let now = iso8601_utc(unix_seconds());
    let created = existing
        .as_ref()
        .and_then(|e| e["createTime"].as_str().map(str::to_string))
        .unwrap_or_else(|| now.clone());
    let created_by = existing
        .as_ref()
        .and_then(|e| e["createdBy"].as_str().map(str::to_string))
        .unwrap_or_else(|| p.user.to_string());
    let revision = existing
        .as_ref()
        .and_then(|e| e["revision"].as_u64())
        .map_or(1, |r| r + 1);
    let digest = Sha1::digest(&stored);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    p.obj.insert(
        "checksum".into(),
        json!(format!("SHA1:{}:{hex}", stored.len())),
    );
    p.obj.insert("createTime".into(), json!(created));
    p.obj.insert("createdBy".into(), json!(created_by));
    p.obj.insert("lastUpdateTime".into(), json!(now));
    p.obj.insert("mode".into(), json!(33188));
    p.obj.insert("revision".into(), json!(revision));
    p.obj.insert("size".into(), json!(stored.len()));
    p.obj.insert(
        "sourcePath".into(),
        json!(format!(
            "file://{DOWNLOADS}{}",
            path.file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default()
        )),
    );
    p.obj.insert("updatedBy".into(), json!(p.user));
    Ok(())
}

/// Writes a file via a temporary name + fsync + rename, so a crash leaves old or new bytes.
pub fn write_durably(dest: &std::path::Path, bytes: &[u8]) -> MgmtResult<()> {
    write_file(dest, bytes, 0o644)
}

/// [`write_durably`] for a private key: readable by the owner only, from its first byte.
pub fn write_private(dest: &std::path::Path, bytes: &[u8]) -> MgmtResult<()> {
    write_file(dest, bytes, 0o600)
}

fn write_file(dest: &std::path::Path, bytes: &[u8], mode: u32) -> MgmtResult<()> {
    let io = |e: std::io::Error| MgmtError::internal(format!("writing {}: {e}", dest.display()));
    if let Some(dir) = dest.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let tmp = dest.with_extension("tmp-write");
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
        options.mode(mode);
        // `mode` applies only when the file is created: an old temporary file gets it too.
        if tmp.exists() {
            std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(mode)).map_err(io)?;
        }
    }
    #[cfg(not(unix))]
    let _ = mode;
    let mut f = options.open(&tmp).map_err(io)?;
    f.write_all(bytes).map_err(io)?;
    f.sync_all().map_err(io)?;
    std::fs::rename(&tmp, dest).map_err(io)
}

/// Parses a PEM or DER X.509 certificate; returns its PEM and the fields shown on the object.
/// Subject and issuer are shown in RFC 4514 form (`CN=…,O=…,C=…`, most specific first), as the
/// system we stand in for shows them.
pub fn parse_certificate(bytes: &[u8]) -> Option<(String, Map<String, Value>)> {
    use x509_cert::der::Decode as _;
    let bytes = bytes.trim_ascii_start();
    let der: Vec<u8> = if bytes.starts_with(b"-----BEGIN") {
        rustls_pki_types::CertificateDer::from_pem_slice(bytes)
            .ok()?
            .to_vec()
    } else {
        bytes.to_vec()
    };
    let cert = x509_cert::Certificate::from_der(&der).ok()?.tbs_certificate;
    let fingerprint: Vec<String> = sha2::Sha256::digest(&der)
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect();
    let not_after = cert.validity.not_after.to_unix_duration().as_secs() as i64;
    let algorithm = cert.subject_public_key_info.algorithm.oid.to_string();
    let key_type = match algorithm.as_str() {
        "1.2.840.113549.1.1.1" => "rsa-public",
        "1.2.840.10045.2.1" => "ec-public",
        _ => "other-public",
    };
    let serial: Vec<String> = cert
        .serial_number
        .as_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let mut info = Map::new();
    info.insert("subject".into(), json!(cert.subject.to_string()));
    info.insert("issuer".into(), json!(cert.issuer.to_string()));
    info.insert("expirationDate".into(), json!(not_after));
    info.insert(
        "expirationString".into(),
        json!(iso8601_utc(not_after.max(0) as u64)),
    );
    info.insert(
        "fingerprint".into(),
        json!(format!("SHA256/{}", fingerprint.join(":"))),
    );
    info.insert("keyType".into(), json!(key_type));
    info.insert("serialNumber".into(), json!(serial.join(":")));
    let b64 = base64::engine::general_purpose::STANDARD.encode(&der);
    let mut pem = String::from("-----BEGIN CERTIFICATE-----\n");
    for chunk in b64.as_bytes().chunks(64) {
        pem.push_str(std::str::from_utf8(chunk).unwrap_or_default());
        pem.push('\n');
    }
    pem.push_str("-----END CERTIFICATE-----\n");
    Some((pem, info))
}

/// `POST /mgmt/tm/sys/crypto/cert|key {command: install, name, from-local-file}`; GET lists.
pub fn crypto_install(ctx: &Ctx<'_>, body: &[u8]) -> MgmtResult<Reply> {
    let is_cert = ctx.path.ends_with("/cert");
    let (spec, what) = if is_cert {
        (&SSL_CERT, "cert")
    } else {
        (&SSL_KEY, "key")
    };
    let coll = Coll {
        spec,
        path: spec.path.to_string(),
        kind_base: spec.path.trim_start_matches("/mgmt/").replace('/', ":"),
        parent: None,
    };
    let kind = format!("tm:sys:crypto:{what}:{what}state");
    if ctx.method == Method::GET {
        let items: Vec<Value> = portcullis_admin::children(ctx.st, spec.path)?
            .into_iter()
            .map(|mut m| {
                m.insert("kind".into(), json!(kind));
                Value::Object(m)
            })
            .collect();
        return Ok(Reply::json(json!({
            "kind": format!("tm:sys:crypto:{what}:{what}collectionstate"),
            "selfLink": ctx.st.link(&ctx.path),
            "items": ctx.query.apply(items),
        })));
    }
    if ctx.method != Method::POST {
        return Err(MgmtError::method_not_allowed(
            ctx.method.as_str(),
            &ctx.path,
        ));
    }
    let b = parse_object(body)?;
    if str_field(&b, "command")? != Some("install") {
        return Err(MgmtError::bad_request("The command must be 'install'."));
    }
    let name = str_field(&b, "name")?
        .ok_or_else(|| MgmtError::bad_request("name is required."))?
        .to_string();
    let from = str_field(&b, "from-local-file")?
        .ok_or_else(|| MgmtError::bad_request("from-local-file is required."))?
        .to_string();
    let path = resolve_download(ctx.st, &from)?;
    let n = ObjName::from_body(&name, None, None)?;
    let key = coll.key(&n);
    let attrs = Map::from_iter([(
        "sourcePath".to_string(),
        json!(format!("file:{}", path.display())),
    )]);
    ctx.st.store.write(|tx| {
        let existed = tx.get(Table::Objects, &key)?.is_some();
        commit(ctx.st, tx, &coll, &n, &key, attrs, !existed, &ctx.user.name)
    })?;
    ctx.st.reapply();
    Ok(Reply::json(json!({
        "kind": kind,
        "command": "install",
        "name": name,
        "from-local-file": from,
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn certificates_parse_and_garbage_does_not() {
        let ck = rcgen::generate_simple_self_signed(vec!["example.test".into()]).unwrap();
        let (pem, info) = parse_certificate(ck.cert.pem().as_bytes()).unwrap();
        assert!(pem.starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(info["fingerprint"].as_str().unwrap().starts_with("SHA256/"));
        // DER whose random serial holds '-' bytes must not be taken for PEM (it once was).
        for _ in 0..20 {
            let ck = rcgen::generate_simple_self_signed(vec!["example.test".into()]).unwrap();
            assert!(parse_certificate(ck.cert.der()).is_some());
        }
        assert!(parse_certificate(b"hello world").is_none());
        assert!(parse_certificate(ck.signing_key.serialize_pem().as_bytes()).is_none());
    }
}
