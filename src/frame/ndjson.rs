//! NDJSON / MCP stdio: one message per line (docs/spec.md §7).
//!
//! Lines end with `\n`; one `\r` before it is stripped. Lines that are empty or hold only
//! space, tab and CR are not messages and are skipped. A final line without `\n` is a
//! message at end of input ([`Decode::decode_eof`]). Nothing else is touched: a line that
//! starts with a byte order mark is passed through as is, and the scanner then reports it
//! as [`crate::Reason::Bom`].
//!
//! A line longer than the maximum message size (counted without its `\n` or `\r\n`) is
//! reported as [`FrameErrorKind::TooLarge`](super::FrameErrorKind::TooLarge) once its end is seen, and is dropped from the
//! buffer as it arrives, so the buffer never holds more than the maximum plus one chunk.
//! It is reported even when it is blank.
//!
//! With [`NdjsonDecoder::recover_ids`], the skipped bytes of an oversized line also go
//! through an [`IdRecovery`], so the caller can still answer it with its id
//! ([`NdjsonDecoder::recovered_id`]).
//!
//! [`ndjson_messages`] is the same framing over a complete buffer (a memory-mapped log),
//! borrowing and allocation-free.

use bytes::BytesMut;
use memchr::memchr;

use crate::id::Id;
use crate::recover::IdRecovery;

use super::{
    is_blank, over_limit, Cursor, Decode, Frame, FrameError, Framing, DEFAULT_MAX_MESSAGE_SIZE,
};

/// Splits a byte stream into NDJSON lines.
///
/// ```
/// use bytes::BytesMut;
/// use rpcscan::frame::{Decode, FrameErrorKind, NdjsonDecoder};
///
/// let mut decoder = NdjsonDecoder::new().max_message_size(8);
/// let mut buf = BytesMut::from(&b"0123456789\n{}\r\n"[..]);
/// let err = decoder.decode(&mut buf).unwrap().unwrap_err();
/// assert_eq!((err.kind(), err.offset(), err.len()), (FrameErrorKind::TooLarge, 0, 10));
/// let frame = decoder.decode(&mut buf).unwrap().unwrap();
/// assert_eq!((frame.offset(), frame.bytes().as_ref()), (11, &b"{}"[..]));
/// assert!(decoder.decode(&mut buf).is_none());
/// ```
#[derive(Clone, Debug)]
pub struct NdjsonDecoder {
    max: usize,
    cur: Cursor,
    discarding: Option<Discard>,
    /// Fed the bytes of each oversized line (`recover_ids`).
    recovery: Option<Box<IdRecovery>>,
}

/// An oversized line being dropped as it streams past.
#[derive(Clone, Copy, Debug)]
struct Discard {
    start: u64,
    seen: u64,
    last: Option<u8>,
}

impl Default for NdjsonDecoder {
    fn default() -> Self {
        NdjsonDecoder::new()
    }
}

impl NdjsonDecoder {
    /// A decoder with the default maximum message size (16 MiB).
    pub const fn new() -> Self {
        NdjsonDecoder {
            max: DEFAULT_MAX_MESSAGE_SIZE,
            cur: Cursor { pos: 0, searched: 0 },
            discarding: None,
            recovery: None,
        }
    }

    /// Also runs an [`IdRecovery`] over every oversized line as it is discarded, so that
    /// after a `TooLarge` error [`recovered_id`](Self::recovered_id) gives that line's
    /// top-level id (constant memory: nothing of the line is kept but its id).
    ///
    /// ```
    /// use bytes::BytesMut;
    /// use rpcscan::frame::{Decode, NdjsonDecoder};
    ///
    /// let mut decoder = NdjsonDecoder::new().max_message_size(16).recover_ids();
    /// let mut buf = BytesMut::from(&b"{\"id\":\"r-1\",\"result\":\"0123456789\"}\n"[..]);
    /// assert!(decoder.decode(&mut buf).unwrap().is_err());
    /// assert_eq!(decoder.recovered_id().unwrap().raw(), b"\"r-1\"");
    /// ```
    pub fn recover_ids(mut self) -> Self {
        self.recovery = Some(Box::default());
        self
    }

