//! The first bytes of an input: enough to choose a framing (`--framing auto`), and to warn
//! when it does not look like text at all.

use std::io::{self, Read};
use std::sync::Arc;

use super::open::read_more;
use super::Source;

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

/// The longest first line read to tell a named log format from bare NDJSON.
pub(super) const FIRST_LINE: usize = 1 << 20;

/// Reads on until `first` holds a whole line (or [`FIRST_LINE`] bytes, or the input ends):
/// a log format is recognised by its first lines (those read by then: a live stream is
/// never waited on for more than its first line, which its first message needs anyway).
pub(super) fn sniff_line(reader: &mut dyn Read, first: &mut Vec<u8>) -> io::Result<()> {
    while first.len() < FIRST_LINE && memchr::memchr(b'\n', first).is_none() {
        if read_more(reader, first, 64 * 1024)? == 0 {
            break;
        }
    }
    Ok(())
}

/// The first bytes of an input looked at for NUL bytes.
pub(super) const BINARY_PROBE: usize = 8 * 1024;

/// Warns when `first` (bytes of an input from offset `at`, within its first
/// [`BINARY_PROBE`]) holds a NUL byte, and says whether it did. No JSON text has one, raw,
/// anywhere: such an input is likely compressed, UTF-16 or not traffic at all, and every
/// message in it would be invalid. It is still scanned; the warning only says why.
pub(super) fn warn_if_binary(source: &Source, at: usize, first: &[u8]) -> bool {
    let Some(i) = memchr::memchr(0, first) else {
        return false;
    };
    source.notes.note(format_args!(
        "{}: looks binary (a NUL byte at byte {}); scanning it anyway",
        source.name,
        at + i
    ));
    true
}

/// A stream that looks at its first [`BINARY_PROBE`] bytes as they go by, and warns once
/// (see [`warn_if_binary`]). It never waits for more bytes than the reader asked for, so
/// a live stream is answered as promptly as without it.
pub(super) struct Probe<R> {
    inner: R,
    source: Arc<Source>,
    /// Bytes looked at so far; [`BINARY_PROBE`] once done.
    seen: usize,
}

impl<R> Probe<R> {
    pub(super) fn new(inner: R, source: Arc<Source>) -> Self {
        Probe { inner, source, seen: 0 }
    }
}

impl<R: Read> Read for Probe<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if self.seen < BINARY_PROBE {
            let look = buf.get(..n.min(BINARY_PROBE - self.seen)).unwrap_or_default();
            self.seen = if warn_if_binary(&self.source, self.seen, look) {
                BINARY_PROBE
            } else {
                self.seen + look.len()
            };
        }
        Ok(n)
    }
}
