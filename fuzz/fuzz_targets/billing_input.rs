//! The billing tool's inputs: the `-c` registration-key list and the report given to `mask`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    portcullis::cli::fuzz_billing_input(data);
});