    /// The id [`recover_ids`](Self::recover_ids) found in the last oversized line, once
    /// its `TooLarge` error was returned (`None` without `recover_ids`, or when the line
    /// has no recoverable id: see [`IdRecovery::finish`]).
    pub fn recovered_id(&self) -> Option<Id<'_>> {
        self.recovery.as_deref()?.finish()
    }

    /// The recovery run over the last oversized line (with [`recover_ids`](Self::recover_ids)):
    /// its id, and whether it looked like a request or a response.
    pub fn recovery(&self) -> Option<&IdRecovery> {
        self.recovery.as_deref()
    }

    /// Sets the maximum line length (bytes, without the line terminator).
    pub const fn max_message_size(mut self, max: usize) -> Self {
        self.max = max;
        self
    }

    fn too_large(&self, start: u64, len: u64) -> FrameError {
        FrameError::too_large(Framing::Ndjson, start, len, len, self.max)
    }
}

impl NdjsonDecoder {
    /// Like [`Decode::decode`], but lends the next line to `f` instead of cutting it off the
    /// buffer as a [`Frame`], and returns what `f` returns: no `Bytes` per line (no
    /// reference counting), for a caller that is done with each line at once. Oversized
    /// lines are reported and recovered as by `decode`; the two can be mixed on one
    /// stream. At the end of input, call [`Decode::decode_eof`].
    ///
    /// ```
    /// use bytes::BytesMut;
    /// use rpcscan::frame::NdjsonDecoder;
    ///
    /// let mut decoder = NdjsonDecoder::new().max_message_size(8);
    /// let mut buf = BytesMut::from(&b"{}\r\n\n0123456789\n[1]\n{"[..]);
    /// let mut lines = Vec::new();
    /// while let Some(item) = decoder.decode_with(&mut buf, |line| line.to_vec()) {
    ///     lines.push(item.map_err(|too_large| too_large.len()));
    /// }
    /// assert_eq!(lines, [Ok(b"{}".to_vec()), Err(10), Ok(b"[1]".to_vec())]);
    /// assert_eq!(&buf[..], b"{");
    /// ```
    pub fn decode_with<R>(
        &mut self,
        buf: &mut BytesMut,
        f: impl FnOnce(&[u8]) -> R,
    ) -> Option<Result<R, FrameError>> {
        let (content, end) = match self.next_line(buf)? {
            Ok(line) => line,
            Err(e) => return Some(Err(e)),
        };
        let result = f(buf.get(..content).unwrap_or_default());
        self.cur.skip(buf, end);
        self.cur.searched = 0;
        Some(Ok(result))
    }

    /// The next complete line, left at the front of `buf`: its length without the line
    /// end, and with it; or the next oversized line's error; or `None` for more input.
    fn next_line(&mut self, buf: &mut BytesMut) -> Option<Result<(usize, usize), FrameError>> {
        loop {
            if let Some(mut d) = self.discarding {
                // Nothing of an oversized line is kept: search each byte once and drop it.
                let Some(i) = memchr(b'\n', buf) else {
                    if let Some(r) = self.recovery.as_deref_mut() {
                        r.feed(buf);
                    }
                    d.seen += buf.len() as u64;
                    d.last = buf.last().copied().or(d.last);
                    self.discarding = Some(d);
                    self.cur.skip_all(buf);
                    return None;
                };
                let last = match i.checked_sub(1) {
                    Some(j) => buf.get(j).copied(),
                    None => d.last,
                };
                let len = d.seen + i as u64 - u64::from(last == Some(b'\r'));
                if let Some(r) = self.recovery.as_deref_mut() {
                    r.feed(buf.get(..i).unwrap_or_default());
                }
                self.cur.skip(buf, i + 1);
                self.discarding = None;
                return Some(Err(self.too_large(d.start, len)));
            }

            let from = self.cur.from(buf);
            let found = buf.get(from..).and_then(|rest| memchr(b'\n', rest));
            let Some(i) = found.map(|j| from + j) else {
                self.cur.searched = buf.len();
                if over_limit(buf.len(), self.max, buf.last().copied(), b'\r') {
                    if let Some(r) = self.recovery.as_deref_mut() {
                        r.reset();
                        r.feed(buf);
                    }
                    self.discarding = Some(Discard {
                        start: self.cur.pos,
                        seen: buf.len() as u64,
                        last: buf.last().copied(),
                    });
                    self.cur.skip_all(buf);
                }
                return None;
            };
            let start = self.cur.pos;
            let content = strip_cr(buf.get(..i).unwrap_or_default()).len();
            if content > self.max {
                if let Some(r) = self.recovery.as_deref_mut() {
                    r.reset();
                    r.feed(buf.get(..content).unwrap_or_default());
                }
                self.cur.skip(buf, i + 1);
                self.cur.searched = 0;
                return Some(Err(self.too_large(start, content as u64)));
            }
            if is_blank(buf.get(..content).unwrap_or_default()) {
                self.cur.skip(buf, i + 1);
                self.cur.searched = 0;
                continue;
            }
            return Some(Ok((content, i + 1)));
        }
    }
}

