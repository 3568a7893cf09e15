//! Files over real HTTPS: chunked uploads (Content-Range, names, limits), iFiles and their
//! checksums, certificate install with real X.509 parsing.

use reqwest::Method;
use serde_json::{Value, json};

use crate::support::mgmt::{Api, PASS, assert_error, configured, start};

#[tokio::test]
async fn uploads_ifiles_and_certificate_install() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path(), None);
    let api = Api::new(&s);
    let up = |name: &str, range: &str, body: Vec<u8>| {
        api.c
            .post(format!(
                "{}/mgmt/shared/file-transfer/uploads/{name}",
                s.base
            ))
            .basic_auth("admin", Some(PASS))
            .header("content-type", "application/octet-stream")
            .header("content-range", range.to_string())
            .body(body)
            .send()
    };
    let data: Vec<u8> = (0..1500u32).map(|i| (i % 251) as u8).collect();
    let r = up("data.bin", "0-999/1500", data[..1000].to_vec())
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.unwrap()["remainingByteCount"], 500);
    let r = up("data.bin", "1000-1499/1500", data[1000..].to_vec())
        .await
        .unwrap();
    let b: Value = r.json().await.unwrap();
    assert_eq!(b["remainingByteCount"], 0);
    assert_eq!(b["localFilePath"], "/var/config/rest/downloads/data.bin");
    assert_eq!(
        std::fs::read(dir.path().join("downloads/data.bin")).unwrap(),
        data
    );
    assert_eq!(up("...", "0-0/1", vec![1]).await.unwrap().status(), 400);
    assert_eq!(up("a%2fb", "0-0/1", vec![1]).await.unwrap().status(), 400);
    assert_eq!(up("a..b", "0-0/1", vec![1]).await.unwrap().status(), 400);
    assert_eq!(up("x", "0-5/1", vec![1]).await.unwrap().status(), 400);
    assert_eq!(up("x", "0-1/2", vec![1]).await.unwrap().status(), 400);
    // iFile from the upload: checksum SHA1:<size>:<hash>.
    let (st, f) = api
        .req(
            Method::POST,
            "/mgmt/tm/sys/file/ifile",
            Some(json!({"name": "if1", "sourcePath": "file:/var/config/rest/downloads/data.bin"})),
        )
        .await;
    assert_eq!(st, 200, "{f}");
    use sha1::Digest;
    let hex: String = sha1::Sha1::digest(&data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(f["checksum"], format!("SHA1:1500:{hex}"));
    assert_eq!(f["size"], 1500);
    let (st, _) = api
        .req(
            Method::POST,
            "/mgmt/tm/sys/file/ifile",
            Some(json!({"name": "if2", "sourcePath": "file:/etc/passwd"})),
        )
        .await;
    assert_eq!(st, 400);
    // PUT points the iFile at a new upload.
    let r = up("data2.bin", "0-2/3", b"abc".to_vec()).await.unwrap();
    assert_eq!(r.status(), 200);
    let (st, f2) = api
        .req(
            Method::PUT,
            "/mgmt/tm/sys/file/ifile/~Common~if1",
            Some(json!({"sourcePath": "file:/var/config/rest/downloads/data2.bin"})),
        )
        .await;
    assert_eq!(st, 200, "{f2}");
    assert_eq!(f2["size"], 3);
    assert_eq!(f2["revision"], 2);
    assert_eq!(f2["createTime"], f["createTime"]);
    assert_eq!(
        f2["checksum"],
        "SHA1:3:a9993e364706816aba3e25717850c26c9cd0d89d"
    );
    // ASM upload path works the same way.
    let r = api
        .c
        .post(format!(
            "{}/mgmt/tm/asm/file-transfer/uploads/pol.json",
            s.base
        ))
        .basic_auth("admin", Some(PASS))
        .header("content-range", "0-1/2")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    // Certificate install: a real certificate, then something that is not one.
    let mut params = rcgen::CertificateParams::new(vec!["site.test".into()]).unwrap();
    let mut name = rcgen::DistinguishedName::new();
    name.push(rcgen::DnType::CountryName, "US");
    name.push(rcgen::DnType::OrganizationName, "Example");
    name.push(rcgen::DnType::CommonName, "site.test");
    params.distinguished_name = name;
    let key = rcgen::KeyPair::generate().unwrap();
    let pem = params.self_signed(&key).unwrap().pem().into_bytes();
    let n = pem.len();
    assert_eq!(
        up("site.crt", &format!("0-{}/{n}", n - 1), pem)
            .await
            .unwrap()
            .status(),
        200
    );
    let (st, b) = api
        .req(Method::POST, "/mgmt/tm/sys/crypto/cert", Some(json!({"command": "install", "name": "site.crt", "from-local-file": "/var/config/rest/downloads/site.crt"})))
        .await;
    assert_eq!(st, 200, "{b}");
    let (st, c) = api
        .req(
            Method::GET,
            "/mgmt/tm/sys/file/ssl-cert/~Common~site.crt",
            None,
        )
        .await;
    assert_eq!(st, 200);
    // The distinguished names read most specific first (RFC 4514), as BIG-IP shows them.
    assert_eq!(c["subject"], "CN=site.test,O=Example,C=US", "{c}");
    assert_eq!(c["issuer"], c["subject"], "self-signed: {c}");
    assert_eq!(c["keyType"], "ec-public", "{c}");
    assert!(
        c["fingerprint"].as_str().unwrap().starts_with("SHA256/"),
        "{c}"
    );
    let (st, b) = api
        .req(Method::POST, "/mgmt/tm/sys/crypto/cert", Some(json!({"command": "install", "name": "bad.crt", "from-local-file": "/var/config/rest/downloads/data.bin"})))
        .await;
    assert_eq!(st, 400);
    assert_error(&b, 400);
    assert_eq!(
        b["message"],
        "Key management library returned bad status: -4, Invalid Parameter"
    );
}

