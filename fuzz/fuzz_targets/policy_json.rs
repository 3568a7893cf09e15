//! Policy document → declaration → model → compiled policy: never panics, bounded work.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    portcullis::waf::policy::fuzz_policy_json(data);
});
