//! The petstore in Swagger 2.0 (JSON), OpenAPI 3.0 (YAML) and 3.1 (YAML) against one table of
//! requests: every OpenAPI violation and the allowed cases must come out the same in each version.

use portcullis::waf::NoResolver;
use portcullis::waf::Violation;
use portcullis::waf::openapi::{ApiMatch, CompiledApi, Head, OpenApiLimits, load};

const RID: (&str, &str) = ("X-Request-Id", "123e4567-e89b-12d3-a456-426614174000");

#[derive(Clone)]
struct Case {
    name: &'static str,
    method: &'static str,
    path: &'static str,
    query: Vec<(&'static str, &'static str)>,
    headers: Vec<(&'static str, &'static str)>,
    cookies: Vec<(&'static str, &'static str)>,
    content_type: Option<&'static str>,
    body: &'static str,
    /// Violation names (sorted), or `VIOL_URL` / `VIOL_METHOD` for a failed match.
    expect: Vec<&'static str>,
    /// The parameter name / JSON pointer of the first violation, when it matters.
    entity: Option<&'static str>,
    v3_only: bool,
}

fn c(name: &'static str, method: &'static str, path: &'static str) -> Case {
    Case {
        name,
        method,
        path,
        query: vec![],
        headers: vec![RID],
        cookies: vec![],
        content_type: None,
        body: "",
        expect: vec![],
        entity: None,
        v3_only: false,
    }
}

impl Case {
    fn q(mut self, k: &'static str, v: &'static str) -> Self {
        self.query.push((k, v));
        self
    }
    fn no_headers(mut self) -> Self {
        self.headers.clear();
        self
    }
    fn h(mut self, k: &'static str, v: &'static str) -> Self {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(k));
        self.headers.push((k, v));
        self
    }
    fn cookie(mut self, k: &'static str, v: &'static str) -> Self {
        self.cookies.push((k, v));
        self.v3_only = true;
        self
    }
    fn body(mut self, ct: &'static str, body: &'static str) -> Self {
        self.content_type = Some(ct);
        self.body = body;
        self
    }
    fn json(self, body: &'static str) -> Self {
        self.body("application/json", body)
    }
    fn form(self, body: &'static str) -> Self {
        self.body("application/x-www-form-urlencoded", body)
    }
    fn expect(mut self, kinds: &[&'static str]) -> Self {
        self.expect = kinds.to_vec();
        self
    }
    fn at(mut self, entity: &'static str) -> Self {
        self.entity = Some(entity);
        self
    }
}

