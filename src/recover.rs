//! Streaming id recovery: the top-level `id` of a message too large to keep, found while it
//! streams past in chunks, in constant memory.
//!
//! A gateway that refuses a message over its size limit (docs/spec.md §7: the framing
//! reports it as `too_large` and discards it unbuffered) still owes the sender an answer
//! carrying the request's id, or the request hangs. [`IdRecovery`] is an envelope-level scan
//! (docs/spec.md §6) that carries its state from one chunk to the next: it follows the
//! top-level object's members, skips every value structurally (strings, nesting) without
//! keeping it, and keeps only the raw bytes of the `id` value, up to [`MAX_ID_LEN`].
//!
//! ```
//! use rpcscan::recover::IdRecovery;
//!
//! let mut recovery = IdRecovery::new();
//! for chunk in [&br#"{"jsonrpc":"2.0","result":{"blob":"AAAA"#[..], b"AAAA\"},\"i", b"d\":\"a\\u0062\"}"] {
//!     recovery.feed(chunk);
//! }
//! let id = recovery.finish().unwrap();
//! assert_eq!(id.raw(), br#""a\u0062""#); // verbatim, ready to echo
//! assert!(id.is_string());
//! assert!(recovery.saw_result() && !recovery.saw_method());
//! ```
//!
//! **What is recovered.** The id follows docs/spec.md §4: the message must be an object with
//! exactly one top-level `id` member (names compared after unescaping, so `"i\u0064"` is
//! one), whose value is a string, an integer literal, or `null`. On every message that is
//! JSON (valid, or invalid with -32600) the answer equals the scanner's: [`Message::id`]
//! for a valid one, [`Invalid::id`] (or `null`) for an invalid one. The scan does not
//! validate what it skips (UTF-8, escapes, numbers nested in values): on a message that is
//! not JSON it may still find an id, where the scanner answers `null`; it gives up (`None`)
//! on the first structural error it does see.
//!
//! **Cost.** A handful of bytes of state plus the id buffer; strings are crossed with
//! `memchr`, so a large base64 payload costs little more than reading it.
//!
//! [`Message::id`]: crate::Message::id
//! [`Invalid::id`]: crate::Invalid::id

use core::fmt;

use memchr::memchr2;

use crate::id::{Id, IdKind};

/// The longest id value kept (raw bytes, quotes included); a longer one is not recovered.
pub const MAX_ID_LEN: usize = 128;

/// The longest member name decoded: enough for `method` and `result`.
const NAME_LEN: usize = 6;

/// Where the scan is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Before the top-level `{`.
    Start,
    /// After `{` (`first`) or `,`: a member name or, after `{` only, `}`.
    BeforeName { first: bool },
    /// Inside a member name.
    Name,
    /// After a member name: `:`.
    AfterName,
    /// After `:`: the value.
    BeforeValue,
    /// Inside a top-level string value.
    Str,
    /// Inside a number or literal value.
    Scalar,
    /// Inside a nested object or array value, `depth` containers deep.
    Nested { depth: u32, in_string: bool },
    /// After a member's value: `,` or `}`.
    AfterValue,
    /// After the top-level `}`: only whitespace may follow.
    Done,
    /// A structural error: nothing is recovered.
    Failed,
}

/// The escape state inside a string being crossed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Escape {
    None,
    /// After `\`.
    Backslash,
    /// After `\u` and `n` hex digits, with their value so far.
    Unicode {
        n: u8,
        value: u16,
    },
}

/// The member name being decoded (only short names matter: `id`, `method`, `result`,
/// `error`).
#[derive(Clone, Copy, Debug)]
struct Name {
    bytes: [u8; NAME_LEN],
    len: u8,
    /// Longer than [`NAME_LEN`] or holding a character that no name we look for has.
    other: bool,
}

impl Name {
    const EMPTY: Name = Name { bytes: [0; NAME_LEN], len: 0, other: false };

    fn push(&mut self, b: u8) {
        match self.bytes.get_mut(usize::from(self.len)) {
            Some(slot) if !self.other => {
                *slot = b;
                self.len += 1;
            }
            _ => self.other = true,
        }
    }

