//! Configuration drives the data plane: virtual + pool (+ http xForwardedFor, + client-ssl → TLS)
//! become `ListenerSpec`s handed to the `Topology` on every relevant change; a listener error
//! shows in the virtual's status; deleting the virtual removes its listener. In-process, with a
//! recording topology, driving the router with `oneshot` (no sockets).

use std::sync::Arc;

use axum::body::Body;
use http::{Request, StatusCode};
use parking_lot::Mutex;
use portcullis::admin::{self, MgmtConfig};
use portcullis::mgmt;
use portcullis::proxy::{ListenerSpec, ListenerStatus, Topology};
use serde_json::json;
use tower::ServiceExt as _;

use crate::support::router::{ROUTER_PASS, call};

/// Records every apply; refuses to "bind" port 1 (as a busy or privileged port would).
#[derive(Default)]
struct Recording {
    applies: Mutex<Vec<Vec<ListenerSpec>>>,
}

impl Topology for Recording {
    fn apply(&self, listeners: Vec<ListenerSpec>) -> Vec<ListenerStatus> {
        let st = listeners
            .iter()
            .map(|l| ListenerStatus {
                name: l.name.clone(),
                error: (l.bind.port() == 1)
                    .then(|| format!("cannot bind {}: permission denied", l.bind)),
            })
            .collect();
        self.applies.lock().push(listeners);
        st
    }
}

impl Recording {
    fn last(&self) -> Vec<ListenerSpec> {
        self.applies.lock().last().cloned().unwrap_or_default()
    }
}

