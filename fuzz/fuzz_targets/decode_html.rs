#![no_main]
//! Arbitrary bytes through HTML entity decoding and the signature de-obfuscation variant.
use libfuzzer_sys::fuzz_target;
use portcullis::waf::normalize::{decode_html_entities, deobfuscate};

fuzz_target!(|data: &[u8]| {
    let _ = decode_html_entities(data);
    let _ = deobfuscate(data);
});