impl Decode for NdjsonDecoder {
    fn decode(&mut self, buf: &mut BytesMut) -> Option<Result<Frame, FrameError>> {
        let (content, end) = match self.next_line(buf)? {
            Ok(line) => line,
            Err(e) => return Some(Err(e)),
        };
        let start = self.cur.pos;
        let mut line = self.cur.take(buf, end);
        self.cur.searched = 0;
        line.truncate(content);
        Some(Ok(Frame::new(line.freeze(), start, Some(start))))
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> Option<Result<Frame, FrameError>> {
        if let Some(item) = self.decode(buf) {
            return Some(item);
        }
        self.cur.searched = 0;
        if let Some(d) = self.discarding.take() {
            let len = d.seen - u64::from(d.last == Some(b'\r'));
            return Some(Err(self.too_large(d.start, len)));
        }
        if buf.is_empty() {
            return None;
        }
        let start = self.cur.pos;
        let content = strip_cr(buf).len();
        if is_blank(buf) {
            self.cur.skip_all(buf);
            return None;
        }
        let mut line = self.cur.take(buf, buf.len());
        if content > self.max {
            // Unreachable through `decode` (it starts discarding first); kept total.
            return Some(Err(self.too_large(start, content as u64)));
        }
        line.truncate(content);
        Some(Ok(Frame::new(line.freeze(), start, Some(start))))
    }
}

fn strip_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// The NDJSON messages of a complete buffer: `(offset, line)` pairs borrowing from it.
///
/// Same rules as [`NdjsonDecoder`] (without a size limit): split on `\n`, strip one `\r`,
/// skip blank lines, the last line needs no `\n`. No allocation.
///
/// ```
/// let log = b"{\"a\":1}\r\n\n  \n{\"b\":2}";
/// let lines: Vec<_> = rpcscan::frame::ndjson_messages(log).collect();
/// assert_eq!(lines, [(0, &b"{\"a\":1}"[..]), (13, &b"{\"b\":2}"[..])]);
/// ```
pub fn ndjson_messages(buf: &[u8]) -> NdjsonMessages<'_> {
    NdjsonMessages { buf, pos: 0 }
}

/// Iterator of [`ndjson_messages`].
#[derive(Clone, Debug)]
pub struct NdjsonMessages<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> NdjsonMessages<'a> {
    /// The part of the buffer not yet iterated over.
    pub fn remainder(&self) -> &'a [u8] {
        self.buf.get(self.pos..).unwrap_or_default()
    }
}

impl<'a> Iterator for NdjsonMessages<'a> {
    type Item = (usize, &'a [u8]);

    #[inline]
    fn next(&mut self) -> Option<(usize, &'a [u8])> {
        loop {
            let start = self.pos;
            let rest = self.buf.get(start..).filter(|r| !r.is_empty())?;
            let (line, next) = match memchr(b'\n', rest) {
                Some(i) => (rest.get(..i).unwrap_or_default(), start + i + 1),
                None => (rest, self.buf.len()),
            };
            self.pos = next;
            let line = strip_cr(line);
            if !is_blank(line) {
                return Some((start, line));
            }
        }
    }
}

impl core::iter::FusedIterator for NdjsonMessages<'_> {}
