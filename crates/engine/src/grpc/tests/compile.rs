//! Compiling profiles: method index, import resolution, precise IDL errors, proto2 rejection.

use super::*;

fn compile_err(files: &[(&str, &str)]) -> GrpcError {
    let links: Vec<&str> = files.iter().map(|(l, _)| *l).collect();
    GrpcProfile::compile(&spec(&links, serde_json::json!({})), &resolver(files), "")
        .expect_err("must not compile")
}

#[test]
fn indexes_services_and_methods() {
    let p = profile(serde_json::json!({}));
    assert_eq!(p.services(), vec!["/test.v1.Users/*".to_string()]);
    let m = p.method("/test.v1.Users/Get").expect("Get exists");
    assert_eq!(m.input().full_name(), "test.v1.User");
    assert!(!m.client_streaming());
    assert!(
        p.method("/test.v1.Users/Chat")
            .is_some_and(|m| m.client_streaming() && m.server_streaming())
    );
    assert!(p.method("/test.v1.Users/Nope").is_none());
    assert!(p.method("/test.v1.Users/Get/").is_none());
    assert!(p.covers("/test.v1.Users/Nope"));
    assert!(!p.covers("/test.v1.Other/Get"));
    assert_eq!(
        p.limits().maximum_data_length,
        Some(spec::DEFAULT_MAXIMUM_DATA_LENGTH)
    );
}

#[test]
fn syntax_error_names_file_line_and_column() {
    let broken = "syntax = \"proto3\";\npackage x;\nmessage A {\n  string a = 1\n}\n";
    let err = compile_err(&[("file:///p/broken.proto", broken)]);
    let GrpcError::Idl {
        file, line, column, ..
    } = &err
    else {
        panic!("not an IDL error: {err}")
    };
    assert_eq!(file, "broken.proto");
    assert_eq!(*line, Some(5), "{err}");
    assert!(column.is_some(), "{err}");
    assert!(
        err.to_string()
            .starts_with("grpc profile \"test\": broken.proto:5:"),
        "{err}"
    );
}

#[test]
fn undefined_type_is_located() {
    let bad = "syntax = \"proto3\";\npackage x;\nmessage A {\n  Missing m = 1;\n}\nservice S { rpc M (A) returns (A); }\n";
    let err = compile_err(&[("file:///p/bad.proto", bad)]);
    assert!(
        matches!(&err, GrpcError::Idl { line: Some(4), .. }),
        "{err}"
    );
    assert!(err.to_string().contains("Missing"), "{err}");
}

#[test]
fn proto2_is_rejected() {
    let p2 = "syntax = \"proto2\";\npackage x;\nmessage A { optional string a = 1; }\nservice S { rpc M (A) returns (A); }\n";
    let err = compile_err(&[("file:///p/p2.proto", p2)]);
    assert!(
        matches!(&err, GrpcError::Idl { line: Some(1), .. }),
        "{err}"
    );
    assert!(err.to_string().contains("proto2 is not supported"), "{err}");
    // No syntax statement means proto2 too.
    let bare =
        "package x;\nmessage A { optional string a = 1; }\nservice S { rpc M (A) returns (A); }\n";
    assert!(
        compile_err(&[("file:///p/bare.proto", bare)])
            .to_string()
            .contains("proto2")
    );
}

#[test]
fn imports_resolve_among_listed_files_then_relative_to_the_primary() {
    let primary = "syntax = \"proto3\";\npackage app;\nimport \"common/types.proto\";\nimport \"extra.proto\";\n\
                   service Svc { rpc Do (common.Req) returns (extra.Resp); }\n";
    let common = "syntax = \"proto3\";\npackage common;\nmessage Req { string q = 1; }\n";
    let extra = "syntax = \"proto3\";\npackage extra;\nmessage Resp { string r = 1; }\n";
    let files = [
        ("file:///p/app.proto", primary),
        ("file:///p/common/types.proto", common),
        ("extra.proto", extra),
    ];
    let s = spec(
        &["file:///p/app.proto", "file:///p/common/types.proto"],
        serde_json::json!({}),
    );
    let p = GrpcProfile::compile(&s, &resolver(&files), "").expect("imports resolve");
    let m = p.method("/app.Svc/Do").expect("method");
    assert_eq!(m.input().full_name(), "common.Req");
    assert_eq!(m.output().full_name(), "extra.Resp");
}

#[test]
fn missing_import_is_an_error_at_the_import_line() {
    let primary = "syntax = \"proto3\";\npackage app;\nimport \"nowhere.proto\";\nmessage A {}\nservice S { rpc M (A) returns (A); }\n";
    let err = compile_err(&[("file:///p/app.proto", primary)]);
    assert!(
        matches!(&err, GrpcError::Idl { line: Some(3), .. }),
        "{err}"
    );
    assert!(err.to_string().contains("nowhere.proto"), "{err}");
}

#[test]
fn profile_declaration_errors() {
    let r = resolver(&[(LINK, TEST_PROTO)]);
    let empty = spec(&[], serde_json::json!({}));
    assert!(matches!(
        GrpcProfile::compile(&empty, &r, ""),
        Err(GrpcError::Profile { .. })
    ));
    let mut two = spec(&[LINK, LINK], serde_json::json!({}));
    two.idl_files[1].is_primary = true;
    let err = GrpcProfile::compile(&two, &r, "").expect_err("two primaries");
    assert!(err.to_string().contains("isPrimary"), "{err}");
    let unreadable = spec(&["file:///p/absent.proto"], serde_json::json!({}));
    let err = GrpcProfile::compile(&unreadable, &r, "").expect_err("absent file");
    assert!(
        matches!(&err, GrpcError::Fetch { link, .. } if link == "file:///p/absent.proto"),
        "{err}"
    );
}

#[test]
fn a_file_without_services_is_refused() {
    let err = compile_err(&[("file:///p/m.proto", "syntax = \"proto3\";\nmessage A {}\n")]);
    assert!(err.to_string().contains("no service"), "{err}");
}

#[test]
fn limits_come_from_defense_attributes() {
    let p = profile(serde_json::json!({"maximumDataLength": "any", "allowUnknownFields": false}));
    assert_eq!(p.limits().maximum_data_length, None);
    assert!(!p.limits().allow_unknown_fields);
}

#[test]
fn field_tables_find_low_and_high_field_numbers() {
    let src = "syntax = \"proto3\";\npackage h;\nmessage M { string a = 1; string b = 255; string c = 256; string d = 536870911; }\n\
               service S { rpc Do (M) returns (M); }\n";
    let s = spec(&["file:///p/h.proto"], serde_json::json!({}));
    let p =
        GrpcProfile::compile(&s, &resolver(&[("file:///p/h.proto", src)]), "").expect("compiles");
    let (schema, input) = p.method("/h.S/Do").expect("method").schema();
    let table = schema.table(input).expect("table");
    for (n, name) in [(1, "a"), (255, "b"), (256, "c"), (536_870_911, "d")] {
        assert_eq!(table.field(n).map(|f| &*f.name), Some(name), "field {n}");
    }
    for n in [0, 2, 254, 257, 1000] {
        assert!(table.field(n).is_none(), "field {n}");
    }
}
