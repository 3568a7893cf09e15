//! Shared pieces of the request-event tests: a controller (admin API over HTTPS, data plane,
//! event consumers) in this process, wired as `portcullis serve` wires it; a virtual server
//! running the demo policy; an attack it blocks; event queries; an RFC 5424 syntax check.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use portcullis::admin::{self, MgmtConfig, MgmtState};
use portcullis::mgmt;
use portcullis::proxy::Dataplane;
use portcullis::proxy::DataplaneShared;
use reqwest::Method;
use serde_json::{Value, json};

use super::mgmt::{Api, PASS, client};
use crate::support::free_port;

/// A controller in this process: admin API on a loopback port, data plane, event consumers.
pub struct Controller {
    pub st: Arc<MgmtState>,
    pub shared: Arc<DataplaneShared>,
    pub routing: Arc<portcullis::mgmt::events::Routing>,
    pub api: Api,
    _dp: Arc<Dataplane>,
    pub dir: tempfile::TempDir,
}

pub async fn controller(tweak: impl FnOnce(&mut MgmtConfig)) -> Controller {
    let dir = tempfile::tempdir().unwrap();
    let shared = DataplaneShared::with_defaults(Some(&dir.path().join("events.log"))).unwrap();
    let dp = Arc::new(Dataplane::new(shared.clone()));
    let mut cfg = MgmtConfig {
        data_dir: dir.path().join("data"),
        ..MgmtConfig::default()
    };
    tweak(&mut cfg);
    let (st, _) = mgmt::open(cfg, dp.clone(), Some(PASS.to_string())).unwrap();
    let routing = mgmt::events::install(&st, &shared.events).unwrap();
    let tls = mgmt::admin_tls(&st.cfg.data_dir, None, None).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("https://{}", listener.local_addr().unwrap());
    tokio::spawn(mgmt::serve_admin(
        listener,
        tls,
        admin::router(st.clone()),
        portcullis::mgmt::ConnLimits::default(),
        std::future::pending(),
    ));
    let api = Api {
        c: client(),
        base,
        user: "admin".into(),
        pass: PASS.into(),
    };
    Controller {
        st,
        shared,
        routing,
        api,
        _dp: dp,
        dir,
    }
}

impl Controller {
    /// Pool on the demo API + virtual `vs` (with `extra` attributes) running the demo policy;
    /// returns the virtual's address.
    pub async fn protected_virtual(&self, extra: Value) -> SocketAddr {
        self.protected("vs", extra).await
    }

    /// [`Controller::protected_virtual`] for a virtual named `name`.
    pub async fn protected(&self, name: &str, extra: Value) -> SocketAddr {
        let upstream = portcullis::demo::start_upstream(([127, 0, 0, 1], 0).into())
            .await
            .unwrap();
        let (s, b) = self
            .api
            .req(
                Method::POST,
                "/mgmt/tm/ltm/pool",
                Some(json!({"name": format!("{name}_pool"), "members": [{"name": upstream.to_string()}]})),
            )
            .await;
        assert_eq!(s, 200, "{b}");
        let port = free_port();
        let mut vs = json!({"name": name, "destination": format!("127.0.0.1:{port}"),
            "pool": format!("/Common/{name}_pool")});
        if let (Some(v), Some(e)) = (vs.as_object_mut(), extra.as_object()) {
            v.extend(e.clone());
        }
        let (s, b) = self
            .api
            .req(Method::POST, "/mgmt/tm/ltm/virtual", Some(vs))
            .await;
        assert_eq!(s, 200, "{b}");
        let engine = portcullis::mgmt::PlaneState::of(&self.st)
            .engines
            .lock()
            .get(&format!("/Common/{name}"))
            .cloned()
            .expect("the virtual has an engine");
        engine.apply(portcullis::demo::load_policy().unwrap());
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    pub async fn events(&self, query: &str) -> Value {
        events(&self.api, query).await
    }

    pub async fn event_by_support_id(&self, id: &str) -> Value {
        event_by_support_id(&self.api, id).await
    }
}

pub async fn events(api: &Api, query: &str) -> Value {
    let (s, b) = api
        .req(
            Method::GET,
            &format!("/mgmt/tm/asm/events/requests{query}"),
            None,
        )
        .await;
    assert_eq!(s, 200, "{b}");
    b
}

/// Polls until the event with support id `id` is stored; returns the collection answer.
pub async fn event_by_support_id(api: &Api, id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let b = events(api, &format!("?$filter=supportId%20eq%20'{id}'")).await;
        if b["totalItems"] == 1 {
            return b;
        }
        assert!(Instant::now() < deadline, "event {id} not stored: {b}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// An SQL injection in a typed query parameter: blocked by the demo policy with 403 JSON.
pub async fn attack(vs: SocketAddr) -> String {
    let r = reqwest::Client::new()
        .get(format!(
            "http://{vs}/api/users?limit=1%27%20or%20%271%27=%271"
        ))
        .timeout(Duration::from_secs(5))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    let b: Value = r.json().await.unwrap();
    b["supportID"].as_str().expect("supportID").to_string()
}

/// Checks the RFC 5424 syntax of one message; returns its STRUCTURED-DATA and MSG.
pub fn rfc5424(m: &str) -> (String, String) {
    let rest = m.strip_prefix('<').expect("PRI");
    let (pri, rest) = rest.split_once('>').expect("PRI");
    let pri: u16 = pri.parse().expect("PRI digits");
    assert!(pri <= 191);
    let rest = rest.strip_prefix("1 ").expect("VERSION 1");
    let mut parts = rest.splitn(6, ' ');
    let ts = parts.next().unwrap();
    assert_eq!(ts.len(), 27, "{ts}");
    assert!(
        ts.ends_with('Z') && ts.as_bytes()[10] == b'T' && ts.as_bytes()[19] == b'.',
        "{ts}"
    );
    for (field, max) in [
        ("HOSTNAME", 255),
        ("APP-NAME", 48),
        ("PROCID", 128),
        ("MSGID", 32),
    ] {
        let v = parts.next().unwrap_or_else(|| panic!("{field}"));
        assert!(!v.is_empty() && v.len() <= max, "{field} {v}");
        assert!(v.bytes().all(|b| (33..=126).contains(&b)), "{field} {v}");
    }
    let sd_msg = parts.next().expect("SD");
    assert!(sd_msg.starts_with('['), "{sd_msg}");
    let mut end = None;
    let mut escaped = false;
    let mut in_value = false;
    for (i, ch) in sd_msg.char_indices() {
        match ch {
            _ if escaped => escaped = false,
            '\\' if in_value => escaped = true,
            '"' => in_value = !in_value,
            ']' if !in_value => {
                end = Some(i);
                break;
            }
            _ => {}
        }
    }
    let end = end.expect("SD closes");
    let (sd, msg) = sd_msg.split_at(end + 1);
    (
        sd.to_string(),
        msg.strip_prefix(' ').unwrap_or(msg).to_string(),
    )
}

/// The next syslog datagram `udp` receives, which must be UTF-8 text (within 10 s, else the test
/// fails with `what`).
pub async fn datagram(udp: &tokio::net::UdpSocket, what: &str) -> String {
    let mut buf = vec![0u8; 65536];
    let (n, _) = tokio::time::timeout(Duration::from_secs(10), udp.recv_from(&mut buf))
        .await
        .expect(what)
        .expect("recv");
    String::from_utf8(buf[..n].to_vec()).expect("a UTF-8 datagram")
}
