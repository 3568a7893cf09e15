//! Parses and checks arbitrary import-policy task bodies (`/mgmt/tm/asm/tasks/import-policy`):
//! every input gives a request or a 400 error object, never a panic, and changes nothing.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    portcullis::mgmt::asm::fuzz_import_request(data);
});
