//! Strict mode against the serde_json-based oracle on any bytes, accept and reject alike:
//! kind, code, -32600 reason, ids, method, error code, JSON validity, batch elements.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    rpcscan_testkit::check::differential(data);
});
