//! Fuzzes the JSON schema compiler and validator: input is `schema JSON`, a NUL byte, `body JSON`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let cut = data.iter().position(|b| *b == 0).unwrap_or(data.len());
    let body = data.get(cut + 1..).unwrap_or(b"");
    let _ = portcullis::waf::openapi::validate_json_value(&data[..cut], body);
});
