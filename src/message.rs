//! The borrowed message view: what the scanner found, as byte spans into the message.

use core::fmt;

use crate::id::{ErrorCode, Id, IdKind};
use crate::json::string;
use crate::kind::Kind;
use crate::limits::MAX_DEPTH_LIMIT;
use crate::response::{ErrorResponse, METHOD_NOT_FOUND};
use crate::scan::envelope::Named;
use crate::scan::{skip, ws};
use crate::simd::{self, with_kernels, Kernels};
use crate::text::Str;

pub(crate) use crate::limits::Span;
pub(crate) use crate::scan::decide::Fields;

/// The raw bytes of one JSON value inside a message, and where it starts.
///
/// Hand [`Raw::as_bytes`] to serde_json or simd-json for the few messages that need a full
/// parse of `params` or `result`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Raw<'a> {
    bytes: &'a [u8],
    offset: usize,
}

impl<'a> Raw<'a> {
    pub(crate) fn new(message: &'a [u8], span: Span) -> Self {
        Raw { bytes: span.of(message), offset: span.start() }
    }

    /// A value that is not part of a message (offset 0), for re-reading stored bytes.
    pub(crate) const fn detached(bytes: &'a [u8]) -> Self {
        Raw { bytes, offset: 0 }
    }

    /// A value read from bytes no scanner has checked (a log record wrapping a message,
    /// say), leading and trailing JSON whitespace trimmed; offsets ([`Raw::offset`], and
    /// those of its members) count from the start of `bytes`.
    ///
    /// Nothing is validated: lookups ([`Raw::get`], [`Raw::members`]) walk the bytes
    /// structurally and stop at the first member they cannot read, never panicking. Check
    /// what you take out of it (parse a member as a message, say).
    ///
    /// ```
    /// let record = rpcscan::Raw::lenient(br#" {"ts":"2026-11-29T10:00:00Z","msg":{"jsonrpc":"2.0","method":"m"}} "#);
    /// let msg = record.get("msg").unique().unwrap();
    /// assert_eq!(msg.offset(), 36);
    /// assert!(rpcscan::parse(msg.as_bytes()).is_ok());
    /// assert!(rpcscan::Raw::lenient(b"not json").get("msg").is_missing());
    /// ```
    pub fn lenient(bytes: &'a [u8]) -> Self {
        let start = ws(bytes, 0);
        let rest = bytes.get(start..).unwrap_or_default();
        let end = rest
            .iter()
            .rposition(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
            .map_or(0, |i| i + 1);
        Raw { bytes: rest.get(..end).unwrap_or_default(), offset: start }
    }

    /// The value's exact bytes.
    pub const fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Offset of the value's first byte in the message.
    pub const fn offset(&self) -> usize {
        self.offset
    }

    /// Length of the value in bytes.
    pub const fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Always `false`: a JSON value has at least one byte. Present for API symmetry.
    pub const fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// `true` when the value is an object.
    pub fn is_object(&self) -> bool {
        self.bytes.first() == Some(&b'{')
    }

    /// `true` when the value is an array.
    pub fn is_array(&self) -> bool {
        self.bytes.first() == Some(&b'[')
    }

    /// `true` when the value is `null`.
    pub fn is_null(&self) -> bool {
        self.bytes == b"null"
    }

    /// `true` when the value is a string.
    pub fn is_string(&self) -> bool {
        self.bytes.first() == Some(&b'"')
    }

    /// The string, when the value is one (raw content between the quotes, escapes kept).
    ///
    /// ```
    /// let msg = rpcscan::parse(br#"{"jsonrpc":"2.0","method":"m","params":{"uri":"file:\/\/\/a"}}"#).unwrap();
    /// let uri = msg.params().unwrap().get("uri").unique().unwrap().as_str().unwrap();
    /// assert!(uri == "file:///a");
    /// assert!(msg.params().unwrap().as_str().is_none()); // an object
    /// ```
    pub fn as_str(&self) -> Option<Str<'a>> {
        let inner = self.bytes.strip_prefix(b"\"")?.strip_suffix(b"\"")?;
        // Names and tokens are short: a loop the compiler vectorizes beats a call.
        let escaped = if inner.len() <= 32 {
            inner.iter().fold(false, |any, &b| any | (b == b'\\'))
        } else {
            memchr::memchr(b'\\', inner).is_some()
        };
        Some(Str::new(inner, escaped))
    }

