//! Unit tests for loading and compiling (the petstore tables live in `tests/openapi_*.rs`).

use super::*;
use crate::resolver::MemResolver;

#[test]
fn joins_links() {
    assert_eq!(
        join_link("file:///a/b/spec.yaml", "c.yaml"),
        "file:///a/b/c.yaml"
    );
    assert_eq!(
        join_link("file:///a/b/spec.yaml", "../c.yaml"),
        "file:///a/c.yaml"
    );
    assert_eq!(
        join_link("https://h/x/spec.json", "/d.json"),
        "https://h/d.json"
    );
    assert_eq!(join_link("spec.yaml", "defs/pet.yaml"), "defs/pet.yaml");
    assert_eq!(join_link("a/spec.yaml", "https://e/x"), "https://e/x");
}

#[test]
fn errors_name_file_pointer_and_reason() {
    let r = MemResolver::default();
    let e = load(b"{\"openapi\": \"4.0\", \"paths\": {}}", "s.json", &r).unwrap_err();
    assert_eq!(
        e.to_string(),
        "s.json#/openapi: unsupported version \"4.0\""
    );
    let e = load(b"{\"openapi\": \"3.0.0\"", "s.json", &r).unwrap_err();
    assert!(e.reason.contains("line 1 column"), "{e}");
    let spec =
        br##"{"openapi":"3.0.0","paths":{"/a":{"get":{"parameters":[{"$ref":"#/nope"}]}}}}"##;
    let e = CompiledApi::compile(
        &load(spec, "s.json", &r).unwrap(),
        &OpenApiLimits::default(),
    )
    .unwrap_err();
    assert_eq!(e.pointer, "/paths/~1a/get/parameters/0");
    assert!(e.reason.contains("#/nope: target not found"), "{e}");
    let e = load(
        b"openapi: 3.0.0\npaths: {}\nx: {$ref: 'other.yaml#/A'}\n",
        "dir/s.yaml",
        &r,
    )
    .unwrap_err();
    assert_eq!((e.file.as_str(), e.pointer.as_str()), ("dir/s.yaml", "/x"));
    assert!(e.reason.contains("cannot fetch other.yaml"), "{e}");
}

#[test]
fn external_refs_resolve_relative_to_their_document() {
    let mut r = MemResolver::default();
    r.0.insert("defs/pet.yaml".into(), b"Pet:\n  type: object\n  required: [name]\n  properties:\n    name: {$ref: 'common.yaml#/Name'}\n".to_vec());
    r.0.insert(
        "common.yaml".into(),
        b"Name: {type: string, maxLength: 3}\n".to_vec(),
    );
    let spec = b"openapi: 3.1.0\npaths:\n  /pets:\n    post:\n      requestBody:\n        content:\n          application/json:\n            schema: {$ref: 'defs/pet.yaml#/Pet'}\n";
    let api = CompiledApi::compile(
        &load(spec, "spec.yaml", &r).unwrap(),
        &OpenApiLimits::default(),
    )
    .unwrap();
    let ApiMatch::Operation(m) = api.find("POST", "/pets") else {
        panic!("no match")
    };
    let mut out = Vec::new();
    m.op.validate_body(Some("application/json"), br#"{"name":"abcd"}"#, &mut out);
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0].name.as_deref(), Some("/name"));
}

