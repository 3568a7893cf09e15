//! Criterion bench of the whole engine: a typical GET (10 query parameters, 12 headers) and JSON
//! POSTs of 1 KB and 100 KB (head, body chunks, body end) through `Transaction` under the NGINX base
//! template with a few explicit URLs and parameters, signatures included; and compiling that policy.
//! Goals (issue #3): under 5 µs per typical GET, over 500 MB/s of body.
//!
//! `cargo bench --bench policy`; instruction counts of the same inputs: `benches/instructions.sh`.

mod common;

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use portcullis::waf::Transaction;
use portcullis::waf::policy;
use portcullis::waf::resolver::NoResolver;

fn bench(c: &mut Criterion) {
    let pol = common::policy();
    let head = common::typical_get();
    c.bench_function("policy/typical_get_10_params_12_headers", |b| {
        b.iter(|| {
            let mut tx = Transaction::new(pol.clone(), common::CONN);
            let step = tx.on_request_headers(black_box(&head));
            black_box((step, tx.verdict().action))
        })
    });
    let mut g = c.benchmark_group("policy/json_post");
    for size in [1024usize, 100 * 1024] {
        let body = common::json_body(size);
        let head = common::json_post(body.len());
        assert!(
            common::run(&pol, &head, &body),
            "clean JSON POST goes through"
        );
        g.throughput(Throughput::Bytes(body.len() as u64));
        g.bench_function(format!("{}KB", size / 1024), |b| {
            b.iter(|| common::run(&pol, black_box(&head), black_box(&body)))
        });
    }
    g.finish();
    c.bench_function("policy/compile_nginx_base", |b| {
        b.iter(|| {
            policy::load(
                black_box(common::POLICY.as_bytes()),
                "bench.json",
                &NoResolver,
            )
            .map(|l| l.warnings.len())
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
