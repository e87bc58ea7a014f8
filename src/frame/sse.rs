//! Server-sent events (MCP Streamable HTTP), by the WHATWG event-stream rules (docs/spec.md §7).
//!
//! Lines end with CRLF, LF or CR (a CR at the end of one chunk followed by an LF in the
//! next is one line end, not two). A line starting with `:` is a comment (keep-alives);
//! `field: value` lines set a field, with one leading space removed from the value; a line
//! without `:` is a field with an empty value. `data` values are joined with `\n`; `event`
//! sets the event type; `id` sets the last event id unless its value contains NUL; `retry`
//! with only digits sets the reconnection time; other fields are ignored. A blank line
//! dispatches the event. One byte order mark at the very start of the stream is skipped.
//!
//! Differences from WHATWG, from docs/spec.md §7: an event whose joined data is empty (MCP's
//! priming event `id: 7\ndata:\n\n`, keep-alives) yields no message, though its `id` still
//! updates the last event id. At end of input, an event without its terminating blank line
//! is discarded (as in WHATWG), silently.
//!
//! **Non-message events** (docs/spec.md §7): an event whose `event` field is set to anything
//! but `message` (the legacy HTTP+SSE transport's `event: endpoint`, custom server events)
//! carries no JSON-RPC message. Its data is still handed out as a [`Frame`], so that a
//! proxy can pass it on, but [`Frame::is_message`] is `false`: readers skip and count it,
//! and never classify it (it is never `invalid`).
//!
//! Choices where docs/spec.md §7 is silent:
//!
//! * **Bytes, not text.** The data bytes are handed to the scanner as they are (WHATWG
//!   would decode them with replacement characters first): a message that is not UTF-8 is
//!   reported as `invalid_utf8` instead of being silently changed. `event` and `id` values
//!   that are not UTF-8 are decoded lossily.
//! * **Limits.** An event whose joined data exceeds the maximum message size, or that has a
//!   field line longer than the maximum plus 6 bytes (room for `data: `), is reported as
//!   [`FrameErrorKind::TooLarge`](super::FrameErrorKind::TooLarge) when its blank line
//!   arrives; over-long lines are dropped as they stream past. Over-long comment lines are
//!   dropped silently. An over-long `id` line does not update the last event id.
//! * **Offsets.** A frame's offset is the first byte of the event's first line (comments
//!   included); [`Frame::body_offset`] is set when the data came from one `data:` line.

use bytes::{BufMut, Bytes, BytesMut};
use memchr::{memchr, memchr2};

use super::{Cursor, Decode, Frame, FrameError, Framing, DEFAULT_MAX_MESSAGE_SIZE};

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Longest field name whose line still fits when the value is at the maximum (`data: `).
const LINE_SLACK: usize = 6;

/// Splits a server-sent event stream into the events' data.
///
/// ```
/// use bytes::BytesMut;
/// use rpcscan::frame::{Decode, SseDecoder};
///
/// let mut decoder = SseDecoder::new();
/// let mut buf = BytesMut::from(&b": keep-alive\n\nid: 7\ndata:\n\nevent: message\r\nid: 8\r\ndata: {\"jsonrpc\":\r\ndata:  \"2.0\"}\r\n\r\n"[..]);
/// let frame = decoder.decode(&mut buf).unwrap().unwrap();
/// assert_eq!(frame.bytes().as_ref(), b"{\"jsonrpc\":\n \"2.0\"}");
/// assert_eq!((frame.event(), frame.last_event_id()), (Some("message"), Some("8")));
/// assert!(decoder.decode(&mut buf).is_none());
/// assert_eq!(decoder.last_event_id(), Some("8"));
/// ```
#[derive(Clone, Debug)]
pub struct SseDecoder {
    max: usize,
    cur: Cursor,
    /// The BOM check at stream start is done.
    started: bool,
    /// The last line ended with CR: an LF right after it ends the same line.
    after_cr: bool,
    /// Dropping the rest of an over-long line.
    long_line: bool,
    event: Event,
    /// WHATWG's last event ID string (set at dispatch), and its last event ID buffer when
    /// an `id:` line of the current event changed it (`Some(None)`: reset). Keeping only
    /// the change saves copying the id at every dispatch.
    last_id: Option<Bytes>,
    id_changed: Option<Option<Bytes>>,
    retry: Option<u64>,
}

