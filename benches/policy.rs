//! Criterion bench of the whole engine: a typical GET (10 query parameters, 12 headers) and JSON
//! POSTs of 1 KB and 100 KB (head, body chunks, body end) through `Transaction` under the NGINX base
//! template with a few explicit URLs and parameters, signatures included; and compiling that policy.
//! Figures and goals: `docs/benchmarks.md`.
//!
//! The typical GET runs three ways: the same request again and again (its values answered from the
//! signature scan memo after the first), new query values and session cookie each time (the
//! browser's headers repeat, as one visitor's do), and every value new (nothing from the memo).
//!
//! `cargo bench --bench policy`; instruction counts of the same inputs: `benches/instructions.sh`.

mod common;

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use portcullis::waf::NoResolver;
use portcullis::waf::Transaction;
use portcullis::waf::policy;

fn bench(c: &mut Criterion) {
    let pol = common::policy();
    let head = common::typical_get();
    let run_get = |head: &portcullis::waf::RequestHead| {
        let mut tx = Transaction::new(pol.clone(), common::CONN);
        let step = tx.on_request_headers(black_box(head));
        black_box((step, tx.verdict().action))
    };
    c.bench_function("policy/typical_get_10_params_12_headers", |b| {
        b.iter(|| run_get(&head))
    });
    for (name, fresh) in [
        ("new_params", common::Fresh::Params),
        ("all_new", common::Fresh::All),
    ] {
        // More variants than the memo holds values of: each comes back evicted.
        let variants = common::typical_get_variants(4096, fresh);
        let mut next = variants.iter().cycle();
        c.bench_function(&format!("policy/typical_get_{name}"), |b| {
            b.iter(|| run_get(next.next().unwrap_or(&head)))
        });
    }
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
