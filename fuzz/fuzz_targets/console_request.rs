//! Drives the web console with arbitrary requests (`METHOD PATH\nCookie\nbody`): every input must
//! get an answer, never a panic.
#![no_main]

use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use portcullis::admin::{MgmtConfig, MgmtState};
use portcullis::mgmt;

fn state() -> &'static Arc<MgmtState> {
    static ST: OnceLock<Arc<MgmtState>> = OnceLock::new();
    ST.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("portcullis-fuzz-console-{}", std::process::id()));
        let cfg = MgmtConfig { data_dir: dir, ..Default::default() };
        let (st, _) = mgmt::open(cfg, Arc::new(mgmt::DetachedTopology), Some("pw".into()))
            .expect("open state");
        st
    })
}

fuzz_target!(|data: &[u8]| {
    mgmt::fuzz_console_request(state(), data);
});
