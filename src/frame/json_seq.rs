//! RFC 7464 JSON text sequences: every record starts with RS (`0x1E`) (docs/spec.md §7).
//!
//! A record is the bytes after its RS up to the next RS (or the end of input), minus one
//! trailing LF. Consecutive RS bytes are ignored.
//!
//! Choices where docs/spec.md §7 is silent:
//!
//! * **Blank records** (only space, tab, CR, LF, e.g. `RS LF RS`) are skipped like NDJSON's
//!   blank lines: they carry no message.
//! * **Before the first RS**, whitespace is ignored and anything else is reported once as
//!   [`FrameErrorKind::Junk`] (when the first RS arrives, or
//!   at end of input). A byte order mark there is junk too.
//! * **Limits.** A record over the maximum message size (counted without its RS and final
//!   LF) is reported as [`FrameErrorKind::TooLarge`] when
//!   the next RS arrives, and dropped as it streams past.
//! * **Offsets.** A frame's offset is its RS; [`Frame::body_offset`] is the byte after it.
//!   A bad record's span starts at its RS too.
//! * A record that does not end with LF (RFC 7464 calls it possibly truncated) is still
//!   handed to the scanner, which judges it.

use bytes::BytesMut;
use memchr::memchr;

use super::{
    is_blank, over_limit, Cursor, Decode, Frame, FrameError, FrameErrorKind, Framing,
    DEFAULT_MAX_MESSAGE_SIZE,
};

/// The record separator.
const RS: u8 = 0x1E;

/// Splits an RFC 7464 stream into records.
///
/// ```
/// use bytes::BytesMut;
/// use rpcscan::frame::{Decode, JsonSeqDecoder};
///
/// let mut decoder = JsonSeqDecoder::new();
/// let mut buf = BytesMut::from(&b"\x1e\x1e{\"a\":1}\n\x1e\n\x1e{\"b\":2}"[..]);
/// let first = decoder.decode(&mut buf).unwrap().unwrap();
/// assert_eq!((first.offset(), first.bytes().as_ref()), (1, &b"{\"a\":1}"[..]));
/// assert!(decoder.decode(&mut buf).is_none()); // the last record may still grow
/// let last = decoder.decode_eof(&mut buf).unwrap().unwrap();
/// assert_eq!((last.offset(), last.bytes().as_ref()), (12, &b"{\"b\":2}"[..]));
/// ```
#[derive(Clone, Debug)]
pub struct JsonSeqDecoder {
    max: usize,
    cur: Cursor,
    state: State,
}

#[derive(Clone, Copy, Debug)]
enum State {
    /// Before the first RS, which starts at `start`; `junk` once a non-blank byte was seen.
    Preamble { start: u64, junk: bool },
    /// Inside the record whose RS is at `rs`.
    Record { rs: u64 },
    /// Dropping an oversized record whose RS is at `rs`.
    Discard { rs: u64, seen: u64, last: Option<u8> },
}

impl Default for JsonSeqDecoder {
    fn default() -> Self {
        JsonSeqDecoder::new()
    }
}

impl JsonSeqDecoder {
    /// A decoder with the default maximum message size (16 MiB).
    pub const fn new() -> Self {
        JsonSeqDecoder {
            max: DEFAULT_MAX_MESSAGE_SIZE,
            cur: Cursor { pos: 0, searched: 0 },
            state: State::Preamble { start: 0, junk: false },
        }
    }

    /// Sets the largest record accepted (bytes, without RS and final LF).
    pub const fn max_message_size(mut self, max: usize) -> Self {
        self.max = max;
        self
    }

    /// Drops the RS at the front of `buf` (at `buf[0]`) and starts its record.
    fn next_record(&mut self, buf: &mut BytesMut) {
        self.state = State::Record { rs: self.cur.pos };
        self.cur.skip(buf, 1);
        self.cur.searched = 0;
    }

    fn too_large(&self, rs: u64, size: u64) -> FrameError {
        FrameError::too_large(Framing::JsonSeq, rs, size + 1, size, self.max)
    }
}

