//! Unit tests for loading and compiling (the petstore tables live in `tests/openapi_*.rs`).

use super::load::join_link;
use super::*;
use crate::waf::resolver::MemResolver;

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
    let e =
        CompiledApi::compile(&load(spec, "s.json", &r).unwrap(), &Limits::default()).unwrap_err();
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
    let api =
        CompiledApi::compile(&load(spec, "spec.yaml", &r).unwrap(), &Limits::default()).unwrap();
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
        &Limits::default(),
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
}
