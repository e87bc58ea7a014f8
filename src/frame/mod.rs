//! Byte streams → frames: the four framings of docs/spec.md §7, fed any chunking, zero-copy.
//!
//! A decoder works on a [`BytesMut`] the caller appends to (from a socket, a pipe, a file)
//! and splits each message off as [`Bytes`] without copying. Every call answers one of
//! three things, as httparse does: *need more bytes* (`None`), *here is a frame*
//! (`Some(Ok(frame))`), or *this frame is bad: reported, skipped, the stream goes on*
//! (`Some(Err(error))`). A bad frame is never the end of the stream.
//!
//! ```
//! use bytes::BytesMut;
//! use rpcscan::frame::{Decode, NdjsonDecoder};
//!
//! let mut decoder = NdjsonDecoder::new().max_message_size(64);
//! let mut buf = BytesMut::new();
//! let mut kinds = Vec::new();
//! for chunk in [&b"{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\r\n\n{\"json"[..], b"rpc\":\"2.0\",\"id\":1,\"result\":{}}"] {
//!     buf.extend_from_slice(chunk);
//!     while let Some(item) = decoder.decode(&mut buf) {
//!         kinds.push(rpcscan::classify(item.unwrap().bytes()));
//!     }
//! }
//! while let Some(item) = decoder.decode_eof(&mut buf) {
//!     kinds.push(rpcscan::classify(item.unwrap().bytes())); // the last line has no `\n`
//! }
//! assert_eq!(kinds, [rpcscan::Kind::Notification, rpcscan::Kind::Result]);
//! ```
//!
//! ## The contract every decoder keeps
//!
//! * **Chunking does not matter.** The frames and errors from a stream fed one byte at a
//!   time equal those from the stream fed whole (property-tested for every framing).
//! * **No byte is searched twice.** Each decoder remembers how far it has looked for the
//!   end of the current frame, so feed it the *same* buffer every time, only appending
//!   (exactly what `tokio_util::codec::FramedRead` does).
//! * **Memory is bounded.** The maximum message size ([`DEFAULT_MAX_MESSAGE_SIZE`], 16 MiB,
//!   above the 10 MiB the MCP TypeScript SDK buffers) applies to every framing. A message
//!   over it is reported as [`FrameErrorKind::TooLarge`] and discarded *as it streams
//!   past*. After each round of `decode` calls the buffer holds at most one unfinished
//!   frame that may still fit (the maximum plus one byte; a Content-Length header block,
//!   at most [`MAX_HEADER_BLOCK`]; an SSE line, the maximum plus 6), so it peaks at that
//!   plus one chunk. An SSE event's joined data (at most the maximum) is kept beside it.
//! * **Offsets are stream offsets**: bytes since the decoder was created, counting every
//!   byte the decoder consumed from the buffer.
//! * **End of input.** Call [`Decode::decode_eof`] until it returns `None`: it yields what
//!   is left (NDJSON's last line without `\n`, json-seq's last record, an error for a
//!   truncated Content-Length frame) and empties the buffer.
//!
//! ## Choices where docs/spec.md §7 is silent
//!
//! * **Offsets and lengths of bad frames**: [`FrameError::offset`]`..+`[`FrameError::len`]
//!   is the bad frame's span in the stream, envelope included, final terminator excluded:
//!   an NDJSON line without its `\r\n`, a json-seq record from its RS without its final LF,
//!   a Content-Length header block through the end of its body (or through the bytes
//!   skipped to resynchronize), an SSE event from its first line to its dispatching blank
//!   line.
//! * **Blank lines** (NDJSON) and **blank records** (json-seq: only SP, HT, CR, LF) are not
//!   messages and are skipped; a line or record over the maximum is reported even if blank.
//! * Framing-specific choices are documented in each decoder's module: [`ndjson`],
//!   [`content_length`], [`sse`], [`json_seq`].
//!
//! With the `tokio` feature, every decoder also implements `tokio_util::codec::Decoder`
//! (with `Item = Result<Frame, FrameError>`, so a bad frame does not end a `FramedRead`)
//! and `tokio_util::codec::Encoder`, which writes a message in the framing's envelope.

use core::fmt;
use core::str::FromStr;

use bytes::{Buf, Bytes, BytesMut};

#[cfg(feature = "tokio")]
pub mod codec;
pub mod content_length;
mod detect;
pub mod json_seq;
pub mod ndjson;
pub mod sse;

pub use content_length::{ContentLengthDecoder, MAX_HEADER_BLOCK};
pub use json_seq::JsonSeqDecoder;
pub use ndjson::{ndjson_messages, NdjsonDecoder, NdjsonMessages};
pub use sse::SseDecoder;

