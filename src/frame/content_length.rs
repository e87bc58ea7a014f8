//! Content-Length framing (LSP, DAP): `Name: value` header lines, a blank line, then
//! exactly N body bytes (docs/spec.md §7).
//!
//! ```text
//! Content-Length: 40\r\n
//! Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n
//! \r\n
//! {"jsonrpc":"2.0","method":"initialized"}
//! ```
//!
//! Header names are case-insensitive; headers other than `Content-Length` are accepted and
//! ignored. The frame is the body; its offset is the header block's first byte.
//!
//! Choices where docs/spec.md §7 is silent:
//!
//! * **Bare LF.** A header line may end with `\n` as well as `\r\n`, and so may the blank
//!   line (`\n\n` ends a block). LSP requires CRLF, but hand-written fixtures, logs that went
//!   through a text tool and some DAP adapters use LF, and the body length is explicit, so
//!   accepting both costs no ambiguity. A CR anywhere else in a header line makes it
//!   malformed ([`FrameErrorKind::BadHeader`]).
//! * **Header syntax.** A header line is a token (RFC 9110 `tchar`s), `:`, then a value of
//!   printable ASCII, space and tab (trimmed). `Content-Length` is one or more ASCII digits
//!   (leading zeros allowed) that fit 64 bits; anything else is
//!   [`FrameErrorKind::BadLength`]. A header block longer than [`MAX_HEADER_BLOCK`] bytes
//!   is [`FrameErrorKind::BadHeader`].
//! * **Between frames**, JSON whitespace (space, tab, CR, LF — e.g. a `\n` after each body
//!   in a hand-written file) is skipped silently. Any other byte where a header block should
//!   start, or a first line that is not a header line, is [`FrameErrorKind::Junk`].
//! * **Over the limit.** A well-formed block whose `Content-Length` exceeds the maximum
//!   message size is [`FrameErrorKind::TooLarge`]: the declared body is dropped as it
//!   streams past (never buffered), and decoding goes on right after it. The length is
//!   known, so skipping it is exact, unlike a line search.
//! * **Resynchronizing.** After junk or a bad header block (missing, duplicate or
//!   non-numeric length, malformed line, too long), the rest of the block and everything
//!   up to the next line that starts with `Content-Length:` (any case) is skipped. The one
//!   error is reported when that line is found (or at end of input), and its
//!   [`FrameError::len`] covers every byte skipped. A body that does not end with a line
//!   break hides the header that follows it from this search: such bytes are lost too.
//! * **End of input** inside a header block or a body is [`FrameErrorKind::Truncated`].

use bytes::BytesMut;
use memchr::memchr;

use super::{Cursor, Decode, Frame, FrameError, FrameErrorKind, Framing, DEFAULT_MAX_MESSAGE_SIZE};

/// The longest header block accepted, blank line included: 8 KiB (LSP blocks are about 25
/// to 90 bytes).
pub const MAX_HEADER_BLOCK: usize = 8 * 1024;

const CONTENT_LENGTH: &[u8] = b"content-length";

/// Splits a byte stream into Content-Length framed bodies.
///
/// ```
/// use bytes::BytesMut;
/// use rpcscan::frame::{ContentLengthDecoder, Decode, FrameErrorKind};
///
/// let mut decoder = ContentLengthDecoder::new();
/// let mut buf = BytesMut::from(&b"junk\r\ncontent-length: 2\nX-Other: 1\n\n{}"[..]);
/// let err = decoder.decode(&mut buf).unwrap().unwrap_err();
/// assert_eq!((err.kind(), err.offset(), err.len()), (FrameErrorKind::Junk, 0, 6));
/// let frame = decoder.decode(&mut buf).unwrap().unwrap();
/// assert_eq!((frame.offset(), frame.body_offset(), frame.bytes().as_ref()), (6, Some(36), &b"{}"[..]));
/// ```
#[derive(Clone, Debug)]
pub struct ContentLengthDecoder {
    max: usize,
    cur: Cursor,
    state: State,
}

#[derive(Clone, Copy, Debug)]
enum State {
    /// Between frames: skipping whitespace until a header block starts.
    Idle,
    /// Reading the header block that starts at `start`, one line at a time.
    Headers { start: u64, first: bool, length: Option<u64>, error: Option<FrameErrorKind> },
    /// Waiting for all `len` body bytes.
    Body { start: u64, len: usize },
    /// Dropping the body of a frame over the limit.
    Discard { start: u64, remaining: u64, declared: u64 },
    /// Skipping to the next line that starts with `Content-Length:`, then reporting `error`.
    Resync { error: FrameErrorKind, start: u64, at_line_start: bool },
}

