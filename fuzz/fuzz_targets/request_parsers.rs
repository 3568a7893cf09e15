//! Query/form decoding, cookies, multipart, the JSON walk and the XML walk over arbitrary bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    portcullis::waf::fuzz_request_parsers(data);
});
