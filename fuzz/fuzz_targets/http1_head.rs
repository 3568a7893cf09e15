//! Fuzz the proxy's own HTTP/1 request-head validator (runs before hyper on every head).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = portcullis::proxy::fuzz_head(data);
});
