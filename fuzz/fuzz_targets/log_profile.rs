//! Fuzzes the security log profile parser (`mgmt::events::config`): any profile body must give
//! entries or a precise error, never a panic; a parsed syslog server address must round-trip.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    portcullis::mgmt::events::fuzz_log_profile(data);
});
