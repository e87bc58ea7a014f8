//! The borrowed message view: what the scanner found, as byte spans into the message.

use core::fmt;

use crate::id::{ErrorCode, Id, IdKind};
use crate::kind::Kind;
use crate::text::Str;

/// A byte range in a message (`u32`: messages are at most 4 GiB).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Span {
    start: u32,
    end: u32,
}

impl Span {
    pub(crate) const fn new(start: u32, end: u32) -> Self {
        Span { start, end }
    }

    pub(crate) const fn start(self) -> usize {
        self.start as usize
    }

    /// The bytes of this span in `buf` (empty if it does not fit, which cannot happen for
    /// spans the scanner made over the same bytes).
    pub(crate) fn of(self, buf: &[u8]) -> &[u8] {
        buf.get(self.start as usize..self.end as usize)
            .unwrap_or_default()
    }
}

/// Everything the scanner learnt about a valid message, as spans. Kept separate from the
/// bytes so an owned message can pair it with a `Bytes` handle instead of a slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fields {
    pub(crate) kind: Kind,
    pub(crate) id: Option<(Span, IdKind)>,
    /// String content (between the quotes) and whether it has escapes.
    pub(crate) method: Option<(Span, bool)>,
    pub(crate) params: Option<Span>,
    pub(crate) result: Option<Span>,
    pub(crate) error: Option<Span>,
    pub(crate) error_code: Option<Span>,
    pub(crate) error_message: Option<(Span, bool)>,
    pub(crate) error_data: Option<Span>,
}

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
        Raw {
            bytes: span.of(message),
            offset: span.start(),
        }
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
}

impl fmt::Debug for Raw<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Raw(@{}: {})",
            self.offset,
            String::from_utf8_lossy(self.bytes)
        )
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
    #[allow(dead_code)]
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