impl Default for ContentLengthDecoder {
    fn default() -> Self {
        ContentLengthDecoder::new()
    }
}

impl ContentLengthDecoder {
    /// A decoder with the default maximum message size (16 MiB).
    pub const fn new() -> Self {
        ContentLengthDecoder {
            max: DEFAULT_MAX_MESSAGE_SIZE,
            cur: Cursor { pos: 0, searched: 0 },
            state: State::Idle,
        }
    }

    /// Sets the largest `Content-Length` accepted (bytes).
    pub const fn max_message_size(mut self, max: usize) -> Self {
        self.max = max;
        self
    }

    fn error(&self, kind: FrameErrorKind, start: u64) -> FrameError {
        FrameError::new(Framing::ContentLength, kind, start, self.cur.pos - start)
    }

    /// After a bad header line or block: resynchronize.
    fn resync(&mut self, error: FrameErrorKind, start: u64, at_line_start: bool) {
        self.state = State::Resync { error, start, at_line_start };
    }
}

impl Decode for ContentLengthDecoder {
    fn decode(&mut self, buf: &mut BytesMut) -> Option<Result<Frame, FrameError>> {
        loop {
            match self.state {
                State::Idle => {
                    let Some(k) = buf.iter().position(|&b| !is_ws(b)) else {
                        self.cur.skip_all(buf);
                        return None;
                    };
                    self.cur.skip(buf, k);
                    self.cur.searched = 0;
                    let start = self.cur.pos;
                    if buf.first().copied().is_some_and(is_tchar) {
                        self.state =
                            State::Headers { start, first: true, length: None, error: None };
                    } else {
                        self.resync(FrameErrorKind::Junk, start, false);
                    }
                }
                State::Headers { start, first, mut length, mut error } => {
                    let junk = if first {
                        FrameErrorKind::Junk
                    } else {
                        error.unwrap_or(FrameErrorKind::BadHeader)
                    };
                    let from = self.cur.from(buf);
                    let found = buf.get(from..).and_then(|rest| memchr(b'\n', rest));
                    let Some(i) = found.map(|j| from + j) else {
                        self.cur.searched = buf.len();
                        let block = self.cur.pos + buf.len() as u64 - start;
                        if block >= MAX_HEADER_BLOCK as u64 {
                            // Its line break, wherever it is, would end the block too late.
                            self.cur.skip_all(buf);
                            self.cur.searched = 0;
                            self.resync(junk, start, false);
                            continue;
                        }
                        return None;
                    };
                    let block = self.cur.pos + i as u64 + 1 - start;
                    if block > MAX_HEADER_BLOCK as u64 {
                        self.cur.skip(buf, i + 1);
                        self.cur.searched = 0;
                        self.resync(junk, start, true);
                        continue;
                    }
                    let raw = buf.get(..i).unwrap_or_default();
                    let line = raw.strip_suffix(b"\r").unwrap_or(raw);
                    if line.is_empty() {
                        self.cur.skip(buf, i + 1);
                        self.cur.searched = 0;
                        match (error, length) {
                            (Some(kind), _) => self.resync(kind, start, true),
                            (None, None) => self.resync(FrameErrorKind::MissingLength, start, true),
                            (None, Some(n)) if n > self.max as u64 => {
                                self.state = State::Discard { start, remaining: n, declared: n }
                            }
                            (None, Some(n)) => self.state = State::Body { start, len: n as usize },
                        }
                        continue;
                    }
                    if error.is_none() {
                        match header(line) {
                            None if first => {
                                // Not a header block at all: junk up to the next header.
                                self.cur.skip(buf, i + 1);
                                self.cur.searched = 0;
                                self.resync(FrameErrorKind::Junk, start, true);
                                continue;
                            }
                            None => error = Some(FrameErrorKind::BadHeader),
                            Some((name, value)) if name.eq_ignore_ascii_case(CONTENT_LENGTH) => {
                                if length.is_some() {
                                    error = Some(FrameErrorKind::DuplicateLength);
                                } else {
                                    match parse_length(value) {
                                        Some(n) => length = Some(n),
                                        None => error = Some(FrameErrorKind::BadLength),
                                    }
                                }
                            }
                            Some(_) => {}
                        }
                    }
                    self.cur.skip(buf, i + 1);
                    self.cur.searched = 0;
                    self.state = State::Headers { start, first: false, length, error };
                }
                State::Body { start, len } => {
                    if buf.len() < len {
                        return None;
                    }
                    let body_offset = self.cur.pos;
                    let body = self.cur.take(buf, len);
                    self.cur.searched = 0;
                    self.state = State::Idle;
                    return Some(Ok(Frame::new(body.freeze(), start, Some(body_offset))));
                }
                State::Discard { start, remaining, declared } => {
                    let n = remaining.min(buf.len() as u64);
                    self.cur.skip(buf, n as usize);
                    let remaining = remaining - n;
                    if remaining > 0 {
                        self.state = State::Discard { start, remaining, declared };
                        return None;
                    }
                    self.state = State::Idle;
                    let len = self.cur.pos - start;
                    return Some(Err(FrameError::too_large(
                        Framing::ContentLength,
                        start,
                        len,
                        declared,
                        self.max,
                    )));
                }
                State::Resync { error, start, mut at_line_start } => loop {
                    let n = CONTENT_LENGTH.len() + 1;
                    let head = buf.get(..n.min(buf.len())).unwrap_or_default();
                    if at_line_start && starts_content_length(head) {
                        if head.len() < n {
                            // A prefix of `Content-Length:`: wait for the rest.
                            self.state = State::Resync { error, start, at_line_start };
                            return None;
                        }
                        let err = self.error(error, start);
                        self.cur.searched = 0;
                        self.state = State::Headers {
                            start: self.cur.pos,
                            first: true,
                            length: None,
                            error: None,
                        };
                        return Some(Err(err));
                    }
                    match memchr(b'\n', buf) {
                        Some(i) => {
                            self.cur.skip(buf, i + 1);
                            at_line_start = true;
                        }
                        None => {
                            self.cur.skip_all(buf);
                            self.state = State::Resync { error, start, at_line_start: false };
                            return None;
                        }
                    }
                },
            }
        }
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> Option<Result<Frame, FrameError>> {
        if let Some(item) = self.decode(buf) {
            return Some(item);
        }
        let state = core::mem::replace(&mut self.state, State::Idle);
        self.cur.skip_all(buf);
        self.cur.searched = 0;
        let (kind, start) = match state {
            State::Idle => return None,
            State::Headers { start, error, .. } => {
                (error.unwrap_or(FrameErrorKind::Truncated), start)
            }
            State::Body { start, .. } => (FrameErrorKind::Truncated, start),
            State::Discard { start, declared, .. } => {
                let len = self.cur.pos - start;
                let err =
                    FrameError::too_large(Framing::ContentLength, start, len, declared, self.max);
                return Some(Err(err));
            }
            State::Resync { error, start, .. } => (error, start),
        };
        Some(Err(self.error(kind, start)))
    }
}

/// `true` when `head` (up to 15 bytes) is a prefix of `Content-Length:`, any case.
fn starts_content_length(head: &[u8]) -> bool {
    head.iter().zip(CONTENT_LENGTH.iter().chain(b":")).all(|(a, b)| a.eq_ignore_ascii_case(b))
}

/// Splits a header line into its name and trimmed value; `None` if it is malformed.
fn header(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let colon = memchr(b':', line)?;
    let name = line.get(..colon)?;
    let value = line.get(colon + 1..)?;
    if name.is_empty() || !name.iter().copied().all(is_tchar) {
        return None;
    }
    if !value.iter().all(|&b| b == b'\t' || (b' '..=b'~').contains(&b)) {
        return None;
    }
    Some((name, value.trim_ascii()))
}

/// A `Content-Length` value: one or more ASCII digits that fit a `u64`.
fn parse_length(value: &[u8]) -> Option<u64> {
    if value.is_empty() {
        return None;
    }
    value.iter().try_fold(0u64, |n, &d| {
        if d.is_ascii_digit() {
            n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
        } else {
            None
        }
    })
}

/// RFC 9110 token characters (header names).
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_lines() {
        assert_eq!(header(b"Content-Length:  12 "), Some((&b"Content-Length"[..], &b"12"[..])));
        assert_eq!(header(b"X:"), Some((&b"X"[..], &b""[..])));
        assert_eq!(header(b"no colon"), None);
        assert_eq!(header(b": empty name"), None);
        assert_eq!(header(b"Bad Name: 1"), None);
        assert_eq!(header(b"X: caf\xc3\xa9"), None);
        assert_eq!(header(b"X: a\rb"), None);
        assert_eq!(parse_length(b"007"), Some(7));
        assert_eq!(parse_length(b""), None);
        assert_eq!(parse_length(b"+1"), None);
        assert_eq!(parse_length(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_length(b"18446744073709551616"), None);
        assert!(starts_content_length(b"CONTENT-len"));
        assert!(!starts_content_length(b"Content-Type"));
    }
}
