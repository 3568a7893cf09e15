#![no_main]
//! Arbitrary bytes through repeated percent-decoding (the first byte picks the pass limit).
use libfuzzer_sys::fuzz_target;
use portcullis::waf::normalize::{Evasions, decode_percent};

fuzz_target!(|data: &[u8]| {
    let passes = data.first().map_or(1, |b| u32::from(b % 8));
    let mut ev = Evasions::default();
    let out = decode_percent(data, passes, &mut ev);
    assert!(out.len() <= data.len());
});
