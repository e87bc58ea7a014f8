//! Each framing fed the same stream whole, byte by byte, and in fuzzer-chosen chunks gives
//! the same frames and errors; frames stay inside the stream and under the size limit.
//! Input: `[selector (framing, maximum size), chunking seed, stream...]`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rpcscan_testkit::frames::{frames, Input};

fuzz_target!(|data: &[u8]| {
    frames(&Input::from_bytes(data));
});
