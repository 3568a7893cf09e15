#![no_main]
//! Arbitrary bytes through JSON string unescaping and JS escape decoding.
use libfuzzer_sys::fuzz_target;
use portcullis::waf::normalize::{base64_text, decode_js_escapes, unescape_json_string};

fuzz_target!(|data: &[u8]| {
    let _ = unescape_json_string(data);
    let _ = decode_js_escapes(data);
    let _ = base64_text(data);
});