    /// The value as an id-like token: a string, or an integer literal (no fraction, no
    /// exponent). MCP progress tokens and `notifications/cancelled`'s `requestId` have the
    /// shape of ids, and compare like them (decoded value, see [`Id`]).
    ///
    /// ```
    /// let msg = rpcscan::parse(br#"{"jsonrpc":"2.0","method":"m","params":{"a":-0,"b":"x","c":1.5}}"#).unwrap();
    /// let params = msg.params().unwrap();
    /// assert_eq!(params.get("a").unique().and_then(|v| v.as_id()).unwrap().as_u64(), Some(0));
    /// assert!(params.get("b").unique().and_then(|v| v.as_id()).unwrap().is_string());
    /// assert!(params.get("c").unique().and_then(|v| v.as_id()).is_none());
    /// ```
    pub fn as_id(&self) -> Option<Id<'a>> {
        match self.bytes.first()? {
            b'"' => {
                let s = self.as_str()?;
                Some(Id::new(self.bytes, IdKind::String { escaped: s.has_escapes() }))
            }
            b'-' | b'0'..=b'9' => {
                let digits = self.bytes.strip_prefix(b"-").unwrap_or(self.bytes);
                (!digits.is_empty() && digits.iter().all(u8::is_ascii_digit))
                    .then_some(Id::new(self.bytes, IdKind::Integer))
            }
            _ => None,
        }
    }

    /// The members of an object, in order, keys as [`Str`] (compare them with `==`, which
    /// unescapes: `"n\u0061me"` is `name`). Empty for a value that is not an object.
    ///
    /// The scanner validated the message already, so the walk only matches strings and
    /// brackets (the structural skip of envelope mode): one pass over the object's bytes,
    /// no allocation. After a [`crate::Validation::Envelope`] parse, which only skipped
    /// `params` and `result` structurally, the bytes may not be JSON: the iterator then
    /// stops at the first member it cannot read. It never panics.
    ///
    /// ```
    /// let msg = rpcscan::parse(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"n\u0061me":"echo","arguments":{"x":[1,2]}}}"#).unwrap();
    /// let members: Vec<_> = msg.params().unwrap().members().collect();
    /// assert_eq!(members.len(), 2);
    /// assert!(members[0].0 == "name");
    /// assert_eq!(members[0].1.as_bytes(), br#""echo""#);
    /// assert_eq!(members[1].1.as_bytes(), br#"{"x":[1,2]}"#);
    /// ```
    pub fn members(&self) -> Members<'a> {
        Members { bytes: self.bytes, base: self.offset, pos: 1, done: !self.is_object() }
    }

    /// Looks up one member of an object: [`Field::Missing`], [`Field::Unique`] or
    /// [`Field::Duplicate`].
    ///
    /// **Duplicates are reported, not resolved.** JSON parsers disagree on which of two
    /// equal keys wins (first, last, error), so a routing key that appears twice means one
    /// hop may act on a different value than the next: the request-smuggling pattern of
    /// docs/spec.md §3.1, one level down. `Duplicate` carries no value on purpose; a careful
    /// gateway treats it as a mismatch. Keys are compared after unescaping. The whole
    /// object is walked (a duplicate may come last).
    ///
    /// ```
    /// use rpcscan::Field;
    /// let msg = rpcscan::parse(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","n\u0061me":"b","uri":"x"}}"#).unwrap();
    /// let params = msg.params().unwrap();
    /// assert_eq!(params.get("name"), Field::Duplicate);
    /// assert!(params.get("uri").as_str().unwrap() == "x");
    /// assert_eq!(params.get("arguments"), Field::Missing);
    /// ```
    pub fn get(&self, key: &str) -> Field<'a> {
        let [field] = self.get_many([key]);
        field
    }

    /// [`Raw::get`] for several keys in one pass over the object.
    ///
    /// ```
    /// let msg = rpcscan::parse(br#"{"jsonrpc":"2.0","method":"m","params":{"a":1,"b":2}}"#).unwrap();
    /// let [a, b, c] = msg.params().unwrap().get_many(["a", "b", "c"]);
    /// assert_eq!(a.unique().unwrap().as_bytes(), b"1");
    /// assert_eq!(b.unique().unwrap().as_bytes(), b"2");
    /// assert!(c.is_missing());
    /// ```
    pub fn get_many<const N: usize>(&self, keys: [&str; N]) -> [Field<'a>; N] {
        let mut found = [Field::Missing; N];
        for (name, value) in self.members() {
            for (slot, key) in found.iter_mut().zip(keys) {
                if name == key {
                    *slot = match *slot {
                        Field::Missing => Field::Unique(value),
                        _ => Field::Duplicate,
                    };
                }
            }
        }
        found
    }
}

