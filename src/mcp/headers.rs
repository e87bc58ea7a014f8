//! The Streamable HTTP header check of MCP 2026-07-28: `Mcp-Method`, `Mcp-Name` and
//! `MCP-Protocol-Version` mirror body values so that intermediaries can route without
//! parsing the body; whoever processes the body must reject a request whose headers say
//! something else (-32020 `HeaderMismatch`, HTTP 400).

use core::fmt;

use super::{base64, name_key, Mcp};
use crate::id::Id;
use crate::kind::Kind;
use crate::message::{Field, Message};
use crate::response::{ErrorResponse, HEADER_MISMATCH};
use crate::text::Str;

const PREFIX: &[u8] = b"=?base64?";
const SUFFIX: &[u8] = b"?=";

/// The three request headers that mirror body values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum McpHeader {
    /// `Mcp-Method`: the body's `method`.
    Method,
    /// `Mcp-Name`: `params.name` (`tools/call`, `prompts/get`) or `params.uri`
    /// (`resources/read`).
    Name,
    /// `MCP-Protocol-Version`: `params._meta["io.modelcontextprotocol/protocolVersion"]`.
    ProtocolVersion,
}

impl McpHeader {
    /// The header's name as the specification spells it (compare names case-insensitively).
    pub const fn as_str(self) -> &'static str {
        match self {
            McpHeader::Method => "Mcp-Method",
            McpHeader::Name => "Mcp-Name",
            McpHeader::ProtocolVersion => "MCP-Protocol-Version",
        }
    }
}

impl fmt::Display for McpHeader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a header disagrees with the body.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MismatchKind {
    /// The header is required for this body and absent.
    Missing,
    /// The header is present but the body has no value it could mirror (`Mcp-Name` on a
    /// method without a name, `Mcp-Method` on a response).
    Unexpected,
    /// The header value has characters a header may not carry plainly (anything outside
    /// printable ASCII, leading or trailing space), or a broken `=?base64?...?=` form.
    Malformed,
    /// The header is present but the body value it mirrors is absent (`Mcp-Name` only:
    /// the method requires the value), duplicated or not a string.
    BadBodyValue,
    /// Both are there, and they differ.
    Differs,
}

/// A header that does not match the body, with the request's id to answer with.
///
/// ```
/// use rpcscan::mcp::{McpHeader, McpHeaders, MismatchKind};
///
/// let body = br#"{"jsonrpc":"2.0","id":"r-1","method":"tools/call","params":{"name":"rm_rf"}}"#;
/// let msg = rpcscan::parse(body).unwrap();
/// let err = McpHeaders::new().method(b"tools/call").name(b"read_file").check(&msg).unwrap_err();
/// assert_eq!((err.header(), err.kind()), (McpHeader::Name, MismatchKind::Differs));
/// assert_eq!(err.http_status(), 400);
/// assert_eq!(
///     err.response().to_vec(),
///     br#"{"jsonrpc": "2.0", "id": "r-1", "error": {"code": -32020, "message": "Header mismatch: Mcp-Name header does not match the body"}}"#
/// );
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeaderMismatch<'a> {
    header: McpHeader,
    kind: MismatchKind,
    id: Option<Id<'a>>,
}

macro_rules! messages {
    ($header:expr, $kind:expr, $($h:ident => $name:literal),*) => {
        match ($header, $kind) {
            $(
                (McpHeader::$h, MismatchKind::Missing) => concat!("Header mismatch: ", $name, " header is missing"),
                (McpHeader::$h, MismatchKind::Unexpected) => concat!("Header mismatch: ", $name, " header has no counterpart in the body"),
                (McpHeader::$h, MismatchKind::Malformed) => concat!("Header mismatch: ", $name, " header value is malformed"),
                (McpHeader::$h, MismatchKind::BadBodyValue) => concat!("Header mismatch: the body value ", $name, " mirrors is absent, duplicated or not a string"),
                (McpHeader::$h, MismatchKind::Differs) => concat!("Header mismatch: ", $name, " header does not match the body"),
            )*
        }
    };
}

impl<'a> HeaderMismatch<'a> {
    /// Which header.
    pub const fn header(&self) -> McpHeader {
        self.header
    }

