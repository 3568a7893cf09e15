//! The access-control credential parsers: the Authorization header (Bearer, Basic), the JWT
//! header/claims parser and the verifier, and the API-key query parser.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    portcullis::waf::access::check::fuzz_credentials(data);
});
