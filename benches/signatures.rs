//! Signature scanning speed: database compile time, a typical GET's values (10 query parameters,
//! 12 headers), and clean JSON bodies of 1 KB and 100 KB, scanned as one raw body value and as parsed
//! string keys and values (what the engine does with a JSON body).
//!
//! `cargo bench --bench signatures`

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use portcullis::waf::signatures::{SignatureDb, Target};
use std::hint::black_box;

fn json_body(size: usize) -> Vec<u8> {
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

fn bench(c: &mut Criterion) {
    let db = SignatureDb::builtin();
    let texts = [
        include_str!("../policies/signatures/sqli.sig"),
        include_str!("../policies/signatures/xss.sig"),
        include_str!("../policies/signatures/command.sig"),
        include_str!("../policies/signatures/traversal.sig"),
        include_str!("../policies/signatures/code.sig"),
        include_str!("../policies/signatures/other.sig"),
    ];
    c.bench_function("compile_database", |b| {
        b.iter(|| SignatureDb::from_texts(black_box(&texts)).map(|d| d.signatures().len()))
    });

    let params: Vec<(&str, &str)> = vec![
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
    let headers: Vec<&str> = vec![
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/122.0.0.0 Safari/537.36",
        "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
        "en-US,en;q=0.9",
        "https://www.example.com/catalog",
        "no-cache",
        "1",
        "same-origin",
        "navigate",
        "document",
        "?1",
        "\"Chromium\";v=\"122\", \"Google Chrome\";v=\"122\"",
        "keep-alive",
    ];
    c.bench_function("typical_get_values", |b| {
        b.iter(|| {
            let mut hits = Vec::new();
            db.scan(Target::Url, b"/shop/products/list", &mut hits);
            for (k, v) in &params {
                db.scan(Target::ParamName, k.as_bytes(), &mut hits);
                db.scan(Target::ParamValue, v.as_bytes(), &mut hits);
            }
            for h in &headers {
                db.scan(Target::Header, h.as_bytes(), &mut hits);
            }
            black_box(hits)
        })
    });

    let mut g = c.benchmark_group("json_body");
    for size in [1024usize, 100 * 1024] {
        let body = json_body(size);
        g.throughput(Throughput::Bytes(body.len() as u64));
        g.bench_function(format!("{}KB", size / 1024), |b| {
            b.iter(|| {
                let mut hits = Vec::new();
                db.scan(Target::Body, black_box(&body), &mut hits);
                hits
            })
        });
    }
    g.finish();

    // What the engine does with a JSON body: parse once, scan every string key and value.
    let mut g = c.benchmark_group("json_values");
    for size in [1024usize, 100 * 1024] {
        let body = json_body(size);
        g.throughput(Throughput::Bytes(body.len() as u64));
        g.bench_function(format!("{}KB", size / 1024), |b| {
            b.iter(|| {
                let mut hits = Vec::new();
                let v: serde_json::Value =
                    serde_json::from_slice(black_box(&body)).unwrap_or_default();
                scan_json(db, &v, &mut hits);
                hits
            })
        });
    }
    g.finish();
}

fn scan_json(db: &SignatureDb, v: &serde_json::Value, hits: &mut Vec<u32>) {
    match v {
        serde_json::Value::String(s) => db.scan(Target::Json, s.as_bytes(), hits),
        serde_json::Value::Array(a) => a.iter().for_each(|x| scan_json(db, x, hits)),
        serde_json::Value::Object(o) => {
            for (k, x) in o {
                db.scan(Target::Json, k.as_bytes(), hits);
                scan_json(db, x, hits);
            }
        }
        _ => {}
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
