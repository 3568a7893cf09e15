//! Fuzz the HTTP/1.1 fast path's own wire parsers: request heads into `http` parts and the upstream
//! request head written from them, upstream response heads (and the client head encoded from
//! them), and the chunked body decoder. The first byte picks the parser.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    portcullis::proxy::h1::fuzz_wire(data);
});
