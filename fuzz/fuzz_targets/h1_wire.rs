//! Fuzz the HTTP/1.1 connection code's own wire parsers: request heads into `http` parts and the
//! upstream request head written from them, upstream response heads (and the client head encoded
//! from them), the chunked body decoder, and request bodies (`Content-Length` and chunked) read and
//! re-framed for the upstream. The first byte picks the parser.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    portcullis::proxy::h1::fuzz_wire(data);
});
