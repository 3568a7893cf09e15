//! Signature scanning speed: database compile time, a typical GET's values (10 query parameters,
//! 12 headers), and clean JSON bodies of 1 KB and 100 KB, scanned as one raw body value and as parsed
//! string keys and values (what the engine does with a JSON body).
//!
//! `cargo bench --bench signatures`

mod common;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use portcullis::waf::signatures::{SignatureDb, Target};
use std::hint::black_box;

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

    c.bench_function("typical_get_values", |b| {
        b.iter(|| {
            let mut hits = Vec::new();
            common::scan_get_values(db, &mut hits);
            black_box(hits)
        })
    });

    json_bodies(c, "json_body", |body, hits| {
        db.scan(Target::Body, black_box(body), hits)
    });
    // What the engine does with a JSON body: parse once, scan every string key and value.
    json_bodies(c, "json_values", |body, hits| {
        let v: serde_json::Value = serde_json::from_slice(black_box(body)).unwrap_or_default();
        scan_json(db, &v, hits)
    });
}

/// The group `name`: `scan` over the clean JSON bodies of 1 KB and 100 KB.
fn json_bodies(c: &mut Criterion, name: &str, scan: impl Fn(&[u8], &mut Vec<u32>)) {
    let mut g = c.benchmark_group(name);
    for size in [1024usize, 100 * 1024] {
        let body = common::json_body(size);
        g.throughput(Throughput::Bytes(body.len() as u64));
        g.bench_function(format!("{}KB", size / 1024), |b| {
            b.iter(|| {
                let mut hits = Vec::new();
                scan(&body, &mut hits);
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
