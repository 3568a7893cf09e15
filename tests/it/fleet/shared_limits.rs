//! Rate limits and revocations shared by a fleet in Redis: a real `redis-server` and three real
//! `portcullis proxy` processes on loopback. A limit of N per window admits exactly N across the
//! three; Redis killed mid-run fails no request (each node counts alone, logs it once, exports
//! it) and Redis restarted is used again; a frozen Redis costs a request at most its timeout; a
//! revocation reaches every node within a second and outlives a node's restart; the controller's
//! REST revokes in the store its profile names.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::access::write;
use crate::support::free_addr;
use crate::support::proxy::{PASS_POLICY, Proxy, Upstream};
use crate::support::redis::Redis;

/// The access profile (in `dir/access.json`, its path returned) that admits anonymous requests
/// under `rate_limit`.
fn anonymous_limited(dir: &Path, rate_limit: Value) -> String {
    let doc = json!({"methods": {"k": {"apiKey": {"in": "header", "name": "x-api-key", "keys": []}}},
                     "default": [], "rateLimit": rate_limit});
    write(dir, "access.json", &doc)
}

/// A node: the proxy and its metrics address.
struct Node {
    proxy: Proxy,
    metrics: SocketAddr,
}

fn node(upstream: &Upstream, access: &str) -> Node {
    // reqwest is built without a default TLS provider.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let metrics = free_addr();
    let proxy = Proxy::start(
        &[format!("http://{}", upstream.addr)],
        PASS_POLICY,
        &[
            "--access",
            access,
            "--metrics-listen",
            &metrics.to_string(),
            "--workers",
            "2",
        ],
    );
    Node { proxy, metrics }
}

impl Node {
    async fn metrics(&self) -> String {
        reqwest::get(format!("http://{}/metrics", self.metrics))
            .await
            .expect("metrics")
            .text()
            .await
            .expect("text")
    }

