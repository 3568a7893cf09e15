//! The DNS listener answering from zones managed through the SOAP portal: UDP and TCP, AA
//! answers, NXDOMAIN/NODATA with the SOA, REFUSED outside the zones, changes visible at once, and
//! `dig` (bind9-dnsutils) against it.

use std::net::SocketAddr;
use std::time::Duration;

use hickory_proto::op::{Edns, Message, MessageType, OpCode, Query, ResponseCode};
use hickory_proto::rr::{Name, RData, RecordType};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::soap::*;

const SOA: &str =
    "example.com. 3600 IN SOA ns1.example.com. hostmaster.example.com. 7 10800 3600 604800 300";

fn query(name: &str, rtype: RecordType, edns: bool) -> Vec<u8> {
    let mut m = Message::new(0x5a5a, MessageType::Query, OpCode::Query);
    m.metadata.recursion_desired = true;
    m.add_query(Query::query(Name::from_ascii(name).unwrap(), rtype));
    if edns {
        m.set_edns(Edns::new());
    }
    m.to_vec().unwrap()
}

async fn udp(addr: SocketAddr, name: &str, rtype: RecordType) -> Message {
    let s = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    s.send_to(&query(name, rtype, true), addr).await.unwrap();
    let mut buf = vec![0u8; 4096];
    let n = tokio::time::timeout(Duration::from_secs(5), s.recv(&mut buf))
        .await
        .unwrap()
        .unwrap();
    Message::from_vec(&buf[..n]).unwrap()
}

async fn tcp(addr: SocketAddr, name: &str, rtype: RecordType) -> Message {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let q = query(name, rtype, false);
    s.write_all(&(q.len() as u16).to_be_bytes()).await.unwrap();
    s.write_all(&q).await.unwrap();
    let mut len = [0u8; 2];
    s.read_exact(&mut len).await.unwrap();
    let mut buf = vec![0u8; u16::from_be_bytes(len) as usize];
    s.read_exact(&mut buf).await.unwrap();
    Message::from_vec(&buf).unwrap()
}

fn a_of(m: &Message) -> Vec<String> {
    m.answers
        .iter()
        .filter_map(|r| match &r.data {
            RData::A(a) => Some(a.0.to_string()),
            _ => None,
        })
        .collect()
}

async fn setup() -> Harness {
    let h = Harness::start().await;
    let r = h
        .call(&add_zone(
            "example.com.",
            &[
                SOA,
                "example.com. 3600 IN NS ns1.example.com.",
                "ns1.example.com. 3600 IN A 10.0.0.53",
                "alias.example.com. 60 IN CNAME www.example.com.",
                "sub.example.com. 3600 IN NS ns.sub.example.com.",
                "ns.sub.example.com. 3600 IN A 10.9.9.9",
            ],
        ))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let add = add_a(
        &["example.com."],
        &[&[("www.example.com.", "10.0.0.1", 300)]],
        Some("0"),
    );
    assert_eq!(h.call(&add).await.status, 200);
    h
}

#[tokio::test]
async fn answers_over_udp_and_tcp_with_negative_answers_carrying_the_soa() {
    let h = setup().await;
    for m in [
        udp(h.dns, "www.example.com.", RecordType::A).await,
        tcp(h.dns, "WWW.Example.COM.", RecordType::A).await,
    ] {
        assert_eq!(m.metadata.response_code, ResponseCode::NoError);
        assert!(m.metadata.authoritative);
        assert_eq!(m.metadata.id, 0x5a5a);
        assert_eq!(a_of(&m), ["10.0.0.1"]);
        assert_eq!(m.answers[0].ttl, 300);
    }
    let nx = udp(h.dns, "nope.example.com.", RecordType::A).await;
    assert_eq!(nx.metadata.response_code, ResponseCode::NXDomain);
    assert!(nx.answers.is_empty());
    assert!(matches!(nx.authorities[0].data, RData::SOA(_)));
    assert_eq!(
        nx.authorities[0].ttl, 300,
        "negative TTL is the SOA minimum"
    );

    let nodata = tcp(h.dns, "www.example.com.", RecordType::MX).await;
    assert_eq!(nodata.metadata.response_code, ResponseCode::NoError);
    assert!(nodata.answers.is_empty());
    assert!(matches!(nodata.authorities[0].data, RData::SOA(_)));

    let cname = udp(h.dns, "alias.example.com.", RecordType::A).await;
    assert!(matches!(cname.answers[0].data, RData::CNAME(_)));
    assert_eq!(a_of(&cname), ["10.0.0.1"]);

    let referral = udp(h.dns, "host.sub.example.com.", RecordType::A).await;
    assert!(!referral.metadata.authoritative);
    assert!(matches!(referral.authorities[0].data, RData::NS(_)));
    assert_eq!(referral.additionals.len(), 1, "glue");

    let refused = udp(h.dns, "www.example.org.", RecordType::A).await;
    assert_eq!(refused.metadata.response_code, ResponseCode::Refused);
}