    fn is(&self, name: &[u8]) -> bool {
        !self.other && self.bytes.get(..usize::from(self.len)) == Some(name)
    }
}

/// The member whose value is being crossed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Member {
    Id,
    Other,
}

/// A streaming scan for a message's top-level `id`: feed it the message in chunks of any
/// size, then [`finish`](IdRecovery::finish). See the [module docs](self).
#[derive(Clone)]
pub struct IdRecovery {
    state: State,
    escape: Escape,
    name: Name,
    member: Member,
    /// Top-level `id` members seen.
    ids: u8,
    /// The raw bytes of the (last) `id` value, while they fit.
    id: [u8; MAX_ID_LEN],
    id_len: usize,
    /// The `id` value did not fit, or is an object or array.
    id_lost: bool,
    method: bool,
    result: bool,
    error: bool,
}

impl Default for IdRecovery {
    fn default() -> Self {
        IdRecovery::new()
    }
}

impl fmt::Debug for IdRecovery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IdRecovery")
            .field("state", &self.state)
            .field("ids", &self.ids)
            .field("id", &String::from_utf8_lossy(self.id.get(..self.id_len).unwrap_or_default()))
            .finish_non_exhaustive()
    }
}

impl IdRecovery {
    /// A scan at the start of a message.
    pub const fn new() -> Self {
        IdRecovery {
            state: State::Start,
            escape: Escape::None,
            name: Name::EMPTY,
            member: Member::Other,
            ids: 0,
            id: [0; MAX_ID_LEN],
            id_len: 0,
            id_lost: false,
            method: false,
            result: false,
            error: false,
        }
    }

    /// Starts over, for the next message.
    pub fn reset(&mut self) {
        *self = IdRecovery::new();
    }

    /// `true` once the scan has given up on a structural error (more bytes change nothing).
    pub fn failed(&self) -> bool {
        self.state == State::Failed
    }

    /// `true` when a top-level `method` member was seen (a request or a notification).
    pub fn saw_method(&self) -> bool {
        self.method
    }

    /// `true` when a top-level `result` member was seen.
    pub fn saw_result(&self) -> bool {
        self.result
    }

    /// `true` when a top-level `error` member was seen.
    pub fn saw_error(&self) -> bool {
        self.error
    }

    /// Scans the next chunk of the message.
    pub fn feed(&mut self, chunk: &[u8]) {
        let mut i = 0;
        while let Some(&b) = chunk.get(i) {
            match self.state {
                State::Failed => return,
                // Bulk paths: most bytes of a large message are inside strings.
                State::Str | State::Name | State::Nested { in_string: true, .. }
                    if self.escape == Escape::None =>
                {
                    let rest = chunk.get(i..).unwrap_or_default();
                    let skip = memchr2(b'"', b'\\', rest).unwrap_or(rest.len());
                    if skip > 0 {
                        let run = rest.get(..skip).unwrap_or_default();
                        match self.state {
                            State::Str => self.keep_all(run),
                            State::Name => run.iter().for_each(|&c| self.name.push(c)),
                            _ => {}
                        }
                        i += skip;
                        continue;
                    }
                    self.step(b);
                }
                _ => self.step(b),
            }
            i += 1;
        }
    }

