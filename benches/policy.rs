//! Criterion bench of the policy hot path without signatures (measured by the signatures work):
//! a typical GET (10 query parameters, 12 headers) through `Transaction` under the NGINX base
//! template with a few explicit URLs and parameters.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use portcullis::waf::policy;
use portcullis::waf::resolver::NoResolver;
use portcullis::waf::{ConnInfo, Transaction};

const POLICY: &str = r#"{"policy": {
  "name": "bench", "template": {"name": "POLICY_TEMPLATE_NGINX_BASE"}, "enforcementMode": "blocking",
  "urls": [{"name": "/api/v1/*", "type": "wildcard"}, {"name": "/index.html"}, {"name": "/login", "method": "POST"}],
  "parameters": [{"name": "page", "dataType": "integer"}, {"name": "q", "checkMaxValueLength": true, "maximumLength": 100},
                 {"name": "sort", "valueType": "static-content", "staticValues": ["asc", "desc"]}]
}}"#;

fn typical_get() -> http::request::Parts {
    let uri = "/api/v1/products/search?q=red+shoes&page=2&sort=asc&size=20&brand=acme&color=red&min=10&max=200&lang=en&ref=home";
    let headers = [
        ("host", "shop.example.com"),
        (
            "user-agent",
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36",
        ),
        (
            "accept",
            "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
        ),
        ("accept-language", "en-US,en;q=0.9"),
        ("accept-encoding", "gzip, deflate, br"),
        ("referer", "https://shop.example.com/"),
        ("cookie", "session=abc123def456; theme=dark; consent=yes"),
        ("connection", "keep-alive"),
        ("upgrade-insecure-requests", "1"),
        ("sec-fetch-dest", "document"),
        ("sec-fetch-mode", "navigate"),
        ("cache-control", "max-age=0"),
    ];
    let mut b = http::Request::builder().method("GET").uri(uri);
    for (k, v) in headers {
        b = b.header(k, v);
    }
    b.body(())
        .map(|r| r.into_parts().0)
        .unwrap_or_else(|_| http::Request::new(()).into_parts().0)
}

fn bench(c: &mut Criterion) {
    let loaded =
        policy::load(POLICY.as_bytes(), "bench.json", &NoResolver).expect("bench policy loads");
    let pol = Arc::new(loaded.policy);
    let head = typical_get();
    let conn = ConnInfo {
        peer: IpAddr::V4(Ipv4Addr::LOCALHOST),
        tls: false,
    };
    c.bench_function("policy/typical_get_10_params_12_headers", |b| {
        b.iter(|| {
            let mut tx = Transaction::new(pol.clone(), conn);
            let step = tx.on_request_headers(std::hint::black_box(&head));
            std::hint::black_box((step, tx.verdict().action))
        })
    });
    c.bench_function("policy/compile_nginx_base", |b| {
        b.iter(|| {
            policy::load(
                std::hint::black_box(POLICY.as_bytes()),
                "bench.json",
                &NoResolver,
            )
            .map(|l| l.warnings.len())
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