use crate::invalid::Reason;
use crate::owned::{OwnedInvalid, OwnedMessage};
use crate::parser::Parser;

// Frames and their errors are owned, thread-safe values (as `OwnedMessage` is).
const _: () = {
    const fn owned<T: Send + Sync + Clone + 'static>() {}
    owned::<Frame>();
    owned::<FrameError>();
};

/// The default maximum message size of every decoder: 16 MiB.
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = 16 * 1024 * 1024;

/// The four framings of docs/spec.md §7.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Framing {
    /// One message per line (`\n`, optional `\r`): MCP stdio, JSON-lines logs.
    Ndjson,
    /// `Content-Length: N` headers, a blank line, then N bytes: LSP and DAP.
    ContentLength,
    /// Server-sent events: MCP Streamable HTTP responses.
    Sse,
    /// RFC 7464 JSON text sequences: each record starts with `0x1E`.
    JsonSeq,
}

impl Framing {
    /// All framings, in declaration order.
    pub const ALL: [Framing; 4] =
        [Framing::Ndjson, Framing::ContentLength, Framing::Sse, Framing::JsonSeq];

    /// The name used by the CLI (`--framing NAME`): `ndjson`, `content-length`, `sse`,
    /// `json-seq`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Framing::Ndjson => "ndjson",
            Framing::ContentLength => "content-length",
            Framing::Sse => "sse",
            Framing::JsonSeq => "json-seq",
        }
    }
}

impl fmt::Display for Framing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The name given to [`Framing`]'s `FromStr` is none of [`Framing::as_str`]'s names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownFraming(String);

impl fmt::Display for UnknownFraming {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown framing {:?} (expected ndjson, content-length, sse or json-seq)", self.0)
    }
}

impl std::error::Error for UnknownFraming {}

impl FromStr for Framing {
    type Err = UnknownFraming;

    /// Accepts exactly the names of [`Framing::as_str`].
    ///
    /// ```
    /// use rpcscan::frame::Framing;
    /// assert_eq!("json-seq".parse::<Framing>(), Ok(Framing::JsonSeq));
    /// assert!("lines".parse::<Framing>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Framing::ALL
            .into_iter()
            .find(|f| f.as_str() == s)
            .ok_or_else(|| UnknownFraming(s.to_owned()))
    }
}

/// One message's bytes cut from the stream.
///
/// Zero-copy: the bytes are split off the decoder's buffer, except for SSE events whose
/// data spans several `data:` lines, which are joined with `\n` into a new buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    bytes: Bytes,
    offset: u64,
    body_offset: Option<u64>,
    event: Option<Bytes>,
    last_event_id: Option<Bytes>,
}

impl Frame {
    pub(crate) fn new(bytes: Bytes, offset: u64, body_offset: Option<u64>) -> Self {
        Frame { bytes, offset, body_offset, event: None, last_event_id: None }
    }

    /// Attaches SSE fields; both must hold UTF-8 (the SSE decoder makes sure of it).
    pub(crate) fn with_sse(mut self, event: Option<Bytes>, last_event_id: Option<Bytes>) -> Self {
        self.event = event;
        self.last_event_id = last_event_id;
        self
    }

    /// The message's bytes (no line terminator, header, `data:` prefix or RS).
    pub fn bytes(&self) -> &Bytes {
        &self.bytes
    }

    /// The message's bytes, owned.
    pub fn into_bytes(self) -> Bytes {
        self.bytes
    }

    /// Stream offset where the frame starts: its NDJSON line, its Content-Length header
    /// block, the first line of its SSE event, or its json-seq RS byte.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Stream offset of the message's first byte, when the message is one run of stream
    /// bytes (always, except for an SSE event joined from several `data:` lines). Add an
    /// [`crate::Invalid::offset`] to it to point at the offending byte in the stream.
    pub fn body_offset(&self) -> Option<u64> {
        self.body_offset
    }

    /// The SSE `event:` field of the event, if it set a non-empty one (`None` means the
    /// default type, `message`); always `None` for the other framings.
    pub fn event(&self) -> Option<&str> {
        utf8(self.event.as_ref())
    }

    /// The SSE last event id after this event (what a reconnecting client sends as
    /// `Last-Event-ID`); `None` when none was set or it was reset with an empty `id:`.
    /// Always `None` for the other framings.
    pub fn last_event_id(&self) -> Option<&str> {
        utf8(self.last_event_id.as_ref())
    }

