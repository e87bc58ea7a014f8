//! The binding-neutral half of rpcscan for JavaScript, shared by the Node add-on (`js/napi`)
//! and the WebAssembly module (`js/wasm`).
//!
//! A verdict crosses into JavaScript as a *record*: a fixed run of `f64` slots (kind, reason,
//! offset, and the `start, len` spans of the id, method, tool name, params...) that the
//! package's TypeScript (`js/src/record.ts`) turns into a `Message`. Spans point into the
//! bytes the caller passed, so raw values (`params`, `result`, `id.raw`) are cut from the
//! caller's own buffer and nothing is decoded or copied that JavaScript does not ask for.
//! Both bindings only move bytes and records; every verdict, reason, offset and answer is
//! the library's (docs/spec.md §1–§4, §7).
//!
//! | item | what it is |
//! |---|---|
//! | [`classify`], [`parse_into`], [`slot`] | one message: its kind, or its record |
//! | [`respond`] | `rpcscan respond`'s answer to one message |
//! | [`rewrite_id`] | a message with its id replaced, byte for byte elsewhere |
//! | [`Scanner`], [`frame_slot`] | a byte stream through a framing: frame records |
//! | [`tables`] | the names the records' numbers stand for |
#![deny(missing_docs, unsafe_code)]

use bytes::BytesMut;
use rpcscan::frame::{AnyDecoder, Decode, Frame, FrameError, Framing, NdjsonDecoder};
use rpcscan::{Answer, Id, Invalid, Kind, Message, Parser, Raw, Reason, Str, Validation};

/// The slots of a message record (`RECORD_LEN` numbers). A span is two slots, `start` and
/// `len`, counted in bytes from the start of the buffer the record describes; an absent
/// member has `start = -1`. A string span covers the text between the quotes and has a
/// third slot, its [`text`] class.
pub mod slot {
    /// Index into [`Kind::ALL`](rpcscan::Kind::ALL).
    pub const KIND: usize = 0;
    /// Index into [`Reason::ALL`](rpcscan::Reason::ALL), or -1 for a valid message.
    pub const REASON: usize = 1;
    /// The invalid message's offset (-32700 family), or -1.
    pub const OFFSET: usize = 2;
    /// [`super::id_type`]: 0 no id, 1 integer, 2 string, 3 `null`.
    pub const ID_TYPE: usize = 3;
    /// The id's raw span (quotes included for a string).
    pub const ID: usize = 4;
    /// The [`super::text`] class of a string id's text.
    pub const ID_TEXT: usize = 6;
    /// `method`: span and text class.
    pub const METHOD: usize = 7;
    /// `params.name` of a `tools/call` request: span and text class.
    pub const TOOL: usize = 10;
    /// `params`, raw.
    pub const PARAMS: usize = 13;
    /// `result`, raw.
    pub const RESULT: usize = 15;
    /// `error.code`, raw.
    pub const ERROR_CODE: usize = 17;
    /// `error.message`: span and text class.
    pub const ERROR_MESSAGE: usize = 19;
    /// `error.data`, raw.
    pub const ERROR_DATA: usize = 22;
    /// `error`, the whole object, raw.
    pub const ERROR: usize = 24;
    /// An integer id's value when it is a safe integer (|n| <= 2^53 - 1) written the way
    /// JavaScript prints it (not `-0`), else NaN: the id needs no text to number conversion.
    pub const ID_NUMBER: usize = 26;
    /// `error.code`'s value when it is a safe integer, else NaN.
    pub const ERROR_CODE_NUMBER: usize = 27;
    /// [`super::text_hash`] of the method, the tool name and the error message (or -1): the
    /// package keeps the texts it has made by hash, and checks the bytes before reusing one.
    pub const METHOD_HASH: usize = 28;
    /// See [`METHOD_HASH`].
    pub const TOOL_HASH: usize = 29;
    /// See [`METHOD_HASH`].
    pub const ERROR_MESSAGE_HASH: usize = 30;
}

/// Numbers in a record.
pub const RECORD_LEN: usize = 31;

/// The longest ASCII string that gets a [`text_hash`].
pub const HASHED_TEXT: usize = 64;

