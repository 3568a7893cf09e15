//! Fuzz target: `portcullis::waf::grpc::fuzz_message` (see that function for the input layout).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| portcullis::waf::grpc::fuzz_message(data));
