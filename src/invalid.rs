//! Why a message is invalid (docs/spec.md §4): reasons, JSON-RPC codes, offsets, recovered ids.

use core::fmt;
use core::str::FromStr;

use crate::id::Id;
use crate::response::{ErrorResponse, INVALID_REQUEST, PARSE_ERROR};

/// The reason a message is invalid. Names (from [`Reason::as_str`]) are the one list of
/// docs/spec.md §4, used verbatim by the CLI and every later consumer.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Reason {
    /// Bytes that are not UTF-8 (overlong forms, encoded surrogates, above U+10FFFF, truncated).
    InvalidUtf8,
    /// A byte order mark at the start of the message (RFC 8259 §8.1 forbids sending one).
    Bom,
    /// Not JSON: a byte where the grammar allows none, or the input ends inside a value.
    Syntax,
    /// Something other than whitespace after the top-level value.
    TrailingBytes,
    /// Nesting deeper than the configured maximum (1024 by default).
    TooDeep,
    /// Larger than the configured maximum message size (framings), or than 4 GiB.
    TooLarge,
    /// No bytes but whitespace.
    Empty,
    /// Valid JSON, but the top-level value is a scalar (or, for [`crate::Parser::batch`],
    /// not an array; inside a batch, an element that is not an object).
    NotAnObject,
    /// A top-level array (a JSON-RPC batch) while batches are off.
    Batch,
    /// `[]`: an empty batch.
    EmptyBatch,
    /// An envelope key (`jsonrpc`, `id`, `method`, `params`, `result`, `error`) appears twice.
    DuplicateKey,
    /// `jsonrpc` missing, or not the string `"2.0"`.
    BadVersion,
    /// `method` present but not a string.
    BadMethod,
    /// `params` of a request or notification is not an object or an array.
    BadParams,
    /// `id` of the wrong type, or missing/`null` where required.
    BadId,
    /// Both `result` and `error`.
    ResultAndError,
    /// No `method`, and neither `result` nor `error`.
    NoResultOrError,
    /// `method` together with `result` or `error`.
    MethodWithResponse,
    /// `error` is not an object with an integer `code` and a string `message` (each once).
    BadErrorObject,
}

impl Reason {
    /// Every reason, in declaration order.
    pub const ALL: [Reason; 19] = [
        Reason::InvalidUtf8,
        Reason::Bom,
        Reason::Syntax,
        Reason::TrailingBytes,
        Reason::TooDeep,
        Reason::TooLarge,
        Reason::Empty,
        Reason::NotAnObject,
        Reason::Batch,
        Reason::EmptyBatch,
        Reason::DuplicateKey,
        Reason::BadVersion,
        Reason::BadMethod,
        Reason::BadParams,
        Reason::BadId,
        Reason::ResultAndError,
        Reason::NoResultOrError,
        Reason::MethodWithResponse,
        Reason::BadErrorObject,
    ];

    /// The reason's name from docs/spec.md §4 (`"syntax"`, `"bad_id"`, ...).
    pub const fn as_str(self) -> &'static str {
        match self {
            Reason::InvalidUtf8 => "invalid_utf8",
            Reason::Bom => "bom",
            Reason::Syntax => "syntax",
            Reason::TrailingBytes => "trailing_bytes",
            Reason::TooDeep => "too_deep",
            Reason::TooLarge => "too_large",
            Reason::Empty => "empty",
            Reason::NotAnObject => "not_an_object",
            Reason::Batch => "batch",
            Reason::EmptyBatch => "empty_batch",
            Reason::DuplicateKey => "duplicate_key",
            Reason::BadVersion => "bad_version",
            Reason::BadMethod => "bad_method",
            Reason::BadParams => "bad_params",
            Reason::BadId => "bad_id",
            Reason::ResultAndError => "result_and_error",
            Reason::NoResultOrError => "no_result_or_error",
            Reason::MethodWithResponse => "method_with_response",
            Reason::BadErrorObject => "bad_error_object",
        }
    }

    /// Looks a reason up by its docs/spec.md §4 name (the same as `name.parse().ok()`).
    pub fn from_name(name: &str) -> Option<Reason> {
        Reason::ALL.into_iter().find(|r| r.as_str() == name)
    }

    /// `true` for the "not JSON" family, answered with -32700 Parse error.
    pub const fn is_parse_error(self) -> bool {
        matches!(
            self,
            Reason::InvalidUtf8
                | Reason::Bom
                | Reason::Syntax
                | Reason::TrailingBytes
                | Reason::TooDeep
                | Reason::TooLarge
                | Reason::Empty
        )
    }

    /// The JSON-RPC error code a server answers with: -32700 or -32600.
    pub const fn code(self) -> i64 {
        if self.is_parse_error() {
            PARSE_ERROR
        } else {
            INVALID_REQUEST
        }
    }

    const fn describe(self) -> &'static str {
        match self {
            Reason::InvalidUtf8 => "bytes are not valid UTF-8",
            Reason::Bom => "message starts with a byte order mark",
            Reason::Syntax => "not valid JSON",
            Reason::TrailingBytes => "bytes after the JSON value",
            Reason::TooDeep => "nesting too deep",
            Reason::TooLarge => "message too large",
            Reason::Empty => "empty message",
            Reason::NotAnObject => "top-level value is not an object",
            Reason::Batch => "batch (top-level array) not accepted",
            Reason::EmptyBatch => "empty batch",
            Reason::DuplicateKey => "duplicate envelope key",
            Reason::BadVersion => "\"jsonrpc\" is missing or not \"2.0\"",
            Reason::BadMethod => "\"method\" is not a string",
            Reason::BadParams => "\"params\" is not an object or an array",
            Reason::BadId => "\"id\" is missing or of the wrong type",
            Reason::ResultAndError => "both \"result\" and \"error\"",
            Reason::NoResultOrError => "neither \"method\", \"result\" nor \"error\"",
            Reason::MethodWithResponse => "\"method\" together with \"result\" or \"error\"",
            Reason::BadErrorObject => {
                "\"error\" is not an object with an integer \"code\" and a string \"message\""
            }
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

/// The name given to [`Reason`]'s `FromStr` is none of [`Reason::as_str`]'s names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownReason(String);

impl fmt::Display for UnknownReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown reason {:?} (expected one of:", self.0)?;
        for (i, reason) in Reason::ALL.iter().enumerate() {
            let sep = if i == 0 { " " } else { ", " };
            write!(f, "{sep}{}", reason.as_str())?;
        }
        f.write_str(")")
    }
}