#[test]
fn recursive_schemas_compile_and_validate() {
    let spec = br##"{"openapi":"3.0.3","paths":{"/t":{"post":{"requestBody":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/Node"}}}}}}},
      "components":{"schemas":{"Node":{"type":"object","properties":{"v":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#/components/schemas/Node"}}}}}}}"##;
    let api = CompiledApi::compile(
        &load(spec, "t.json", &MemResolver::default()).unwrap(),
        &OpenApiLimits::default(),
    )
    .unwrap();
    let ApiMatch::Operation(m) = api.find("POST", "/t") else {
        panic!("no match")
    };
    let mut out = Vec::new();
    m.op.validate_body(
        Some("application/json"),
        br#"{"v":1,"kids":[{"v":2,"kids":[{"v":"x"}]}]}"#,
        &mut out,
    );
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0].name.as_deref(), Some("/kids/0/kids/0/v"));
}

#[test]
fn schema_validator_entry_point() {
    let errs = validate_json_value(
        br#"{"type":"object","properties":{"a":{"type":["integer","null"],"exclusiveMinimum":0}}}"#,
        br#"{"a":0}"#,
    )
    .unwrap();
    assert_eq!(errs, vec!["/a: 0 is not > 0".to_string()]);
    assert!(validate_json_value(b"{", b"1").is_err());
    let errs = validate_json_value(br#"{"uniqueItems":true}"#, b"[1,2,1.0]").unwrap();
    assert_eq!(
        errs,
        vec!["/: item 2 is a duplicate (uniqueItems)".to_string()]
    );
    // Self-referential and exponentially branching schemas stay bounded (the schema is the
    // document's root: `#` is itself).
    let looped = validate_json_value(br##"{"$ref":"#"}"##, b"1").unwrap();
    assert_eq!(looped, vec!["/: nesting deeper than 64".to_string()]);
    let branching = br##"{"anyOf":[{"$ref":"#"},{"$ref":"#"}]}"##;
    let errs = validate_json_value(branching, b"[]").unwrap();
    assert!(!errs.is_empty());
}

/// Replays every fuzz seed through the functions the fuzz targets call (no panics, clean errors).
#[test]
fn fuzz_seeds_replay() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds");
    let mut replayed = 0;
    for target in ["openapi_swagger2", "openapi_v3", "openapi_schema"] {
        let mut entries: Vec<_> = std::fs::read_dir(root.join(target))
            .expect("seed dir")
            .flatten()
            .collect();
        entries.sort_by_key(|e| e.path());
        for entry in entries {
            let data = std::fs::read(entry.path()).expect("seed");
            if target == "openapi_schema" {
                let cut = data.iter().position(|b| *b == 0).unwrap_or(data.len());
                let body = data.get(cut + 1..).unwrap_or(b"");
                let errors =
                    validate_json_value(&data[..cut], body).expect("seed schema and body parse");
                assert!(errors.len() <= OpenApiLimits::default().max_violations);
            } else if let Ok(api) = load_and_compile(&data, "seed") {
                assert!(api.url_table().to_string().ends_with("operations"));
            }
            replayed += 1;
        }
    }
    assert!(replayed >= 10, "only {replayed} seeds");
}

#[test]
fn hostile_specs_fail_cleanly() {
    let r = MemResolver::default();
    let small = OpenApiLimits {
        max_spec_bytes: 10,
        ..OpenApiLimits::default()
    };
    let e = load_with(
        b"{\"openapi\":\"3.0.0\",\"paths\":{}}",
        "big.json",
        &r,
        &small,
    )
    .unwrap_err();
    assert!(e.reason.contains("larger than 10 bytes"), "{e}");
    let bomb = "a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\nh: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\ni: [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n";
    let e = load(bomb.as_bytes(), "bomb.yaml", &r).unwrap_err();
    assert!(e.reason.contains("invalid YAML"), "{e}");
    let spec =
        br#"{"openapi":"3.0.0","paths":{"/a":{"get":{"parameters":[{"name":"x","in":"body"}]}}}}"#;
    let e = load_and_compile(spec, "loc.json").unwrap_err();
    assert_eq!(e.pointer, "/paths/~1a/get/parameters/0/in");
    assert!(
        e.reason.contains("unknown parameter location \"body\""),
        "{e}"
    );
    let e = load(b"[1,2]", "arr.json", &r).unwrap_err();
    assert_eq!(e.reason, "document is not an object");
    let e = load(b"{\"openapi\":\"3.0.1\"}", "nopaths.json", &r).unwrap_err();
    assert!(e.reason.contains("\"paths\""), "{e}");
}

#[test]
fn unsupported_patterns_are_warnings_not_errors() {
    let spec = br#"{"openapi":"3.0.0","paths":{"/a":{"get":{"parameters":[{"name":"x","in":"query","schema":{"type":"string","pattern":"^(?!admin).*$"}}]}}}}"#;
    let api = load_and_compile(spec, "la.json").unwrap();
    assert_eq!(api.warnings.len(), 1, "{:?}", api.warnings);
    assert!(
        api.warnings[0]
            .starts_with("la.json#/paths/~1a/get/parameters/0/schema: pattern not enforced")
    );
}

/// 3.1 applies assertions beside a `$ref`; 3.0 ignores them, as each spec says.
#[test]
fn ref_siblings_follow_the_dialect() {
    let spec = |v: &str| {
        format!(
            r##"{{"openapi":"{v}","paths":{{"/a":{{"get":{{"parameters":[{{"name":"q","in":"query","schema":{{"$ref":"#/components/schemas/S","maxLength":2}}}}]}}}}}},
               "components":{{"schemas":{{"S":{{"type":"string"}}}}}}}}"##
        )
    };
    for (version, expected) in [("3.0.3", 0), ("3.1.0", 1)] {
        let api = load_and_compile(spec(version).as_bytes(), "a.json").unwrap();
        let out = head_violations(&api, "/a", &[("q", "abcd")]);
        assert_eq!(out.len(), expected, "{version}: {out:?}");
    }
}

fn head_violations(api: &CompiledApi, path: &str, query: &[(&str, &str)]) -> Vec<String> {
    let ApiMatch::Operation(m) = api.find("GET", path) else {
        panic!("no match for {path}")
    };
    let mut out = Vec::new();
    m.op.validate_head(
        &m.path_params,
        &Head {
            query,
            ..Head::default()
        },
        &mut out,
    );
    out.iter()
        .map(|v| format!("{} {}", v.kind.name(), v.name.as_deref().unwrap_or("")))
        .collect()
}

/// Exploded arrays repeat, exploded objects spread their properties, deepObject keys are known.
#[test]
fn array_and_object_serialisations() {
    let spec = br#"{"openapi":"3.0.3","paths":{"/s":{"get":{"parameters":[
        {"name":"id","in":"query","schema":{"type":"array","items":{"type":"integer"}}},
        {"name":"page","in":"query","schema":{"type":"object","required":["size"],"properties":{"size":{"type":"integer","maximum":50},"cursor":{"type":"string"}}}},
        {"name":"filter","in":"query","style":"deepObject","schema":{"type":"object"}}]}}}}"#;
    let api = load_and_compile(spec, "s.json").unwrap();
    assert!(
        head_violations(
            &api,
            "/s",
            &[
                ("id", "1"),
                ("id", "2"),
                ("size", "10"),
                ("filter[tag]", "x")
            ]
        )
        .is_empty()
    );
    assert_eq!(
        head_violations(&api, "/s", &[("id", "1"), ("id", "x")]),
        ["VIOL_PARAMETER_DATA_TYPE id"]
    );
    assert_eq!(
        head_violations(&api, "/s", &[("size", "99")]),
        ["VIOL_PARAMETER_NUMERIC_VALUE size"]
    );
    assert_eq!(
        head_violations(&api, "/s", &[("page", "1")]),
        ["VIOL_PARAMETER page"]
    );
    let v2 = br#"{"swagger":"2.0","paths":{"/s":{"get":{"parameters":[
        {"name":"id","in":"query","type":"array","collectionFormat":"multi","items":{"type":"integer"}},
        {"name":"t","in":"query","type":"array","collectionFormat":"ssv","items":{"type":"string","enum":["a","b"]}}]}}}}"#;
    let api = load_and_compile(v2, "s2.json").unwrap();
    assert!(head_violations(&api, "/s", &[("id", "1"), ("id", "2"), ("t", "a b")]).is_empty());
    assert_eq!(
        head_violations(&api, "/s", &[("t", "a c")]),
        ["VIOL_PARAMETER_STATIC_VALUE t"]
    );
}

/// The compiled spec is shared by every request thread.
#[test]
fn compiled_api_is_send_and_sync() {
    fn shared<T: Send + Sync + 'static>() {}
    shared::<CompiledApi>();
    shared::<ApiSpec>();
}

/// 2.0 formData under a global JSON `consumes` still travels as a form.
#[test]
fn swagger2_form_data_defaults_to_urlencoded() {
    let spec =
        br#"{"swagger":"2.0","consumes":["application/json"],"paths":{"/f":{"post":{"parameters":[
        {"name":"n","in":"formData","required":true,"type":"integer"}]}}}}"#;
    let api = load_and_compile(spec, "f.json").unwrap();
    let ApiMatch::Operation(m) = api.find("POST", "/f") else {
        panic!("no match")
    };
    let mut out = Vec::new();
    m.op.validate_body(Some("application/x-www-form-urlencoded"), b"n=x", &mut out);
    let kinds: Vec<&str> = out.iter().map(|v| v.kind.name()).collect();
    assert_eq!(kinds, ["VIOL_PARAMETER_DATA_TYPE"]);
    assert!(m.op.body_required());
}