/// What [`Raw::get`] found for a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field<'a> {
    /// No member with that key (or the value looked into is not an object).
    Missing,
    /// Exactly one member with that key: its value.
    Unique(Raw<'a>),
    /// Two or more members with that key (after unescaping). No value is given: which one
    /// "wins" depends on the parser, which is the problem.
    Duplicate,
}

impl<'a> Field<'a> {
    /// The value when the key appears exactly once.
    pub const fn unique(self) -> Option<Raw<'a>> {
        match self {
            Field::Unique(raw) => Some(raw),
            _ => None,
        }
    }

    /// The string when the key appears exactly once and its value is a string.
    ///
    /// ```
    /// let msg = rpcscan::parse(br#"{"jsonrpc":"2.0","method":"m","params":{"a":"x","b":1}}"#).unwrap();
    /// let params = msg.params().unwrap();
    /// assert!(params.get("a").as_str().unwrap() == "x");
    /// assert!(params.get("b").as_str().is_none());
    /// ```
    pub fn as_str(self) -> Option<Str<'a>> {
        self.unique()?.as_str()
    }

    /// `true` for [`Field::Missing`].
    pub const fn is_missing(self) -> bool {
        matches!(self, Field::Missing)
    }

    /// `true` for [`Field::Duplicate`].
    pub const fn is_duplicate(self) -> bool {
        matches!(self, Field::Duplicate)
    }
}

/// Iterator over the members of an object: see [`Raw::members`].
#[derive(Clone, Debug)]
pub struct Members<'a> {
    bytes: &'a [u8],
    /// Offset of `bytes` in the message.
    base: usize,
    /// After `{` or after a `,`: where the next key (or `}`) is looked for.
    pos: usize,
    done: bool,
}

impl<'a> Members<'a> {
    fn member<K: Kernels>(&mut self, k: K) -> Option<(Str<'a>, Raw<'a>)> {
        let b = self.bytes;
        let open = ws(b, self.pos);
        if b.get(open) != Some(&b'"') {
            return None; // `}` (the end) or bytes that are not a member
        }
        let (key_end, escaped) = string::scan_strict(k, b, open).ok()?;
        let key = Str::new(b.get(open + 1..key_end - 1)?, escaped);
        let colon = ws(b, key_end);
        if b.get(colon) != Some(&b':') {
            return None;
        }
        let start = ws(b, colon + 1);
        // Depth 2 at most 4096 below: a value nested in a validated message always fits.
        let end = skip::value::<_, false>(k, b, start, 2, MAX_DEPTH_LIMIT).ok()?;
        let value = Raw { bytes: b.get(start..end)?, offset: self.base + start };
        let after = ws(b, end);
        match b.get(after) {
            Some(b',') => self.pos = after + 1,
            _ => self.done = true,
        }
        Some((key, value))
    }
}