#[tokio::test]
async fn soap_changes_are_visible_to_the_next_query() {
    let h = setup().await;
    let old = [("www.example.com.", "10.0.0.1", 300)];
    let new = [("www.example.com.", "10.0.0.2", 300)];
    let upd = update_a(&old, &new);
    assert_eq!(h.call(&upd).await.status, 200);
    assert_eq!(
        a_of(&udp(h.dns, "www.example.com.", RecordType::A).await),
        ["10.0.0.2"]
    );
    let soa = udp(h.dns, "example.com.", RecordType::SOA).await;
    match &soa.answers[0].data {
        RData::SOA(s) => assert_eq!(s.serial, 9, "two changes after creation"),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        h.call(&envelope(
            ZONE_NS,
            "delete_zone",
            &view_zones(&["example.com."])
        ))
        .await
        .status,
        200
    );
    let gone = udp(h.dns, "www.example.com.", RecordType::A).await;
    assert_eq!(gone.metadata.response_code, ResponseCode::Refused);
}

#[tokio::test]
async fn garbage_gets_formerr_or_silence() {
    let h = setup().await;
    let s = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let mut junk = vec![0x12, 0x34];
    junk.extend_from_slice(&[0xff; 20]);
    s.send_to(&junk, h.dns).await.unwrap();
    let mut buf = vec![0u8; 512];
    let n = tokio::time::timeout(Duration::from_secs(5), s.recv(&mut buf))
        .await
        .unwrap()
        .unwrap();
    let m = Message::from_vec(&buf[..n]).unwrap();
    assert_eq!(m.metadata.id, 0x1234);
    assert_eq!(m.metadata.response_code, ResponseCode::FormErr);
    // the listener still answers afterwards
    assert_eq!(
        a_of(&udp(h.dns, "www.example.com.", RecordType::A).await),
        ["10.0.0.1"]
    );
}

fn dig(addr: SocketAddr, args: &[&str]) -> String {
    let out = std::process::Command::new("dig")
        .arg(format!("@{}", addr.ip()))
        .args(["-p", &addr.port().to_string(), "+tries=1", "+time=3"])
        .args(args)
        .output()
        .expect("dig is required for this test: apt-get install bind9-dnsutils");
    assert!(
        out.status.success(),
        "dig failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dig_answers_a_record_added_through_soap() {
    let h = setup().await;
    let addr = h.dns;
    let (short, full, tcp_short, nx) = tokio::task::spawn_blocking(move || {
        (
            dig(addr, &["+short", "www.example.com", "A"]),
            dig(addr, &["www.example.com", "A"]),
            dig(addr, &["+tcp", "+short", "www.example.com", "A"]),
            dig(addr, &["nope.example.com", "A"]),
        )
    })
    .await
    .unwrap();
    assert_eq!(short.trim(), "10.0.0.1");
    assert_eq!(tcp_short.trim(), "10.0.0.1");
    assert!(
        full.contains("status: NOERROR") && full.contains(" aa"),
        "{full}"
    );
    assert!(
        nx.contains("status: NXDOMAIN")
            && nx.contains("IN\tSOA\tns1.example.com. hostmaster.example.com. 8"),
        "serial bumped by add_a: {nx}"
    );
}
