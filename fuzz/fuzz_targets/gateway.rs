//! The gateway toolkit never panics and tells the truth, on any bytes in both modes: id
//! rewriting (`write_with_id`, `write_replacing`), the id map (`Correlation`), owned
//! messages against borrowed ones, `Raw` member lookups against the oracle, MCP routing
//! keys, header checks and header value decoding.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    rpcscan_testkit::gateway::gateway(data);
});