    /// The recovered id once the whole message was fed: `None` when there is no single
    /// top-level `id` member that is a string, an integer literal or `null`, when it was
    /// longer than [`MAX_ID_LEN`], or when the scan met a structural error or the message
    /// ended early.
    pub fn finish(&self) -> Option<Id<'_>> {
        if self.state != State::Done || self.ids != 1 || self.id_lost {
            return None;
        }
        let raw = self.id.get(..self.id_len)?;
        let kind = match raw.first()? {
            b'"' => IdKind::String { escaped: memchr::memchr(b'\\', raw).is_some() },
            b'n' if raw == b"null" => IdKind::Null,
            b'-' | b'0'..=b'9' if is_integer(raw) => IdKind::Integer,
            _ => return None,
        };
        Some(Id::new(raw, kind))
    }

    fn keep(&mut self, b: u8) {
        if self.member != Member::Id {
            return;
        }
        match self.id.get_mut(self.id_len) {
            Some(slot) => {
                *slot = b;
                self.id_len += 1;
            }
            None => self.id_lost = true,
        }
    }

    fn keep_all(&mut self, run: &[u8]) {
        if self.member != Member::Id {
            return;
        }
        let end = self.id_len + run.len();
        match self.id.get_mut(self.id_len..end) {
            Some(slots) => {
                slots.copy_from_slice(run);
                self.id_len = end;
            }
            None => self.id_lost = true,
        }
    }

    /// Crosses one string byte; returns `true` at the closing quote.
    fn string_byte(&mut self, b: u8) -> bool {
        match self.escape {
            Escape::None => match b {
                b'"' => return true,
                b'\\' => self.escape = Escape::Backslash,
                _ => {}
            },
            Escape::Backslash => {
                self.escape =
                    if b == b'u' { Escape::Unicode { n: 0, value: 0 } } else { Escape::None };
            }
            Escape::Unicode { n, value } => {
                let digit = (b as char).to_digit(16).unwrap_or(0) as u16;
                let value = value.wrapping_mul(16).wrapping_add(digit);
                self.escape =
                    if n == 3 { Escape::None } else { Escape::Unicode { n: n + 1, value } };
            }
        }
        false
    }

    /// A byte of a member name: decodes the simple escapes and `\uXXXX` below 0x80 (no
    /// name we look for needs more), marks anything else as some other name.
    fn name_byte(&mut self, b: u8) {
        match self.escape {
            Escape::None => match b {
                b'"' => self.state = State::AfterName,
                b'\\' => self.escape = Escape::Backslash,
                _ => self.name.push(b),
            },
            Escape::Backslash => {
                if b == b'u' {
                    self.escape = Escape::Unicode { n: 0, value: 0 };
                } else {
                    // `\"`, `\\`, `\/`, `\n`, ...: none is in a name we look for.
                    self.name.other = true;
                    self.escape = Escape::None;
                }
            }
            Escape::Unicode { n, value } => {
                let digit = (b as char).to_digit(16).unwrap_or(0) as u16;
                let value = value.wrapping_mul(16).wrapping_add(digit);
                if n == 3 {
                    self.escape = Escape::None;
                    match u8::try_from(value) {
                        Ok(c) if c.is_ascii_lowercase() => self.name.push(c),
                        _ => self.name.other = true,
                    }
                } else {
                    self.escape = Escape::Unicode { n: n + 1, value };
                }
            }
        }
    }

    fn step(&mut self, b: u8) {
        let ws = matches!(b, b' ' | b'\t' | b'\n' | b'\r');
        self.state = match self.state {
            State::Start if ws => State::Start,
            State::Start if b == b'{' => State::BeforeName { first: true },
            State::BeforeName { first } if ws => State::BeforeName { first },
            State::BeforeName { .. } if b == b'"' => {
                self.name = Name::EMPTY;
                State::Name
            }
            State::BeforeName { first: true } if b == b'}' => State::Done,
            State::Name => {
                self.name_byte(b);
                return;
            }
            State::AfterName if ws => State::AfterName,
            State::AfterName if b == b':' => {
                self.member = Member::Other;
                if self.name.is(b"id") {
                    self.member = Member::Id;
                    self.ids = self.ids.saturating_add(1);
                    self.id_len = 0;
                    self.id_lost = false;
                } else if self.name.is(b"method") {
                    self.method = true;
                } else if self.name.is(b"result") {
                    self.result = true;
                } else if self.name.is(b"error") {
                    self.error = true;
                }
                State::BeforeValue
            }
            State::BeforeValue if ws => State::BeforeValue,
            State::BeforeValue => match b {
                b'"' => {
                    self.keep(b);
                    State::Str
                }
                b'{' | b'[' => {
                    if self.member == Member::Id {
                        self.id_lost = true;
                    }
                    State::Nested { depth: 1, in_string: false }
                }
                b',' | b'}' | b']' | b':' => State::Failed,
                _ => {
                    self.keep(b);
                    State::Scalar
                }
            },
            State::Str => {
                self.keep(b);
                if self.string_byte(b) {
                    State::AfterValue
                } else {
                    State::Str
                }
            }
            State::Scalar => match b {
                b',' | b'}' => return self.after_value(b),
                _ if ws => State::AfterValue,
                b'"' | b'{' | b'[' | b']' | b':' => State::Failed,
                _ => {
                    self.keep(b);
                    State::Scalar
                }
            },
            State::Nested { depth, in_string: true } => {
                State::Nested { depth, in_string: !self.string_byte(b) }
            }
            State::Nested { depth, .. } => match b {
                b'"' => State::Nested { depth, in_string: true },
                b'{' | b'[' => State::Nested { depth: depth.saturating_add(1), in_string: false },
                b'}' | b']' if depth == 1 => State::AfterValue,
                b'}' | b']' => State::Nested { depth: depth - 1, in_string: false },
                _ => State::Nested { depth, in_string: false },
            },
            State::AfterValue => return self.after_value(b),
            State::Done if ws => State::Done,
            _ => State::Failed,
        };
    }

    fn after_value(&mut self, b: u8) {
        self.member = Member::Other;
        self.state = match b {
            b' ' | b'\t' | b'\n' | b'\r' => State::AfterValue,
            b',' => State::BeforeName { first: false },
            b'}' => State::Done,
            _ => State::Failed,
        };
    }
}