impl<'a> Iterator for Members<'a> {
    type Item = (Str<'a>, Raw<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let member = with_kernels!(simd::detected(), k => self.member(k));
        if member.is_none() {
            self.done = true;
        }
        member
    }
}

impl core::iter::FusedIterator for Members<'_> {}

impl fmt::Debug for Raw<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Raw(@{}: {})", self.offset, String::from_utf8_lossy(self.bytes))
    }
}

/// A valid JSON-RPC 2.0 message: its kind and borrowed views of its envelope members.
///
/// ```
/// use rpcscan::Kind;
/// let bytes = br#"{"jsonrpc":"2.0","id":"7","method":"tools/call","params":{"name":"echo"}}"#;
/// let msg = rpcscan::parse(bytes).unwrap();
/// assert_eq!(msg.kind(), Kind::Request);
/// assert_eq!(msg.id().unwrap().raw(), br#""7""#);
/// assert!(msg.method().unwrap() == "tools/call");
/// assert_eq!(msg.params().unwrap().as_bytes(), br#"{"name":"echo"}"#);
/// assert!(msg.result().is_none());
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Message<'a> {
    bytes: &'a [u8],
    fields: Fields,
}

impl<'a> Message<'a> {
    pub(crate) const fn new(bytes: &'a [u8], fields: Fields) -> Self {
        Message { bytes, fields }
    }

    /// What the message is: never [`Kind::Invalid`] (invalid messages are
    /// [`crate::Invalid`]).
    pub const fn kind(&self) -> Kind {
        self.fields.kind
    }

