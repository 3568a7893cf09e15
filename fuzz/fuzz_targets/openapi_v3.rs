//! Fuzzes the OpenAPI loader and compiler (v3 seeds): any bytes must give a spec or a clean error,
//! and a compiled spec must answer lookups without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use portcullis::waf::openapi::{ApiMatch, Head, load_and_compile};

fuzz_target!(|data: &[u8]| {
    if let Ok(api) = load_and_compile(data, "fuzz.json") {
        let _ = api.url_table().to_string();
        if let ApiMatch::Operation(m) = api.find("GET", "/v1/pets/1") {
            let mut out = Vec::new();
            m.op.validate_head(&m.path_params, &Head::default(), &mut out);
            m.op.validate_body(Some("application/json"), b"{}", &mut out);
        }
    }
});