/// FNV-1a (32 bits, folded to 30 so it stays a small integer in V8) of an ASCII string
/// without escapes of at most [`HASHED_TEXT`] bytes, else -1.
pub fn text_hash(s: Option<&Str<'_>>) -> f64 {
    let Some(s) = s.filter(|s| !s.has_escapes() && s.raw().len() <= HASHED_TEXT) else {
        return -1.0;
    };
    let mut h: u32 = 0x811c_9dc5;
    for &b in s.raw() {
        if b >= 0x80 {
            return -1.0;
        }
        h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    f64::from((h ^ (h >> 30)) & 0x3fff_ffff)
}

/// The value of an integer literal when JavaScript's `Number` holds it exactly and prints it
/// back the same (not `-0`), else NaN.
fn safe_integer(raw: &[u8]) -> f64 {
    const MAX: i64 = (1 << 53) - 1;
    if raw.len() > 17 || raw == b"-0" {
        return f64::NAN;
    }
    let (negative, digits) = match raw.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, raw),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return f64::NAN;
    }
    let value = digits.iter().fold(0i64, |n, d| n * 10 + i64::from(d - b'0'));
    if value > MAX {
        return f64::NAN;
    }
    (if negative { -value } else { value }) as f64
}

/// The id types of [`slot::ID_TYPE`].
pub mod id_type {
    /// No `id` member (or, for an invalid message, none recovered).
    pub const NONE: f64 = 0.0;
    /// An integer literal of any size.
    pub const INTEGER: f64 = 1.0;
    /// A string.
    pub const STRING: f64 = 2.0;
    /// `null`.
    pub const NULL: f64 = 3.0;
}

/// How JavaScript turns a string's raw bytes into text.
pub mod text {
    /// ASCII without escapes: the bytes are the text.
    pub const ASCII: f64 = 0.0;
    /// UTF-8 without escapes: decode as UTF-8.
    pub const UTF8: f64 = 1.0;
    /// Has escapes: decode as a JSON string (which keeps lone surrogates, as JS strings can).
    pub const ESCAPED: f64 = 2.0;
}

/// `true` → strict validation, `false` → envelope mode (docs/spec.md §6). Strict mode notes
/// `params.name` on its way (the record's tool name then takes no second pass over `params`).
pub fn parser(strict: bool) -> Parser {
    Parser::new()
        .validation(if strict { Validation::Strict } else { Validation::Envelope })
        .note_params_name(true)
}

/// A kind's index in [`Kind::ALL`].
pub fn kind_index(kind: Kind) -> u32 {
    Kind::ALL.iter().position(|k| *k == kind).unwrap_or(4) as u32
}

/// A reason's index in [`Reason::ALL`].
pub fn reason_index(reason: Reason) -> u32 {
    Reason::ALL.iter().position(|r| *r == reason).unwrap_or(0) as u32
}

/// The kind of one message, as an index into [`Kind::ALL`].
pub fn classify(msg: &[u8], strict: bool) -> u32 {
    let validation = if strict { Validation::Strict } else { Validation::Envelope };
    kind_index(Parser::new().validation(validation).classify(msg))
}

/// Where `part` (a slice of `base`) starts in `base`.
fn start_in(base: &[u8], part: &[u8]) -> f64 {
    (part.as_ptr() as usize).wrapping_sub(base.as_ptr() as usize) as f64
}

fn span(rec: &mut [f64], at: usize, base: &[u8], shift: f64, part: Option<&[u8]>) {
    let (start, len) = match part {
        Some(part) => (start_in(base, part) + shift, part.len() as f64),
        None => (-1.0, 0.0),
    };
    rec[at] = start;
    rec[at + 1] = len;
}

fn raw_span(rec: &mut [f64], at: usize, base: &[u8], shift: f64, raw: Option<Raw<'_>>) {
    span(rec, at, base, shift, raw.map(|r| r.as_bytes()));
}

fn text_class(s: &Str<'_>) -> f64 {
    if s.has_escapes() {
        text::ESCAPED
    } else if s.raw().is_ascii() {
        text::ASCII
    } else {
        text::UTF8
    }
}

fn str_span(rec: &mut [f64], at: usize, base: &[u8], shift: f64, s: Option<Str<'_>>) {
    span(rec, at, base, shift, s.map(|s| s.raw()));
    rec[at + 2] = s.as_ref().map_or(text::ASCII, text_class);
}

fn id_slots(rec: &mut [f64], base: &[u8], shift: f64, id: Option<Id<'_>>) {
    rec[slot::ID_TYPE] = match id {
        None => id_type::NONE,
        Some(id) if id.is_integer() => id_type::INTEGER,
        Some(id) if id.is_string() => id_type::STRING,
        Some(_) => id_type::NULL,
    };
    span(rec, slot::ID, base, shift, id.map(|id| id.raw()));
    rec[slot::ID_TEXT] = id.and_then(|id| id.as_str()).as_ref().map_or(text::ASCII, text_class);
    rec[slot::ID_NUMBER] = match id {
        Some(id) if id.is_integer() => safe_integer(id.raw()),
        _ => f64::NAN,
    };
}

