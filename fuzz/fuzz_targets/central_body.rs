//! One arbitrary central manager task body through every pure parser it reaches
//! (`portcullis::central::fuzz_body`): every input must be handled, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    portcullis::central::fuzz_body(data);
});