    /// What is wrong with it.
    pub const fn kind(&self) -> MismatchKind {
        self.kind
    }

    /// The request's id (`None` for a notification: answer with `null`).
    pub const fn id(&self) -> Option<Id<'a>> {
        self.id
    }

    /// The HTTP status the specification requires with the error: 400 Bad Request.
    pub const fn http_status(&self) -> u16 {
        400
    }

    /// A fixed English sentence naming the header and the problem. The values themselves
    /// are left out: echoing attacker-chosen bytes into error messages (and logs) is how
    /// header injection travels, and a fixed message needs no allocation.
    pub const fn message(&self) -> &'static str {
        messages!(self.header, self.kind,
            Method => "Mcp-Method",
            Name => "Mcp-Name",
            ProtocolVersion => "MCP-Protocol-Version")
    }

    /// The -32020 (`HeaderMismatch`) error response, echoing the request's raw id.
    pub fn response(&self) -> ErrorResponse<'a> {
        let response = ErrorResponse::new(HEADER_MISMATCH, self.message());
        match self.id {
            Some(id) => response.id(id.raw()),
            None => response,
        }
    }
}

impl fmt::Display for HeaderMismatch<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for HeaderMismatch<'_> {}

/// The `Mcp-Method`, `Mcp-Name` and `MCP-Protocol-Version` header values of one HTTP
/// request (raw bytes, as `http::HeaderValue::as_bytes` gives them; `None` when absent).
///
/// [`McpHeaders::check`] applies the Server Validation rules of the MCP 2026-07-28
/// Streamable HTTP transport, in this order, and reports the first failure:
///
/// 1. **`Mcp-Method`** must equal `method` (compared after unescaping the body string). It
///    is required on requests; on a notification it is checked when present; on a response
///    (which a client must not POST) it is [`MismatchKind::Unexpected`].
/// 2. **`Mcp-Name`** is required on `tools/call` and `prompts/get` requests (mirrors
///    `params.name`) and `resources/read` requests (mirrors `params.uri`); the body value
///    must be there once and be a string. The `=?base64?{value}?=` form (lowercase markers,
///    exactly) is always decoded before comparing, even when the decoded value would have
///    been safe as plain text, as the specification requires; the decoded bytes must be
///    UTF-8 and the base64 canonical and padded. On any other message the header is
///    [`MismatchKind::Unexpected`]: a header no body value backs is one a load balancer
///    could route on while the server ignores it.
/// 3. **`MCP-Protocol-Version`** must equal `params._meta`'s protocol version when the body
///    has one; a body that has one with the header absent is `Missing`; a body without one
///    (protocol versions before 2026-07-28) passes, so version policy (`-32022`
///    `UnsupportedProtocolVersion`) stays with the caller.
///
/// Plain values may hold printable ASCII only (0x20-0x7E) without leading or trailing
/// space; anything else is [`MismatchKind::Malformed`]: the specification requires such
/// values to travel base64-encoded. The base64 form is accepted for `Mcp-Name` only (the
/// specification defines it for `Mcp-Name` and `Mcp-Param-*`); elsewhere it is compared as
/// plain text (it matches only a body value spelled exactly that way).
///
/// No allocation, no buffer: base64 is decoded as a stream while comparing.
///
/// ```
/// use rpcscan::mcp::McpHeaders;
///
/// let body = br#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///r\u00e9sum\u00e9.txt","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
/// let msg = rpcscan::parse(body).unwrap();
/// let headers = McpHeaders::new()
///     .method(b"resources/read")
///     .name(b"=?base64?ZmlsZTovLy9yw6lzdW3DqS50eHQ=?=") // "file:///résumé.txt"
///     .protocol_version(b"2026-07-28");
/// assert!(headers.check(&msg).is_ok());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct McpHeaders<'h> {
    method: Option<&'h [u8]>,
    name: Option<&'h [u8]>,
    protocol_version: Option<&'h [u8]>,
}

impl<'h> McpHeaders<'h> {
    /// No headers.
    pub const fn new() -> Self {
        McpHeaders { method: None, name: None, protocol_version: None }
    }

