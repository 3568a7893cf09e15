//! Fuzz target: `portcullis::waf::policy::fuzz_inspect`, arbitrary requests through every
//! phase of a transaction under a policy with the entity features on (see that module for the
//! input layout; seeds in fuzz/seeds/inspect_request).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| portcullis::waf::policy::fuzz_inspect(data));
