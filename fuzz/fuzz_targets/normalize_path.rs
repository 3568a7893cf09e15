#![no_main]
//! Arbitrary bytes through path normalisation.
use libfuzzer_sys::fuzz_target;
use portcullis::waf::normalize::{Evasions, normalize_path};

fuzz_target!(|data: &[u8]| {
    let mut ev = Evasions::default();
    let out = normalize_path(data, &mut ev);
    assert!(out.starts_with(b"/"));
    assert!(!out.windows(2).any(|w| w == b"//"));
});