fn cases() -> Vec<Case> {
    vec![
        // allowed
        c("list", "GET", "/v1/pets")
            .q("limit", "10")
            .q("status", "sold")
            .q("name", "rex"),
        c("header names are case-insensitive", "GET", "/v1/pets")
            .no_headers()
            .h("x-request-id", RID.1),
        c("csv array", "GET", "/v1/pets").q("tags", "a,b"),
        c("pipe array", "GET", "/v1/pets").q("ids", "1|2|3"),
        c("date", "GET", "/v1/pets").q("since", "2024-02-29"),
        c("allowEmptyValue", "GET", "/v1/pets").q("flag", ""),
        c("boolean", "GET", "/v1/pets").q("flag", "true"),
        c("trailing slash", "GET", "/v1/pets/"),
        c("path param", "GET", "/v1/pets/42"),
        c("multi-param segment", "GET", "/v1/files/report.pdf"),
        c(
            "percent-encoded path param",
            "GET",
            "/v1/owners/a%40example.com",
        ),
        c("create", "POST", "/v1/pets").json(
            r#"{"name":"rex","tag":null,"age":29,"weight":2.5,"born":"2020-01-01T10:00:00Z"}"#,
        ),
        c("one of cat/dog", "POST", "/v1/pets").json(r#"{"name":"tom","kind":{"meow":true}}"#),
        c("json with charset", "POST", "/v1/pets")
            .body("application/json; charset=utf-8", r#"{"name":"rex"}"#),
        c("read-only required id may be absent", "PUT", "/v1/pets/7").json(r#"{"name":"rex"}"#),
        c("form", "POST", "/v1/pets/7/form").form("name=rex&status=sold"),
        c("cookie", "GET", "/v1/pets").cookie("session", "0123456789"),
        c("apiKey security scheme in the query", "GET", "/v1/pets/3").q("api_key", "secret"),
        // URL and method
        c("unknown url", "GET", "/v1/nope").expect(&["VIOL_URL"]),
        c("no server prefix", "GET", "/pets").expect(&["VIOL_URL"]),
        c("empty path segment", "GET", "/v1/pets//photos").expect(&["VIOL_URL"]),
        c("wrong method", "PATCH", "/v1/pets").expect(&["VIOL_METHOD"]),
        // parameters
        c("missing mandatory header", "GET", "/v1/pets")
            .no_headers()
            .expect(&["VIOL_MANDATORY_PARAMETER"])
            .at("X-Request-Id"),
        c("header format", "GET", "/v1/pets")
            .h("X-Request-Id", "nope")
            .expect(&["VIOL_PARAMETER_DATA_TYPE"])
            .at("X-Request-Id"),
        c("unknown query parameter", "GET", "/v1/pets")
            .q("debug", "1")
            .expect(&["VIOL_PARAMETER"])
            .at("debug"),
        c("integer type", "GET", "/v1/pets")
            .q("limit", "abc")
            .expect(&["VIOL_PARAMETER_DATA_TYPE"])
            .at("limit"),
        c("above maximum", "GET", "/v1/pets")
            .q("limit", "500")
            .expect(&["VIOL_PARAMETER_NUMERIC_VALUE"]),
        c("below minimum", "GET", "/v1/pets")
            .q("limit", "0")
            .expect(&["VIOL_PARAMETER_NUMERIC_VALUE"]),
        c("int32 overflow", "GET", "/v1/pets")
            .q("limit", "3000000000")
            .expect(&["VIOL_PARAMETER_DATA_TYPE", "VIOL_PARAMETER_NUMERIC_VALUE"]),
        c("repeated", "GET", "/v1/pets")
            .q("limit", "5")
            .q("limit", "6")
            .expect(&["VIOL_PARAMETER_REPEATED"]),
        c("empty value", "GET", "/v1/pets")
            .q("limit", "")
            .expect(&["VIOL_PARAMETER_EMPTY_VALUE"]),
        c("too short", "GET", "/v1/pets")
            .q("name", "a")
            .expect(&["VIOL_PARAMETER_VALUE_LENGTH"]),
        c("too long", "GET", "/v1/pets")
            .q("name", "abcdefghijk")
            .expect(&["VIOL_PARAMETER_VALUE_LENGTH"]),
        c("pattern", "GET", "/v1/pets")
            .q("name", "ABC")
            .expect(&["VIOL_PARAMETER_VALUE_REGEXP"]),
        c("enum", "GET", "/v1/pets")
            .q("status", "dead")
            .expect(&["VIOL_PARAMETER_STATIC_VALUE"]),
        c("array too long", "GET", "/v1/pets")
            .q("tags", "a,b,c")
            .expect(&["VIOL_PARAMETER_VALUE_LENGTH"]),
        c("array item type", "GET", "/v1/pets")
            .q("ids", "1|x")
            .expect(&["VIOL_PARAMETER_DATA_TYPE"]),
        c("bad date", "GET", "/v1/pets")
            .q("since", "2023-02-29")
            .expect(&["VIOL_PARAMETER_DATA_TYPE"]),
        c("boolean type", "GET", "/v1/pets")
            .q("flag", "yes")
            .expect(&["VIOL_PARAMETER_DATA_TYPE"]),
        c("path param type", "GET", "/v1/pets/abc")
            .expect(&["VIOL_PARAMETER_DATA_TYPE"])
            .at("petId"),
        c("path param minimum", "GET", "/v1/pets/0")
            .expect(&["VIOL_PARAMETER_NUMERIC_VALUE"])
            .at("petId"),
        c("int64 overflow", "GET", "/v1/pets/99999999999999999999")
            .expect(&["VIOL_PARAMETER_DATA_TYPE"]),
        c("path enum", "GET", "/v1/files/report.exe")
            .expect(&["VIOL_PARAMETER_STATIC_VALUE"])
            .at("ext"),
        c("path email", "GET", "/v1/owners/nobody")
            .expect(&["VIOL_PARAMETER_DATA_TYPE"])
            .at("email"),
        c("cookie length", "GET", "/v1/pets")
            .cookie("session", "short")
            .expect(&["VIOL_PARAMETER_VALUE_LENGTH"])
            .at("session"),
        // bodies
        c("missing body", "POST", "/v1/pets").expect(&["VIOL_MANDATORY_REQUEST_BODY"]),
        c("undeclared content type", "POST", "/v1/pets")
            .body("text/plain", "hello")
            .expect(&["VIOL_URL_CONTENT_TYPE"]),
        c("no content type", "POST", "/v1/pets")
            .body("", "{}")
            .expect(&["VIOL_URL_CONTENT_TYPE"]),
        c("malformed json", "POST", "/v1/pets")
            .json(r#"{"name":"#)
            .expect(&["VIOL_JSON_MALFORMED"]),
        c("wrong json type", "POST", "/v1/pets")
            .json(r#"{"name":5}"#)
            .expect(&["VIOL_JSON_SCHEMA"])
            .at("/name"),
        c("missing required property", "POST", "/v1/pets")
            .json(r#"{"tag":"x"}"#)
            .expect(&["VIOL_JSON_SCHEMA"])
            .at("/"),
        c("additional property", "POST", "/v1/pets")
            .json(r#"{"name":"x","evil":1}"#)
            .expect(&["VIOL_JSON_SCHEMA"])
            .at("/evil"),
        c("exclusive maximum", "POST", "/v1/pets")
            .json(r#"{"name":"x","age":30}"#)
            .expect(&["VIOL_JSON_SCHEMA"])
            .at("/age"),
        c("multipleOf", "POST", "/v1/pets")
            .json(r#"{"name":"x","weight":1.25}"#)
            .expect(&["VIOL_JSON_SCHEMA"])
            .at("/weight"),
        c("string length in body", "POST", "/v1/pets")
            .json(r#"{"name":"abcdefghijklmnopqrstuvwxyz"}"#)
            .expect(&["VIOL_JSON_SCHEMA"]),
        c("date-time in body", "POST", "/v1/pets")
            .json(r#"{"name":"x","born":"yesterday"}"#)
            .expect(&["VIOL_JSON_SCHEMA"])
            .at("/born"),
        c("both cat and dog", "POST", "/v1/pets")
            .json(r#"{"name":"x","kind":{"meow":true,"bark":true}}"#)
            .expect(&["VIOL_JSON_SCHEMA"])
            .at("/kind"),
        c("read-only property", "PUT", "/v1/pets/7")
            .json(r#"{"id":1,"name":"rex"}"#)
            .expect(&["VIOL_JSON_SCHEMA"])
            .at("/id"),
        c("form missing field", "POST", "/v1/pets/7/form")
            .form("status=sold")
            .expect(&["VIOL_MANDATORY_PARAMETER"])
            .at("name"),
        c("form enum", "POST", "/v1/pets/7/form")
            .form("name=rex&status=dead")
            .expect(&["VIOL_PARAMETER_STATIC_VALUE"])
            .at("status"),
        c("form unknown field", "POST", "/v1/pets/7/form")
            .form("name=rex&evil=1")
            .expect(&["VIOL_PARAMETER"])
            .at("evil"),
        c("form as json", "POST", "/v1/pets/7/form")
            .json(r#"{"name":"rex"}"#)
            .expect(&["VIOL_URL_CONTENT_TYPE"]),
    ]
}

/// Runs one case; returns the sorted violation names and the violations.
fn run(api: &CompiledApi, case: &Case) -> (Vec<&'static str>, Vec<Violation>) {
    let op = match api.find(case.method, case.path) {
        ApiMatch::NoUrl(u) => {
            assert_eq!(u.method, case.method);
            return (vec!["VIOL_URL"], vec![]);
        }
        ApiMatch::WrongMethod {
            allowed,
            undocumented,
        } => {
            assert_eq!(allowed, ["GET", "POST"], "{}", case.name);
            assert_eq!(undocumented.template, "/v1/pets");
            return (vec!["VIOL_METHOD"], vec![]);
        }
        ApiMatch::Operation(m) => m,
    };
    let mut out = Vec::new();
    let head = Head {
        query: &case.query,
        headers: &case.headers,
        cookies: &case.cookies,
    };
    op.op.validate_head(&op.path_params, &head, &mut out);
    op.op.validate_body(
        case.content_type.filter(|c| !c.is_empty()),
        case.body.as_bytes(),
        &mut out,
    );
    let mut kinds: Vec<&'static str> = out.iter().map(|v| v.kind.name()).collect();
    kinds.sort();
    kinds.dedup();
    (kinds, out)
}

fn check_spec(file: &str, v3: bool) {
    let path = format!(
        "{}/tests/fixtures/openapi/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let bytes = std::fs::read(&path).expect("fixture");
    let spec = load(&bytes, file, &NoResolver).expect("spec loads");
    let api = CompiledApi::compile(&spec, &OpenApiLimits::default()).expect("spec compiles");
    assert!(api.warnings.is_empty(), "{:?}", api.warnings);
    let mut failures = Vec::new();
    for case in cases().into_iter().filter(|c| v3 || !c.v3_only) {
        let (kinds, out) = run(&api, &case);
        let entity = out.first().and_then(|v| v.name.as_deref());
        if kinds != case.expect || (case.entity.is_some() && entity != case.entity) {
            failures.push(format!(
                "{}: {} {} → {kinds:?} {out:#?}",
                case.name, case.method, case.path
            ));
        }
        for v in &out {
            assert!(
                !v.detail.is_empty(),
                "{}: violation without detail",
                case.name
            );
        }
    }
    assert!(failures.is_empty(), "{file}:\n{}", failures.join("\n"));
}

#[test]
fn petstore_swagger_2_0_json() {
    check_spec("petstore-2.0.json", false);
}

#[test]
fn petstore_openapi_3_0_yaml() {
    check_spec("petstore-3.0.yaml", true);
}

#[test]
fn petstore_openapi_3_1_yaml() {
    check_spec("petstore-3.1.yaml", true);
}
