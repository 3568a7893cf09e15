//! The data plane behind the management plane's `Topology` interface: listeners are started,
//! updated in place without dropping requests in flight, reported when they cannot bind, stopped.

use std::sync::Arc;
use std::time::Duration;

use portcullis::proxy::DataplaneShared;
use portcullis::proxy::EventSink;
use portcullis::proxy::Metrics;
use portcullis::proxy::UpstreamClients;
use portcullis::proxy::{Dataplane, Limits};
use portcullis::proxy::{ListenerSpec, Topology, UpstreamSpec};
use portcullis::waf::{CompiledPolicy, Engine};

use crate::support::free_addr;
use crate::support::proxy::*;

fn dataplane() -> Dataplane {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let limits = Limits::default();
    let shared = Arc::new(DataplaneShared {
        limits,
        clients: UpstreamClients::new(
            portcullis::proxy::tls_client_config(None).expect("tls"),
            limits.upstream_connect_timeout,
        ),
        metrics: Arc::new(Metrics::default()),
        // No event log: these tests read no events, and a log would print them.
        events: EventSink::new(None),
    });
    Dataplane::new(shared)
}

fn spec(name: &str, bind: std::net::SocketAddr, upstream: &str) -> ListenerSpec {
    ListenerSpec {
        name: name.into(),
        bind,
        tls: None,
        upstreams: vec![UpstreamSpec {
            url: upstream.into(),
            healthy: true,
        }],
        engine: Arc::new(Engine::new(CompiledPolicy::allow_all("p"))),
        x_forwarded_for: true,
        redirect_to_https: false,
        access: None,
    }
}

async fn get(addr: std::net::SocketAddr, path: &str) -> Result<u16, String> {
    let res = h1_client()
        .get(format!("http://{addr}{path}").parse().expect("uri"))
        .await
        .map_err(|e| e.to_string())?;
    Ok(res.status().as_u16())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_starts_updates_and_stops_listeners() {
    let (a, b) = (Upstream::start().await, Upstream::start().await);
    let dp = dataplane();
    let (l1, l2) = (free_addr(), free_addr());

    let st = dp.apply(vec![
        spec("/Common/vs1", l1, &a.url()),
        spec("/Common/vs2", l2, &a.url()),
    ]);
    assert!(st.iter().all(|s| s.error.is_none()), "{st:?}");
    assert_eq!(get(l1, "/").await, Ok(200));
    assert_eq!(get(l2, "/").await, Ok(200));
    assert_eq!(a.hits(), 2);

    // Move vs1 to the other pool while a slow request is in flight on it.
    let slow = tokio::spawn(get(l1, "/slow"));
    tokio::time::sleep(Duration::from_millis(200)).await;
    let st = dp.apply(vec![spec("/Common/vs1", l1, &b.url())]);
    assert_eq!(st.len(), 1);
    assert_eq!(st[0].error, None);
    assert_eq!(
        slow.await.expect("task"),
        Ok(200),
        "the in-flight request finished"
    );
    assert_eq!(get(l1, "/").await, Ok(200));
    assert_eq!(b.hits(), 1, "new requests go to the new pool");

    // vs2 was removed: its address stops answering.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(get(l2, "/").await.is_err(), "vs2 still answers");
    dp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bind_failure_is_reported_per_listener() {
    let up = Upstream::start().await;
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let busy = taken.local_addr().expect("addr");
    let dp = dataplane();
    let ok = free_addr();
    let st = dp.apply(vec![
        spec("/Common/busy", busy, &up.url()),
        spec("/Common/ok", ok, &up.url()),
        spec("/Common/bad", free_addr(), "ftp://nope"),
    ]);
    assert_eq!(st[0].name, "/Common/busy");
    assert!(
        st[0]
            .error
            .as_deref()
            .unwrap_or("")
            .contains("cannot listen"),
        "{st:?}"
    );
    assert_eq!(st[1].error, None);
    assert!(
        st[2].error.as_deref().unwrap_or("").contains("scheme"),
        "{st:?}"
    );
    assert_eq!(get(ok, "/").await, Ok(200));
    dp.shutdown().await;
}
