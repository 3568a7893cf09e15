//! OpenAPI enforcement speed: compiling GitHub's REST API description (fetch it with
//! `sh benches/github-spec.sh`; skipped when absent) and matching + validating one request
//! against it and against the petstore fixture. Goals (issue #4): compile < 1 s, request < 2 µs.
//! Every bench runs twice: wall-clock time (criterion's default) and this thread's CPU time
//! (`/proc/thread-self/schedstat`, Linux), which stays meaningful on a box shared with other builds.

use criterion::measurement::{Measurement, ValueFormatter};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use portcullis::waf::openapi::{ApiMatch, CompiledApi, Head, Limits, load};
use portcullis::waf::resolver::NoResolver;
use std::hint::black_box;
use std::path::PathBuf;

fn compile(path: &PathBuf) -> CompiledApi {
    let bytes = std::fs::read(path).expect("read spec");
    let spec = load(&bytes, "spec", &NoResolver).expect("load");
    CompiledApi::compile(&spec, &Limits::default()).expect("compile")
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

fn petstore<M: Measurement + 'static>(c: &mut Criterion<M>, tag: &str) {
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
        &format!("{tag}openapi/petstore GET /v1/pets (3 query, 2 headers)"),
        |b| {
            b.iter(|| {
                request(
                    &api,
                    black_box("GET"),
                    black_box("/v1/pets"),
                    &head,
                    None,
                    b"",
                )
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
        &format!("{tag}openapi/petstore POST /v1/pets (JSON body, oneOf)"),
        |b| {
            b.iter(|| {
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

fn github<M: Measurement + 'static>(c: &mut Criterion<M>, tag: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/data/api.github.com.json");
    if !path.is_file() {
        eprintln!("skipped github benches: run benches/github-spec.sh first");
        return;
    }
    let bytes = std::fs::read(&path).expect("read spec");
    let mut group = c.benchmark_group(format!("{tag}openapi/github"));
    group.sample_size(10);
    group.bench_function("load+compile api.github.com.json", |b| {
        b.iter(|| {
            let spec = load(black_box(&bytes), "api.github.com.json", &NoResolver).expect("load");
            CompiledApi::compile(&spec, &Limits::default())
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
    assert_eq!(
        request(
            &api,
            "GET",
            "/repos/rust-lang/rust/issues",
            &head,
            None,
            b""
        ),
        0
    );
    c.bench_function(
        &format!("{tag}openapi/github GET /repos/{{owner}}/{{repo}}/issues (5 query)"),
        |b| {
            b.iter(|| {
                request(
                    &api,
                    "GET",
                    black_box("/repos/rust-lang/rust/issues"),
                    &head,
                    None,
                    b"",
                )
            })
        },
    );
    let body = br#"{"title":"Crash on start","body":"Steps: run it","labels":["bug"],"assignees":["octocat"]}"#;
    let head = Head::default();
    assert_eq!(
        request(
            &api,
            "POST",
            "/repos/rust-lang/rust/issues",
            &head,
            Some("application/json"),
            body
        ),
        0
    );
    c.bench_function(
        &format!("{tag}openapi/github POST /repos/{{owner}}/{{repo}}/issues (JSON body)"),
        |b| {
            b.iter(|| {
                request(
                    &api,
                    "POST",
                    black_box("/repos/rust-lang/rust/issues"),
                    &head,
                    Some("application/json"),
                    black_box(body),
                )
            })
        },
    );
    c.bench_function(
        &format!("{tag}openapi/github find only /repos/{{o}}/{{r}}/compare/{{base}}...{{head}}"),
        |b| {
            b.iter(|| {
                matches!(
                    api.find("GET", black_box("/repos/a/b/compare/main...dev")),
                    ApiMatch::Operation(_)
                )
            })
        },
    );
}

/// This thread's CPU time in nanoseconds (0 where `/proc` is missing).
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// Criterion measurement: CPU time of the benchmarking thread.
struct CpuTime;

impl Measurement for CpuTime {
    type Intermediate = u64;
    type Value = u64;
    fn start(&self) -> u64 {
        thread_cpu_ns()
    }
    fn end(&self, start: u64) -> u64 {
        thread_cpu_ns().saturating_sub(start)
    }
    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }
    fn zero(&self) -> u64 {
        0
    }
    fn to_f64(&self, v: &u64) -> f64 {
        *v as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        &NsFormatter
    }
}

struct NsFormatter;

impl ValueFormatter for NsFormatter {
    fn scale_values(&self, typical: f64, values: &mut [f64]) -> &'static str {
        let (div, unit) = match typical {
            t if t < 1e3 => (1.0, "ns (cpu)"),
            t if t < 1e6 => (1e3, "µs (cpu)"),
            t if t < 1e9 => (1e6, "ms (cpu)"),
            _ => (1e9, "s (cpu)"),
        };
        values.iter_mut().for_each(|v| *v /= div);
        unit
    }
    fn scale_throughputs(
        &self,
        _typical: f64,
        _t: &Throughput,
        _values: &mut [f64],
    ) -> &'static str {
        "ns (cpu)"
    }
    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "ns"
    }
}

fn wall(c: &mut Criterion) {
    petstore(c, "");
    github(c, "");
}

fn cpu(c: &mut Criterion<CpuTime>) {
    if thread_cpu_ns() == 0 {
        eprintln!("skipped cpu-time benches: /proc/thread-self/schedstat unavailable");
        return;
    }
    petstore(c, "cpu ");
    github(c, "cpu ");
}

criterion_group!(wall_time, wall);
criterion_group! {
    name = cpu_time;
    config = Criterion::default().with_measurement(CpuTime);
    targets = cpu
}
criterion_main!(wall_time, cpu_time);
