//! Security events out to SIEMs, against real receivers: a real `rsyslogd` receiving CEF over
//! syslog/TLS (RFC 5425, client certificate required), LEEF over syslog/TCP, the predefined
//! format over UDP and JSON lines over TCP, each record parsed back field by field and compared
//! with the stored event; a local HTTPS Splunk HTTP Event Collector receiving batches with its
//! token; and a dead receiver, which drops its oldest events (counted) without slowing a request.
//! The controller runs in this process, wired as `portcullis serve` wires it.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Full;
use parking_lot::Mutex;
use reqwest::Method;
use serde_json::{Value, json};

use crate::support::events::{attack, controller};
use crate::support::siem::{Rsyslog, parse_cef, parse_leef, pki};
use crate::support::tls::tls_listener;
use crate::support::upstream::authorization_and_body;

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// The stored event of `id` (its REST item).
async fn stored(c: &crate::support::events::Controller, id: &str) -> Value {
    c.event_by_support_id(id).await["items"][0].clone()
}

fn names(item: &Value) -> String {
    item["violations"]
        .as_array()
        .expect("violations")
        .iter()
        .map(|v| v["name"].as_str().unwrap_or_default().to_string())
        .collect::<Vec<_>>()
        .join(",")
}

fn signature_ids(item: &Value) -> String {
    item["violations"]
        .as_array()
        .expect("violations")
        .iter()
        .flat_map(|v| v["signatureIds"].as_array().cloned().unwrap_or_default())
        .map(|s| s.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cef_leef_syslog_and_json_lines_reach_rsyslog_field_by_field() {
    let pki = pki();
    let rs = Rsyslog::start(&pki);
    let c = controller(|_| {}).await;
    let at = |p: u16| json!([{"name": format!("127.0.0.1:{p}")}]);
    let (s, b) = c
        .api
        .req(
            Method::POST,
            "/mgmt/tm/security/log/profile",
            Some(json!({"name": "siem", "application": {
                "cef-tls": {"remoteStorage": "arcsight", "protocol": "tls", "servers": at(rs.tls),
                            "tls": {"caCertificate": pki.ca, "serverName": "localhost",
                                    "clientCertificate": pki.client_cert, "clientKey": pki.client_key}},
                "leef-tcp": {"remoteStorage": "remote", "protocol": "tcp", "servers": at(rs.tcp),
                             "format": {"type": "leef"}, "facility": "local3"},
                "kv-udp": {"remoteStorage": "remote", "protocol": "udp", "servers": at(rs.udp)},
                "json-tcp": {"remoteStorage": "json-lines", "servers": at(rs.json)}}})),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    let vs = c
        .protected_virtual(json!({"securityLogProfiles": ["siem"]}))
        .await;
    let mut ids = Vec::new();
    for _ in 0..20 {
        ids.push(attack(vs).await);
    }
    let host = hostname();

    // CEF over TLS: rsyslog parsed the RFC 5424 header; every CEF field is the stored event's.
    let tls = rs.lines_with("tls.log", "CEF:0|", ids.len()).await;
    assert_eq!(tls.len(), ids.len(), "{}", rs.read("rsyslogd.err"));
    let mut seen = Vec::new();
    for line in &tls {
        let f: Vec<&str> = line.splitn(7, '\t').collect();
        let pid = std::process::id().to_string();
        assert_eq!(
            &f[..6],
            ["local0", &host, "portcullis", &pid, "blocked", "-"]
        );
        let cef = parse_cef(f[6]);
        let x = &cef.ext;
        let id = x["externalId"].clone();
        let ev = stored(&c, &id).await;
        assert_eq!(
            cef.header,
            [
                "0",
                "Portcullis",
                "WAF",
                env!("CARGO_PKG_VERSION"),
                ev["violations"][0]["name"].as_str().unwrap(),
                "Request blocked",
                &(ev["violationRating"].as_u64().unwrap() * 2).to_string(),
            ]
        );
        let want: BTreeMap<&str, String> = [
            (
                "rt",
                (ev["timeMicros"].as_u64().unwrap() / 1000).to_string(),
            ),
            ("dvchost", host.clone()),
            ("externalId", id.clone()),
            ("src", ev["clientIp"].as_str().unwrap().to_string()),
            ("requestMethod", "GET".into()),
            ("request", ev["uri"].as_str().unwrap().to_string()),
            ("app", "HTTP/1.1".into()),
            ("act", "blocked".into()),
            ("cn1", "403".into()),
            ("cn1Label", "responseCode".into()),
            ("cn2", ev["violationRating"].to_string()),
            ("cn2Label", "violationRating".into()),
            ("cs1", ev["policyName"].as_str().unwrap().to_string()),
            ("cs1Label", "policyName".into()),
            ("cs2", "/Common/vs".into()),
            ("cs2Label", "virtualServer".into()),
            ("cs3", names(&ev)),
            ("cs3Label", "violations".into()),
            ("cs4", signature_ids(&ev)),
            ("cs4Label", "signatureIds".into()),
            ("cs5", id.clone()),
            ("cs5Label", "supportId".into()),
            ("deviceProcessName", "portcullis".into()),
        ]
        .into_iter()
        .collect();
        for (k, v) in &want {
            assert_eq!(&x[*k], v, "CEF {k} in {line}");
        }
        assert!(
            x["msg"].starts_with(ev["violations"][0]["name"].as_str().unwrap()),
            "{line}"
        );
        assert_eq!(x.len(), want.len() + 1, "no other key: {x:?}");
        seen.push(id);
    }
    seen.sort();
    let mut want_ids = ids.clone();
    want_ids.sort();
    assert_eq!(seen, want_ids, "every event once");

    // LEEF over TCP, facility local3.
    let tcp = rs.lines_with("tcp.log", "LEEF:2.0|", ids.len()).await;
    assert_eq!(tcp.len(), ids.len());
    for line in &tcp {
        let f: Vec<&str> = line.splitn(7, '\t').collect();
        assert_eq!((f[0], f[5]), ("local3", "-"), "{line}");
        let (header, a) = parse_leef(f[6]);
        let ev = stored(&c, &a["supportId"]).await;
        assert_eq!(header[..3], ["2.0", "Portcullis", "WAF"]);
        assert_eq!(header[4], ev["violations"][0]["name"].as_str().unwrap());
        assert_eq!(a["devTime"], ev["requestDatetime"].as_str().unwrap());
        assert_eq!(a["cat"], "blocked");
        assert_eq!(a["src"], ev["clientIp"].as_str().unwrap());
        assert_eq!(a["url"], ev["url"].as_str().unwrap());
        assert_eq!(a["query"], ev["queryString"].as_str().unwrap());
        assert_eq!(a["responseCode"], "403");
        assert_eq!(a["policy"], ev["policyName"].as_str().unwrap());
        assert_eq!(a["virtualServer"], "/Common/vs");
        assert_eq!(a["violations"], names(&ev));
        assert_eq!(a["signatureIds"], signature_ids(&ev));
        assert_eq!(a["violationRating"], ev["violationRating"].to_string());
        assert_eq!(
            a["sev"],
            (ev["violationRating"].as_u64().unwrap() * 2).to_string()
        );
    }

    // The predefined key="value" format over UDP, with its structured data.
    let udp = rs.lines_with("udp.log", "support_id=", ids.len()).await;
    assert_eq!(udp.len(), ids.len());
    for line in &udp {
        let f: Vec<&str> = line.splitn(7, '\t').collect();
        assert!(f[5].starts_with("[asm@32473 supportId=\""), "{line}");
        assert!(
            ids.iter()
                .any(|id| f[6].contains(&format!("support_id=\"{id}\""))),
            "{line}"
        );
    }

    // JSON lines over TCP: one event object per line.
    let json_lines = rs.lines_with("json.log", "supportId", ids.len()).await;
    assert_eq!(json_lines.len(), ids.len());
    for line in &json_lines {
        let v: Value = serde_json::from_str(line).expect("one JSON object per line");
        assert!(ids.contains(&v["supportId"].as_str().unwrap().to_string()));
        assert_eq!(
            v["policyFullPath"],
            stored(&c, v["supportId"].as_str().unwrap()).await["policyName"]
        );
        assert_eq!(v["unitHostname"], host);
    }
}

/// A Splunk HTTP Event Collector on loopback over HTTPS: accepts token `good-token`, records each
/// batch's events.
struct Hec {
    addr: SocketAddr,
    batches: Arc<Mutex<Vec<Vec<Value>>>>,
}

async fn hec(pki: &crate::support::siem::Pki) -> Hec {
    let batches: Arc<Mutex<Vec<Vec<Value>>>> = Arc::default();
    let b = batches.clone();
    let addr = tls_listener(&pki.server_cert, &pki.server_key, &[], move |tls| {
        let b = b.clone();
        async move {
            let svc = hyper::service::service_fn(move |r: http::Request<hyper::body::Incoming>| {
                let b = b.clone();
                async move {
                    let path = r.uri().path().to_string();
                    let (auth, body) = authorization_and_body(r).await;
                    let (status, answer) = if path != "/services/collector/event" {
                        (404, json!({"text": "not found", "code": 404}))
                    } else if auth != "Splunk good-token" {
                        (403, json!({"text": "Invalid token", "code": 4}))
                    } else {
                        let events: Vec<Value> = serde_json::Deserializer::from_slice(&body)
                            .into_iter::<Value>()
                            .collect::<Result<_, _>>()
                            .expect("concatenated JSON events");
                        b.lock().push(events);
                        (200, json!({"text": "Success", "code": 0}))
                    };
                    Ok::<_, Infallible>(
                        http::Response::builder()
                            .status(status)
                            .body(Full::new(Bytes::from(answer.to_string())))
                            .expect("response"),
                    )
                }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(tls), svc)
                .await;
        }
    })
    .await;
    Hec { addr, batches }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn splunk_hec_receives_batches_over_https_with_its_token() {
    let pki = pki();
    let hec = hec(&pki).await;
    let c = controller(|_| {}).await;
    let entry = |token: &str| {
        json!({"remoteStorage": "splunk-hec", "tls": {"caCertificate": pki.ca},
               "hec": {"url": format!("https://localhost:{}", hec.addr.port()), "token": token,
                       "index": "waf", "batchEvents": 10, "flushMs": 200}})
    };
    let (s, b) = c
        .api
        .req(
            Method::POST,
            "/mgmt/tm/security/log/profile",
            Some(json!({"name": "hec", "application": {"good": entry("good-token"), "bad": entry("wrong")}})),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    let vs = c
        .protected_virtual(json!({"securityLogProfiles": ["hec"]}))
        .await;
    let mut ids = Vec::new();
    for _ in 0..25 {
        ids.push(attack(vs).await);
    }
    let deadline = Instant::now() + Duration::from_secs(15);
    let events = loop {
        let got: Vec<Value> = hec.batches.lock().iter().flatten().cloned().collect();
        if got.len() >= ids.len() || Instant::now() > deadline {
            break got;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let mut got: Vec<String> = events
        .iter()
        .map(|e| e["event"]["supportId"].as_str().unwrap().to_string())
        .collect();
    got.sort();
    ids.sort();
    assert_eq!(got, ids, "every event once");
    let batches = hec.batches.lock().clone();
    assert!(
        batches.iter().all(|b| b.len() <= 10),
        "batches of at most 10"
    );
    assert!(
        batches.len() < ids.len(),
        "batched: {} requests",
        batches.len()
    );
    for e in &events {
        assert_eq!(e["index"], "waf");
        assert_eq!(e["sourcetype"], "portcullis:security");
        assert_eq!(e["host"], hostname());
        let t = e["time"].as_f64().unwrap();
        let micros = e["event"]["timeMicros"].as_u64().unwrap();
        assert!((t - micros as f64 / 1e6).abs() < 1e-3, "{e}");
    }
    // The entry with the wrong token: its batches were refused, dropped and counted, as the
    // controller's destination list shows.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let d = destinations(&c).await;
        let hec_url = format!(
            "hec:https://localhost:{}/services/collector/event",
            hec.addr.port()
        );
        let counts = |entry: &str| {
            d.iter().find(|i| i["application"] == entry).map(|i| {
                assert_eq!(i["profile"], "/Common/hec", "{i}");
                assert_eq!(i["destination"], hec_url.as_str(), "{i}");
                (
                    i["delivered"].as_u64().unwrap(),
                    i["dropped"].as_u64().unwrap(),
                )
            })
        };
        if counts("bad") == Some((0, 25)) {
            assert_eq!(counts("good"), Some((25, 0)), "{d:?}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the refused batches are counted as dropped: {d:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The controller's `/mgmt/tm/security/log/destinations` items.
async fn destinations(c: &crate::support::events::Controller) -> Vec<Value> {
    let (s, b) = c
        .api
        .req(Method::GET, "/mgmt/tm/security/log/destinations", None)
        .await;
    assert_eq!(s, 200, "{b}");
    b["items"].as_array().expect("items").clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_receiver_drops_its_oldest_events_without_slowing_requests() {
    let port = crate::support::free_port();
    let c = controller(|cfg| cfg.events_queue = 8).await;
    let (s, b) = c
        .api
        .req(
            Method::POST,
            "/mgmt/tm/security/log/profile",
            Some(json!({"name": "dead", "application": {"dead": {
                "remoteStorage": "json-lines", "servers": [{"name": format!("127.0.0.1:{port}")}]}}})),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    let vs = c
        .protected_virtual(json!({"securityLogProfiles": ["dead"]}))
        .await;
    let mut ids = Vec::new();
    let mut slowest = Duration::ZERO;
    for _ in 0..40 {
        let t = Instant::now();
        ids.push(attack(vs).await);
        slowest = slowest.max(t.elapsed());
    }
    assert!(slowest < Duration::from_secs(1), "{slowest:?}");
    let t = c.routing.current();
    let out = &t.remote("/Common/vs")[0].outputs()[0];
    // Events reach the destination's queue after their responses (the request path never
    // waits on delivery): wait until all 40 are accounted for.
    let deadline = Instant::now() + Duration::from_secs(5);
    while out.dropped() + (out.queued() as u64) < 40 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // What could not be sent waits in the queue, which keeps the newest 8.
    assert!(out.dropped() >= 31, "dropped {}", out.dropped());
    assert!(out.queued() <= 8);

    // The receiver comes up: what it gets is the newest events, the oldest were the ones dropped.
    let l = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .expect("bind");
    let (mut s, _) = tokio::time::timeout(Duration::from_secs(20), l.accept())
        .await
        .expect("the sender reconnects")
        .expect("accept");
    let mut text = String::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !text.contains(ids.last().unwrap()) && Instant::now() < deadline {
        use tokio::io::AsyncReadExt;
        let mut buf = vec![0u8; 65536];
        match tokio::time::timeout(Duration::from_millis(500), s.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => text.push_str(&String::from_utf8_lossy(&buf[..n])),
            _ => {}
        }
    }
    let got: Vec<String> = text
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).expect("JSON line")["supportId"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        got,
        ids[32..],
        "the newest 8 arrive, the oldest were dropped"
    );
    let d = destinations(&c).await;
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0]["destination"], format!("tcp://127.0.0.1:{port}"));
    assert_eq!(
        (&d[0]["queued"], &d[0]["delivered"], &d[0]["dropped"]),
        (&json!(0), &json!(8), &json!(32)),
        "{d:?}"
    );
}
