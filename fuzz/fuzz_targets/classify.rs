//! Any bytes, both validation modes, batch mode and small depth limits: no panic, no hang,
//! and envelope mode gives exactly the strict answer on every JSON text.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    rpcscan_testkit::check::classify(data);
});