/// The fields WHATWG knows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Field {
    Data,
    Event,
    Id,
    Retry,
    Other,
}

impl Field {
    fn of(name: &[u8]) -> Field {
        match name {
            b"data" => Field::Data,
            b"event" => Field::Event,
            b"id" => Field::Id,
            b"retry" => Field::Retry,
            _ => Field::Other,
        }
    }
}

/// The event being read.
#[derive(Clone, Debug, Default)]
struct Event {
    /// Stream offset of its first line; `None` while no line has been seen.
    start: Option<u64>,
    data: Data,
    /// Bytes of joined data so far, and the number of `data` lines.
    data_len: usize,
    data_lines: usize,
    /// Stream offset of the first data value.
    data_at: u64,
    kind: Option<Bytes>,
    too_large: bool,
}

#[derive(Clone, Debug, Default)]
enum Data {
    #[default]
    None,
    /// One `data:` value, zero-copy.
    One(Bytes),
    /// Several, joined with `\n`.
    Many(BytesMut),
}

impl Default for SseDecoder {
    fn default() -> Self {
        SseDecoder::new()
    }
}

impl SseDecoder {
    /// A decoder with the default maximum message size (16 MiB).
    pub fn new() -> Self {
        SseDecoder {
            max: DEFAULT_MAX_MESSAGE_SIZE,
            cur: Cursor::default(),
            started: false,
            after_cr: false,
            long_line: false,
            event: Event::default(),
            last_id: None,
            id_changed: None,
            retry: None,
        }
    }

    /// Sets the largest joined data of one event (bytes).
    pub fn max_message_size(mut self, max: usize) -> Self {
        self.max = max;
        self
    }

    /// The last event id as of the last dispatched event (with or without data): what a
    /// reconnecting client sends as `Last-Event-ID`. `None` if never set or reset.
    pub fn last_event_id(&self) -> Option<&str> {
        core::str::from_utf8(self.last_id.as_ref()?).ok()
    }

    /// The reconnection time in milliseconds from the last valid `retry:` field.
    pub fn retry(&self) -> Option<u64> {
        self.retry
    }

    /// WHATWG's last event ID buffer.
    fn id_buffer(&self) -> Option<&[u8]> {
        match &self.id_changed {
            Some(changed) => changed.as_deref(),
            None => self.last_id.as_deref(),
        }
    }

    fn line_limit(&self) -> usize {
        self.max.saturating_add(LINE_SLACK)
    }

    /// An over-long line starting at `start`: it poisons the event unless it is a comment.
    fn long(&mut self, start: u64, first: Option<u8>) {
        self.event.start.get_or_insert(start);
        if first != Some(b':') {
            self.event.too_large = true;
            self.event.data = Data::None;
        }
    }

    /// Processes the complete line of `len` bytes at the front of `buf` (which started at
    /// stream offset `start`) and drops it with its one-byte terminator. Only the values
    /// that must outlive the buffer (a first `data` value, a new `id` or `event`) are split
    /// off as `Bytes`; everything else is read in place.
    fn line(&mut self, buf: &mut BytesMut, len: usize) -> Option<Result<Frame, FrameError>> {
        let start = self.cur.pos;
        let line = buf.get(..len).unwrap_or_default();
        if line.is_empty() {
            self.cur.skip(buf, 1);
            return self.dispatch(start);
        }
        self.event.start.get_or_insert(start);
        let (field, value_at) = match memchr(b':', line) {
            Some(0) => (Field::Other, len), // a comment
            Some(c) => {
                let v = c + 1;
                let v = if line.get(v) == Some(&b' ') { v + 1 } else { v };
                (Field::of(line.get(..c).unwrap_or_default()), v)
            }
            None => (Field::of(line), len),
        };
        let value = line.get(value_at..).unwrap_or_default();
        let keep = match field {
            Field::Data => self.data(value),
            // MCP names every event `message`: no need to keep a handle on the buffer.
            Field::Event if value == b"message" => {
                self.event.kind = Some(Bytes::from_static(b"message"));
                false
            }
            Field::Event => true,
            // An id containing NUL is ignored (WHATWG); an empty one resets the buffer.
            Field::Id if memchr(0, value).is_some() => false,
            Field::Id if value.is_empty() => {
                self.id_changed = Some(None);
                false
            }
            Field::Id => self.id_buffer() != Some(value),
            Field::Retry => {
                if let Some(ms) = parse_retry(value) {
                    self.retry = Some(ms);
                }
                false
            }
            Field::Other => false,
        };
        if !keep {
            self.cur.skip(buf, len + 1);
            return None;
        }
        self.cur.skip(buf, value_at);
        let value_offset = self.cur.pos;
        let value = self.cur.take(buf, len - value_at).freeze();
        self.cur.skip(buf, 1);
        match field {
            Field::Data => {
                self.event.data_at = value_offset;
                self.event.data = Data::One(value);
            }
            Field::Event => self.event.kind = Some(utf8_or_lossy(value)),
            _ => self.id_changed = Some(Some(utf8_or_lossy(value))),
        }
        None
    }

