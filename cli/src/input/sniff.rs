//! The first bytes of a stream: enough to choose a framing (`--framing auto`).

use std::io::{self, Read};

use super::open::read_more;

/// Bytes read before `--framing auto` decides, unless a newline or the end comes first.
pub(super) const SNIFF: usize = 64;

/// Reads the first bytes of a stream for `--framing auto`: enough of the first line to
/// recognise a header or an SSE field, without waiting for more than a line.
pub(super) fn sniff(reader: &mut dyn Read, first: &mut Vec<u8>) -> io::Result<()> {
    while first.len() < SNIFF && memchr::memchr(b'\n', first).is_none() {
        if read_more(reader, first, SNIFF)? == 0 {
            break;
        }
    }
    Ok(())
}