    /// Scans the message ([`OwnedMessage::parse`]).
    ///
    /// ```
    /// use bytes::BytesMut;
    /// use rpcscan::{frame::{Decode, NdjsonDecoder}, Kind, Parser};
    ///
    /// let mut buf = BytesMut::from(&b"{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1}\n"[..]);
    /// let frame = NdjsonDecoder::new().decode(&mut buf).unwrap().unwrap();
    /// let msg = frame.parse(&Parser::new()).unwrap();
    /// assert_eq!(msg.kind(), Kind::Request);
    /// ```
    pub fn parse(self, parser: &Parser) -> Result<OwnedMessage, OwnedInvalid> {
        OwnedMessage::parse(parser, self.bytes)
    }
}

impl AsRef<[u8]> for Frame {
    fn as_ref(&self) -> &[u8] {
        &self.bytes
    }
}

fn utf8(bytes: Option<&Bytes>) -> Option<&str> {
    core::str::from_utf8(bytes?).ok()
}

/// What is wrong with a bad frame.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FrameErrorKind {
    /// Larger than the maximum message size: an NDJSON line, a json-seq record, an SSE
    /// event (joined data or one field line), or a declared `Content-Length`.
    TooLarge,
    /// A Content-Length header block without `Content-Length`.
    MissingLength,
    /// A Content-Length header block with two `Content-Length` headers.
    DuplicateLength,
    /// A `Content-Length` value that is not a decimal number (or does not fit 64 bits).
    BadLength,
    /// A malformed header line, or a header block longer than [`MAX_HEADER_BLOCK`].
    BadHeader,
    /// Bytes where a frame should start: before a Content-Length header block, or before
    /// the first RS of a json-seq stream.
    Junk,
    /// The input ended inside a Content-Length frame (header block or body).
    Truncated,
}

impl FrameErrorKind {
    /// A short lower-case name: `too_large`, `missing_length`, `duplicate_length`,
    /// `bad_length`, `bad_header`, `junk`, `truncated`.
    pub const fn as_str(self) -> &'static str {
        match self {
            FrameErrorKind::TooLarge => "too_large",
            FrameErrorKind::MissingLength => "missing_length",
            FrameErrorKind::DuplicateLength => "duplicate_length",
            FrameErrorKind::BadLength => "bad_length",
            FrameErrorKind::BadHeader => "bad_header",
            FrameErrorKind::Junk => "junk",
            FrameErrorKind::Truncated => "truncated",
        }
    }
}

impl fmt::Display for FrameErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A bad frame: reported, skipped, and the stream goes on.
///
/// ```
/// use bytes::BytesMut;
/// use rpcscan::frame::{ContentLengthDecoder, Decode, FrameErrorKind};
///
/// let mut decoder = ContentLengthDecoder::new();
/// let mut buf = BytesMut::from(
///     &b"Content-Length: 2\r\ncontent-length: 2\r\n\r\n{}\r\nContent-Length: 2\r\n\r\n[]"[..],
/// );
/// let err = decoder.decode(&mut buf).unwrap().unwrap_err();
/// assert_eq!(err.kind(), FrameErrorKind::DuplicateLength);
/// assert_eq!((err.offset(), err.len()), (0, 44)); // the header block, and the body skipped to resync
/// assert_eq!(err.to_string(), "duplicate Content-Length header in the header block at byte 0");
/// assert_eq!(err.reason(), rpcscan::Reason::Syntax);
/// // The stream goes on.
/// assert_eq!(decoder.decode(&mut buf).unwrap().unwrap().bytes().as_ref(), b"[]");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FrameError {
    framing: Framing,
    kind: FrameErrorKind,
    offset: u64,
    len: u64,
    /// `TooLarge`: the size compared with the limit (at least the bytes seen) and the limit.
    size: u64,
    limit: u64,
}

impl FrameError {
    pub(crate) fn new(framing: Framing, kind: FrameErrorKind, offset: u64, len: u64) -> Self {
        FrameError { framing, kind, offset, len, size: 0, limit: 0 }
    }

    pub(crate) fn too_large(
        framing: Framing,
        offset: u64,
        len: u64,
        size: u64,
        limit: usize,
    ) -> Self {
        FrameError {
            size,
            limit: limit as u64,
            ..FrameError::new(framing, FrameErrorKind::TooLarge, offset, len)
        }
    }

    /// What is wrong.
    pub fn kind(&self) -> FrameErrorKind {
        self.kind
    }

    /// The framing that found it.
    pub fn framing(&self) -> Framing {
        self.framing
    }

    /// Stream offset where the bad frame starts.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// How many stream bytes the bad frame spans (all of them discarded).
    pub fn len(&self) -> u64 {
        self.len
    }

