//! Page times of the console (and the event REST queries) over a store of 1,000,000 request
//! events (ignored: it writes the million events first; figures in docs/console.md):
//!
//! ```text
//! cargo test --release --test it console::scale -- --ignored --nocapture
//! ```
//!
//! The events are synthetic but shaped like traffic: spread over the last 24 hours, 5,000 client
//! addresses, 2,000 URLs, violations and signatures of the shipped database, three policies. They
//! are written as the event writer writes them (batches of 512, indexes and statistics in the
//! same transactions); a real policy learns from 20,000 of them. Then each page is fetched over
//! HTTPS with a logged-in session, five times, and the median and slowest times are printed.

use std::sync::Arc;
use std::time::{Duration, Instant};

use portcullis::admin::{self, MgmtConfig};
use portcullis::mgmt;
use portcullis::mgmt::events::{self, Retention};
use portcullis::support::now_micros;
use portcullis::waf::signatures::SignatureDb;
use portcullis::waf::{Action, Context, SecurityEvent, Violation, ViolationKind};
use reqwest::redirect;

use crate::support::upstream::text_of;

/// How many events (`PORTCULLIS_EVENTS` overrides, for a quick run).
fn events() -> usize {
    std::env::var("PORTCULLIS_EVENTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_000_000)
}
const BATCH: usize = 512;

fn event(i: usize, total: usize, now: u64, sigs: &[u32]) -> SecurityEvent {
    // A cheap deterministic mix (no randomness: runs compare).
    let h = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let kinds = [
        ViolationKind::AttackSignature,
        ViolationKind::ParameterValueMetachar,
        ViolationKind::Url,
        ViolationKind::HttpProtocol,
    ];
    let kind = kinds[(h >> 8) as usize % kinds.len()];
    let mut v = Violation::new(kind, Context::Parameter)
        .named(format!("p{}", (h >> 20) % 50))
        .snippet(b"value");
    if kind == ViolationKind::AttackSignature {
        v = v.signatures(vec![sigs[(h >> 30) as usize % sigs.len()]]);
    }
    // Arrival order, over the last 24 hours (the writer gets events as they arrive).
    let age = 86_400_000_000 - 86_400_000_000 / total as u64 * i as u64;
    SecurityEvent {
        support_id: format!("{}", 1_000_000_000_000_000_000u64 + i as u64),
        time: String::new(),
        time_micros: now - age,
        client_ip: format!("10.{}.{}.{}", (h >> 40) % 2, (h >> 44) % 50, (h >> 50) % 50),
        method: "GET".into(),
        uri: format!("/app/{}/item?id={}", (h >> 16) % 2000, i),
        protocol: "HTTP/1.1".into(),
        policy: ["shop", "api", "admin"][(h >> 4) as usize % 3].into(),
        action: if h.is_multiple_of(3) {
            Action::Alarm
        } else {
            Action::Block
        },
        rating: 4,
        violations: vec![v],
        virtual_server: "/Common/vs".into(),
        response_code: 200,
        headers: [
            ("host", "shop.example"),
            ("user-agent", "Mozilla/5.0 (X11; Linux x86_64) Chrome/126.0"),
        ]
        .into_iter()
        .collect(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "writes 1,000,000 events first (minutes); run by hand with --release"]
async fn console_pages_at_a_million_events() {
    let total = events();
    let dir = tempfile::tempdir().unwrap();
    let cfg = MgmtConfig {
        data_dir: dir.path().join("data"),
        events_max_count: 2 * total,
        ..MgmtConfig::default()
    };
    let (st, _) = mgmt::open(
        cfg,
        Arc::new(mgmt::DetachedTopology),
        Some(crate::support::mgmt::PASS.into()),
    )
    .unwrap();
    let doc = serde_json::json!({"policy": {"name": "shop", "template": {"name": "POLICY_TEMPLATE_NGINX_BASE"},
        "enforcementMode": "transparent", "signature-settings": {"signatureStaging": false}}});
    mgmt::asm::put_policy(&st, "/Common/shop", &doc).unwrap();
    mgmt::asm::apply_policy(&st, "/Common/shop").unwrap();

    let sigs: Vec<u32> = SignatureDb::builtin()
        .signatures()
        .iter()
        .map(|s| s.id)
        .collect();
    let now = now_micros();
    let keep = Retention {
        max_events: 2 * total as u64,
        ..Retention::default()
    };
    let t0 = Instant::now();
    let mut count = 0;
    let mut sequence = 1;
    let named = |e: &SecurityEvent| format!("/Common/{}", e.policy);
    let mut learn = Vec::new();
    for start in (0..total).step_by(BATCH) {
        let batch: Vec<Arc<SecurityEvent>> = (start..(start + BATCH).min(total))
            .map(|i| Arc::new(event(i, total, now, &sigs)))
            .collect();
        count = events::write_batch(&st.store, &batch, &named, count, &mut sequence, keep).unwrap();
        if learn.len() < 20_000 {
            learn.extend(batch.iter().filter(|e| e.policy == "shop").cloned());
        }
    }
    let wrote = t0.elapsed();
    for chunk in learn.chunks(256) {
        mgmt::asm::learn_from_events(&st, chunk);
    }
    println!(
        "wrote {count} events in {:.1} s ({:.0}/s); learned from {} in {:.1} s",
        wrote.as_secs_f64(),
        count as f64 / wrote.as_secs_f64(),
        learn.len(),
        (t0.elapsed() - wrote).as_secs_f64()
    );
    assert_eq!(count, total);
    let records =
        mgmt::asm::suggestion_records(&st.store, &mgmt::asm::policy_id("/Common/shop")).unwrap();
    println!("{} suggestions", records.len());

    let tls = mgmt::admin_tls(&st.cfg.data_dir, None, None).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("https://{}", listener.local_addr().unwrap());
    let app = mgmt::console_router(st.clone()).merge(admin::router(st.clone()));
    tokio::spawn(mgmt::serve_admin(
        listener,
        tls,
        app,
        mgmt::ConnLimits::from(&st.cfg),
        std::future::pending(),
    ));
    let _ = rustls::crypto::ring::default_provider().install_default();
    let c = reqwest::Client::builder()
        .tls_danger_accept_invalid_certs(true)
        .redirect(redirect::Policy::none())
        .timeout(Duration::from_secs(120))
        .build()
        .unwrap();
    // A session: the REST login's token is the console's cookie.
    let login: serde_json::Value = c
        .post(format!("{base}/mgmt/shared/authn/login"))
        .json(&serde_json::json!({"username": "admin", "password": crate::support::mgmt::PASS}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token = login["token"]["token"].as_str().unwrap().to_string();
    let cookie = format!("__Host-portcullis-session={token}");

    let pid = mgmt::asm::policy_id("/Common/shop");
    let some_id = format!("{}", 1_000_000_000_000_000_000u64 + total as u64 / 2);
    let hour_ago = portcullis::support::iso8601_utc(now / 1_000_000 - 3600);
    let from = &hour_ago[..16];
    // An events page's "Older" link: its cursor.
    let first = text_of(c.get(format!("{base}/ui/events")).header("cookie", &cookie)).await;
    let older = first
        .split("id=\"older\"")
        .next()
        .and_then(|s| s.rsplit("href=\"/ui/events?").next())
        .map(|s| s.split('"').next().unwrap().replace("&#38;", "&"))
        .expect("an Older link");
    let pages: Vec<(&str, String)> = vec![
        ("overview, last hour", "/ui/overview".into()),
        ("overview, last day", "/ui/overview?span=day".into()),
        ("events, newest 50", "/ui/events".into()),
        ("events, next page (cursor)", format!("/ui/events?{older}")),
        (
            "events by support ID",
            format!("/ui/events?support_id={some_id}"),
        ),
        (
            "events by client address",
            "/ui/events?client=10.1.7.7".into(),
        ),
        ("events by URL", "/ui/events?url=%2Fapp%2F42%2Fitem".into()),
        (
            "events by signature",
            format!("/ui/events?signature={}", sigs[3]),
        ),
        (
            "events by violation (a quarter of all)",
            "/ui/events?violation=VIOL_URL".into(),
        ),
        (
            "events by policy and status",
            "/ui/events?policy=%2FCommon%2Fshop&status=blocked".into(),
        ),
        ("events in the last hour", format!("/ui/events?from={from}")),
        (
            "event detail with accept preview",
            format!("/ui/events/{some_id}"),
        ),
        ("suggestions", format!("/ui/policies/{pid}/suggestions")),
        ("policies", "/ui/policies".into()),
        (
            "policy with readiness (24 h)",
            format!("/ui/policies/{pid}"),
        ),
        ("virtual servers and pools", "/ui/virtuals".into()),
        (
            "REST: events $top=50",
            "/mgmt/tm/asm/events/requests?$top=50".into(),
        ),
        (
            "REST: suggestions",
            format!("/mgmt/tm/asm/policies/{pid}/suggestions"),
        ),
        (
            "REST: readiness (24 h)",
            format!("/mgmt/tm/asm/policies/{pid}/readiness"),
        ),
        (
            "REST: events $filter clientIp",
            "/mgmt/tm/asm/events/requests?$top=50&$filter=clientIp%20eq%20'10.1.7.7'".into(),
        ),
    ];
    println!("| page | median | slowest of 5 |\n| --- | ---: | ---: |");
    for (name, path) in pages {
        let mut times = Vec::new();
        for _ in 0..5 {
            let t = Instant::now();
            let r = c
                .get(format!("{base}{path}"))
                .header("cookie", &cookie)
                .header("x-f5-auth-token", &token)
                .send()
                .await
                .unwrap();
            let status = r.status();
            let body = r.bytes().await.unwrap();
            times.push(t.elapsed());
            assert_eq!(status, 200, "{path}: {}", String::from_utf8_lossy(&body));
        }
        times.sort();
        println!(
            "| {name} | {:.1} ms | {:.1} ms |",
            times[2].as_secs_f64() * 1e3,
            times[4].as_secs_f64() * 1e3
        );
    }
}
