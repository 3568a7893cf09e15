//! `portcullis serve` as one process: the SOAP portal mounted on the admin API beside `/mgmt`
//! (users of the /mgmt user store, the 401 challenge first), and `--dns-listen` answering from the
//! zones the portal manages.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use hickory_proto::op::{Message, MessageType, OpCode, Query};
use hickory_proto::rr::{Name, RData, RecordType};

use crate::support::soap::{ZONE_NS, add_zone, envelope, view_zones};

const PASS: &str = "Serve-soap-dns-1";

struct Serve {
    child: Child,
    admin: String,
    dns: SocketAddr,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(dir: &std::path::Path) -> Serve {
    let mut child = Command::new(env!("CARGO_BIN_EXE_portcullis"))
        .args([
            "serve",
            "--admin-listen",
            "127.0.0.1:0",
            "--dns-listen",
            "127.0.0.1:0",
            "--data-dir",
        ])
        .arg(dir)
        .env("PORTCULLIS_ADMIN_PASSWORD", PASS)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn portcullis serve");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let (mut admin, mut dns) = (None, None);
    while admin.is_none() || dns.is_none() {
        let line = lines
            .next()
            .expect("serve exited before listening")
            .expect("read");
        if let Some(rest) = line.strip_prefix("portcullis: admin API listening on ") {
            admin = Some(rest.trim_end_matches("/mgmt").to_string());
        }
        if let Some(rest) = line.strip_prefix("portcullis: DNS listener on ") {
            dns = rest.split(' ').next().and_then(|a| a.parse().ok());
        }
    }
    std::thread::spawn(move || for _ in lines {});
    Serve {
        child,
        admin: admin.unwrap(),
        dns: dns.unwrap(),
    }
}

fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .tls_danger_accept_invalid_certs(true)
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

async fn soap(
    c: &reqwest::Client,
    s: &Serve,
    body: String,
    auth: Option<(&str, &str)>,
) -> (u16, String) {
    let mut req = c
        .post(format!("{}/iControl/iControlPortal.cgi", s.admin))
        .header("content-type", "text/xml; charset=utf-8")
        .header("soapaction", format!("\"{ZONE_NS}\""))
        .body(body);
    if let Some((u, p)) = auth {
        req = req.basic_auth(u, Some(p));
    }
    let r = req.send().await.unwrap();
    let status = r.status().as_u16();
    (status, r.text().await.unwrap())
}

async fn dns_a(addr: SocketAddr, name: &str) -> Vec<String> {
    let mut m = Message::new(7, MessageType::Query, OpCode::Query);
    m.add_query(Query::query(Name::from_ascii(name).unwrap(), RecordType::A));
    let sock = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    sock.send_to(&m.to_vec().unwrap(), addr).await.unwrap();
    let mut buf = vec![0u8; 4096];
    let n = tokio::time::timeout(Duration::from_secs(5), sock.recv(&mut buf))
        .await
        .unwrap()
        .unwrap();
    Message::from_vec(&buf[..n])
        .unwrap()
        .answers
        .iter()
        .filter_map(|r| match &r.data {
            RData::A(a) => Some(a.0.to_string()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn serve_mounts_soap_beside_mgmt_and_dns_answers_its_zones() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path());
    let c = client();

    // The /mgmt API still answers on the same port.
    let r = c
        .get(format!("{}/mgmt/tm/sys", s.admin))
        .basic_auth("admin", Some(PASS))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);

    let zone = add_zone(
        "serve.test.",
        &[
            "serve.test. 3600 IN SOA ns1.serve.test. hostmaster.serve.test. 1 10800 3600 604800 300",
            "serve.test. 3600 IN NS ns1.serve.test.",
            "www.serve.test. 300 IN A 192.0.2.80",
        ],
    );
    // suds sends without credentials first and expects the Basic challenge.
    let client_without = soap(&c, &s, zone.clone(), None).await;
    assert_eq!(client_without.0, 401);
    assert_eq!(
        soap(&c, &s, zone.clone(), Some(("admin", "wrong"))).await.0,
        401
    );
    let (status, body) = soap(&c, &s, zone, Some(("admin", PASS))).await;
    assert_eq!(status, 200, "{body}");

    let exists = envelope(ZONE_NS, "zone_exist", &view_zones(&["serve.test."]));
    let (status, body) = soap(&c, &s, exists, Some(("admin", PASS))).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(">1<"), "{body}");

    assert_eq!(
        dns_a(s.dns, "www.serve.test.").await,
        vec!["192.0.2.80".to_string()]
    );
}

/// Creates a user with `role` through the REST API of the same server.
async fn user(c: &reqwest::Client, s: &Serve, name: &str, role: &str) {
    let r = c
        .post(format!("{}/mgmt/tm/auth/user", s.admin))
        .basic_auth("admin", Some(PASS))
        .json(&serde_json::json!({"name": name, "password": PASS,
            "partitionAccess": [{"name": "all-partitions", "role": role}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
}

fn zone_text(zone: &str) -> String {
    add_zone(
        zone,
        &[
            &format!("{zone} 3600 IN SOA ns1.{zone} hostmaster.{zone} 1 10800 3600 604800 300"),
            &format!("{zone} 3600 IN NS ns1.{zone}"),
        ],
    )
}

#[tokio::test]
async fn roles_without_zone_rights_cannot_add_or_delete_zones_over_soap() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path());
    let c = client();
    let admin = Some(("admin", PASS));
    let exists = |zone: &str| envelope(ZONE_NS, "zone_exist", &view_zones(&[zone]));
    assert_eq!(soap(&c, &s, zone_text("victim.test."), admin).await.0, 200);
    // The REST role table: `sys` objects (zone files are system configuration) may be changed
    // by administrators and resource administrators; every role may read.
    let roles = [
        ("admin", true),
        ("resource-admin", true),
        ("manager", false),
        ("operator", false),
        ("guest", false),
    ];
    for (i, (role, writes)) in roles.into_iter().enumerate() {
        let name = if role == "admin" {
            "admin".to_string()
        } else {
            let n = format!("soap-{role}");
            user(&c, &s, &n, role).await;
            n
        };
        let creds = Some((name.as_str(), PASS));
        let zone = format!("role{i}.test.");
        let (status, body) = soap(&c, &s, zone_text(&zone), creds).await;
        let (_, created) = soap(&c, &s, exists(&zone), admin).await;
        let delete = envelope(ZONE_NS, "delete_zone", &view_zones(&["victim.test."]));
        let (del_status, del_body) = soap(&c, &s, delete, creds).await;
        let (_, victim) = soap(&c, &s, exists("victim.test."), admin).await;
        if writes {
            assert_eq!(status, 200, "{role}: {body}");
            assert!(created.contains(">1<"), "{role}: {created}");
            assert_eq!(del_status, 200, "{role}: {del_body}");
            assert!(victim.contains(">0<"), "{role}: {victim}");
            assert_eq!(soap(&c, &s, zone_text("victim.test."), admin).await.0, 200);
        } else {
            assert_eq!(status, 500, "{role}: {body}");
            assert!(body.contains("Common::AccessDenied"), "{role}: {body}");
            assert!(created.contains(">0<"), "{role} created a zone: {created}");
            assert_eq!(del_status, 500, "{role}: {del_body}");
            assert!(
                del_body.contains("Common::AccessDenied"),
                "{role}: {del_body}"
            );
            assert!(victim.contains(">1<"), "{role} deleted a zone: {victim}");
        }
        // Reads stay open to every role.
        let (status, body) = soap(&c, &s, exists(&zone), creds).await;
        assert_eq!(status, 200, "{role}: {body}");
    }
}
