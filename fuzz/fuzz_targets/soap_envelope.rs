//! Fuzzes the SOAP request envelope parser (`soap::envelope::parse_request`): any bytes must give
//! a call or an error, never a panic, within the depth and element limits.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(call) = portcullis::soap::parse_request(data) {
        assert!(!call.method.is_empty());
        assert!(call.interface.contains('.'));
    }
});
