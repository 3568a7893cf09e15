//! Requests and bodies shared by the criterion benches (`benches/policy.rs`, `benches/signatures.rs`)
//! and the instruction-count probe (`examples/engine_cost.rs`), so every figure measures the same input.
//! Imports: `portcullis::waf`, `http`.

#![allow(dead_code)]

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

use portcullis::waf::NoResolver;
use portcullis::waf::signatures::{MemoUse, SignatureDb, Target};
use portcullis::waf::{CompiledPolicy, ConnInfo, Step, Transaction, policy};

/// The NGINX base template with a few explicit URLs and parameters.
pub const POLICY: &str = r#"{"policy": {
  "name": "bench", "template": {"name": "POLICY_TEMPLATE_NGINX_BASE"}, "enforcementMode": "blocking",
  "urls": [{"name": "/api/v1/*", "type": "wildcard"}, {"name": "/index.html"}, {"name": "/login", "method": "POST"}],
  "parameters": [{"name": "page", "dataType": "integer"}, {"name": "q", "checkMaxValueLength": true, "maximumLength": 100},
                 {"name": "sort", "valueType": "static-content", "staticValues": ["asc", "desc"]}]
}}"#;

pub fn policy() -> Arc<CompiledPolicy> {
    let loaded =
        policy::load(POLICY.as_bytes(), "bench.json", &NoResolver).expect("bench policy loads");
    Arc::new(loaded.policy)
}

pub const CONN: ConnInfo = ConnInfo {
    peer: IpAddr::V4(Ipv4Addr::LOCALHOST),
    tls: false,
};

/// A typical browser GET (`GET <uri> HTTP/1.1`, then its header lines), also the request
/// `tests/it/policy/engine.rs` checks the NGINX base template lets through.
const BROWSER_GET: &str = include_str!("../../tests/fixtures/browser-get.txt");

/// The URI of [`BROWSER_GET`].
fn browser_uri() -> &'static str {
    BROWSER_GET.split(' ').nth(1).expect("request line")
}

/// The headers of [`BROWSER_GET`], in order.
fn browser_headers() -> impl Iterator<Item = (&'static str, &'static str)> {
    BROWSER_GET
        .lines()
        .skip(1)
        .filter_map(|l| l.split_once(": "))
}

fn build(b: http::request::Builder) -> portcullis::waf::RequestHead {
    b.body(())
        .map(|r| r.into_parts().0.into())
        .unwrap_or_default()
}

/// The demo policy (`policies/demo/`: API-security template, the demo API's OpenAPI spec, gRPC
/// IDL), loaded as `portcullis proxy --policy` loads it.
pub fn demo_policy() -> Arc<CompiledPolicy> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/policies/demo/policy.json");
    Arc::new(portcullis::proxy::load_policy(std::path::Path::new(path)).expect("demo policy loads"))
}

/// The request `benches/load.sh` sends (wrk: a GET with only a Host header).
pub fn api_get() -> portcullis::waf::RequestHead {
    build(
        http::Request::builder()
            .method("GET")
            .uri("/api/users/1")
            .header("host", "127.0.0.1:8080"),
    )
}

/// Every phase the proxy runs for a request without a body: headers, the upstream's response
/// headers, and the logging phase. Returns whether the request was let through.
pub fn run_exchange(pol: &Arc<CompiledPolicy>, head: &portcullis::waf::RequestHead) -> bool {
    let mut tx = Transaction::new(pol.clone(), CONN);
    let mut ok = tx.on_request_headers(head) != Step::Block;
    let response = http::HeaderMap::new();
    ok &= tx.on_response_headers(200, &response) != Step::Block;
    ok && tx.finish(&head.headers).is_none()
}

/// A typical browser GET: 10 query parameters, 12 headers.
pub fn typical_get() -> portcullis::waf::RequestHead {
    let mut b = http::Request::builder().method("GET").uri(browser_uri());
    for (k, v) in browser_headers() {
        b = b.header(k, v);
    }
    build(b.header("cache-control", "max-age=0"))
}

/// Which values of [`typical_get`] change from one request to the next.
#[derive(Clone, Copy)]
pub enum Fresh {
    /// The query values and the session cookie; the browser's headers repeat (one visitor
    /// browsing: what real traffic looks like to the signature scan memo).
    Params,
    /// Every header and parameter value (names repeat; `sort` keeps the value its entity allows).
    All,
}

