//! Real-world specs: the f5devcentral brewz API (from the shared policy corpus, used by path and
//! skipped when absent), GitHub's REST API (fetched by `benches/github-spec.sh`, skipped when
//! absent), plus the URL table and the undocumented-endpoint records on the petstore.

use std::path::PathBuf;
use std::time::Instant;

use portcullis::waf::NoResolver;
use portcullis::waf::openapi::{ApiMatch, CompiledApi, Head, OpMatch, OpenApiLimits, load};

fn first_existing(candidates: &[PathBuf]) -> Option<PathBuf> {
    candidates.iter().find(|p| p.is_file()).cloned()
}

fn compile_file(path: &PathBuf) -> CompiledApi {
    let bytes = std::fs::read(path).expect("read spec");
    let link = path.display().to_string();
    let spec = load(&bytes, &link, &NoResolver).unwrap_or_else(|e| panic!("{e}"));
    CompiledApi::compile(&spec, &OpenApiLimits::default()).unwrap_or_else(|e| panic!("{e}"))
}

/// The names of the violations the matched operation's head check finds in `query`.
fn query_violations(m: &OpMatch, query: &[(&str, &str)]) -> Vec<String> {
    let mut out = Vec::new();
    let head = Head {
        query,
        ..Head::default()
    };
    m.op.validate_head(&m.path_params, &head, &mut out);
    out.iter().map(|v| v.kind.name().to_string()).collect()
}

#[test]
fn brewz_spec_from_the_policy_corpus() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let rel = "shared/policy-corpus/refs/f5dc-jumpstart/oas.yaml";
    let Some(path) = first_existing(&[root.join("..").join(rel), root.join("../..").join(rel)])
    else {
        eprintln!("skipped: {rel} not present");
        return;
    };
    let api = compile_file(&path);
    let table = api.url_table();
    assert!(
        table
            .0
            .iter()
            .any(|r| r.method == "GET" && r.url == "/api/inventory"),
        "{table}"
    );
    assert!(matches!(
        api.find("GET", "/api/products"),
        ApiMatch::Operation(_)
    ));
    assert!(matches!(api.find("GET", "/api/admin"), ApiMatch::NoUrl(_)));
}

#[test]
fn github_rest_api() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/data/api.github.com.json");
    if !path.is_file() {
        eprintln!(
            "skipped: run benches/github-spec.sh to fetch {}",
            path.display()
        );
        return;
    }
    let started = Instant::now();
    let api = compile_file(&path);
    eprintln!(
        "github: {} operations compiled in {:?} (debug build)",
        api.operations.len(),
        started.elapsed()
    );
    assert!(api.operations.len() > 1000);
    let ApiMatch::Operation(m) = api.find("GET", "/repos/rust-lang/rust/compare/main...beta")
    else {
        panic!("compare not matched")
    };
    // `{base}...{head}` (affixed pattern) wins over the single-parameter `{basehead}`.
    assert_eq!(m.op.url, "/repos/{owner}/{repo}/compare/{base}...{head}");
    assert_eq!(m.path_params[2..], [("base", "main"), ("head", "beta")]);
    let ApiMatch::Operation(m) = api.find("GET", "/repos/rust-lang/rust/issues") else {
        panic!("issues")
    };
    let good = [("state", "open"), ("per_page", "50"), ("page", "2")];
    assert_eq!(query_violations(&m, &good), Vec::<String>::new());
    assert_eq!(
        query_violations(&m, &[("state", "sideways"), ("per_page", "x")]),
        ["VIOL_PARAMETER_STATIC_VALUE", "VIOL_PARAMETER_DATA_TYPE"]
    );
    assert!(matches!(
        api.find("GET", "/repos/a/b/nope/c/d/e"),
        ApiMatch::NoUrl(_)
    ));
    assert!(matches!(
        api.find("TRACE", "/user"),
        ApiMatch::WrongMethod { .. }
    ));
}

fn petstore() -> CompiledApi {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/openapi/petstore-3.0.yaml");
    compile_file(&path)
}

#[test]
fn url_table_lists_every_operation() {
    let table = petstore().url_table();
    let rows: Vec<(&str, &str)> = table
        .0
        .iter()
        .map(|r| (r.method.as_str(), r.url.as_str()))
        .collect();
    assert_eq!(
        rows,
        [
            ("GET", "/v1/files/{name}.{ext}"),
            ("GET", "/v1/owners/{email}"),
            ("GET", "/v1/pets"),
            ("POST", "/v1/pets"),
            ("GET", "/v1/pets/{petId}"),
            ("PUT", "/v1/pets/{petId}"),
            ("POST", "/v1/pets/{petId}/form"),
        ]
    );
    let text = table.to_string();
    assert!(text.contains("path:petId:integer(int64)*"), "{text}");
    assert!(text.contains("header:X-Request-Id:string(uuid)*"), "{text}");
    assert!(text.contains("query:tags:array<string>"), "{text}");
    assert!(text.contains("form:name:string*"), "{text}");
    assert!(text.contains("body:application/json+"), "{text}");
    assert!(text.ends_with("7 operations"), "{text}");
}

#[test]
fn undocumented_endpoints_are_recorded_as_templates() {
    let api = petstore();
    match api.find(
        "get",
        "/v1/pets/12/vaccinations/8f14e45fceea167a5a36dedd4bea2543",
    ) {
        ApiMatch::NoUrl(u) => {
            assert_eq!(
                (u.method.as_str(), u.template.as_str()),
                ("GET", "/v1/pets/{id}/vaccinations/{id}")
            );
        }
        other => panic!("{other:?}"),
    }
    match api.find("DELETE", "/v1/pets/12") {
        ApiMatch::WrongMethod {
            allowed,
            undocumented,
        } => {
            assert_eq!(allowed, ["GET", "PUT"]);
            assert_eq!(undocumented.template, "/v1/pets/{petId}");
        }
        other => panic!("{other:?}"),
    }
}