    /// Waits until `portcullis_shared_store_up` shows `up`.
    async fn store_up(&self, up: bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let m = self.metrics().await;
            let line = m
                .lines()
                .find(|l| l.starts_with("portcullis_shared_store_up{"))
                .unwrap_or_default()
                .to_string();
            if line.ends_with(&format!(" {}", u8::from(up))) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "shared store up = {up} not reached: {line}\n{}",
                self.proxy.stderr()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// Sends `n` requests at once, request `i` to node `i % nodes`; the statuses and Retry-After
/// values. A transport error fails the test (no request may fail).
async fn burst(nodes: &[&Node], n: usize) -> Vec<(u16, Option<u64>)> {
    let c = reqwest::Client::new();
    let calls = (0..n).map(|i| {
        let url = nodes[i % nodes.len()].proxy.url("/api/items");
        let c = c.clone();
        async move {
            let r = c
                .get(url)
                .timeout(Duration::from_secs(10))
                .send()
                .await
                .expect("every request is answered");
            let retry = r
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse().ok());
            (r.status().as_u16(), retry)
        }
    });
    futures_util::future::join_all(calls).await
}

/// Sends `n` requests to `node` one after the other, 5 ms apart, counting the answers in
/// `answered`; each status and how long it took. A transport error fails the test.
async fn paced(node: &Node, n: usize, answered: &AtomicUsize) -> Vec<(u16, Duration)> {
    let c = reqwest::Client::new();
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        let r = c
            .get(node.proxy.url("/api/items"))
            .timeout(Duration::from_secs(10))
            .send()
            .await
            .expect("every request is answered");
        out.push((r.status().as_u16(), t.elapsed()));
        answered.fetch_add(1, Ordering::Relaxed);
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    out
}

fn admitted(answers: &[(u16, Option<u64>)]) -> usize {
    assert!(
        answers.iter().all(|(s, _)| *s == 200 || *s == 429),
        "only 200 and 429: {answers:?}"
    );
    answers.iter().filter(|(s, _)| *s == 200).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_nodes_admit_exactly_the_shared_limit_and_outlive_redis() {
    let mut redis = Redis::start();
    let upstream = Upstream::start().await;
    let dir = tempfile::tempdir().expect("tmp");
    let access = anonymous_limited(
        dir.path(),
        json!({"requests": 100, "windowSeconds": 60, "by": "ip",
               "store": {"redis": redis.url(), "keyPrefix": "limit:", "timeoutMs": 1000}}),
    );
    let nodes: Vec<Node> = (0..3).map(|_| node(&upstream, &access)).collect();
    let all: Vec<&Node> = nodes.iter().collect();
    for n in &nodes {
        n.store_up(true).await;
    }

    // 300 concurrent requests over three nodes: exactly 100 pass.
    let answers = burst(&all, 300).await;
    assert_eq!(
        admitted(&answers),
        100,
        "{}",
        nodes
            .iter()
            .map(|n| n.proxy.stderr())
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert_eq!(redis.cli(&["ZCARD", "limit:rl:ip:127.0.0.1"]).trim(), "100");
    // Retry-After comes from the shared window: the oldest admitted request leaves it in ~60 s.
    for (s, retry) in &answers {
        if *s == 429 {
            let r = retry.expect("Retry-After on every 429");
            assert!((58..=60).contains(&r), "Retry-After {r}");
        }
    }

    // Redis killed mid-run: a paced stream of requests to every node, Redis SIGKILLed while it
    // flows. No request fails or waits, and the nodes go from the shared window (full: 429) to
    // their own limits (100 each, full buckets: 200) at once.
    let started = Instant::now();
    let answered: Vec<AtomicUsize> = nodes.iter().map(|_| AtomicUsize::new(0)).collect();
    let stream =
        futures_util::future::join_all(nodes.iter().zip(&answered).map(|(n, a)| paced(n, 60, a)));
    let kill = async {
        while answered.iter().any(|a| a.load(Ordering::Relaxed) < 10) {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        redis.kill();
    };
    let (streams, ()) = tokio::join!(stream, kill);
    let took = started.elapsed();
    for (n, answers) in nodes.iter().zip(&streams) {
        let statuses: Vec<u16> = answers.iter().map(|(s, _)| *s).collect();
        admitted(&answers.iter().map(|(s, _)| (*s, None)).collect::<Vec<_>>());
        let slowest = answers.iter().map(|(_, t)| *t).max().unwrap_or_default();
        assert!(
            slowest < Duration::from_millis(500),
            "no request waits on a dead Redis: {slowest:?}"
        );
        let switch = statuses
            .iter()
            .position(|s| *s == 200)
            .expect("admitted by the local limit after the kill");
        assert!(
            switch > 0 && statuses[..switch].iter().all(|s| *s == 429),
            "refused by the full shared window before the kill, admitted after: {statuses:?}\n{}",
            n.proxy.stderr()
        );
        assert!(statuses[switch..].iter().all(|s| *s == 200), "{statuses:?}");
    }
    assert!(took < Duration::from_secs(5), "{took:?}");

    // Each node now counts alone: its own limit of 100 (the stream used some of it), no more.
    for (n, streamed) in nodes.iter().zip(&streams) {
        let before = streamed.iter().filter(|(s, _)| *s == 200).count();
        let ok = before + admitted(&burst(&[n], 110).await);
        assert!((100..=102).contains(&ok), "local limit: {ok}");
        n.store_up(false).await;
        let m = n.metrics().await;
        let fallbacks = m
            .lines()
            .find(|l| l.starts_with("portcullis_shared_store_fallbacks_total{"))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0);
        assert!(fallbacks >= 110, "{m}");
        let log = n.proxy.stderr();
        assert_eq!(
            log.matches("shared store unavailable").count(),
            1,
            "logged once: {log}"
        );
    }

    // Redis back (its window was kept on disk): every node counts in it again, so the full
    // window refuses requests a node's own buckets would still admit.
    redis.restart();
    for n in &nodes {
        n.store_up(true).await;
        let answers = burst(&[n], 3).await;
        assert_eq!(admitted(&answers), 0, "{answers:?}");
        assert_eq!(
            n.proxy.stderr().matches("shared store connected").count(),
            2,
            "{}",
            n.proxy.stderr()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frozen_redis_costs_a_request_at_most_its_timeout() {
    let redis = Redis::start();
    let upstream = Upstream::start().await;
    let dir = tempfile::tempdir().expect("tmp");
    // A token bucket of 5 refilled once in 100 s; a store that does not answer admits.
    let access = anonymous_limited(
        dir.path(),
        json!({"requestsPerSecond": 0.01, "burst": 5, "by": "ip",
               "store": {"redis": redis.url(), "keyPrefix": "frozen:",
                         "timeoutMs": 500, "onUnavailable": "allow"}}),
    );
    let n = node(&upstream, &access);
    n.store_up(true).await;
    let answers = burst(&[&n], 8).await;
    assert_eq!(admitted(&answers), 5, "{answers:?}");
    let retry = answers.iter().find_map(|(_, r)| *r).expect("Retry-After");
    assert!(
        (95..=100).contains(&retry),
        "GCRA: one request per 100 s: {retry}"
    );

    redis.freeze();
    let started = Instant::now();
    let first = burst(&[&n], 1).await;
    let waited = started.elapsed();
    assert_eq!(first[0].0, 200, "a store that does not answer admits");
    assert!(
        waited >= Duration::from_millis(500) && waited < Duration::from_millis(2000),
        "decided after the timeout: {waited:?}"
    );
    // Marked down: the next requests do not wait for it.
    let started = Instant::now();
    assert_eq!(admitted(&burst(&[&n], 5).await), 5);
    assert!(started.elapsed() < Duration::from_millis(500));

    redis.thaw();
    n.store_up(true).await;
    assert_eq!(admitted(&burst(&[&n], 2).await), 0, "shared again");
}

fn cli(redis: &Redis, prefix: &str, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_portcullis"))
        .arg("access")
        .args(args)
        .args(["--store", &redis.url(), "--key-prefix", prefix])
        .output()
        .expect("portcullis access");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

async fn status(node: &Node, headers: &[(&str, &str)]) -> (u16, String) {
    let mut r = reqwest::Client::new().get(node.proxy.url("/api/items"));
    for (k, v) in headers {
        r = r.header(*k, *v);
    }
    let r = r.send().await.expect("answered");
    let challenge = r
        .headers()
        .get_all("www-authenticate")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect::<Vec<_>>()
        .join("\n");
    (r.status().as_u16(), challenge)
}

/// Polls every node until each answers `want` for `headers`; how long it took.
async fn until_all(nodes: &[Node], headers: &[(&str, &str)], want: u16) -> Duration {
    let started = Instant::now();
    for n in nodes {
        loop {
            if status(n, headers).await.0 == want {
                break;
            }
            assert!(started.elapsed() < Duration::from_secs(5), "never {want}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    started.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_revocation_reaches_every_node_within_a_second() {
    let mut redis = Redis::start();
    let upstream = Upstream::start().await;
    let dir = tempfile::tempdir().expect("tmp");
    let secret = "a-shared-hmac-secret-of-32-bytes-or-more";
    let access = write(
        dir.path(),
        "access.json",
        &json!({"methods": {
                    "partner": {"apiKey": {"in": "header", "name": "x-api-key",
                                           "keys": [{"id": "partner-a", "key": "k-a"}, {"id": "partner-b", "key": "k-b"}]}},
                    "sso": {"jwt": {"secrets": [{"value": secret}]}}},
                "revocations": {"redis": redis.url(), "keyPrefix": "rv:"}}),
    );
    let mut nodes: Vec<Node> = (0..3).map(|_| node(&upstream, &access)).collect();
    let key_a = [("x-api-key", "k-a")];
    let key_b = [("x-api-key", "k-b")];
    assert_eq!(until_all(&nodes, &key_a, 200).await.as_secs(), 0);

    let out = cli(&redis, "rv:", &["revoke", "key:partner-a"]);
    assert!(
        out.starts_with("revoked key:partner-a with no end"),
        "{out}"
    );
    let took = until_all(&nodes, &key_a, 401).await;
    assert!(
        took < Duration::from_secs(1),
        "every node refuses within 1 s: {took:?}"
    );
    let (_, challenge) = status(&nodes[2], &key_a).await;
    assert!(challenge.starts_with("ApiKey realm="), "{challenge}");
    let events = nodes[2].proxy.events_containing("has been revoked");
    assert!(
        events.contains("partner: the API key has been revoked"),
        "{events}"
    );
    assert_eq!(status(&nodes[1], &key_b).await.0, 200, "other keys pass");

    // A token id, for a while.
    let token = jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &json!({"sub": "u1", "jti": "t-77", "exp": crate::support::access::now() + 600}),
        &jsonwebtoken::EncodingKey::from_secret(secret.as_bytes()),
    )
    .expect("token");
    let bearer = format!("Bearer {token}");
    let with_token = [("authorization", bearer.as_str())];
    assert_eq!(status(&nodes[0], &with_token).await.0, 200);
    cli(&redis, "rv:", &["revoke", "--ttl", "2s", "jti:t-77"]);
    assert!(until_all(&nodes, &with_token, 401).await < Duration::from_secs(1));
    let (_, challenge) = status(&nodes[0], &with_token).await;
    assert!(
        challenge
            .contains(r#"error="invalid_token", error_description="the token has been revoked""#),
        "{challenge}"
    );
    let listed = cli(&redis, "rv:", &["revocations"]);
    assert!(
        listed.contains("key:partner-a with no end") && listed.contains("jti:t-77 until "),
        "{listed}"
    );

    // A node restarted learns the list before it opens.
    nodes[1] = node(&upstream, &access);
    assert_eq!(status(&nodes[1], &key_a).await.0, 401);

    // The TTL ends the token's revocation; unrevoke ends the key's.
    tokio::time::sleep(Duration::from_millis(2100)).await;
    assert_eq!(status(&nodes[2], &with_token).await.0, 200);
    cli(&redis, "rv:", &["unrevoke", "key:partner-a"]);
    assert!(until_all(&nodes, &key_a, 200).await < Duration::from_secs(1));

    // Redis SIGKILLed: every node keeps the last list it read. Started again (its append-only
    // file kept the list), every node reconnects and resubscribes: a revocation written at once
    // is refused everywhere within 1 s, and the earlier one still is.
    cli(&redis, "rv:", &["revoke", "key:partner-a"]);
    until_all(&nodes, &key_a, 401).await;
    redis.kill();
    for n in &nodes {
        assert_eq!(status(n, &key_a).await.0, 401, "the last list read holds");
        assert_eq!(status(n, &key_b).await.0, 200);
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    redis.restart();
    cli(&redis, "rv:", &["revoke", "key:partner-b"]);
    let took = until_all(&nodes, &key_b, 401).await;
    assert!(
        took < Duration::from_secs(1),
        "after a Redis restart too: {took:?}"
    );
    for n in &nodes {
        assert_eq!(status(n, &key_a).await.0, 401);
        let log = n.proxy.stderr();
        assert_eq!(
            log.matches("revocations: shared store unavailable").count(),
            1,
            "{log}"
        );
        assert_eq!(
            log.matches("revocations: shared store connected").count(),
            1,
            "{log}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_controller_revokes_in_the_store_its_profile_names() {
    use crate::support::mgmt::{Api, assert_error, start};
    use reqwest::Method;

    let redis = Redis::start();
    let dir = tempfile::tempdir().expect("tmp");
    let server = start(dir.path(), None);
    let api = Api::new(&server);
    let methods = json!({"partner": {"apiKey": {"in": "header", "name": "x-api-key",
                                               "keys": [{"id": "partner-a", "key": "k-a"}]}}});
    let (s, b) = api
        .req(
            Method::POST,
            "/mgmt/tm/ltm/profile/api-access",
            Some(json!({"name": "orders", "methods": methods,
                        "revocations": {"redis": redis.url(), "keyPrefix": "cm:"}})),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    let path = "/mgmt/shared/access/revocations/~Common~orders";
    let (s, b) = api
        .req(
            Method::POST,
            path,
            Some(json!({"id": "key:partner-a", "ttlSeconds": 3600})),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["id"], "key:partner-a");
    assert!(b["until"].as_str().is_some_and(|u| u.ends_with('Z')), "{b}");
    assert!(
        !redis
            .cli(&["ZSCORE", "cm:revoked", "key:partner-a"])
            .trim()
            .is_empty()
    );
    let (s, b) = api.req(Method::GET, path, None).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["items"][0]["id"], "key:partner-a", "{b}");

    let refused = |(s, b): (reqwest::StatusCode, Value), needle: &str| {
        assert_eq!(s, 400, "{b}");
        assert_error(&b, 400);
        let message = b["message"].as_str().unwrap_or_default();
        assert!(message.contains(needle), "{b}");
    };
    refused(
        api.req(Method::POST, path, Some(json!({"id": "partner-a"})))
            .await,
        "key:<API key id> or jti:<token id>",
    );
    let (s, b) = api
        .req(Method::DELETE, &format!("{path}/key:partner-a"), None)
        .await;
    assert_eq!(s, 200, "{b}");
    let (s, b) = api
        .req(Method::DELETE, &format!("{path}/key:partner-a"), None)
        .await;
    assert_eq!(s, 404, "{b}");

    let (s, b) = api
        .req(
            Method::POST,
            "/mgmt/tm/ltm/profile/api-access",
            Some(json!({"name": "plain", "methods": methods})),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    let plain = "/mgmt/shared/access/revocations/~Common~plain";
    refused(
        api.req(Method::GET, plain, None).await,
        "has no revocations store",
    );
    let (s, b) = api
        .req(
            Method::GET,
            "/mgmt/shared/access/revocations/~Common~nope",
            None,
        )
        .await;
    assert_eq!(s, 404, "{b}");
}
