//! Fuzzes the AS3 declaration parser and validator (`mgmt::as3::model::parse`): any bytes give a
//! typed request or a non-empty list of errors, never a panic; no IO, no side effects.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match portcullis::mgmt::parse_as3(data) {
        Ok(req) => {
            for t in &req.adc.tenants {
                let _ = portcullis::mgmt::plan_as3_tenant(&req.adc, t);
            }
        }
        Err(errors) => assert!(!errors.is_empty()),
    }
});
