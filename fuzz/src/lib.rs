//! What more than one fuzz target runs: the targets differ only in their seeds.

use portcullis::waf::openapi::{ApiMatch, Head, load_and_compile};

/// The OpenAPI loader and compiler (the `openapi_swagger2` and `openapi_v3` targets, one per seed
/// family): any bytes must give a spec or a clean error, and a compiled spec must answer lookups
/// without panicking.
pub fn openapi_spec(data: &[u8]) {
    if let Ok(api) = load_and_compile(data, "fuzz.json") {
        let _ = api.url_table().to_string();
        if let ApiMatch::Operation(m) = api.find("GET", "/v1/pets/1") {
            let mut out = Vec::new();
            m.op.validate_head(&m.path_params, &Head::default(), &mut out);
            m.op.validate_body(Some("application/json"), b"{}", &mut out);
        }
    }
}