impl std::error::Error for UnknownReason {}

impl FromStr for Reason {
    type Err = UnknownReason;

    /// Accepts exactly the names of [`Reason::as_str`], the docs/spec.md §4 list.
    ///
    /// ```
    /// use rpcscan::Reason;
    /// assert_eq!("bad_id".parse::<Reason>(), Ok(Reason::BadId));
    /// assert!("BadId".parse::<Reason>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Reason::from_name(s).ok_or_else(|| UnknownReason(s.to_owned()))
    }
}

/// An invalid message: why, where, and the id to answer with.
///
/// ```
/// use rpcscan::{parse, Reason};
/// let err = parse(br#"{"jsonrpc":"2.0","id":7,"method":"m","params":null}"#).unwrap_err();
/// assert_eq!(err.reason(), Reason::BadParams);
/// assert_eq!(err.code(), -32600);
/// assert_eq!(err.id().unwrap().raw(), b"7");
///
/// let err = parse(b"{\"jsonrpc\":}").unwrap_err();
/// assert_eq!((err.reason(), err.offset()), (Reason::Syntax, Some(11)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Invalid<'a> {
    reason: Reason,
    offset: Option<usize>,
    id: Option<Id<'a>>,
}

impl<'a> Invalid<'a> {
    pub(crate) const fn new(reason: Reason, offset: Option<usize>, id: Option<Id<'a>>) -> Self {
        Invalid { reason, offset, id }
    }

    /// Why the message is invalid.
    pub const fn reason(&self) -> Reason {
        self.reason
    }

    /// The JSON-RPC code to answer with (-32700 or -32600).
    pub const fn code(&self) -> i64 {
        self.reason.code()
    }

    /// Byte offset of the first offending byte, for the -32700 family (`None` otherwise).
    pub const fn offset(&self) -> Option<usize> {
        self.offset
    }

    /// The id to answer with: for -32600 verdicts, the message's id when it has exactly one
    /// top-level `id` member that is a string or an integer literal. `None` means `null`.
    pub const fn id(&self) -> Option<Id<'a>> {
        self.id
    }

    /// The error response a server sends for this message (docs/spec.md §4 spacing), ready
    /// to write.
    ///
    /// ```
    /// let err = rpcscan::parse(b"[]").unwrap_err();
    /// assert_eq!(
    ///     err.response().to_vec(),
    ///     br#"{"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "Invalid Request"}}"#
    /// );
    /// ```
    pub fn response(&self) -> ErrorResponse<'a> {
        let response = ErrorResponse::standard(self.code());
        match self.id {
            Some(id) => response.id(id.raw()),
            None => response,
        }
    }
}

impl fmt::Display for Invalid<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.reason, self.code())?;
        if let Some(offset) = self.offset {
            write!(f, " at byte {offset}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Invalid<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for reason in Reason::ALL {
            assert_eq!(reason.as_str().parse(), Ok(reason));
            assert_eq!(Reason::from_name(reason.as_str()), Some(reason));
        }
    }

    #[test]
    fn unknown_names_are_rejected() {
        for name in ["", "BadId", "bad-id", "BAD_ID", " bad_id", "bad_id\n", "utf8", "ok"] {
            let err = name.parse::<Reason>().unwrap_err();
            assert_eq!(err, UnknownReason(name.to_owned()));
            assert_eq!(Reason::from_name(name), None);
        }
        let message = "x".parse::<Reason>().unwrap_err().to_string();
        assert!(message.starts_with(r#"unknown reason "x" (expected one of: invalid_utf8, bom,"#));
        assert!(message.ends_with("bad_error_object)"), "{message}");
    }

    #[test]
    fn an_owned_invalid_keeps_reason_offset_and_id() {
        let id = crate::parse(br#"{"jsonrpc":"2.0","id":"a\"b","method":7}"#).unwrap_err();
        let syntax = crate::parse(b"{\"jsonrpc\":}").unwrap_err();
        for err in [id, syntax] {
            let owned = err.into_owned();
            assert_eq!(owned.as_invalid(), err);
            assert_eq!(owned.to_string(), err.to_string());
            assert_eq!(owned.response().to_vec(), err.response().to_vec());
            assert!(owned.bytes().is_empty());
        }
        assert_eq!(id.into_owned().id_bytes().unwrap(), &br#""a\"b""#[..]);
        let boxed: Box<dyn std::error::Error + Send + Sync> = syntax.into_owned().into();
        assert_eq!(boxed.to_string(), "not valid JSON (-32700) at byte 11");
    }
}
