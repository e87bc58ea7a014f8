//! Error responses built for any message are JSON, carry the docs/spec.md §4 bytes and echo the id
//! exactly. The free-form response's code and text come from the same bytes, so that the
//! seed corpus stays plain messages.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Code: the last 8 bytes (any i64, extremes included); text: up to 256 bytes of it, lossily
    // decoded (quotes, backslashes, control characters, U+FFFD, all of it).
    let mut tail = [0u8; 8];
    let n = data.len().min(8);
    tail[..n].copy_from_slice(&data[data.len() - n..]);
    let code = i64::from_le_bytes(tail);
    let message = String::from_utf8_lossy(&data[..data.len().min(256)]);
    rpcscan_testkit::check::respond(data, code, &message);
});