    /// `true` when the bad frame spans no bytes (never the case for errors decoders make).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The message-level verdict a counting tool records for it: [`Reason::TooLarge`] for
    /// an oversized message, [`Reason::Syntax`] for every other framing error. Both are
    /// answered with -32700.
    pub fn reason(&self) -> Reason {
        match self.kind {
            FrameErrorKind::TooLarge => Reason::TooLarge,
            _ => Reason::Syntax,
        }
    }
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = self.offset;
        let unit = match self.framing {
            Framing::Ndjson => "NDJSON line",
            Framing::ContentLength => "Content-Length body",
            Framing::Sse => "SSE event",
            Framing::JsonSeq => "json-seq record",
        };
        match self.kind {
            FrameErrorKind::TooLarge => match self.framing {
                Framing::ContentLength => write!(
                    f,
                    "Content-Length {} at byte {at} exceeds the maximum message size of {} bytes",
                    self.size, self.limit
                ),
                Framing::Sse => write!(
                    f,
                    "{unit} at byte {at} exceeds the maximum message size of {} bytes",
                    self.limit
                ),
                _ => write!(
                    f,
                    "{unit} of {} bytes at byte {at} exceeds the maximum message size of {} bytes",
                    self.size, self.limit
                ),
            },
            FrameErrorKind::MissingLength => {
                write!(f, "header block without Content-Length at byte {at}")
            }
            FrameErrorKind::DuplicateLength => write!(
                f,
                "duplicate Content-Length header in the header block at byte {at}"
            ),
            FrameErrorKind::BadLength => write!(
                f,
                "Content-Length value is not a decimal number in the header block at byte {at}"
            ),
            FrameErrorKind::BadHeader => write!(
                f,
                "malformed header line (or header block over {MAX_HEADER_BLOCK} bytes) in the header block at byte {at}"
            ),
            FrameErrorKind::Junk => match self.framing {
                Framing::JsonSeq => write!(
                    f,
                    "{} bytes before the first record separator at byte {at}",
                    self.len
                ),
                _ => write!(f, "{} bytes of junk before a header at byte {at}", self.len),
            },
            FrameErrorKind::Truncated => write!(
                f,
                "input ends inside the Content-Length frame at byte {at} ({} bytes)",
                self.len
            ),
        }
    }
}

impl std::error::Error for FrameError {}

/// A framing decoder: need more bytes, a frame, or an error (the three outcomes of the
/// module docs).
///
/// `None`: need more bytes (append to `buf` and call again). `Some(Ok(frame))`: a frame,
/// split off `buf`. `Some(Err(error))`: a bad frame, already skipped; call again.
pub trait Decode {
    /// Cuts the next frame off `buf`, or reports the next bad frame, or asks for more.
    fn decode(&mut self, buf: &mut BytesMut) -> Option<Result<Frame, FrameError>>;

    /// At end of input: like [`Decode::decode`], then the final unterminated frame if the
    /// framing allows one (NDJSON last line, json-seq last record) or an error for what
    /// cannot be completed. Call until it returns `None`; `buf` is then empty.
    fn decode_eof(&mut self, buf: &mut BytesMut) -> Option<Result<Frame, FrameError>>;
}

impl<D: Decode + ?Sized> Decode for &mut D {
    fn decode(&mut self, buf: &mut BytesMut) -> Option<Result<Frame, FrameError>> {
        (**self).decode(buf)
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> Option<Result<Frame, FrameError>> {
        (**self).decode_eof(buf)
    }
}

/// Any of the four decoders, chosen at run time (`--framing NAME`). Named so that it does not
/// clash with `tokio_util::codec::Decoder`, which it implements with the `tokio` feature.
///
/// ```
/// use bytes::BytesMut;
/// use rpcscan::frame::{AnyDecoder, Decode, Framing};
///
/// let input = b"Content-Length: 2\r\n\r\n{}";
/// let mut decoder = AnyDecoder::new(Framing::detect(input)).max_message_size(1024);
/// let mut buf = BytesMut::from(&input[..]);
/// assert_eq!(decoder.decode(&mut buf).unwrap().unwrap().bytes().as_ref(), b"{}");
/// ```
#[derive(Clone, Debug)]
pub enum AnyDecoder {
    /// NDJSON / MCP stdio.
    Ndjson(NdjsonDecoder),
    /// Content-Length (LSP, DAP).
    ContentLength(ContentLengthDecoder),
    /// Server-sent events.
    Sse(SseDecoder),
    /// RFC 7464 json-seq.
    JsonSeq(JsonSeqDecoder),
}

/// The former name of [`AnyDecoder`].
#[deprecated(
    note = "renamed to `AnyDecoder`, which does not clash with `tokio_util::codec::Decoder`"
)]
pub type Decoder = AnyDecoder;