    /// Adds a `data` value to the event. Returns `true` when it is the event's first: the
    /// caller then splits it off the buffer (zero-copy) instead of copying it.
    fn data(&mut self, value: &[u8]) -> bool {
        let ev = &mut self.event;
        if ev.too_large {
            return false;
        }
        let len = if ev.data_lines == 0 {
            value.len()
        } else {
            ev.data_len.saturating_add(1).saturating_add(value.len())
        };
        if len > self.max {
            ev.too_large = true;
            ev.data = Data::None;
            return false;
        }
        ev.data_len = len;
        ev.data_lines += 1;
        match core::mem::take(&mut ev.data) {
            Data::None => return true,
            Data::One(first) => {
                let mut joined = BytesMut::with_capacity(len);
                joined.extend_from_slice(&first);
                joined.put_u8(b'\n');
                joined.extend_from_slice(value);
                ev.data = Data::Many(joined);
            }
            Data::Many(mut joined) => {
                joined.put_u8(b'\n');
                joined.extend_from_slice(value);
                ev.data = Data::Many(joined);
            }
        }
        false
    }

    /// A blank line starting at `blank`: dispatch the event, if it has data.
    fn dispatch(&mut self, blank: u64) -> Option<Result<Frame, FrameError>> {
        if let Some(id) = self.id_changed.take() {
            self.last_id = id;
        }
        let ev = core::mem::take(&mut self.event);
        let start = ev.start?;
        if ev.too_large {
            let len = blank - start;
            return Some(Err(FrameError::too_large(Framing::Sse, start, len, len, self.max)));
        }
        let (bytes, body_offset) = match ev.data {
            Data::None => return None,
            Data::One(bytes) if bytes.is_empty() => return None,
            Data::One(bytes) => (bytes, Some(ev.data_at)),
            Data::Many(joined) => (joined.freeze(), None),
        };
        let kind = ev.kind.filter(|k| !k.is_empty());
        Some(Ok(Frame::new(bytes, start, body_offset).with_sse(kind, self.last_id.clone())))
    }
}