    /// The message's bytes, exactly as given to the parser.
    pub const fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The id: present on requests and results, and on error responses that carry one
    /// (possibly `null`, see [`Id::is_null`]); `None` on notifications.
    pub fn id(&self) -> Option<Id<'a>> {
        let (span, kind) = self.fields.id?;
        Some(Id::new(span.of(self.bytes), kind))
    }

    /// The method name of a request or notification.
    pub fn method(&self) -> Option<Str<'a>> {
        let (span, escaped) = self.fields.method?;
        Some(Str::new(span.of(self.bytes), escaped))
    }

    /// `params` of a request or notification (an object or an array).
    pub fn params(&self) -> Option<Raw<'a>> {
        Some(Raw::new(self.bytes, self.fields.params?))
    }

    /// `params.name`: what `params()` and then [`Raw::get`]`("name")` give. This is the tool
    /// of a `tools/call` request and the prompt of a `prompts/get` request, as a router or
    /// a tool policy reads it; [`Field::Duplicate`] when the key appears twice (after
    /// unescaping), so no hop can resolve it differently. From a parser built with
    /// [`Parser::note_params_name`](crate::Parser::note_params_name) in strict mode, the
    /// scan noted it on its way through `params` and this takes no second pass.
    ///
    /// ```
    /// let msg = rpcscan::parse(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"name":"x"}}}"#).unwrap();
    /// assert!(msg.params_name().as_str().unwrap() == "echo");
    /// let twice = rpcscan::parse(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","n\u0061me":"b"}}"#).unwrap();
    /// assert!(twice.params_name().is_duplicate());
    /// ```
    pub fn params_name(&self) -> Field<'a> {
        let Some(params) = self.fields.params else {
            return Field::Missing;
        };
        match self.fields.params_name {
            Named::Unknown => Raw::new(self.bytes, params).get("name"),
            Named::Missing => Field::Missing,
            Named::Unique(span) => Field::Unique(Raw::new(self.bytes, span)),
            Named::Duplicate => Field::Duplicate,
        }
    }

    /// What a server that serves the methods `serves` does with this message (docs/spec.md
    /// §4): a request for one of them is [`Answer::Serve`]d; any other request gets -32601
    /// with its raw id ([`Answer::Reply`]); a notification, result or error gets nothing.
    /// (An invalid message's answer is [`crate::Invalid::response`].) `rpcscan respond`
    /// and the JavaScript package both answer this way.
    ///
    /// ```
    /// use rpcscan::Answer;
    /// let msg = rpcscan::parse(br#"{"jsonrpc":"2.0","id":"q","method":"x"}"#).unwrap();
    /// let Answer::Reply(reply) = msg.answer(|m| *m == "tools/list") else { panic!() };
    /// assert_eq!(reply.to_vec(), br#"{"jsonrpc": "2.0", "id": "q", "error": {"code": -32601, "message": "Method not found"}}"#);
    /// ```
    pub fn answer(&self, serves: impl Fn(&Str<'a>) -> bool) -> Answer<'a> {
        if self.kind() != Kind::Request {
            return Answer::Nothing;
        }
        if self.method().is_some_and(|method| serves(&method)) {
            return Answer::Serve;
        }
        let reply = ErrorResponse::standard(METHOD_NOT_FOUND);
        Answer::Reply(match self.id() {
            Some(id) => reply.id(id.raw()),
            None => reply,
        })
    }

    /// `params._meta`: what `params()` and then [`Raw::get`]`("_meta")` give: where MCP
    /// puts a request's `progressToken`. Noted by the scan like [`Message::params_name`]
    /// (from a parser built with [`Parser::note_params_name`](crate::Parser::note_params_name),
    /// in strict mode); otherwise looked up in `params`.
    ///
    /// ```
    /// let parser = rpcscan::Parser::new().note_params_name(true);
    /// let msg = parser.parse(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"progressToken":7}}}"#).unwrap();
    /// let meta = msg.params_meta().unique().unwrap();
    /// assert_eq!(meta.get("progressToken").unique().unwrap().as_id().unwrap().raw(), b"7");
    /// ```
    pub fn params_meta(&self) -> Field<'a> {
        let Some(params) = self.fields.params else {
            return Field::Missing;
        };
        match self.fields.params_meta {
            Named::Unknown => Raw::new(self.bytes, params).get("_meta"),
            Named::Missing => Field::Missing,
            Named::Unique(span) => Field::Unique(Raw::new(self.bytes, span)),
            Named::Duplicate => Field::Duplicate,
        }
    }

    /// `result` of a success response (any JSON value, `null` included).
    pub fn result(&self) -> Option<Raw<'a>> {
        Some(Raw::new(self.bytes, self.fields.result?))
    }

    /// The whole `error` object of an error response.
    pub fn error(&self) -> Option<Raw<'a>> {
        Some(Raw::new(self.bytes, self.fields.error?))
    }

    /// `error.code` of an error response.
    pub fn error_code(&self) -> Option<ErrorCode<'a>> {
        Some(ErrorCode::new(self.fields.error_code?.of(self.bytes)))
    }

    /// `error.message` of an error response.
    pub fn error_message(&self) -> Option<Str<'a>> {
        let (span, escaped) = self.fields.error_message?;
        Some(Str::new(span.of(self.bytes), escaped))
    }

    /// `error.data` of an error response, when present (the first one, if repeated).
    pub fn error_data(&self) -> Option<Raw<'a>> {
        Some(Raw::new(self.bytes, self.fields.error_data?))
    }

    /// The spans behind the accessors, for owned twins of this view.
    pub(crate) const fn fields(&self) -> &Fields {
        &self.fields
    }
}

impl fmt::Debug for Message<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Message");
        d.field("kind", &self.kind());
        if let Some(id) = self.id() {
            d.field("id", &id);
        }
        if let Some(method) = self.method() {
            d.field("method", &method);
        }
        if let Some(code) = self.error_code() {
            d.field("error_code", &code);
        }
        d.finish_non_exhaustive()
    }
}

/// What a server does with a valid message: [`Message::answer`].
#[derive(Clone, Copy, Debug)]
pub enum Answer<'a> {
    /// A request for a method the server serves: the server answers it.
    Serve,
    /// A request for another method: this -32601 answers it.
    Reply(ErrorResponse<'a>),
    /// A notification, result or error: no answer.
    Nothing,
}
