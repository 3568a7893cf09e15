//! One event store for the fleet: three real `portcullis serve` controllers behind one real
//! `portcullis central --events-db postgres://…?sslmode=require` with a real PostgreSQL (over
//! TLS, its certificate verified). A blocked request on each controller is found by the central
//! search by its support id; a controller the central manager cannot reach (a partition, made by a
//! relay the test cuts) while it blocks more requests, and which then goes down and is started
//! again, is caught up once reachable, each event stored once. The PostgreSQL store itself: every
//! search criterion, paging, and retention by age and count.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::support::asm::{
    apply, assert_blocked, attach, hit, import, md5_id, policy, policy_link, upload,
};
use crate::support::central::trust_address;
use crate::support::events::event_by_support_id;
use crate::support::mgmt::{Api, PASS, Server, command, launch, start, virtual_server};

/// `portcullis central --events-db URL`, collecting every second, the database's certificate
/// checked against `ca_pem`; waits until it is ready.
fn central(dir: &Path, events_db: &str, ca_pem: &str) -> Server {
    let cfg = dir.join("central.json");
    let ca = dir.join("db-ca.pem");
    std::fs::write(&ca, ca_pem).expect("CA");
    std::fs::write(
        &cfg,
        json!({"central": {"timeout_secs": 2, "retries": 0,
                           "events": {"poll_secs": 1, "db_ca_file": ca}}})
        .to_string(),
    )
    .expect("config");
    let mut cmd = command("central", &dir.join("data"), 0, Some(&cfg));
    cmd.args(["--events-db", events_db]);
    launch(cmd, "central", &dir.join("data"))
}

/// A TCP relay to a controller that the test can cut (connections in flight are closed, new ones
/// refused at once) and restore: a network partition between the central manager and one
/// controller. Its target can move (a controller restarted on another admin port).
struct Relay {
    addr: SocketAddr,
    up: watch::Sender<bool>,
    to: watch::Sender<SocketAddr>,
}

async fn relay(to: SocketAddr) -> Relay {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = l.local_addr().expect("addr");
    let (up, rx) = watch::channel(true);
    let (to, target) = watch::channel(to);
    tokio::spawn(async move {
        while let Ok((mut inbound, _)) = l.accept().await {
            let mut rx = rx.clone();
            if !*rx.borrow() {
                continue;
            }
            let to = *target.borrow();
            tokio::spawn(async move {
                let Ok(mut out) = tokio::net::TcpStream::connect(to).await else {
                    return;
                };
                tokio::select! {
                    _ = tokio::io::copy_bidirectional(&mut inbound, &mut out) => {}
                    _ = rx.wait_for(|up| !*up) => {}
                }
            });
        }
    });
    Relay { addr, up, to }
}

/// A controller with a virtual server whose ASM policy blocks everything but `GET /allowed`.
struct Controller {
    server: Server,
    api: Api,
    vs: u16,
    dir: tempfile::TempDir,
}

async fn controller() -> Controller {
    let dir = tempfile::tempdir().expect("tmp");
    let server = start(dir.path(), None);
    let api = Api::new(&server);
    let vs = virtual_server(&api).await;
    let doc = serde_json::to_vec(&policy("fleet", false)).expect("policy");
    upload(&api, "fleet.json", &doc, 1 << 20).await;
    let t = import(
        &api,
        json!({"filename": "fleet.json", "policy": {"fullPath": "/Common/fleet"}}),
    )
    .await;
    let link = policy_link(&t);
    attach(&api, &md5_id("/Common/fleet")).await;
    apply(&api, &link).await;
    Controller {
        server,
        api,
        vs,
        dir,
    }
}

impl Controller {
    /// Stops the controller (SIGKILL) and starts it again on its data directory (its certificate,
    /// machine id, accounts, virtual server and stored events), on a new admin port.
    fn restart(&mut self) {
        let _ = self.server.child.kill();
        let _ = self.server.child.wait();
        self.server = start(self.dir.path(), None);
        self.api = Api::new(&self.server);
    }