#[tokio::test]
async fn virtual_and_pool_drive_listeners() {
    let dir = tempfile::tempdir().unwrap();
    // The admin certificate doubles as /Common/default.crt for the built-in clientssl profile.
    mgmt::admin_tls(dir.path(), None, None).unwrap();
    let topo = Arc::new(Recording::default());
    let cfg = MgmtConfig {
        data_dir: dir.path().to_path_buf(),
        ..Default::default()
    };
    let (st, generated) = mgmt::open(cfg, topo.clone(), Some(ROUTER_PASS.into())).unwrap();
    assert!(generated.is_none());
    let app = admin::router(st);
    assert!(topo.last().is_empty());

    let (s, b) = call(&app, "POST", "/mgmt/tm/ltm/pool", Some(json!({"name": "web", "members": [{"name": "127.0.0.1:9001"}, {"name": "127.0.0.1:9002"}]}))).await;
    assert_eq!(s, 200, "{b}");
    let (s, b) = call(
        &app,
        "POST",
        "/mgmt/tm/ltm/virtual",
        Some(json!({"name": "vs", "destination": "127.0.0.1:18080", "pool": "/Common/web"})),
    )
    .await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["status"]["availabilityState"], "available");
    let l = topo.last();
    assert_eq!(l.len(), 1);
    assert_eq!(l[0].name, "/Common/vs");
    assert_eq!(l[0].bind, "127.0.0.1:18080".parse().unwrap());
    assert!(l[0].tls.is_none());
    assert!(!l[0].x_forwarded_for);
    let urls: Vec<&str> = l[0].upstreams.iter().map(|u| u.url.as_str()).collect();
    assert_eq!(urls, ["http://127.0.0.1:9001", "http://127.0.0.1:9002"]);
    assert!(l[0].upstreams.iter().all(|u| u.healthy));
    let first_engine = l[0].engine.clone();

    // A member disabled by the user leaves the rotation; a new member joins.
    call(
        &app,
        "PATCH",
        "/mgmt/tm/ltm/pool/~Common~web/members/~Common~127.0.0.1:9002",
        Some(json!({"session": "user-disabled"})),
    )
    .await;
    let (s, _) = call(
        &app,
        "POST",
        "/mgmt/tm/ltm/pool/~Common~web/members",
        Some(json!({"name": "127.0.0.1:9003"})),
    )
    .await;
    assert_eq!(s, 200);
    let l = topo.last();
    let health: Vec<(String, bool)> = l[0]
        .upstreams
        .iter()
        .map(|u| (u.url.clone(), u.healthy))
        .collect();
    assert_eq!(
        health,
        [
            ("http://127.0.0.1:9001".into(), true),
            ("http://127.0.0.1:9002".into(), false),
            ("http://127.0.0.1:9003".into(), true)
        ]
    );

    // http profile with xForwardedFor, then the built-in clientssl profile → TLS.
    let (s, b) = call(
        &app,
        "POST",
        "/mgmt/tm/ltm/profile/http",
        Some(json!({"name": "xff", "xForwardedFor": "enabled"})),
    )
    .await;
    assert_eq!(s, 200, "{b}");
    let (s, b) = call(
        &app,
        "PATCH",
        "/mgmt/tm/ltm/virtual/vs",
        Some(json!({"profilesReference": {"items": [{"name": "tcp", "context": "all"}, {"name": "xff"}, {"name": "clientssl", "context": "clientside"}]}})),
    )
    .await;
    assert_eq!(s, 200, "{b}");
    let l = topo.last();
    assert!(l[0].x_forwarded_for);
    let tls = l[0]
        .tls
        .as_ref()
        .expect("client-ssl makes the listener TLS");
    assert!(tls.cert_pem.contains("BEGIN CERTIFICATE") && tls.key_pem.contains("PRIVATE KEY"));
    // The engine instance is kept across applies (a policy swap stays in place).
    assert!(Arc::ptr_eq(&first_engine, &l[0].engine));

    // A destination that cannot be bound is reported in the virtual's status.
    let (s, b) = call(
        &app,
        "POST",
        "/mgmt/tm/ltm/virtual",
        Some(json!({"name": "bad", "destination": "127.0.0.1:1"})),
    )
    .await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["status"]["availabilityState"], "offline");
    assert!(
        b["status"]["statusReason"]
            .as_str()
            .unwrap()
            .contains("cannot bind")
    );
    // Disabling removes the listener; deleting removes it for good.
    call(
        &app,
        "PATCH",
        "/mgmt/tm/ltm/virtual/bad",
        Some(json!({"disabled": true})),
    )
    .await;
    assert_eq!(topo.last().len(), 1);
    let (s, _) = call(&app, "DELETE", "/mgmt/tm/ltm/virtual/vs", None).await;
    assert_eq!(s, 200);
    assert!(topo.last().is_empty());
    // Reading never applies; unrelated kinds do not either.
    let n = topo.applies.lock().len();
    call(&app, "GET", "/mgmt/tm/ltm/virtual", None).await;
    call(
        &app,
        "POST",
        "/mgmt/tm/ltm/rule",
        Some(json!({"name": "r", "apiAnonymous": "x"})),
    )
    .await;
    assert_eq!(topo.applies.lock().len(), n);
}

