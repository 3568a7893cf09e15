//! Fuzzes the OpenAPI loader and compiler from the v3 seeds (`portcullis_fuzz::openapi_spec`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| portcullis_fuzz::openapi_spec(data));
