//! OpenAPI enforcement speed: compiling GitHub's REST API description (fetch it with
//! `sh benches/github-spec.sh`; skipped when absent) and matching + validating one request
//! against it and against the petstore fixture. Figures and goals: `docs/benchmarks.md`.
//!
//! Every bench runs twice: wall-clock time (`wall/…`) and this thread's CPU time (`cpu/…`, from
//! `/proc/thread-self/schedstat`, Linux), which stays meaningful on a box shared with other builds.
//! The CPU clock ticks coarsely, so CPU samples run at least `MIN_BATCH` calls and are scaled back.

use criterion::{Bencher, Criterion, criterion_group, criterion_main};
use portcullis::waf::NoResolver;
use portcullis::waf::openapi::{ApiMatch, CompiledApi, Head, OpenApiLimits, load};
use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

const MIN_BATCH: u64 = 20_000;

#[derive(Clone, Copy, PartialEq)]
enum Clock {
    Wall,
    Cpu,
}

impl Clock {
    fn tag(self) -> &'static str {
        match self {
            Clock::Wall => "wall",
            Clock::Cpu => "cpu",
        }
    }
}

/// This thread's CPU time in nanoseconds (0 where `/proc` is missing).
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// Runs `f` for `iters` iterations (at least `min` when timing CPU) and returns the time of `iters`.
fn timed<R>(b: &mut Bencher<'_>, clock: Clock, min: u64, mut f: impl FnMut() -> R) {
    b.iter_custom(|iters| match clock {
        Clock::Wall => {
            let start = Instant::now();
            for _ in 0..iters {
                black_box(f());
            }
            start.elapsed()
        }
        Clock::Cpu => {
            let n = iters.max(min);
            let start = thread_cpu_ns();
            for _ in 0..n {
                black_box(f());
            }
            let spent = thread_cpu_ns().saturating_sub(start).max(1);
            Duration::from_nanos(
                (u128::from(spent) * u128::from(iters) / u128::from(n)).max(1) as u64,
            )
        }
    })
}

fn compile(path: &PathBuf) -> CompiledApi {
    let bytes = std::fs::read(path).expect("read spec");
    let spec = load(&bytes, "spec", &NoResolver).expect("load");
    CompiledApi::compile(&spec, &OpenApiLimits::default()).expect("compile")
}

/// Matches and validates one request; returns the number of violations.
fn request(
    api: &CompiledApi,
    method: &str,
    path: &str,
    head: &Head<'_>,
    ct: Option<&str>,
    body: &[u8],
) -> usize {
    let mut out = Vec::new();
    match api.find(method, path) {
        ApiMatch::Operation(m) => {
            m.op.validate_head(&m.path_params, head, &mut out);
            m.op.validate_body(ct, body, &mut out);
            out.len()
        }
        _ => usize::MAX,
    }
}

fn petstore(c: &mut Criterion, clock: Clock) {
    let tag = clock.tag();
    let api = compile(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/openapi/petstore-3.0.yaml"),
    );
    let query = [("limit", "10"), ("status", "sold"), ("tags", "a,b")];
    let headers = [
        ("x-request-id", "123e4567-e89b-12d3-a456-426614174000"),
        ("accept", "application/json"),
    ];
    let head = Head {
        query: &query,
        headers: &headers,
        cookies: &[],
    };
    assert_eq!(request(&api, "GET", "/v1/pets", &head, None, b""), 0);
    c.bench_function(
        &format!("{tag}/openapi/petstore GET /v1/pets (3 query, 2 headers)"),
        |b| {
            timed(b, clock, MIN_BATCH, || {
                request(&api, "GET", black_box("/v1/pets"), &head, None, b"")
            })
        },
    );
    let body = br#"{"name":"rex","tag":null,"age":3,"weight":2.5,"kind":{"meow":true}}"#;
    let head = Head {
        headers: &headers,
        ..Head::default()
    };
    assert_eq!(
        request(
            &api,
            "POST",
            "/v1/pets",
            &head,
            Some("application/json"),
            body
        ),
        0
    );
    c.bench_function(
        &format!("{tag}/openapi/petstore POST /v1/pets (JSON body, oneOf)"),
        |b| {
            timed(b, clock, MIN_BATCH, || {
                request(
                    &api,
                    "POST",
                    black_box("/v1/pets"),
                    &head,
                    Some("application/json"),
                    black_box(body),
                )
            })
        },
    );
}

fn github(c: &mut Criterion, clock: Clock) {
    let tag = clock.tag();
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/data/api.github.com.json");
    if !path.is_file() {
        eprintln!("skipped github benches: run benches/github-spec.sh first");
        return;
    }
    let bytes = std::fs::read(&path).expect("read spec");
    let mut group = c.benchmark_group(format!("{tag}/openapi/github"));
    group.sample_size(10);
    group.bench_function("load+compile api.github.com.json", |b| {
        timed(b, clock, 1, || {
            let spec = load(black_box(&bytes), "api.github.com.json", &NoResolver).expect("load");
            CompiledApi::compile(&spec, &OpenApiLimits::default())
                .expect("compile")
                .operations
                .len()
        })
    });
    group.finish();
    let api = compile(&path);
    let query = [
        ("state", "open"),
        ("labels", "bug,ui"),
        ("sort", "created"),
        ("per_page", "50"),
        ("page", "2"),
    ];
    let head = Head {
        query: &query,
        ..Head::default()
    };
    let issues = "/repos/rust-lang/rust/issues";
    assert_eq!(request(&api, "GET", issues, &head, None, b""), 0);
    c.bench_function(
        &format!("{tag}/openapi/github GET /repos/{{owner}}/{{repo}}/issues (5 query)"),
        |b| {
            timed(b, clock, MIN_BATCH, || {
                request(&api, "GET", black_box(issues), &head, None, b"")
            })
        },
    );
    let body = br#"{"title":"Crash on start","body":"Steps: run it","labels":["bug"],"assignees":["octocat"]}"#;
    let head = Head::default();
    assert_eq!(
        request(&api, "POST", issues, &head, Some("application/json"), body),
        0
    );
    c.bench_function(
        &format!("{tag}/openapi/github POST /repos/{{owner}}/{{repo}}/issues (JSON body)"),
        |b| {
            timed(b, clock, MIN_BATCH, || {
                request(
                    &api,
                    "POST",
                    black_box(issues),
                    &head,
                    Some("application/json"),
                    black_box(body),
                )
            })
        },
    );
    c.bench_function(
        &format!("{tag}/openapi/github find only /repos/{{o}}/{{r}}/compare/{{base}}...{{head}}"),
        |b| {
            timed(b, clock, MIN_BATCH, || {
                matches!(
                    api.find("GET", black_box("/repos/a/b/compare/main...dev")),
                    ApiMatch::Operation(_)
                )
            })
        },
    );
}

fn benches(c: &mut Criterion) {
    for clock in [Clock::Wall, Clock::Cpu] {
        if clock == Clock::Cpu && thread_cpu_ns() == 0 {
            eprintln!("skipped cpu-time benches: /proc/thread-self/schedstat unavailable");
            continue;
        }
        petstore(c, clock);
        github(c, clock);
    }
}

criterion_group!(openapi, benches);
criterion_main!(openapi);