#[tokio::test]
async fn health_monitors_take_failing_members_out_of_rotation() {
    let dir = tempfile::tempdir().unwrap();
    let topo = Arc::new(Recording::default());
    let cfg = MgmtConfig {
        data_dir: dir.path().to_path_buf(),
        ..Default::default()
    };
    let (st, _) = mgmt::open(cfg, topo.clone(), Some(ROUTER_PASS.into())).unwrap();
    let app = admin::router(st.clone());
    // A member that answers HTTP, and an address where nothing listens.
    let up = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let up_addr = up.local_addr().unwrap();
    let server = tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        loop {
            let Ok((mut s, _)) = up.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let mut buf = [0u8; 1024];
                let _ = s.read(&mut buf).await;
                let _ = s
                    .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 6\r\n\r\nhealthy")
                    .await;
            });
        }
    });
    let down_addr = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let (s, b) = call(&app, "POST", "/mgmt/tm/ltm/monitor/http", Some(json!({"name": "hm", "send": "GET / HTTP/1.0\\r\\n\\r\\n", "recv": "200 OK", "interval": 1, "timeout": 2}))).await;
    assert_eq!(s, 200, "{b}");
    let members = json!([{"name": up_addr.to_string()}, {"name": down_addr.to_string()}]);
    let (s, b) = call(
        &app,
        "POST",
        "/mgmt/tm/ltm/pool",
        Some(json!({"name": "p", "monitor": "hm", "members": members})),
    )
    .await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["monitor"], "/Common/hm");
    call(
        &app,
        "POST",
        "/mgmt/tm/ltm/virtual",
        Some(json!({"name": "v", "destination": "127.0.0.1:18081", "pool": "p"})),
    )
    .await;
    assert!(
        topo.last()[0].upstreams.iter().all(|u| u.healthy),
        "unchecked members start in rotation"
    );
    assert_eq!(
        portcullis::mgmt::probe_members(&st).await,
        1,
        "next round after the monitor interval"
    );
    let mut health: Vec<(String, bool)> = topo.last()[0]
        .upstreams
        .iter()
        .map(|u| (u.url.clone(), u.healthy))
        .collect();
    health.sort();
    let mut want = vec![
        (format!("http://{up_addr}"), true),
        (format!("http://{down_addr}"), false),
    ];
    want.sort();
    assert_eq!(health, want);
    let (_, m) = call(
        &app,
        "GET",
        &format!("/mgmt/tm/ltm/pool/p/members/~Common~{down_addr}"),
        None,
    )
    .await;
    assert_eq!(m["state"], "down", "{m}");
    let (_, m) = call(
        &app,
        "GET",
        &format!("/mgmt/tm/ltm/pool/p/members/~Common~{up_addr}"),
        None,
    )
    .await;
    assert_eq!(m["state"], "up", "{m}");
    // A recv string the member never sends takes it down too.
    call(
        &app,
        "PATCH",
        "/mgmt/tm/ltm/monitor/http/hm",
        Some(json!({"recv": "never-sent"})),
    )
    .await;
    portcullis::mgmt::probe_members(&st).await;
    assert!(topo.last()[0].upstreams.iter().all(|u| !u.healthy));
    server.abort();
}

static WIDGET: admin::KindSpec = admin::KindSpec {
    path: "/mgmt/tm/asm/widgets",
    label: "Widget",
    ..admin::KindSpec::BASE
};

fn hello(ctx: &admin::Ctx<'_>, _: &[u8]) -> admin::MgmtResult<admin::Reply> {
    Ok(admin::Reply::json(json!({"hello": ctx.user.name})))
}

static HELLO: [admin::Route; 1] = [admin::Route {
    path: "/mgmt/shared/hello",
    prefix: false,
    handler: hello,
}];

#[tokio::test]
async fn other_modules_extend_the_surface_with_the_same_auth_and_engine() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = MgmtConfig {
        data_dir: dir.path().to_path_buf(),
        ..Default::default()
    };
    let (st, _) = mgmt::open(
        cfg,
        Arc::new(Recording::default()),
        Some(ROUTER_PASS.into()),
    )
    .unwrap();
    static KINDS: [&admin::KindSpec; 1] = [&WIDGET];
    st.extend(&HELLO, &KINDS);
    let app = admin::router(st);
    let (s, b) = call(&app, "GET", "/mgmt/shared/hello", None).await;
    assert_eq!((s, b), (StatusCode::OK, json!({"hello": "admin"})));
    let (s, b) = call(
        &app,
        "POST",
        "/mgmt/tm/asm/widgets",
        Some(json!({"name": "w1"})),
    )
    .await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["kind"], "tm:asm:widgets:widgetsstate");
    let (s, b) = call(&app, "GET", "/mgmt/tm/asm/widgets/~Common~nope", None).await;
    assert_eq!(s, 404);
    assert_eq!(
        b["message"],
        "01020036:3: The requested Widget (/Common/nope) was not found."
    );
    let req = Request::get("/mgmt/shared/hello")
        .body(Body::empty())
        .unwrap();
    assert_eq!(app.clone().oneshot(req).await.unwrap().status(), 401);
}