impl AnyDecoder {
    /// A fresh decoder for `framing`, with the default maximum message size.
    pub fn new(framing: Framing) -> Self {
        match framing {
            Framing::Ndjson => AnyDecoder::Ndjson(NdjsonDecoder::new()),
            Framing::ContentLength => AnyDecoder::ContentLength(ContentLengthDecoder::new()),
            Framing::Sse => AnyDecoder::Sse(SseDecoder::new()),
            Framing::JsonSeq => AnyDecoder::JsonSeq(JsonSeqDecoder::new()),
        }
    }

    /// Sets the maximum message size (bytes).
    pub fn max_message_size(self, max: usize) -> Self {
        match self {
            AnyDecoder::Ndjson(d) => AnyDecoder::Ndjson(d.max_message_size(max)),
            AnyDecoder::ContentLength(d) => AnyDecoder::ContentLength(d.max_message_size(max)),
            AnyDecoder::Sse(d) => AnyDecoder::Sse(d.max_message_size(max)),
            AnyDecoder::JsonSeq(d) => AnyDecoder::JsonSeq(d.max_message_size(max)),
        }
    }

    /// Which framing this decoder reads.
    pub fn framing(&self) -> Framing {
        match self {
            AnyDecoder::Ndjson(_) => Framing::Ndjson,
            AnyDecoder::ContentLength(_) => Framing::ContentLength,
            AnyDecoder::Sse(_) => Framing::Sse,
            AnyDecoder::JsonSeq(_) => Framing::JsonSeq,
        }
    }
}

impl From<Framing> for AnyDecoder {
    fn from(framing: Framing) -> Self {
        AnyDecoder::new(framing)
    }
}

impl Decode for AnyDecoder {
    fn decode(&mut self, buf: &mut BytesMut) -> Option<Result<Frame, FrameError>> {
        match self {
            AnyDecoder::Ndjson(d) => d.decode(buf),
            AnyDecoder::ContentLength(d) => d.decode(buf),
            AnyDecoder::Sse(d) => d.decode(buf),
            AnyDecoder::JsonSeq(d) => d.decode(buf),
        }
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> Option<Result<Frame, FrameError>> {
        match self {
            AnyDecoder::Ndjson(d) => d.decode_eof(buf),
            AnyDecoder::ContentLength(d) => d.decode_eof(buf),
            AnyDecoder::Sse(d) => d.decode_eof(buf),
            AnyDecoder::JsonSeq(d) => d.decode_eof(buf),
        }
    }
}

/// Where a decoder is in the stream: the offset of `buf[0]`, and how far it has searched.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Cursor {
    /// Stream offset of the buffer's first byte.
    pub(crate) pos: u64,
    /// Bytes at the start of the buffer already searched for the current delimiter.
    pub(crate) searched: usize,
}

impl Cursor {
    /// Drops `n` bytes (at most the buffer) from the front of `buf`.
    pub(crate) fn skip(&mut self, buf: &mut BytesMut, n: usize) {
        let n = n.min(buf.len());
        buf.advance(n);
        self.pos += n as u64;
        self.searched = self.searched.saturating_sub(n);
    }

    /// Splits `n` bytes (at most the buffer) off the front of `buf`.
    pub(crate) fn take(&mut self, buf: &mut BytesMut, n: usize) -> BytesMut {
        let n = n.min(buf.len());
        self.pos += n as u64;
        self.searched = self.searched.saturating_sub(n);
        buf.split_to(n)
    }

    /// Drops the whole buffer.
    pub(crate) fn skip_all(&mut self, buf: &mut BytesMut) {
        self.skip(buf, buf.len());
    }

    /// Where the next search starts (never past the end, even on a foreign buffer).
    pub(crate) fn from(&self, buf: &BytesMut) -> usize {
        self.searched.min(buf.len())
    }
}

/// JSON whitespace: what blank lines and blank records are made of.
pub(crate) fn is_blank(bytes: &[u8]) -> bool {
    bytes.iter().all(|&b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
}

/// `true` when a partial message of `seen` bytes already exceeds `max`, whatever comes
/// next. One final `trailer` byte (`\r` before NDJSON's `\n`, json-seq's LF) is not part of
/// the message, so a message of exactly `max + 1` bytes ending in it may still fit.
pub(crate) fn over_limit(seen: usize, max: usize, last: Option<u8>, trailer: u8) -> bool {
    match seen.checked_sub(max) {
        None | Some(0) => false,
        Some(1) => last != Some(trailer),
        Some(_) => true,
    }
}
