//! Owned messages: a [`Bytes`] handle plus the spans the scanner found, to send across
//! tasks and threads without a second scan.

use core::fmt;
use core::ops::Range;

use bytes::Bytes;

use crate::id::{ErrorCode, Id, IdKind};
use crate::invalid::{Invalid, Reason};
use crate::kind::Kind;
use crate::message::{Fields, Message, Raw};
use crate::parser::Parser;
use crate::response::ErrorResponse;
use crate::text::Str;

/// A valid message that owns its bytes: `Send + Sync + 'static`, cloned in O(1).
///
/// The accessors are those of [`Message`] (borrowing from `self`, found by the one scan
/// that made the message), plus `*_bytes` twins that hand out sub-slices as owned [`Bytes`]
/// sharing the same buffer, in the manner of [`Bytes::slice_ref`].
///
/// ```
/// use bytes::Bytes;
/// use rpcscan::{Kind, OwnedMessage, Parser};
///
/// let bytes = Bytes::from_static(br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo"}}"#);
/// let msg = OwnedMessage::parse(&Parser::new(), bytes)?;
/// let params = std::thread::spawn(move || {
///     assert_eq!(msg.kind(), Kind::Request);
///     assert!(msg.method().unwrap() == "tools/call");
///     msg.params_bytes()
/// })
/// .join()
/// .unwrap();
/// assert_eq!(params.unwrap(), &br#"{"name":"echo"}"#[..]);
/// # Ok::<(), rpcscan::OwnedInvalid>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct OwnedMessage {
    bytes: Bytes,
    fields: Fields,
}

/// What a parse found, without borrowing the bytes it looked at.
enum Verdict {
    Valid(Fields),
    Invalid(Reason, Option<usize>, Option<(Range<usize>, IdKind)>),
}

impl OwnedMessage {
    /// Scans `bytes` with `parser` and keeps them: the message, or why it is invalid
    /// (which keeps the bytes too).
    pub fn parse(parser: &Parser, bytes: Bytes) -> Result<OwnedMessage, OwnedInvalid> {
        let verdict = match parser.parse(&bytes) {
            Ok(msg) => Verdict::Valid(*msg.fields()),
            Err(e) => Verdict::Invalid(
                e.reason(),
                e.offset(),
                e.id().and_then(|id| Some((range_in(&bytes, id.raw())?, id_kind(&id)))),
            ),
        };
        match verdict {
            Verdict::Valid(fields) => Ok(OwnedMessage { bytes, fields }),
            Verdict::Invalid(reason, offset, id) => Err(OwnedInvalid {
                id: id.map(|(range, kind)| (bytes.slice(range), kind)),
                bytes,
                reason,
                offset,
            }),
        }
    }

