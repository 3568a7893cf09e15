//! Request events end to end, through real sockets: on the real `portcullis serve` binary the
//! real path (upload, import, attach, apply, attack) ends with the event found by its support id;
//! in this process (`crate::support::events`: the controller wired as `serve` wires it, engines at hand) a
//! blocked request is found by its support id with its violations, `$top`/`$skip`/`$select` and
//! the retention bound hold, security log profiles deliver RFC 5424 messages to UDP and TCP
//! syslog receivers and a file, and a dead TCP collector neither slows nor fails requests.

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;

use crate::support::DeadAddr;
use crate::support::asm::{
    apply, assert_blocked, attach, hit, import, md5_id, policy, policy_link, upload,
};
use crate::support::events::{attack, controller, datagram, event_by_support_id, rfc5424};
use crate::support::mgmt::{Api, assert_error, start, virtual_server};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocked_request_is_found_by_its_support_id() {
    let c = controller(|_| {}).await;
    let vs = c.protected_virtual(json!({})).await;
    let ok = reqwest::get(format!("http://{vs}/api/users"))
        .await
        .unwrap();
    assert_eq!(ok.status(), 200, "ordinary traffic passes");

    let id = attack(vs).await;
    let b = c.event_by_support_id(&id).await;
    assert_eq!(b["kind"], "tm:asm:events:requests:requestcollectionstate");
    let e = &b["items"][0];
    assert_eq!(e["kind"], "tm:asm:events:requests:requeststate");
    assert_eq!(e["id"], id.as_str());
    assert_eq!(e["supportId"], id.as_str());
    assert_eq!(e["requestStatus"], "blocked");
    assert_eq!(e["enforcementState"]["isBlocked"], true);
    assert_eq!(e["clientIp"], "127.0.0.1");
    assert_eq!(e["method"], "GET");
    assert_eq!(e["url"], "/api/users");
    assert_eq!(e["queryString"], "limit=1%27%20or%20%271%27=%271");
    assert_eq!(e["responseCode"], 403);
    assert_eq!(e["virtualServerName"], "/Common/vs");
    assert_eq!(e["policyName"], "/Common/demo_api_policy");
    assert!(
        e["policyReference"]["link"]
            .as_str()
            .unwrap()
            .starts_with("https://localhost/mgmt/tm/asm/policies/"),
        "{e}"
    );
    assert!(e["violationRating"].as_u64().unwrap() >= 1, "{e}");
    assert!(e["requestDatetime"].as_str().unwrap().ends_with('Z'));
    let viols = e["violations"].as_array().unwrap();
    assert!(!viols.is_empty(), "{e}");
    let names: Vec<&str> = viols.iter().filter_map(|v| v["name"].as_str()).collect();
    assert!(
        names.contains(&"VIOL_PARAMETER_DATA_TYPE") || names.contains(&"VIOL_ATTACK_SIGNATURE"),
        "{names:?}"
    );
    let limit = viols
        .iter()
        .find(|v| v["observedEntity"]["name"] == "limit")
        .unwrap_or_else(|| panic!("a violation names the parameter: {e}"));
    assert!(
        limit["observedEntity"]["value"]
            .as_str()
            .unwrap()
            .contains("or")
    );

    // One event by id; an unknown id is the error object.
    let (s, one) = c
        .api
        .req(
            Method::GET,
            &format!("/mgmt/tm/asm/events/requests/{id}"),
            None,
        )
        .await;
    assert_eq!(s, 200);
    assert_eq!(&one, e);
    let (s, err) = c
        .api
        .req(Method::GET, "/mgmt/tm/asm/events/requests/123", None)
        .await;
    assert_eq!(s, 404);
    assert_error(&err, 404);
    let (s, err) = c
        .api
        .req(Method::DELETE, "/mgmt/tm/asm/events/requests", None)
        .await;
    assert_eq!(s, 405, "{err}");

    // Newest first, $top, $skip, $select, and other filters.
    let second = attack(vs).await;
    let third = attack(vs).await;
    c.event_by_support_id(&third).await;
    let b = c.events("?$top=2").await;
    let ids: Vec<&str> = b["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["supportId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [third.as_str(), second.as_str()]);
    assert_eq!(b["totalItems"], 3);
    let b = c.events("?$skip=2&$select=supportId,requestStatus").await;
    assert_eq!(
        b["items"],
        json!([{"supportId": id, "requestStatus": "blocked"}])
    );
    let b = c
        .events("?$filter=clientIp%20eq%20'127.0.0.1'%20and%20requestStatus%20eq%20'blocked'")
        .await;
    assert_eq!(b["totalItems"], 3);
    let b = c
        .events("?$filter=virtualServerName%20eq%20'/Common/other'")
        .await;
    assert_eq!(b["totalItems"], 0);
    let b = c
        .events("?$filter=contains(violations,'VIOL_PARAMETER_DATA_TYPE')")
        .await;
    assert_eq!(b["totalItems"], 3);
    let b = c.events("?$filter=contains(violations,'VIOL_URL')").await;
    assert_eq!(b["totalItems"], 0);
    let (s, err) = c
        .api
        .req(
            Method::GET,
            "/mgmt/tm/asm/events/requests?$filter=supportId%20eq",
            None,
        )
        .await;
    assert_eq!(s, 400);
    assert_error(&err, 400);
    assert_eq!(c.shared.events.dropped("store"), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retention_keeps_only_the_newest_events() {
    let c = controller(|cfg| cfg.events_max_count = 3).await;
    let vs = c.protected_virtual(json!({})).await;
    let mut ids = Vec::new();
    for _ in 0..6 {
        ids.push(attack(vs).await);
    }
    c.event_by_support_id(&ids[5]).await;
    let b = c.events("").await;
    let got: Vec<&str> = b["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["supportId"].as_str().unwrap())
        .collect();
    assert_eq!(got, [&ids[5], &ids[4], &ids[3]], "{b}");
    assert_eq!(b["totalItems"], 3);
    let b = c
        .events(&format!("?$filter=supportId%20eq%20'{}'", ids[0]))
        .await;
    assert_eq!(b["totalItems"], 0, "the oldest were pruned");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_profiles_send_rfc5424_to_udp_tcp_and_file() {
    let c = controller(|_| {}).await;
    let udp = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let profiles = [
        json!({"name": "to_udp", "application": {"to_udp": {"localStorage": "enabled",
            "remoteStorage": "remote", "protocol": "udp",
            "servers": [{"name": udp.local_addr().unwrap().to_string()}],
            "filter": [{"name": "request-type", "values": ["illegal"]}]}}}),
        json!({"name": "to_tcp", "application": [{"name": "to_tcp", "remoteStorage": "splunk",
            "protocol": "tcp", "servers": [{"name": tcp.local_addr().unwrap().to_string()}]}]}),
        json!({"name": "to_file", "application": [{"name": "to_file", "remoteStorage": "file",
            "file": "blocked.log", "format": {"type": "json"}}]}),
    ];
    for p in profiles {
        let (s, b) = c
            .api
            .req(Method::POST, "/mgmt/tm/security/log/profile", Some(p))
            .await;
        assert_eq!(s, 200, "{b}");
    }
    let vs = c
        .protected_virtual(
            json!({"securityLogProfiles": ["to_udp", "/Common/to_tcp", "\"/Common/to_file\""]}),
        )
        .await;
    let (_, v) = c
        .api
        .req(Method::GET, "/mgmt/tm/ltm/virtual/~Common~vs", None)
        .await;
    assert_eq!(
        v["securityLogProfiles"],
        json!(["/Common/to_udp", "/Common/to_tcp", "/Common/to_file"])
    );
    let id = attack(vs).await;

    let m = datagram(&udp, "a UDP datagram").await;
    let (sd, msg) = rfc5424(&m);
    assert!(m.starts_with("<131>1 "), "local0.err: {m}");
    assert!(sd.starts_with("[asm@32473 "), "{sd}");
    assert!(sd.contains(&format!("supportId=\"{id}\"")), "{sd}");
    assert!(sd.contains("virtualServer=\"/Common/vs\""), "{sd}");
    assert!(msg.contains(&format!("support_id=\"{id}\"")), "{msg}");
    assert!(msg.contains("request_status=\"blocked\""), "{msg}");

    let (mut s, _) = tokio::time::timeout(Duration::from_secs(10), tcp.accept())
        .await
        .expect("a TCP connection")
        .unwrap();
    let mut buf = vec![0u8; 65536];
    let mut got = Vec::new();
    let frame = loop {
        let n = tokio::time::timeout(Duration::from_secs(10), s.read(&mut buf))
            .await
            .expect("a TCP frame")
            .unwrap();
        assert!(n > 0, "connection closed early");
        got.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&got).to_string();
        if let Some((len, rest)) = text.split_once(' ') {
            let len: usize = len.parse().expect("octet count");
            if rest.len() >= len {
                break rest[..len].to_string();
            }
        }
    };
    let (sd, _) = rfc5424(&frame);
    assert!(sd.contains(&format!("supportId=\"{id}\"")), "{frame}");

    let path = c.dir.path().join("data/security-logs/blocked.log");
    let deadline = Instant::now() + Duration::from_secs(10);
    let line = loop {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        if let Some(l) = text.lines().next() {
            break l.to_string();
        }
        assert!(
            Instant::now() < deadline,
            "nothing written to {}",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let (_, msg) = rfc5424(&line);
    let ev: Value = serde_json::from_str(&msg).expect("JSON MSG");
    assert_eq!(ev["supportId"], id.as_str());

    // The local store still has it (localStorage defaults to enabled).
    c.event_by_support_id(&id).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_tcp_collector_neither_slows_nor_fails_requests() {
    let c = controller(|cfg| cfg.events_queue = 16).await;
    let dead = DeadAddr::new();
    let (s, b) = c
        .api
        .req(
            Method::POST,
            "/mgmt/tm/security/log/profile",
            Some(
                json!({"name": "dead", "application": [{"remoteStorage": "remote",
                "protocol": "tcp", "servers": [{"name": dead.to_string()}]}]}),
            ),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    let vs = c
        .protected_virtual(json!({"securityLogProfiles": ["dead"]}))
        .await;
    let started = Instant::now();
    let mut last = String::new();
    for _ in 0..100 {
        last = attack(vs).await;
    }
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(20),
        "100 blocked requests took {took:?}"
    );
    let ok = reqwest::get(format!("http://{vs}/api/users"))
        .await
        .unwrap();
    assert_eq!(ok.status(), 200);
    // Every event is either stored or counted as dropped (queues of 16 under a burst); the dead
    // collector's queue filled and dropped the rest.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let stored = c.events("?$select=supportId").await["totalItems"]
            .as_u64()
            .unwrap();
        let dropped = c.shared.events.dropped("store");
        let t = c.routing.current();
        let out = &t.remote("/Common/vs")[0].outputs()[0];
        assert_eq!(out.label(), format!("tcp://{dead}"));
        let remote_lost = c.shared.events.dropped("remote-log") + out.dropped();
        if stored + dropped == 100 && remote_lost >= 100 - 17 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "stored {stored} + dropped {dropped} != 100, or remote lost only {remote_lost}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!last.is_empty());
}

/// The real path on the real binary: upload, import, attach, apply, attack, then the event by
/// its support id, naming the policy by its fullPath and reference; and the same event on a
/// UDP syslog receiver through a log profile.
#[tokio::test]
async fn import_attach_apply_attack_then_the_event_by_support_id() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), None);
    let api = Api::new(&server);
    let udp = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let (s, b) = api
        .req(
            Method::POST,
            "/mgmt/tm/security/log/profile",
            Some(
                json!({"name": "siem", "application": {"siem": {"remoteStorage": "remote",
                "servers": [{"name": udp.local_addr().unwrap().to_string()}]}}}),
            ),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    let port = virtual_server(&api).await;
    let (s, b) = api
        .req(
            Method::PATCH,
            "/mgmt/tm/ltm/virtual/~Common~vs",
            Some(json!({"securityLogProfiles": ["/Common/siem"]})),
        )
        .await;
    assert_eq!(s, 200, "{b}");

    let doc = serde_json::to_vec(&policy("evp", false)).unwrap();
    upload(&api, "evp.json", &doc, 64).await;
    let t = import(
        &api,
        json!({"filename": "evp.json", "policy": {"fullPath": "/Tenant1/evp"}}),
    )
    .await;
    let link = policy_link(&t);
    let id = md5_id("/Tenant1/evp");
    attach(&api, &id).await;
    apply(&api, &link).await;

    let r = hit(port, "/other?x=1").await.expect("the virtual answers");
    assert_blocked(&r);
    let support: Value = serde_json::from_str(&r.2).unwrap();
    let support = support["supportID"].as_str().unwrap();
    let b = event_by_support_id(&api, support).await;
    let e = &b["items"][0];
    assert_eq!(e["requestStatus"], "blocked", "{e}");
    assert_eq!(e["url"], "/other");
    assert_eq!(e["queryString"], "x=1");
    assert_eq!(e["virtualServerName"], "/Common/vs");
    assert_eq!(e["policyName"], "/Tenant1/evp");
    assert!(
        e["policyReference"]["link"]
            .as_str()
            .unwrap()
            .contains(&format!("/mgmt/tm/asm/policies/{id}?ver=")),
        "{e}"
    );
    assert_eq!(e["violations"][0]["name"], "VIOL_URL", "{e}");
    assert_eq!(e["responseCode"], 403);

    let m = datagram(&udp, "the log profile's syslog server gets the event").await;
    let (sd, msg) = rfc5424(&m);
    assert!(sd.contains(&format!("supportId=\"{support}\"")), "{sd}");
    assert!(sd.contains("policy=\"/Tenant1/evp\""), "{sd}");
    assert!(msg.contains("policy_name=\"/Tenant1/evp\""), "{msg}");
    // The store is durable: the event is still there after a restart.
    drop(server);
    let server = start(dir.path(), None);
    let api = Api::new(&server);
    let b = event_by_support_id(&api, support).await;
    assert_eq!(b["items"][0]["policyName"], "/Tenant1/evp");
}