    /// The `Mcp-Method` value.
    pub const fn method(mut self, value: &'h [u8]) -> Self {
        self.method = Some(value);
        self
    }

    /// The `Mcp-Name` value (plain or `=?base64?...?=`).
    pub const fn name(mut self, value: &'h [u8]) -> Self {
        self.name = Some(value);
        self
    }

    /// The `MCP-Protocol-Version` value.
    pub const fn protocol_version(mut self, value: &'h [u8]) -> Self {
        self.protocol_version = Some(value);
        self
    }

    /// Checks the headers against the body (rules in the type's docs).
    pub fn check<'a>(&self, msg: &Message<'a>) -> Result<(), HeaderMismatch<'a>> {
        self.check_with(msg, &msg.mcp())
    }

    /// [`McpHeaders::check`] with the routing keys already read (to scan `params` once when
    /// the gateway routes on them too).
    ///
    /// ```
    /// use rpcscan::mcp::McpHeaders;
    /// let msg = rpcscan::parse(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#).unwrap();
    /// let mcp = msg.mcp();
    /// assert!(McpHeaders::new().method(b"tools/call").name(b"echo").check_with(&msg, &mcp).is_ok());
    /// ```
    pub fn check_with<'a>(
        &self,
        msg: &Message<'a>,
        mcp: &Mcp<'a>,
    ) -> Result<(), HeaderMismatch<'a>> {
        let fail = |header, kind| HeaderMismatch { header, kind, id: msg.id() };
        check_method(self.method, msg).map_err(|k| fail(McpHeader::Method, k))?;
        check_name(self.name, msg, mcp).map_err(|k| fail(McpHeader::Name, k))?;
        check_version(self.protocol_version, mcp).map_err(|k| fail(McpHeader::ProtocolVersion, k))
    }
}

fn check_method(header: Option<&[u8]>, msg: &Message<'_>) -> Result<(), MismatchKind> {
    match (header, msg.method()) {
        (None, _) if msg.kind() == Kind::Request => Err(MismatchKind::Missing),
        (None, _) => Ok(()),
        (Some(_), None) => Err(MismatchKind::Unexpected),
        (Some(value), Some(method)) => {
            if !is_plain(value) {
                Err(MismatchKind::Malformed)
            } else if method.decoded_eq(value) {
                Ok(())
            } else {
                Err(MismatchKind::Differs)
            }
        }
    }
}

fn check_name(header: Option<&[u8]>, msg: &Message<'_>, mcp: &Mcp<'_>) -> Result<(), MismatchKind> {
    let required = msg.kind() == Kind::Request && msg.method().and_then(name_key).is_some();
    let Some(value) = header else {
        return if required { Err(MismatchKind::Missing) } else { Ok(()) };
    };
    let body = match mcp.mcp_name() {
        Some(field) => field,
        None => return Err(MismatchKind::Unexpected),
    };
    let encoded = HeaderText::parse(value).ok_or(MismatchKind::Malformed)?;
    let body = body.as_str().ok_or(MismatchKind::BadBodyValue)?;
    if encoded.matches(body) {
        Ok(())
    } else {
        Err(MismatchKind::Differs)
    }
}

fn check_version(header: Option<&[u8]>, mcp: &Mcp<'_>) -> Result<(), MismatchKind> {
    let body = mcp.protocol_version();
    let Some(value) = header else {
        return if body.is_missing() { Ok(()) } else { Err(MismatchKind::Missing) };
    };
    if !is_plain(value) {
        return Err(MismatchKind::Malformed);
    }
    match body {
        Field::Missing => Ok(()),
        Field::Duplicate => Err(MismatchKind::BadBodyValue),
        Field::Unique(raw) => match raw.as_str() {
            None => Err(MismatchKind::BadBodyValue),
            Some(version) if version.decoded_eq(value) => Ok(()),
            Some(_) => Err(MismatchKind::Differs),
        },
    }
}

/// Printable ASCII (0x20-0x7E), no leading or trailing space.
fn is_plain(value: &[u8]) -> bool {
    value.iter().all(|b| (0x20..=0x7E).contains(b))
        && value.first() != Some(&b' ')
        && value.last() != Some(&b' ')
}