#[tokio::test]
async fn upload_size_limit_is_enforced() {
    let (_dir, s, api) =
        configured(r#"{"mgmt": {"max_upload_bytes": 1000, "data_dir": "unused"}}"#);
    let r = api
        .c
        .post(format!("{}/mgmt/shared/file-transfer/uploads/big", s.base))
        .basic_auth("admin", Some(PASS))
        .header("content-range", "0-9/1001")
        .body(vec![0u8; 10])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 413);
}

#[tokio::test]
async fn a_resource_admin_cannot_download_the_admin_tls_private_key() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path(), None);
    let api = Api::new(&s);
    let ra = api.add_user("ra", "Ra-pass-12", "resource-admin").await;
    let key = std::fs::read(dir.path().join("admin-key.pem")).unwrap();
    for name in ["default.key", "../admin-key.pem", "..%2Fadmin-key.pem"] {
        let r =
            ra.c.get(format!(
                "{}/mgmt/shared/file-transfer/downloads/{name}",
                s.base
            ))
            .basic_auth("ra", Some("Ra-pass-12"))
            .send()
            .await
            .unwrap();
        let status = r.status();
        let body = r.bytes().await.unwrap();
        assert_ne!(status, 200, "{name}");
        assert!(
            !body.windows(32).any(|w| key.windows(32).any(|k| k == w)),
            "{name}: the key is in the answer"
        );
    }
    assert!(
        !dir.path().join("downloads/default.key").exists(),
        "the key lives in the downloads directory"
    );
    // The default client-ssl profile still has its key, kept private in the file store.
    let (st, b) = api
        .req(
            Method::GET,
            "/mgmt/tm/sys/file/ssl-key/~Common~default.key",
            None,
        )
        .await;
    assert_eq!(st, 200, "{b}");
    use std::os::unix::fs::PermissionsExt as _;
    let stored = dir.path().join("filestore/ssl-key/~Common~default.key");
    let mode = std::fs::metadata(&stored).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{mode:o}");
}