impl Decode for SseDecoder {
    fn decode(&mut self, buf: &mut BytesMut) -> Option<Result<Frame, FrameError>> {
        loop {
            if !self.started {
                let head = buf.get(..buf.len().min(BOM.len())).unwrap_or_default();
                if BOM.starts_with(head) {
                    if head.len() < BOM.len() {
                        return None; // could still be a BOM
                    }
                    self.cur.skip(buf, BOM.len());
                }
                self.started = true;
            }
            if self.after_cr {
                match buf.first() {
                    None => return None,
                    Some(b'\n') => self.cur.skip(buf, 1),
                    Some(_) => {}
                }
                self.after_cr = false;
            }
            if self.long_line {
                let Some(i) = memchr2(b'\r', b'\n', buf) else {
                    self.cur.skip_all(buf);
                    return None;
                };
                self.after_cr = buf.get(i) == Some(&b'\r');
                self.cur.skip(buf, i + 1);
                self.cur.searched = 0;
                self.long_line = false;
                continue;
            }
            let start = self.cur.pos;
            let from = self.cur.from(buf);
            let found = buf.get(from..).and_then(|rest| memchr2(b'\r', b'\n', rest));
            let Some(i) = found.map(|j| from + j) else {
                self.cur.searched = buf.len();
                if buf.len() > self.line_limit() {
                    self.long(start, buf.first().copied());
                    self.long_line = true;
                    self.cur.skip_all(buf);
                    self.cur.searched = 0;
                }
                return None;
            };
            self.after_cr = buf.get(i) == Some(&b'\r');
            if i > self.line_limit() {
                self.long(start, buf.first().copied());
                self.cur.skip(buf, i + 1);
                self.cur.searched = 0;
                continue;
            }
            self.cur.searched = 0;
            if let Some(item) = self.line(buf, i) {
                return Some(item);
            }
        }
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> Option<Result<Frame, FrameError>> {
        if let Some(item) = self.decode(buf) {
            return Some(item);
        }
        // An unterminated line or event is discarded.
        self.cur.skip_all(buf);
        self.cur.searched = 0;
        self.event = Event::default();
        self.id_changed = None;
        self.long_line = false;
        self.after_cr = false;
        None
    }
}

impl Frame {
    /// Whether the frame carries a JSON-RPC message: always for NDJSON, Content-Length and
    /// json-seq frames; for an SSE event, when its type is `message` (set or by default).
    /// An event of any other type is a non-message event (docs/spec.md §7): pass it on,
    /// count it, never classify it.
    ///
    /// ```
    /// use bytes::BytesMut;
    /// use rpcscan::frame::{Decode, SseDecoder};
    ///
    /// let mut decoder = SseDecoder::new();
    /// let mut buf = BytesMut::from(&b"event: endpoint\ndata: /message?sessionId=1\n\ndata: {}\n\n"[..]);
    /// let endpoint = decoder.decode(&mut buf).unwrap().unwrap();
    /// assert_eq!((endpoint.event(), endpoint.is_message()), (Some("endpoint"), false));
    /// assert!(decoder.decode(&mut buf).unwrap().unwrap().is_message());
    /// ```
    pub fn is_message(&self) -> bool {
        matches!(self.event(), None | Some("message"))
    }
}

fn parse_retry(value: &[u8]) -> Option<u64> {
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

fn utf8_or_lossy(bytes: Bytes) -> Bytes {
    match String::from_utf8_lossy(&bytes) {
        std::borrow::Cow::Borrowed(_) => bytes,
        std::borrow::Cow::Owned(text) => Bytes::from(text),
    }
}

#[cfg(test)]
mod tests {
    use bytes::BytesMut;

    use super::*;

    /// `(event type, is_message)` of every frame of `stream`, fed whole.
    fn events(stream: &[u8]) -> Vec<(Option<String>, bool)> {
        let mut decoder = SseDecoder::new();
        let mut buf = BytesMut::from(stream);
        let mut out = Vec::new();
        while let Some(item) = decoder.decode_eof(&mut buf) {
            let frame = item.unwrap();
            out.push((frame.event().map(str::to_owned), frame.is_message()));
        }
        out
    }

    /// An event's type as the decoder reports it, and whether it carries a message.
    type EventSeen<'a> = (Option<&'a str>, bool);

    #[test]
    fn only_message_events_carry_messages() {
        let cases: &[(&[u8], &[EventSeen])] = &[
            (b"data: {}\n\n", &[(None, true)]),
            (b"event: message\ndata: {}\n\n", &[(Some("message"), true)]),
            (b"event:\ndata: {}\n\n", &[(None, true)]), // empty type: the default
            (b"event: endpoint\ndata: /message?sessionId=abc\n\n", &[(Some("endpoint"), false)]),
            (b"event: Message\ndata: {}\n\n", &[(Some("Message"), false)]), // case matters
            (b"event: message \ndata: {}\n\n", &[(Some("message "), false)]),
            (b"event: ping\ndata: {}\n\ndata: {}\n\n", &[(Some("ping"), false), (None, true)]),
            (b"event: x\nevent: message\ndata: {}\n\n", &[(Some("message"), true)]), // last wins
            (b"event: endpoint\n\n", &[]), // no data: no frame at all
        ];
        for (stream, want) in cases {
            let want: Vec<_> = want.iter().map(|(e, m)| (e.map(str::to_owned), *m)).collect();
            assert_eq!(events(stream), want, "{:?}", String::from_utf8_lossy(stream));
        }
    }

    #[test]
    fn other_framings_always_carry_messages() {
        let frame = Frame::new(bytes::Bytes::from_static(b"{}"), 0, Some(0));
        assert!(frame.is_message());
    }
}