impl Decode for JsonSeqDecoder {
    fn decode(&mut self, buf: &mut BytesMut) -> Option<Result<Frame, FrameError>> {
        loop {
            match self.state {
                State::Preamble { start, junk } => {
                    let Some(i) = memchr(RS, buf) else {
                        let junk = junk || !is_blank(buf);
                        self.cur.skip_all(buf);
                        self.state = State::Preamble { start, junk };
                        return None;
                    };
                    let junk = junk || !is_blank(buf.get(..i).unwrap_or_default());
                    self.cur.skip(buf, i);
                    let len = self.cur.pos - start;
                    self.next_record(buf);
                    if junk {
                        let kind = FrameErrorKind::Junk;
                        return Some(Err(FrameError::new(Framing::JsonSeq, kind, start, len)));
                    }
                }
                State::Record { rs } => {
                    let from = self.cur.from(buf);
                    let found = buf.get(from..).and_then(|rest| memchr(RS, rest));
                    let Some(i) = found.map(|j| from + j) else {
                        self.cur.searched = buf.len();
                        if over_limit(buf.len(), self.max, buf.last().copied(), b'\n') {
                            self.state = State::Discard {
                                rs,
                                seen: buf.len() as u64,
                                last: buf.last().copied(),
                            };
                            self.cur.skip_all(buf);
                        }
                        return None;
                    };
                    let content = strip_lf(buf.get(..i).unwrap_or_default()).len();
                    if content > self.max {
                        self.cur.skip(buf, i);
                        self.next_record(buf);
                        return Some(Err(self.too_large(rs, content as u64)));
                    }
                    if is_blank(buf.get(..content).unwrap_or_default()) {
                        self.cur.skip(buf, i);
                        self.next_record(buf);
                        continue;
                    }
                    let mut record = self.cur.take(buf, i);
                    record.truncate(content);
                    self.next_record(buf);
                    return Some(Ok(Frame::new(record.freeze(), rs, Some(rs + 1))));
                }
                State::Discard { rs, seen, last } => {
                    let Some(i) = memchr(RS, buf) else {
                        self.state = State::Discard {
                            rs,
                            seen: seen + buf.len() as u64,
                            last: buf.last().copied().or(last),
                        };
                        self.cur.skip_all(buf);
                        return None;
                    };
                    let last = match i.checked_sub(1) {
                        Some(j) => buf.get(j).copied(),
                        None => last,
                    };
                    let size = seen + i as u64 - u64::from(last == Some(b'\n'));
                    self.cur.skip(buf, i);
                    self.next_record(buf);
                    return Some(Err(self.too_large(rs, size)));
                }
            }
        }
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> Option<Result<Frame, FrameError>> {
        if let Some(item) = self.decode(buf) {
            return Some(item);
        }
        let state = self.state;
        let end = self.cur.pos + buf.len() as u64;
        self.state = State::Preamble { start: end, junk: false };
        self.cur.searched = 0;
        match state {
            State::Preamble { start, junk } => {
                self.cur.skip_all(buf);
                let kind = FrameErrorKind::Junk;
                junk.then(|| Err(FrameError::new(Framing::JsonSeq, kind, start, end - start)))
            }
            State::Record { rs } => {
                let content = strip_lf(buf).len();
                if is_blank(buf) {
                    self.cur.skip_all(buf);
                    return None;
                }
                let mut record = self.cur.take(buf, buf.len());
                if content > self.max {
                    // Unreachable through `decode` (it starts discarding first); kept total.
                    return Some(Err(self.too_large(rs, content as u64)));
                }
                record.truncate(content);
                Some(Ok(Frame::new(record.freeze(), rs, Some(rs + 1))))
            }
            State::Discard { rs, seen, last } => {
                self.cur.skip_all(buf);
                let size = seen - u64::from(last == Some(b'\n'));
                Some(Err(self.too_large(rs, size)))
            }
        }
    }
}

fn strip_lf(record: &[u8]) -> &[u8] {
    record.strip_suffix(b"\n").unwrap_or(record)
}