    /// The borrowed view of this message, with every accessor of [`Message`].
    pub fn as_message(&self) -> Message<'_> {
        Message::new(&self.bytes, self.fields)
    }

    /// What the message is (never [`Kind::Invalid`]).
    pub fn kind(&self) -> Kind {
        self.fields.kind
    }

    /// The message's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The message's bytes as the shared handle.
    pub fn bytes(&self) -> &Bytes {
        &self.bytes
    }

    /// The message's bytes, giving up the spans.
    pub fn into_bytes(self) -> Bytes {
        self.bytes
    }

    /// See [`Message::id`].
    pub fn id(&self) -> Option<Id<'_>> {
        self.as_message().id()
    }

    /// See [`Message::method`].
    pub fn method(&self) -> Option<Str<'_>> {
        self.as_message().method()
    }

    /// See [`Message::params`].
    pub fn params(&self) -> Option<Raw<'_>> {
        self.as_message().params()
    }

    /// See [`Message::result`].
    pub fn result(&self) -> Option<Raw<'_>> {
        self.as_message().result()
    }

    /// See [`Message::error`].
    pub fn error(&self) -> Option<Raw<'_>> {
        self.as_message().error()
    }

    /// See [`Message::error_code`].
    pub fn error_code(&self) -> Option<ErrorCode<'_>> {
        self.as_message().error_code()
    }

    /// See [`Message::error_message`].
    pub fn error_message(&self) -> Option<Str<'_>> {
        self.as_message().error_message()
    }

    /// See [`Message::error_data`].
    pub fn error_data(&self) -> Option<Raw<'_>> {
        self.as_message().error_data()
    }

    /// The id's raw bytes ([`Id::raw`], quotes included for a string) as an owned handle.
    pub fn id_bytes(&self) -> Option<Bytes> {
        Some(self.share(self.id()?.raw()))
    }

    /// The method's raw bytes between the quotes ([`Str::raw`], escapes kept), owned.
    pub fn method_bytes(&self) -> Option<Bytes> {
        Some(self.share(self.method()?.raw()))
    }

    /// `params` as an owned handle, ready for a deserializer on another task.
    pub fn params_bytes(&self) -> Option<Bytes> {
        Some(self.share(self.params()?.as_bytes()))
    }

    /// `result` as an owned handle.
    pub fn result_bytes(&self) -> Option<Bytes> {
        Some(self.share(self.result()?.as_bytes()))
    }

    /// The whole `error` object as an owned handle.
    pub fn error_bytes(&self) -> Option<Bytes> {
        Some(self.share(self.error()?.as_bytes()))
    }

    /// `error.data` as an owned handle.
    pub fn error_data_bytes(&self) -> Option<Bytes> {
        Some(self.share(self.error_data()?.as_bytes()))
    }

    /// `part` (a slice of `self.bytes`) as a handle on the same buffer.
    fn share(&self, part: &[u8]) -> Bytes {
        share(&self.bytes, part)
    }
}

impl TryFrom<Bytes> for OwnedMessage {
    type Error = OwnedInvalid;

    /// Strict parse ([`Parser::new`]).
    fn try_from(bytes: Bytes) -> Result<Self, OwnedInvalid> {
        OwnedMessage::parse(&Parser::new(), bytes)
    }
}

impl AsRef<[u8]> for OwnedMessage {
    fn as_ref(&self) -> &[u8] {
        &self.bytes
    }
}

impl From<OwnedMessage> for Bytes {
    fn from(msg: OwnedMessage) -> Bytes {
        msg.bytes
    }
}

impl fmt::Debug for OwnedMessage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("OwnedMessage").field(&self.as_message()).finish()
    }
}

/// An invalid verdict that owns what it holds (`Send + Sync + 'static`): the reason, the
/// offset, the recovered id and, from [`OwnedMessage::parse`], the message's bytes.
///
/// ```
/// use bytes::Bytes;
/// use rpcscan::{OwnedMessage, Reason};
///
/// let bytes = Bytes::from_static(br#"{"jsonrpc":"2.0","id":"a-1","method":"m","params":null}"#);
/// let err = OwnedMessage::try_from(bytes).unwrap_err();
/// assert_eq!((err.reason(), err.code()), (Reason::BadParams, -32600));
/// assert_eq!(err.id_bytes().unwrap(), &br#""a-1""#[..]);
/// assert_eq!(
///     err.response().to_vec(),
///     br#"{"jsonrpc": "2.0", "id": "a-1", "error": {"code": -32600, "message": "Invalid Request"}}"#
/// );
/// ```
///
/// [`Invalid::into_owned`] (or `From<Invalid>`) makes one from a borrowed verdict, to carry
/// it with `?` into `Box<dyn Error + Send + Sync>`; it then keeps only the id, not the message.
#[derive(Clone, PartialEq, Eq)]
pub struct OwnedInvalid {
    /// The message (empty when made from an [`Invalid`], which does not hold it).
    bytes: Bytes,
    reason: Reason,
    offset: Option<usize>,
    /// The recovered id's raw bytes: a slice of `bytes`, or a copy.
    id: Option<(Bytes, IdKind)>,
}