/// `msg.mcp().tool_name()` without the rest of `mcp()`'s pass over `params`: `params.name`
/// of a `tools/call` request when it is there once and a string (noted by the scan).
fn tool_name<'a>(msg: &Message<'a>) -> Option<Str<'a>> {
    if msg.kind() != Kind::Request || !msg.method().is_some_and(|m| m == "tools/call") {
        return None;
    }
    msg.params_name().as_str()
}

/// Writes the record of a valid message (spans shifted by `shift`).
fn message_record(rec: &mut [f64], base: &[u8], shift: f64, msg: &Message<'_>) {
    if msg.kind() == Kind::Result {
        result_record(rec, base, shift, msg);
    } else {
        any_record(rec, base, shift, msg);
    }
}

/// [`message_record`] for any kind of valid message.
fn any_record(rec: &mut [f64], base: &[u8], shift: f64, msg: &Message<'_>) {
    rec[slot::KIND] = f64::from(kind_index(msg.kind()));
    rec[slot::REASON] = -1.0;
    rec[slot::OFFSET] = -1.0;
    id_slots(rec, base, shift, msg.id());
    str_span(rec, slot::METHOD, base, shift, msg.method());
    let tool = tool_name(msg);
    str_span(rec, slot::TOOL, base, shift, tool);
    raw_span(rec, slot::PARAMS, base, shift, msg.params());
    raw_span(rec, slot::RESULT, base, shift, msg.result());
    span(rec, slot::ERROR_CODE, base, shift, msg.error_code().map(|c| c.raw()));
    str_span(rec, slot::ERROR_MESSAGE, base, shift, msg.error_message());
    raw_span(rec, slot::ERROR_DATA, base, shift, msg.error_data());
    raw_span(rec, slot::ERROR, base, shift, msg.error());
    rec[slot::ERROR_CODE_NUMBER] = msg.error_code().map_or(f64::NAN, |c| safe_integer(c.raw()));
    rec[slot::METHOD_HASH] = text_hash(msg.method().as_ref());
    rec[slot::TOOL_HASH] = text_hash(tool.as_ref());
    rec[slot::ERROR_MESSAGE_HASH] = text_hash(msg.error_message().as_ref());
}

/// [`message_record`] of a result: the same record in less code. A result has no method
/// (that is `method_with_response`), so no tool name, and no error member (that is
/// `result_and_error`), so no error code, message or data: those slots are written as
/// for `None`, without the calls that would find them so. Results carry the largest
/// messages (images, resources), where the WebAssembly build's `parse` runs short of L1
/// instruction cache (docs/performance.md).
fn result_record(rec: &mut [f64], base: &[u8], shift: f64, msg: &Message<'_>) {
    rec[slot::KIND] = f64::from(kind_index(Kind::Result));
    rec[slot::REASON] = -1.0;
    rec[slot::OFFSET] = -1.0;
    id_slots(rec, base, shift, msg.id());
    no_method_or_error(rec, base, shift);
    raw_span(rec, slot::PARAMS, base, shift, msg.params());
    raw_span(rec, slot::RESULT, base, shift, msg.result());
}

/// The slots of a record without a method (so without a tool name) and without an error
/// member, written as for `None`: a result's and an invalid message's.
#[inline]
fn no_method_or_error(rec: &mut [f64], base: &[u8], shift: f64) {
    for at in [slot::METHOD, slot::TOOL, slot::ERROR_MESSAGE] {
        str_span(rec, at, base, shift, None);
    }
    for at in [slot::ERROR_CODE, slot::ERROR_DATA, slot::ERROR] {
        span(rec, at, base, shift, None);
    }
    rec[slot::ERROR_CODE_NUMBER] = f64::NAN;
    for at in [slot::METHOD_HASH, slot::TOOL_HASH, slot::ERROR_MESSAGE_HASH] {
        rec[at] = -1.0;
    }
}

/// Writes the record of an invalid message: its reason, offset and recovered id.
fn invalid_record(rec: &mut [f64], base: &[u8], shift: f64, inv: &Invalid<'_>) {
    rec[slot::KIND] = f64::from(kind_index(Kind::Invalid));
    rec[slot::REASON] = f64::from(reason_index(inv.reason()));
    rec[slot::OFFSET] = inv.offset().map_or(-1.0, |o| o as f64);
    id_slots(rec, base, shift, inv.id());
    no_method_or_error(rec, base, shift);
    for at in [slot::PARAMS, slot::RESULT] {
        span(rec, at, base, shift, None);
    }
}

