//! OpenAPI enforcement speed: compiling GitHub's REST API description (fetch it with
//! `sh benches/github-spec.sh`; skipped when absent) and matching + validating one request
//! against it and against the petstore fixture. Goals (issue #4): compile < 1 s, request < 2 µs.

use criterion::{Criterion, criterion_group, criterion_main};
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

fn petstore(c: &mut Criterion) {
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
    c.bench_function("openapi/petstore GET /v1/pets (3 query, 2 headers)", |b| {
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
    });
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
    c.bench_function("openapi/petstore POST /v1/pets (JSON body, oneOf)", |b| {
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
    });
}

fn github(c: &mut Criterion) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/data/api.github.com.json");
    if !path.is_file() {
        eprintln!("skipped github benches: run benches/github-spec.sh first");
        return;
    }
    let bytes = std::fs::read(&path).expect("read spec");
    let mut group = c.benchmark_group("openapi/github");
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
        "openapi/github GET /repos/{owner}/{repo}/issues (5 query)",
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
        "openapi/github POST /repos/{owner}/{repo}/issues (JSON body)",
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
        "openapi/github find only /repos/{o}/{r}/compare/{base}...{head}",
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

criterion_group!(benches, petstore, github);
criterion_main!(benches);
