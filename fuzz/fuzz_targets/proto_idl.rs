//! Fuzz target: `portcullis::waf::grpc::fuzz_idl` (arbitrary text compiled as a gRPC profile's IDL).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| portcullis::waf::grpc::fuzz_idl(data));