/// Scans `msg` and writes its record into `rec[..RECORD_LEN]`. Returns `false` (and writes
/// nothing) when `rec` is shorter than that.
pub fn parse_into(msg: &[u8], strict: bool, rec: &mut [f64]) -> bool {
    let Some(rec) = rec.get_mut(..RECORD_LEN) else {
        return false;
    };
    // A borrow of the result: matching on the value moved the message out of it, which the
    // wasm32 build did with a `memory.copy` (a call into C under V8) on every message.
    match &parser(strict).parse(msg) {
        Ok(m) => message_record(rec, msg, 0.0, m),
        Err(inv) => invalid_record(rec, msg, 0.0, inv),
    }
    true
}

/// What `rpcscan respond` answers to one message (cli/src/respond.rs, docs/spec.md §4): the
/// -32700 / -32600 error response for an invalid message (with the recovered id or `null`),
/// -32601 for a request whose method `supported` refuses, and `None` for a supported request,
/// a notification, a result or an error.
pub fn respond(msg: &[u8], strict: bool, supported: impl Fn(&Str<'_>) -> bool) -> Option<Vec<u8>> {
    match parser(strict).parse(msg) {
        Err(inv) => Some(inv.response().to_vec()),
        Ok(m) => match m.answer(|method| supported(method)) {
            Answer::Reply(reply) => Some(reply.to_vec()),
            Answer::Serve | Answer::Nothing => None,
        },
    }
}

/// `true` when `method` is one of `supported`.
pub fn is_supported<S: AsRef<str>>(method: &Str<'_>, supported: &[S]) -> bool {
    supported.iter().any(|s| *method == s.as_ref())
}

/// Why [`rewrite_id`] refused its new id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadNewId;

impl std::fmt::Display for BadNewId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the new id must be a JSON integer literal or a JSON string")
    }
}

impl std::error::Error for BadNewId {}

/// `true` when `raw` is one JSON integer literal or one JSON string (an id a request may carry).
pub fn is_id_literal(raw: &[u8]) -> bool {
    let mut probe = Vec::with_capacity(raw.len() + 40);
    probe.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"result\":0,\"id\":");
    probe.extend_from_slice(raw);
    probe.push(b'}');
    match Parser::new().parse(&probe) {
        Ok(m) => m.id().is_some_and(|id| !id.is_null() && id.raw() == raw),
        Err(_) => false,
    }
}

/// `msg` with its id replaced by `new_id` (raw JSON: an integer literal or a string with its
/// quotes), every other byte kept (`rpcscan::rewrite::write_with_id`). `Ok(None)` when `msg`
/// is invalid or has no `id` member; `Err` when `new_id` is not an id literal.
pub fn rewrite_id(msg: &[u8], strict: bool, new_id: &[u8]) -> Result<Option<Vec<u8>>, BadNewId> {
    if !is_id_literal(new_id) {
        return Err(BadNewId);
    }
    let Ok(m) = parser(strict).parse(msg) else {
        return Ok(None);
    };
    let mut out = Vec::with_capacity(msg.len() + new_id.len());
    Ok(rpcscan::rewrite::write_with_id(&m, new_id, &mut out).then_some(out))
}

/// The slots of a frame record (`FRAME_LEN` numbers): the frame, then its message record.
pub mod frame_slot {
    /// 0: a frame (its message record follows); 1: a bad frame, reported and skipped.
    pub const TYPE: usize = 0;
    /// Stream offset where the frame (or bad frame) starts.
    pub const OFFSET: usize = 1;
    /// The message's bytes in the output buffer (a frame).
    pub const BYTES: usize = 2;
    /// Stream offset of the message's first byte, or -1 (an SSE event joined from lines).
    pub const BODY_OFFSET: usize = 4;
    /// SSE `event:` text in the output buffer (UTF-8), or -1.
    pub const EVENT: usize = 5;
    /// SSE last event id after this event, in the output buffer (UTF-8), or -1.
    pub const LAST_EVENT_ID: usize = 7;
    /// A bad frame: its error kind's name (`too_large`...), in the output buffer.
    pub const ERROR_KIND: usize = 9;
    /// A bad frame: the error's text, in the output buffer.
    pub const ERROR_TEXT: usize = 11;
    /// A bad frame: how many stream bytes it spans.
    pub const ERROR_LEN: usize = 13;
    /// A bad frame: index into `Reason::ALL` (`too_large` or `syntax`).
    pub const ERROR_REASON: usize = 14;
    /// A bad NDJSON line over the size limit: the id recovered as it streamed past, a span
    /// in the output buffer, and its type ([`super::id_type`]).
    pub const ERROR_ID: usize = 15;
    /// The type of [`ERROR_ID`].
    pub const ERROR_ID_TYPE: usize = 17;
    /// Where the message record starts.
    pub const RECORD: usize = 18;
}