    fn admin(&self) -> SocketAddr {
        self.server
            .base
            .trim_start_matches("https://")
            .parse()
            .expect("admin address")
    }

    /// A blocked request; its support id, once the controller has stored the event.
    async fn blocked(&self, path: &str) -> String {
        let r = hit(self.vs, path).await.expect("the virtual answers");
        assert_blocked(&r);
        let v: Value = serde_json::from_str(&r.2).expect("json");
        let id = v["supportID"].as_str().expect("support id").to_string();
        event_by_support_id(&self.api, &id).await;
        id
    }
}

/// The central search with query `q`, polled until it has `n` items (or 15 s passed).
async fn search(cm: &Api, q: &str, n: usize) -> Value {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let (s, b) = cm
            .req(
                Method::GET,
                &format!("/mgmt/cm/asm/events/requests?{q}"),
                None,
            )
            .await;
        assert_eq!(s, 200, "{b}");
        if b["items"].as_array().is_some_and(|a| a.len() >= n) || Instant::now() > deadline {
            return b;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_controllers_one_search_and_one_partitioned_then_down_catches_up() {
    let pg = crate::support::postgres::shared();
    let db = pg.create_db("fleet_e2e");
    let cm_dir = tempfile::tempdir().expect("tmp");
    // Over TLS, the server's certificate verified.
    let cm_server = central(cm_dir.path(), &format!("{db}?sslmode=require"), &pg.ca_pem);
    let cm = Api::new(&cm_server);
    let mut controllers = vec![controller().await, controller().await, controller().await];
    let addr = |c: &Controller| c.admin().to_string();
    let cut = relay(controllers[2].admin()).await;
    let mut machines = Vec::new();
    for (i, c) in controllers.iter().enumerate() {
        let a = if i == 2 {
            cut.addr.to_string()
        } else {
            addr(c)
        };
        let t = trust_address(&cm, &a, PASS).await;
        assert_eq!(t["status"], "FINISHED", "{t}");
        machines.push(t["machineId"].as_str().expect("machineId").to_string());
    }

    // A blocked request on each: the central search finds each by its support id.
    let mut ids = Vec::new();
    for c in &controllers {
        ids.push(c.blocked("/not-allowed?from=fleet").await);
    }
    for (i, id) in ids.iter().enumerate() {
        let b = search(&cm, &format!("supportId={id}"), 1).await;
        assert_eq!(b["totalItems"], 1, "{b}");
        let e = &b["items"][0];
        assert_eq!(e["supportId"], id.as_str());
        assert_eq!(e["device"]["machineId"], machines[i].as_str(), "{e}");
        assert_eq!(
            e["deviceReference"]["link"],
            format!(
                "https://localhost/mgmt/cm/system/machineid-resolver/{}",
                machines[i]
            )
        );
        assert_eq!(e["policyName"], "/Common/fleet");
        assert_eq!(e["violations"][0]["name"], "VIOL_URL");
        assert_eq!(e["url"], "/not-allowed");
        assert_eq!(e["queryString"], "from=fleet");
        let (s, one) = cm
            .req(
                Method::GET,
                &format!("/mgmt/cm/asm/events/requests/{id}"),
                None,
            )
            .await;
        assert_eq!(s, 200, "{one}");
        assert_eq!(one["device"]["machineId"], machines[i].as_str());
    }
    let all = search(&cm, "violation=VIOL_URL&policy=fleet", 3).await;
    assert_eq!(all["totalItems"], 3, "{all}");
    let one_device = search(&cm, &format!("device={}", addr(&controllers[0])), 1).await;
    assert_eq!(one_device["totalItems"], 1, "{one_device}");
    let (s, b) = cm
        .req(Method::DELETE, "/mgmt/cm/asm/events/requests", None)
        .await;
    assert_eq!(s, 405, "the fleet search only reads: {b}");

    // The central manager loses the third controller, which goes on blocking requests, and then
    // goes down itself before they could be collected.
    cut.up.send_replace(false);
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let (_, st) = cm
            .req(Method::GET, "/mgmt/cm/asm/events/collection", None)
            .await;
        let third = st["items"]
            .as_array()
            .and_then(|a| {
                a.iter()
                    .find(|d| d["machineId"] == machines[2].as_str())
                    .cloned()
            })
            .unwrap_or_default();
        if third["lastError"].is_string() {
            assert_eq!(st["store"], "postgresql", "{st}");
            break;
        }
        assert!(Instant::now() < deadline, "collection never failed: {st}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut late = vec![
        controllers[2].blocked("/late-1").await,
        controllers[2].blocked("/late-2").await,
    ];
    controllers[2].restart();
    cut.to.send_replace(controllers[2].admin());
    late.push(controllers[2].blocked("/late-3").await);
    tokio::time::sleep(Duration::from_secs(2)).await;
    for id in &late {
        let (_, b) = cm
            .req(
                Method::GET,
                &format!("/mgmt/cm/asm/events/requests?supportId={id}"),
                None,
            )
            .await;
        assert_eq!(b["totalItems"], 0, "not collected while unreachable: {b}");
    }

    // Reachable again: it catches up, the events of before and after its restart, and nothing is
    // stored twice.
    cut.up.send_replace(true);
    for id in &late {
        assert_eq!(
            search(&cm, &format!("supportId={id}"), 1).await["totalItems"],
            1
        );
    }
    let third = search(&cm, &format!("device={}", machines[2]), 4).await;
    assert_eq!(third["totalItems"], 4, "{third}");
    let (client, conn) = tokio_postgres::connect(&db, tokio_postgres::NoTls)
        .await
        .expect("psql");
    tokio::spawn(conn);
    let rows: Vec<(String, i64)> = client
        .query(
            "SELECT device, count(*) FROM fleet_events GROUP BY device",
            &[],
        )
        .await
        .expect("count")
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    assert_eq!(rows.len(), 3, "{rows:?}");
    for (device, n) in &rows {
        let want = if *device == machines[2] { 4 } else { 1 };
        assert_eq!(*n, want, "each event once: {rows:?}");
    }
    let (_, st) = cm
        .req(Method::GET, "/mgmt/cm/asm/events/collection", None)
        .await;
    assert!(
        st["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d["lastError"].is_null()),
        "{st}"
    );
    let third = st["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["machineId"] == machines[2].as_str())
        .cloned()
        .unwrap_or_default();
    assert_eq!(third["collected"], 4, "{st}");
}

fn event(
    device: &str,
    id: &str,
    t: u64,
    ip: &str,
    policy: &str,
    violation: &str,
    sig: i64,
) -> portcullis::central::events::FleetEvent {
    portcullis::central::events::FleetEvent {
        device: device.into(),
        support_id: id.into(),
        time_micros: t,
        client_ip: ip.into(),
        policy: policy.into(),
        virtual_server: "/Common/vs".into(),
        violations: vec![violation.into()],
        signatures: vec![sig],
        item: json!({"supportId": id, "timeMicros": t, "device": {"machineId": device}}),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_postgres_store_searches_every_criterion_and_keeps_its_retention() {
    use portcullis::central::events::Cidr;
    use portcullis::central::events::{Postgres, Retention, Search};

    let pg = crate::support::postgres::shared();
    let store = Arc::new(
        Postgres::connect(
            &format!("{}?sslmode=disable", pg.create_db("fleet_store")),
            None,
            4,
        )
        .await
        .expect("connect"),
    );
    let now = portcullis::support::now_micros();
    let events = vec![
        event(
            "m1",
            "101",
            now - 5_000,
            "10.1.0.7",
            "/Common/api",
            "VIOL_URL",
            200_001,
        ),
        event(
            "m1",
            "102",
            now - 4_000,
            "10.1.9.9",
            "/Tenant/app/orders",
            "VIOL_ATTACK_SIGNATURE",
            200_002,
        ),
        event(
            "m2",
            "103",
            now - 3_000,
            "192.0.2.4",
            "/Common/api",
            "VIOL_ATTACK_SIGNATURE",
            200_001,
        ),
        event(
            "m3",
            "104",
            now - 2_000,
            "2001:db8::4",
            "/Common/api",
            "VIOL_METHOD",
            200_003,
        ),
    ];
    assert_eq!(store.insert(&events).await.expect("insert"), 4);
    assert_eq!(
        store.insert(&events).await.expect("again"),
        0,
        "stored once"
    );
    let ids = |found: portcullis::central::events::Found| -> Vec<String> {
        found
            .items
            .iter()
            .map(|v| v["supportId"].as_str().unwrap().to_string())
            .collect()
    };
    let q = |s: Search| Search { top: 10, ..s };
    for (search, want) in [
        (q(Search::default()), vec!["104", "103", "102", "101"]),
        (
            q(Search {
                support_id: Some("103".into()),
                ..Search::default()
            }),
            vec!["103"],
        ),
        (
            q(Search {
                devices: Some(vec!["m1".into(), "m3".into()]),
                ..Search::default()
            }),
            vec!["104", "102", "101"],
        ),
        (
            q(Search {
                policy: Some("/Tenant/app/orders".into()),
                ..Search::default()
            }),
            vec!["102"],
        ),
        (
            q(Search {
                policy: Some("api".into()),
                ..Search::default()
            }),
            vec!["104", "103", "101"],
        ),
        (
            q(Search {
                violation: Some("VIOL_ATTACK_SIGNATURE".into()),
                ..Search::default()
            }),
            vec!["103", "102"],
        ),
        (
            q(Search {
                signature: Some(200_001),
                ..Search::default()
            }),
            vec!["103", "101"],
        ),
        (
            q(Search {
                client: Cidr::parse("10.1.0.0/16"),
                ..Search::default()
            }),
            vec!["102", "101"],
        ),
        (
            q(Search {
                client: Cidr::parse("2001:db8::4"),
                ..Search::default()
            }),
            vec!["104"],
        ),
        (
            q(Search {
                since_micros: Some(now - 4_000),
                until_micros: Some(now - 3_000),
                ..Search::default()
            }),
            vec!["103", "102"],
        ),
    ] {
        assert_eq!(
            ids(store.search(&search).await.expect("search")),
            want,
            "{search:?}"
        );
    }
    let page = store
        .search(&Search {
            top: 1,
            skip: 2,
            ..Search::default()
        })
        .await
        .expect("page");
    assert_eq!((page.total, ids(page)), (4, vec!["102".to_string()]));
    let past = store
        .search(&Search {
            top: 1,
            skip: 9,
            ..Search::default()
        })
        .await
        .expect("past");
    assert_eq!((past.total, past.items.len()), (4, 0));

    // Retention: by count (the newest 3 stay), then by age.
    let keep = Retention {
        max_age: Duration::from_secs(3600),
        max_events: 3,
    };
    assert_eq!(store.prune(keep).await.expect("prune"), 1);
    assert_eq!(
        ids(store.search(&q(Search::default())).await.unwrap()),
        ["104", "103", "102"]
    );
    let old = event(
        "m9",
        "900",
        now - 7_200_000_000,
        "10.0.0.9",
        "/Common/api",
        "VIOL_URL",
        1,
    );
    store.insert(&[old]).await.expect("old");
    let keep = Retention {
        max_age: Duration::from_secs(3600),
        max_events: 0,
    };
    assert_eq!(
        store.prune(keep).await.expect("prune"),
        1,
        "past the age bound"
    );
    assert_eq!(store.search(&Search::default()).await.unwrap().total, 3);
}