impl OwnedInvalid {
    /// The borrowed view ([`Invalid`]) of this verdict.
    pub fn as_invalid(&self) -> Invalid<'_> {
        Invalid::new(self.reason, self.offset, self.id())
    }

    /// Why the message is invalid.
    pub fn reason(&self) -> Reason {
        self.reason
    }

    /// The JSON-RPC code to answer with (-32700 or -32600).
    pub fn code(&self) -> i64 {
        self.reason.code()
    }

    /// See [`Invalid::offset`].
    pub fn offset(&self) -> Option<usize> {
        self.offset
    }

    /// See [`Invalid::id`].
    pub fn id(&self) -> Option<Id<'_>> {
        let (raw, kind) = self.id.as_ref()?;
        Some(Id::new(raw, *kind))
    }

    /// The recovered id's raw bytes as an owned handle (to answer from another task).
    pub fn id_bytes(&self) -> Option<Bytes> {
        Some(self.id.as_ref()?.0.clone())
    }

    /// The message's bytes (empty when made from an [`Invalid`], which does not hold them).
    pub fn bytes(&self) -> &Bytes {
        &self.bytes
    }

    /// The message's bytes, owned (empty when made from an [`Invalid`]).
    pub fn into_bytes(self) -> Bytes {
        self.bytes
    }

    /// See [`Invalid::response`].
    pub fn response(&self) -> ErrorResponse<'_> {
        self.as_invalid().response()
    }
}

impl fmt::Debug for OwnedInvalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("OwnedInvalid").field(&self.as_invalid()).finish()
    }
}

impl fmt::Display for OwnedInvalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.as_invalid(), f)
    }
}

impl std::error::Error for OwnedInvalid {}

// Defined here rather than in invalid.rs: the owned form sits above the borrowed one.
impl Invalid<'_> {
    /// The same verdict, owning its id: `'static`, `Send + Sync`, so `?` can carry it into
    /// `Box<dyn Error + Send + Sync>` or `anyhow::Error`. Copies the recovered id's bytes (if
    /// any); an `Invalid` does not hold the message, so [`OwnedInvalid::bytes`] is empty.
    ///
    /// ```
    /// use rpcscan::{Invalid, Kind};
    ///
    /// fn kind_of(line: &[u8]) -> Result<Kind, Box<dyn std::error::Error + Send + Sync>> {
    ///     let msg = rpcscan::parse(line).map_err(Invalid::into_owned)?;
    ///     Ok(msg.kind())
    /// }
    ///
    /// assert_eq!(kind_of(br#"{"jsonrpc":"2.0","method":"ping","id":1}"#).unwrap(), Kind::Request);
    /// let err = kind_of(br#"{"jsonrpc":"2.0","method":"ping","id":[]}"#).unwrap_err();
    /// assert_eq!(err.to_string(), r#""id" is missing or of the wrong type (-32600)"#);
    /// ```
    pub fn into_owned(self) -> OwnedInvalid {
        OwnedInvalid::from(self)
    }
}

impl From<Invalid<'_>> for OwnedInvalid {
    /// See [`Invalid::into_owned`].
    fn from(invalid: Invalid<'_>) -> OwnedInvalid {
        OwnedInvalid {
            bytes: Bytes::new(),
            reason: invalid.reason(),
            offset: invalid.offset(),
            id: invalid.id().map(|id| (Bytes::copy_from_slice(id.raw()), id_kind(&id))),
        }
    }
}

/// Where `part` lies inside `whole`, if it does.
fn range_in(whole: &[u8], part: &[u8]) -> Option<Range<usize>> {
    let start = (part.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)?;
    let end = start.checked_add(part.len())?;
    (end <= whole.len()).then_some(start..end)
}

/// `part` as a handle on `whole`'s buffer (`Bytes::slice_ref` without its panic: a part
/// that is not inside `whole`, which the scanner never produces, gives an empty handle).
fn share(whole: &Bytes, part: &[u8]) -> Bytes {
    match range_in(whole, part) {
        Some(range) if !part.is_empty() => whole.slice(range),
        _ => Bytes::new(),
    }
}

fn id_kind(id: &Id<'_>) -> IdKind {
    if id.is_integer() {
        IdKind::Integer
    } else if id.is_null() {
        IdKind::Null
    } else {
        IdKind::String { escaped: id.as_str().is_some_and(|s| s.has_escapes()) }
    }
}

const _: () = {
    const fn owned<T: Send + Sync + Clone + 'static>() {}
    owned::<OwnedMessage>();
    owned::<OwnedInvalid>();
};