/// Numbers in a frame record.
pub const FRAME_LEN: usize = frame_slot::RECORD + RECORD_LEN;

/// The framing a [`Scanner`] reads: one of the four, or decided by the first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FramingChoice {
    /// `Framing::detect` on the first bytes (docs/spec.md §7).
    Auto,
    /// One of the four.
    Known(Framing),
}

impl FramingChoice {
    /// `auto`, `ndjson`, `content-length`, `sse` or `json-seq`.
    pub fn from_name(name: &str) -> Option<FramingChoice> {
        if name == "auto" {
            return Some(FramingChoice::Auto);
        }
        name.parse().ok().map(FramingChoice::Known)
    }
}

/// A byte stream cut into frames and scanned: bytes go in with [`Scanner::push`] (any
/// chunking) and [`Scanner::finish`] (end of input), and each call leaves its frames in
/// [`Scanner::out`] (their bytes, concatenated) and [`Scanner::records`] (`FRAME_LEN`
/// numbers per frame, spans into `out`). Bad frames are records too; nothing is fatal.
pub struct Scanner {
    framing: FramingChoice,
    max: usize,
    decoder: Option<AnyDecoder>,
    buf: BytesMut,
    parser: Parser,
    /// The bytes of this call's frames, and the texts its records point at.
    pub out: Vec<u8>,
    /// This call's frame records.
    pub records: Vec<f64>,
}

/// Bytes `auto` waits for before deciding, unless a line ends first or the input does.
const DETECT_BYTES: usize = 64;

impl Scanner {
    /// A scanner for `framing` with a maximum message size (`rpcscan::frame`'s decoders).
    pub fn new(framing: FramingChoice, max_message_size: usize, strict: bool) -> Scanner {
        Scanner {
            framing,
            max: max_message_size,
            decoder: None,
            buf: BytesMut::new(),
            parser: parser(strict),
            out: Vec::new(),
            records: Vec::new(),
        }
    }

    /// The framing in use, once known (`auto` decides on the first line or 64 bytes).
    pub fn framing(&self) -> Option<Framing> {
        match self.framing {
            FramingChoice::Known(f) => Some(f),
            FramingChoice::Auto => self.decoder.as_ref().map(AnyDecoder::framing),
        }
    }

    fn decoder(&mut self, at_end: bool) -> Option<&mut AnyDecoder> {
        if self.decoder.is_none() {
            let framing = match self.framing {
                FramingChoice::Known(f) => f,
                FramingChoice::Auto => {
                    let decided = at_end
                        || self.buf.len() >= DETECT_BYTES
                        || self.buf.contains(&b'\n')
                        || self.buf.first() == Some(&0x1E);
                    if !decided {
                        return None;
                    }
                    Framing::detect(&self.buf)
                }
            };
            self.decoder = Some(match framing {
                Framing::Ndjson => AnyDecoder::Ndjson(
                    NdjsonDecoder::new().max_message_size(self.max).recover_ids(),
                ),
                other => AnyDecoder::new(other).max_message_size(self.max),
            });
        }
        self.decoder.as_mut()
    }

    /// Appends `chunk` and records every frame it completes (replacing the last call's).
    pub fn push(&mut self, chunk: &[u8]) {
        self.out.clear();
        self.records.clear();
        self.buf.extend_from_slice(chunk);
        self.drain(false);
    }

    /// End of input: records what is left (NDJSON's last line without `\n`, an error for a
    /// truncated Content-Length frame...), replacing the last call's frames.
    pub fn finish(&mut self) {
        self.out.clear();
        self.records.clear();
        self.drain(true);
    }

    fn drain(&mut self, at_end: bool) {
        if self.decoder(at_end).is_none() {
            return;
        }
        let Some(mut decoder) = self.decoder.take() else {
            return;
        };
        let mut buf = std::mem::take(&mut self.buf);
        loop {
            let item = if at_end { decoder.decode_eof(&mut buf) } else { decoder.decode(&mut buf) };
            match item {
                None => break,
                Some(Ok(frame)) => self.frame(&frame),
                Some(Err(error)) => {
                    let recovered = match &decoder {
                        AnyDecoder::Ndjson(d) => d.recovered_id(),
                        _ => None,
                    };
                    self.error(&error, recovered);
                }
            }
        }
        self.decoder = Some(decoder);
        self.buf = buf;
    }

