//! Fuzzes the zone-file record parser (`dns::record::parse_record`): any text must give a record
//! or an error, never a panic, and a parsed record's canonical text must parse back to it.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(rec) = portcullis::dns::parse_record(text, "example.com.") {
        let again = portcullis::dns::parse_record(&rec.to_string(), "example.com.");
        assert_eq!(again.as_ref(), Ok(&rec), "canonical text must round-trip");
    }
});