/// `-?(0|[1-9][0-9]*)`.
fn is_integer(raw: &[u8]) -> bool {
    let digits = raw.strip_prefix(b"-").unwrap_or(raw);
    match digits {
        [b'0'] => true,
        [b'1'..=b'9', rest @ ..] => rest.iter().all(u8::is_ascii_digit),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recover(msg: &[u8]) -> Option<Vec<u8>> {
        let mut r = IdRecovery::new();
        r.feed(msg);
        r.finish().map(|id| id.raw().to_vec())
    }

    #[test]
    fn table() {
        let cases: &[(&[u8], Option<&[u8]>)] = &[
            (br#"{"jsonrpc":"2.0","id":7,"method":"m"}"#, Some(b"7")),
            (br#"{"id":-0}"#, Some(b"-0")),
            (br#" { "i\u0064" : "a\"b" } "#, Some(br#""a\"b""#)),
            (br#"{"id":null,"error":{}}"#, Some(b"null")),
            (br#"{"id":1,"id":2}"#, None),
            (br#"{"id":1.5}"#, None),
            (br#"{"id":01}"#, None),
            (br#"{"id":[1]}"#, None),
            (br#"{"x":{"id":1,"s":"}"},"y":[]}"#, None),
            (br#"{"x":{"id":1},"id":"z"}"#, Some(br#""z""#)),
            (br#"{"id":1"#, None),
            (br#"{"id":1} x"#, None),
            (br#"[{"id":1}]"#, None),
            (br#"{"idd":1}"#, None),
            (br#"{"\u0069\u0064":3}"#, Some(b"3")),
        ];
        for (msg, want) in cases {
            assert_eq!(recover(msg).as_deref(), *want, "{}", String::from_utf8_lossy(msg));
        }
    }

    #[test]
    fn long_ids_are_not_recovered() {
        let long = format!(r#"{{"id":"{}"}}"#, "x".repeat(MAX_ID_LEN));
        assert_eq!(recover(long.as_bytes()), None);
        let fits = format!(r#"{{"id":"{}"}}"#, "x".repeat(MAX_ID_LEN - 2));
        assert!(recover(fits.as_bytes()).is_some());
    }

    #[test]
    fn ndjson_decoder_recovers_oversized_lines_at_any_chunking() {
        use crate::frame::{Decode, NdjsonDecoder};
        let big = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":\"a\\\"1\",\"result\":\"{}\"}}\r\n{{}}\n",
            "x".repeat(100)
        );
        for size in [1, 2, 7, 64, big.len()] {
            let mut decoder = NdjsonDecoder::new().max_message_size(40).recover_ids();
            let mut buf = bytes::BytesMut::new();
            let mut ids = Vec::new();
            for chunk in big.as_bytes().chunks(size) {
                buf.extend_from_slice(chunk);
                while let Some(item) = decoder.decode(&mut buf) {
                    if item.is_err() {
                        ids.push(decoder.recovered_id().map(|id| id.raw().to_vec()));
                    }
                }
            }
            assert_eq!(ids, [Some(br#""a\"1""#.to_vec())], "chunks of {size}");
        }
    }

    #[test]
    fn integers() {
        for (raw, ok) in
            [("0", true), ("-0", true), ("10", true), ("-", false), ("01", false), ("1e2", false)]
        {
            assert_eq!(is_integer(raw.as_bytes()), ok, "{raw}");
        }
    }

    mod prop {
        use proptest::prelude::*;

        use super::super::IdRecovery;

        fn key() -> impl Strategy<Value = &'static str> {
            prop::sample::select(vec![
                r#""id""#,
                r#""i\u0064""#,
                r#""jsonrpc""#,
                r#""method""#,
                r#""params""#,
                r#""result""#,
                r#""error""#,
                r#""x""#,
                r#""id\"""#,
                r#""\\id""#,
                r#""ID""#,
            ])
        }

        fn value() -> impl Strategy<Value = &'static str> {
            prop::sample::select(vec![
                r#""2.0""#,
                "7",
                "-0",
                "1.5",
                "1e3",
                "null",
                "true",
                r#""a\"}""#,
                r#""a\u0062""#,
                r#""\\""#,
                r#"{"id":1,"s":"}]\""}"#,
                r#"[1,{"a":[]},"]"]"#,
                "{}",
                "[]",
                r#""tools/call""#,
                r#"{"code":-32601,"message":"m"}"#,
                r#"{"name":"x","arguments":{"id":"inner"}}"#,
                "01",
                r#""\ud83d\ude00""#,
            ])
        }

        fn message() -> impl Strategy<Value = Vec<u8>> {
            let member = (key(), prop::sample::select(vec!["", " ", "\r\n\t"]), value());
            (prop::collection::vec(member, 0..6), any::<bool>()).prop_map(|(members, pad)| {
                let sep = if pad { " , " } else { "," };
                let body: Vec<String> =
                    members.iter().map(|(k, ws, v)| format!("{k}{ws}:{ws}{v}")).collect();
                format!("{{{}}}", body.join(sep)).into_bytes()
            })
        }

        /// What the scanner says the id is, for messages that are JSON; `None` to skip.
        fn expected(msg: &[u8]) -> Option<Option<Vec<u8>>> {
            match crate::parse(msg) {
                Ok(m) => Some(m.id().map(|id| id.raw().to_vec())),
                Err(e) if e.code() == -32600 => Some(e.id().map(|id| id.raw().to_vec())),
                Err(_) => None,
            }
        }

        fn recovered(chunks: &[&[u8]]) -> Option<Vec<u8>> {
            let mut r = IdRecovery::new();
            for chunk in chunks {
                r.feed(chunk);
            }
            r.finish().map(|id| id.raw().to_vec())
        }

        proptest! {
            // Under miri (.ci/miri.sh) a couple of cases: each is interpreted.
            #![proptest_config(ProptestConfig {
                cases: if cfg!(miri) { 2 } else { 256 },
                failure_persistence: None,
                ..ProptestConfig::default()
            })]
            #[test]
            fn agrees_with_the_scanner_at_every_split(msg in message()) {
                let Some(want) = expected(&msg) else { return Ok(()) };
                let valid = crate::parse(&msg).is_ok();
                for at in 0..=msg.len() {
                    let (a, b) = msg.split_at(at);
                    let got = recovered(&[a, b]);
                    // An invalid message answers `null` for a `null` id: the same answer.
                    let got = if valid { got } else { got.filter(|raw| raw != b"null") };
                    prop_assert_eq!(&got, &want, "split at {}", at);
                }
                let bytes: Vec<&[u8]> = msg.chunks(1).collect();
                let got = recovered(&bytes);
                let got = if valid { got } else { got.filter(|raw| raw != b"null") };
                prop_assert_eq!(got, want);
            }
        }
    }
}
