#![no_main]
//! Arbitrary bytes through the XSS tokenizer.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = portcullis::waf::injection::Tokenizer::detect(&portcullis::waf::injection::Xss, data);
});
