//! Where the data plane's memory goes after start: the resident set after each stage of what
//! `portcullis proxy` builds for a policy (the signature database, the policy, the engine, the
//! first requests), in one process, so each stage's growth is what it costs.
//! It runs on the binary's allocator, so what it reports is what the proxy holds, freed memory
//! the allocator keeps included. `docs/limits.md` ("Memory") holds the figures.
//!
//! `cargo run --release --example memory -- POLICY.json [REQUESTS]`

#[global_allocator]
static GLOBAL: portcullis_allocator::Allocator = portcullis_allocator::Allocator;

/// The anonymous resident set of this process (the heap, not the mapped binary), in bytes.
fn resident() -> usize {
    let rollup = std::fs::read_to_string("/proc/self/smaps_rollup").unwrap_or_default();
    rollup
        .lines()
        .find_map(|l| l.strip_prefix("Anonymous:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<usize>().ok())
        .unwrap_or(0)
        * 1024
}

fn mib(n: usize) -> String {
    format!("{:7.2} MiB", n as f64 / (1 << 20) as f64)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: memory POLICY.json [REQUESTS]");
        std::process::exit(2);
    };
    let mut last = resident();
    let mut stage = |name: &str| {
        let now = resident();
        println!(
            "{name:<44} {} (+{})",
            mib(now),
            mib(now.saturating_sub(last))
        );
        last = now;
    };
    stage("start");
    let db = portcullis::waf::signatures::SignatureDb::builtin();
    stage("signature database");
    let matchers = || {
        let heap = db.heap_usage();
        println!(
            "  matchers: literal table {}, literal entries {}, regexes {} ({} of {} compiled), selections {}",
            mib(heap.literal_table),
            mib(heap.literal_entries),
            mib(heap.regexes),
            heap.regexes_compiled,
            heap.regex_count,
            mib(heap.selections)
        );
    };
    matchers();
    let policy = portcullis::proxy::load_policy(std::path::Path::new(path))
        .unwrap_or_else(|e| panic!("{e}"));
    stage("policy compiled");
    let engine = portcullis::waf::Engine::new(policy);
    stage("engine");
    let requests: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(1000);
    let peer: std::net::IpAddr = [127, 0, 0, 1].into();
    let run = |query: &dyn Fn(usize) -> String| {
        for i in 0..requests {
            let uri = format!("/api/pets/{i}?{}", query(i));
            let req = http::Request::get(uri)
                .header("host", "api.example.test")
                .header("user-agent", "bench-client/1.0 (wrk)")
                .header("accept", "application/json")
                .header("accept-language", "en-US,en;q=0.8")
                .body(())
                .expect("request");
            let head = portcullis::waf::RequestHead::from(req.into_parts().0);
            let mut tx = portcullis::waf::Transaction::new(
                engine.snapshot(),
                portcullis::waf::ConnInfo { peer, tls: false },
            );
            tx.on_request_headers(&head);
            tx.on_response_headers(200, &http::HeaderMap::new());
            let _ = tx.finish(&head.headers);
        }
    };
    run(&|_| "limit=10".into());
    stage(&format!("after {requests} GETs (scan memo)"));
    // Attacks of the benchmark's shapes, each different, so the regexes they reach run and their
    // lazy-DFA caches fill.
    run(&|i| {
        format!(
            "q=%27%20or%20{i}%3D{i}--%20%3Cscript%3Ealert({i})%3C/script%3E&f=../../etc/passwd{i}"
        )
    });
    stage(&format!("after {requests} attacks (regex caches)"));
    matchers();
    let rollup = std::fs::read_to_string("/proc/self/smaps_rollup").unwrap_or_default();
    for line in rollup
        .lines()
        .filter(|l| l.starts_with("Rss:") || l.starts_with("Pss") || l.starts_with("AnonHuge"))
    {
        println!("{line}");
    }
}
