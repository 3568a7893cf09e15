#![no_main]
//! Arbitrary bytes through the signature scan of every target.
use libfuzzer_sys::fuzz_target;
use portcullis::waf::signatures::{SignatureDb, Target};

fuzz_target!(|data: &[u8]| {
    let db = SignatureDb::builtin();
    for &t in Target::ALL {
        let mut hits = Vec::new();
        db.scan(t, data, &mut hits);
    }
});