    fn put(&mut self, at: usize, text: Option<&[u8]>) {
        let (start, len) = match text {
            Some(text) => {
                let start = self.out.len() as f64;
                self.out.extend_from_slice(text);
                (start, text.len() as f64)
            }
            None => (-1.0, 0.0),
        };
        let base = self.records.len() - FRAME_LEN;
        self.records[base + at] = start;
        self.records[base + at + 1] = len;
    }

    fn frame(&mut self, frame: &Frame) {
        let base = self.records.len();
        self.records.resize(base + FRAME_LEN, -1.0);
        let start = self.out.len();
        self.out.extend_from_slice(frame.bytes());
        {
            let rec = &mut self.records[base..];
            rec[frame_slot::TYPE] = 0.0;
            rec[frame_slot::OFFSET] = frame.offset() as f64;
            rec[frame_slot::BYTES] = start as f64;
            rec[frame_slot::BYTES + 1] = frame.bytes().len() as f64;
            rec[frame_slot::BODY_OFFSET] = frame.body_offset().map_or(-1.0, |o| o as f64);
            let bytes = &self.out[start..];
            let rec = &mut rec[frame_slot::RECORD..];
            match self.parser.parse(bytes) {
                Ok(m) => message_record(rec, bytes, start as f64, &m),
                Err(inv) => invalid_record(rec, bytes, start as f64, &inv),
            }
        }
        self.put(frame_slot::EVENT, frame.event().map(str::as_bytes));
        self.put(frame_slot::LAST_EVENT_ID, frame.last_event_id().map(str::as_bytes));
    }

    fn error(&mut self, error: &FrameError, recovered: Option<Id<'_>>) {
        let base = self.records.len();
        self.records.resize(base + FRAME_LEN, -1.0);
        {
            let rec = &mut self.records[base..];
            rec[frame_slot::TYPE] = 1.0;
            rec[frame_slot::OFFSET] = error.offset() as f64;
            rec[frame_slot::ERROR_LEN] = error.len() as f64;
            rec[frame_slot::ERROR_REASON] = f64::from(reason_index(error.reason()));
            rec[frame_slot::ERROR_ID_TYPE] = id_type::NONE;
        }
        self.put(frame_slot::ERROR_KIND, Some(error.kind().as_str().as_bytes()));
        self.put(frame_slot::ERROR_TEXT, Some(error.to_string().as_bytes()));
        if let Some(id) = recovered.filter(|id| !id.is_null()) {
            self.put(frame_slot::ERROR_ID, Some(id.raw()));
            self.records[base + frame_slot::ERROR_ID_TYPE] =
                if id.is_integer() { id_type::INTEGER } else { id_type::STRING };
        }
    }
}