/// A validated header value: plain text, or the base64 payload of the sentinel form.
enum HeaderText<'h> {
    Plain(&'h [u8]),
    Base64(&'h [u8]),
}

impl<'h> HeaderText<'h> {
    fn parse(value: &'h [u8]) -> Option<Self> {
        match value.strip_prefix(PREFIX).and_then(|v| v.strip_suffix(SUFFIX)) {
            Some(payload) => {
                base64::validate(payload)?;
                Some(HeaderText::Base64(payload))
            }
            None => is_plain(value).then_some(HeaderText::Plain(value)),
        }
    }

    fn matches(&self, body: Str<'_>) -> bool {
        match self {
            HeaderText::Plain(text) => body.decoded_eq(text),
            // Equal decoded bytes make the header valid UTF-8 exactly when the body has no
            // lone surrogate escape (its only way to hold bytes that are not UTF-8).
            HeaderText::Base64(payload) => {
                base64::decode(payload).eq(body.decoded_bytes())
                    && body.code_points().all(|cp| !(0xD800..0xE000).contains(&cp))
            }
        }
    }
}

/// Why [`decode_header_value`] failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HeaderValueError {
    /// A plain value with characters outside printable ASCII, or leading/trailing space.
    InvalidCharacters,
    /// A `=?base64?...?=` value whose payload is not canonical padded base64, or does not
    /// decode to UTF-8.
    BadBase64,
    /// `out` is too small; this many bytes are needed.
    BufferTooSmall {
        /// The decoded length.
        needed: usize,
    },
}

impl fmt::Display for HeaderValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeaderValueError::InvalidCharacters => {
                f.write_str("header value has characters that must be base64-encoded")
            }
            HeaderValueError::BadBase64 => {
                f.write_str("=?base64?...?= header value does not hold base64 of UTF-8 text")
            }
            HeaderValueError::BufferTooSmall { needed } => {
                write!(f, "decoding the header value needs {needed} bytes")
            }
        }
    }
}

impl std::error::Error for HeaderValueError {}

/// The text an `Mcp-Name` (or `Mcp-Param-*`) header value carries: a plain value as it
/// is, a `=?base64?{value}?=` value decoded into `out` (base64 decodes to at most 3/4 of
/// its length, so `out` as long as the value always suffices). The result is UTF-8.
///
/// ```
/// use rpcscan::mcp::{decode_header_value, HeaderValueError};
/// let mut buf = [0u8; 64];
/// assert_eq!(decode_header_value(b"get_weather", &mut buf), Ok(&b"get_weather"[..]));
/// assert_eq!(decode_header_value(b"=?base64?SGVsbG8sIOS4lueVjA==?=", &mut buf), Ok("Hello, 世界".as_bytes()));
/// assert_eq!(decode_header_value(b"caf\xc3\xa9", &mut buf), Err(HeaderValueError::InvalidCharacters));
/// assert_eq!(decode_header_value(b"=?base64?SGVsbG8?=", &mut buf), Err(HeaderValueError::BadBase64));
/// ```
pub fn decode_header_value<'b>(
    value: &'b [u8],
    out: &'b mut [u8],
) -> Result<&'b [u8], HeaderValueError> {
    match HeaderText::parse(value) {
        Some(HeaderText::Plain(text)) => Ok(text),
        Some(HeaderText::Base64(payload)) => {
            let needed = base64::validate(payload).ok_or(HeaderValueError::BadBase64)?;
            let out = out.get_mut(..needed).ok_or(HeaderValueError::BufferTooSmall { needed })?;
            for (slot, b) in out.iter_mut().zip(base64::decode(payload)) {
                *slot = b;
            }
            match core::str::from_utf8(out) {
                Ok(_) => Ok(out),
                Err(_) => Err(HeaderValueError::BadBase64),
            }
        }
        None => {
            let sentinel = value.starts_with(PREFIX) && value.ends_with(SUFFIX);
            Err(if sentinel {
                HeaderValueError::BadBase64
            } else {
                HeaderValueError::InvalidCharacters
            })
        }
    }
}