/// `n` variants of [`typical_get`], the same shape and lengths within a few digits, numbered
/// `i`: each holds values no other variant holds (see [`Fresh`]). Cycled through by the
/// benches, they measure a request whose values the scan memo has not seen.
pub fn typical_get_variants(n: usize, fresh: Fresh) -> Vec<portcullis::waf::RequestHead> {
    (0..n)
        .map(|i| {
            let uri = format!(
                "/api/v1/products/search?q=red+shoes+{i}&page={i}&sort=asc&size={}&brand=acme{i}&color=red{i}&min={i}&max={}&lang=en{i}&ref=home{i}",
                20 + i,
                200 + i
            );
            let mut b = http::Request::builder().method("GET").uri(uri);
            for (k, v) in browser_headers() {
                b = match (k, fresh) {
                    ("cookie", _) => b.header(k, format!("session=abc{i}def456; theme=dark; consent=yes")),
                    (_, Fresh::All) => b.header(k, format!("{v} {i}")),
                    (_, Fresh::Params) => b.header(k, v),
                };
            }
            let cache = match fresh {
                Fresh::All => format!("max-age={i}"),
                Fresh::Params => "max-age=0".to_string(),
            };
            build(b.header("cache-control", cache))
        })
        .collect()
}

/// A clean JSON document of about `size` bytes (a product list).
pub fn json_body(size: usize) -> Vec<u8> {
    let mut s = String::from("{\"items\":[");
    let mut i = 0;
    while s.len() < size {
        s.push_str(&format!(
            "{{\"id\":{i},\"name\":\"Product number {i}\",\"description\":\"A sturdy everyday item, available in several colours and sizes\",\"price\":{}.99,\"tags\":[\"home\",\"garden\"]}},",
            i % 100
        ));
        i += 1;
    }
    s.push_str("{}]}");
    s.into_bytes()
}

/// The head of a JSON POST of `len` body bytes.
pub fn json_post(len: usize) -> portcullis::waf::RequestHead {
    let mut b = http::Request::builder()
        .method("POST")
        .uri("/api/v1/products");
    for (k, v) in browser_headers() {
        b = b.header(k, v);
    }
    build(
        b.header("content-type", "application/json")
            .header("content-length", len.to_string()),
    )
}

/// One request through every phase of the engine; returns whether it was let through (the 100 KB
/// POST only alarms: its body is over the NGINX base template's POST data length).
pub fn run(pol: &Arc<CompiledPolicy>, head: &portcullis::waf::RequestHead, body: &[u8]) -> bool {
    let mut tx = Transaction::new(pol.clone(), CONN);
    let mut step = tx.on_request_headers(head);
    if step == Step::InspectBody {
        for chunk in body.chunks(16 * 1024) {
            step = tx.on_request_body(chunk);
            if matches!(step, Step::Block | Step::PassRest) {
                break;
            }
        }
        if step != Step::Block && step != Step::PassRest {
            step = tx.on_request_end();
        }
    }
    step != Step::Block && tx.verdict().action != portcullis::waf::Action::Block
}

const GET_PARAMS: [(&str, &str); 10] = [
    ("q", "red running shoes"),
    ("page", "2"),
    ("sort", "price_asc"),
    ("size", "42"),
    ("color", "red"),
    ("brand", "Acme Sports"),
    ("utm_source", "newsletter"),
    ("utm_medium", "email"),
    ("session", "b6f1c2d4e5a69788"),
    ("ref", "https://www.example.com/home"),
];
const GET_HEADERS: [(&str, &str); 12] = [
    (
        "user-agent",
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/122.0.0.0 Safari/537.36",
    ),
    (
        "accept",
        "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
    ),
    ("accept-language", "en-US,en;q=0.9"),
    ("referer", "https://www.example.com/catalog"),
    ("cache-control", "no-cache"),
    ("upgrade-insecure-requests", "1"),
    ("sec-fetch-site", "same-origin"),
    ("sec-fetch-mode", "navigate"),
    ("sec-fetch-dest", "document"),
    ("sec-fetch-user", "?1"),
    (
        "sec-ch-ua",
        "\"Chromium\";v=\"122\", \"Google Chrome\";v=\"122\"",
    ),
    ("connection", "keep-alive"),
];

/// The signature scans of a typical GET's values: the path, 10 parameter names and values, 12
/// header values, each with its header's signatures as the engine scans it (33 scans).
pub fn scan_get_values(db: &SignatureDb, hits: &mut Vec<u32>) {
    db.scan(Target::Url, b"/shop/products/list", hits);
    for (k, v) in GET_PARAMS {
        db.scan(Target::ParamName, k.as_bytes(), hits);
        db.scan(Target::ParamValue, v.as_bytes(), hits);
    }
    for (name, value) in GET_HEADERS {
        db.scan_header(name, value.as_bytes(), hits, MemoUse::Off);
    }
}