/// The names behind the records' numbers, as one JSON text (read once by the package):
/// `{"kinds": [...], "reasons": [[name, code, description]...], "record": N, "frame": N,
/// "kernel_level": name}` (the level's name as `rpcscan::kernel_level` gives it).
pub fn tables() -> String {
    let mut s = String::from("{\"kinds\":[");
    for (i, k) in Kind::ALL.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&format!("\"{}\"", k.as_str()));
    }
    s.push_str("],\"reasons\":[");
    for (i, r) in Reason::ALL.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        let mut description = Vec::new();
        rpcscan::response::write_json_string(&mut description, &r.to_string());
        s.push_str(&format!(
            "[\"{}\",{},{}]",
            r.as_str(),
            r.code(),
            String::from_utf8_lossy(&description)
        ));
    }
    s.push_str(&format!(
        "],\"record\":{RECORD_LEN},\"frame\":{FRAME_LEN},\"kernel_level\":\"{}\"}}",
        rpcscan::kernel_level()
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(msg: &[u8]) -> Vec<f64> {
        let mut rec = vec![0.0; RECORD_LEN];
        assert!(parse_into(msg, true, &mut rec));
        rec
    }

    fn cut<'a>(msg: &'a [u8], rec: &[f64], at: usize) -> Option<&'a [u8]> {
        (rec[at] >= 0.0).then(|| &msg[rec[at] as usize..(rec[at] + rec[at + 1]) as usize])
    }

    /// `result_record` writes what `any_record` writes for the same result, bit for bit
    /// (NaN included), in strict and envelope mode.
    #[test]
    fn a_result_record_is_the_general_one() {
        let results: [&[u8]; 6] = [
            br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}]}}"#,
            br#"{"jsonrpc":"2.0","id":"a\u0062","result":null}"#,
            br#"{"jsonrpc":"2.0","id":9007199254740993,"result":[1,2]}"#,
            br#"{"id":-7,"result":"\u00e9","jsonrpc":"2.0","params":{"name":"x"}}"#,
            br#"{"jsonrpc":"2.0","id":"\u00e9t\u00e9","result":{},"_meta":{}}"#,
            br#"{"jsonrpc":"2.0","result":true,"id":0}"#,
        ];
        let mut checked = 0;
        for msg in results {
            for strict in [true, false] {
                let Ok(m) = parser(strict).parse(msg) else {
                    continue;
                };
                assert_eq!(m.kind(), Kind::Result, "{}", String::from_utf8_lossy(msg));
                let (mut fast, mut general) = ([0.0; RECORD_LEN], [1.0; RECORD_LEN]);
                result_record(&mut fast, msg, 3.0, &m);
                any_record(&mut general, msg, 3.0, &m);
                let bits = |r: &[f64; RECORD_LEN]| r.map(f64::to_bits);
                assert_eq!(bits(&fast), bits(&general), "{}", String::from_utf8_lossy(msg));
                checked += 1;
            }
        }
        assert!(checked >= 10, "only {checked} results parsed");
    }

    #[test]
    fn a_request_record_spans_its_members() {
        let msg = br#"{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/call","params":{"name":"m\u00e9t\u00e9o"}}"#;
        let rec = record(msg);
        assert_eq!(rec[slot::KIND], 0.0);
        assert_eq!(rec[slot::REASON], -1.0);
        assert_eq!(rec[slot::ID_TYPE], id_type::INTEGER);
        assert_eq!(cut(msg, &rec, slot::ID), Some(&b"9007199254740993"[..]));
        assert_eq!(cut(msg, &rec, slot::METHOD), Some(&b"tools/call"[..]));
        assert_eq!(rec[slot::METHOD + 2], text::ASCII);
        assert_eq!(cut(msg, &rec, slot::TOOL), Some(&br"m\u00e9t\u00e9o"[..]));
        assert_eq!(rec[slot::TOOL + 2], text::ESCAPED);
        assert_eq!(cut(msg, &rec, slot::PARAMS), Some(&br#"{"name":"m\u00e9t\u00e9o"}"#[..]));
        assert_eq!(cut(msg, &rec, slot::RESULT), None);
    }

    #[test]
    fn an_invalid_record_has_reason_offset_and_recovered_id() {
        let msg = r#"{"jsonrpc":"2.0","id":"é","method":5}"#.as_bytes();
        let rec = record(msg);
        assert_eq!(rec[slot::KIND], 4.0);
        assert_eq!(Reason::ALL[rec[slot::REASON] as usize], Reason::BadMethod);
        assert_eq!(rec[slot::OFFSET], -1.0);
        assert_eq!(cut(msg, &rec, slot::ID), Some("\"é\"".as_bytes()));
        assert_eq!(rec[slot::ID_TEXT], text::UTF8);
        let rec = record(b"{\"a\":}");
        assert_eq!(Reason::ALL[rec[slot::REASON] as usize], Reason::Syntax);
        assert_eq!(rec[slot::OFFSET], 5.0);
        assert_eq!(rec[slot::ID_TYPE], id_type::NONE);
    }

    #[test]
    fn safe_integers_are_numbers_in_the_record() {
        for (raw, want) in [
            ("42", 42.0),
            ("-7", -7.0),
            ("0", 0.0),
            ("9007199254740991", 9_007_199_254_740_991.0),
            ("-9007199254740991", -9_007_199_254_740_991.0),
        ] {
            assert_eq!(safe_integer(raw.as_bytes()), want, "{raw}");
        }
        for raw in ["9007199254740992", "-0", "18446744073709551617", "", "-", "1.5", "1e3"] {
            assert!(safe_integer(raw.as_bytes()).is_nan(), "{raw}");
        }
        let msg =
            br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#;
        let rec = record(msg);
        assert_eq!((rec[slot::ID_NUMBER], rec[slot::ERROR_CODE_NUMBER]), (1.0, -32601.0));
        assert!(rec[slot::ERROR_MESSAGE_HASH] >= 0.0);
        assert_eq!(rec[slot::METHOD_HASH], -1.0);
        assert!(record(br#"{"jsonrpc":"2.0","id":-0,"method":"m"}"#)[slot::ID_NUMBER].is_nan());
    }

    #[test]
    fn only_short_plain_ascii_texts_are_hashed() {
        fn m(json: &str) -> f64 {
            parser(true).parse(json.as_bytes()).map_or(-2.0, |m| text_hash(m.method().as_ref()))
        }
        let a = m(r#"{"jsonrpc":"2.0","method":"tools/call"}"#);
        assert!(a >= 0.0 && a < f64::from(1u32 << 30));
        assert_eq!(m(r#"{"jsonrpc":"2.0","method":"tools\/call"}"#), -1.0);
        assert_eq!(m(r#"{"jsonrpc":"2.0","method":"outils/é"}"#), -1.0);
        let long = format!(r#"{{"jsonrpc":"2.0","method":"{}"}}"#, "x".repeat(HASHED_TEXT + 1));
        assert_eq!(m(&long), -1.0);
    }

    #[test]
    fn the_tool_name_is_the_libraries() {
        for json in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"arguments":{"name":"x"},"name":"b"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"b"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":1}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1]}"#,
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"a"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"a"}}"#,
        ] {
            for strict in [true, false] {
                let m = parser(strict).parse(json.as_bytes()).unwrap();
                let want = m.mcp().tool_name().map(|s| s.raw());
                assert_eq!(tool_name(&m).map(|s| s.raw()), want, "{json}");
            }
        }
    }

    #[test]
    fn a_short_record_buffer_is_refused() {
        assert!(!parse_into(b"{}", true, &mut [0.0; RECORD_LEN - 1]));
    }

    #[test]
    fn respond_answers_as_the_cli() {
        let yes = |m: &Str<'_>| is_supported(m, &["tools/list"]);
        assert_eq!(respond(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#, true, yes), None);
        assert_eq!(
            respond(br#"{"jsonrpc":"2.0","id":"q","method":"x"}"#, true, yes).unwrap(),
            br#"{"jsonrpc": "2.0", "id": "q", "error": {"code": -32601, "message": "Method not found"}}"#
        );
        assert_eq!(
            respond(b"", true, yes).unwrap(),
            br#"{"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}"#
        );
    }

    #[test]
    fn rewrite_id_keeps_every_other_byte() {
        let msg = br#"{"jsonrpc": "2.0", "id" : -0 , "method":"m"}"#;
        assert_eq!(
            rewrite_id(msg, true, b"\"x-7\"").unwrap().unwrap(),
            br#"{"jsonrpc": "2.0", "id" : "x-7" , "method":"m"}"#
        );
        assert_eq!(rewrite_id(br#"{"jsonrpc":"2.0","method":"m"}"#, true, b"1"), Ok(None));
        assert_eq!(rewrite_id(b"{", true, b"1"), Ok(None));
        for bad in [&b"1.5"[..], b"null", b"1 ", b"\"a", b"1,\"id\":2", b"{}", b""] {
            assert_eq!(rewrite_id(msg, true, bad), Err(BadNewId), "{bad:?}");
        }
    }

    #[test]
    fn scanner_records_frames_and_bad_frames_across_chunks() {
        let mut s = Scanner::new(FramingChoice::Auto, 40, true);
        s.push(b"{\"jsonrpc\":\"2.0\",\"method\":\"a\"}");
        assert!(s.records.is_empty());
        s.push(b"\n{\"id\":\"big\",\"result\":\"0123456789012345678901234567890\"}\nnot json\n");
        assert_eq!(s.framing(), Some(Framing::Ndjson));
        assert_eq!(s.records.len(), 3 * FRAME_LEN);
        let r = &s.records[..];
        assert_eq!(r[frame_slot::TYPE], 0.0);
        assert_eq!(r[frame_slot::RECORD + slot::KIND], 1.0);
        let e = &r[FRAME_LEN..];
        assert_eq!(e[frame_slot::TYPE], 1.0);
        assert_eq!(e[frame_slot::OFFSET], 31.0);
        let id = e[frame_slot::ERROR_ID] as usize;
        assert_eq!(&s.out[id..id + 5], b"\"big\"");
        let third = &r[2 * FRAME_LEN..];
        assert_eq!(third[frame_slot::RECORD + slot::KIND], 4.0);
        let start = third[frame_slot::BYTES] as usize;
        assert_eq!(&s.out[start..start + 8], b"not json");
        s.finish();
        assert!(s.records.is_empty());
    }

    #[test]
    fn tables_is_json_with_every_name() {
        let t = tables();
        assert!(t.starts_with("{\"kinds\":[\"request\""));
        assert!(t.contains("[\"bad_id\",-32600,"));
        let level = rpcscan::kernel_level();
        assert!(t.ends_with(&format!("\"frame\":{FRAME_LEN},\"kernel_level\":\"{level}\"}}")));
    }
}
