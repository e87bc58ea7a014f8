//! Building responses that echo raw ids verbatim into any [`bytes::BufMut`].
//!
//! The default layout is the one of docs/spec.md §4, byte for byte (Python `json.dumps` spacing):
//! `{"jsonrpc": "2.0", "id": ID, "error": {"code": -32600, "message": "Invalid Request"}}`.
//! [`Style::Compact`] drops the spaces.
//!
//! [`ErrorResponse`] writes errors, including the three codes MCP 2026-07-28 defines
//! ([`HEADER_MISMATCH`], [`MISSING_REQUIRED_CLIENT_CAPABILITY`],
//! [`UNSUPPORTED_PROTOCOL_VERSION`]) with their `data` shapes; [`ResultResponse`] writes a
//! success response around raw result bytes.

use bytes::BufMut;

/// -32700: invalid JSON was received.
pub const PARSE_ERROR: i64 = -32700;
/// -32600: the JSON sent is not a valid request object.
pub const INVALID_REQUEST: i64 = -32600;
/// -32601: the method does not exist or is not available.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// -32602: invalid method parameters.
pub const INVALID_PARAMS: i64 = -32602;
/// -32603: internal JSON-RPC error.
pub const INTERNAL_ERROR: i64 = -32603;
/// -32020 (MCP `HeaderMismatch`): the Streamable HTTP headers do not match the body, or
/// required headers are missing or malformed. HTTP status 400; no `data` (see
/// [`crate::mcp::HeaderMismatch::response`]).
pub const HEADER_MISMATCH: i64 = -32020;
/// -32021 (MCP `MissingRequiredClientCapability`): the request needs a client capability
/// its `_meta` did not declare. `data: {"requiredCapabilities": {...}}`
/// ([`ErrorResponse::missing_client_capability`]).
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
/// -32022 (MCP `UnsupportedProtocolVersion`): the requested protocol version is not
/// served. `data: {"supported": [...], "requested": "..."}`
/// ([`ErrorResponse::unsupported_protocol_version`]).
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// The standard message of a JSON-RPC 2.0 error code, or of one of the MCP codes above
/// (`"Header mismatch"`, `"Missing required client capability"`, `"Unsupported protocol
/// version"`), if it has one.
pub const fn standard_message(code: i64) -> Option<&'static str> {
    match code {
        PARSE_ERROR => Some("Parse error"),
        INVALID_REQUEST => Some("Invalid Request"),
        METHOD_NOT_FOUND => Some("Method not found"),
        INVALID_PARAMS => Some("Invalid params"),
        INTERNAL_ERROR => Some("Internal error"),
        HEADER_MISMATCH => Some("Header mismatch"),
        MISSING_REQUIRED_CLIENT_CAPABILITY => Some("Missing required client capability"),
        UNSUPPORTED_PROTOCOL_VERSION => Some("Unsupported protocol version"),
        _ => None,
    }
}

/// Layout of the written JSON.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Style {
    /// `{"jsonrpc": "2.0", "id": 1, ...}`: the spacing of docs/spec.md §4 and the CLI.
    #[default]
    Spaced,
    /// `{"jsonrpc":"2.0","id":1,...}`.
    Compact,
}

/// An error response under construction. Cheap, `Copy`, builder-style.
///
/// ```
/// use rpcscan::response::{ErrorResponse, Style, METHOD_NOT_FOUND};
/// let msg = rpcscan::parse(br#"{"jsonrpc":"2.0","id":"a\u0062","method":"x"}"#).unwrap();
/// let mut out = Vec::new();
/// ErrorResponse::standard(METHOD_NOT_FOUND).id(msg.id().unwrap().raw()).write(&mut out);
/// assert_eq!(out, br#"{"jsonrpc": "2.0", "id": "a\u0062", "error": {"code": -32601, "message": "Method not found"}}"#);
///
/// let compact = ErrorResponse::new(-32000, "busy").data(b"[1]").style(Style::Compact).to_vec();
/// assert_eq!(compact, br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"busy","data":[1]}}"#);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ErrorResponse<'a> {
    id: Option<&'a [u8]>,
    code: i64,
    message: &'a str,
    data: Data<'a>,
    style: Style,
}

/// The `data` member of an error response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Data<'a> {
    None,
    /// Raw JSON, written verbatim.
    Raw(&'a [u8]),
    /// `{"requiredCapabilities": RAW}` (-32021).
    RequiredCapabilities(&'a [u8]),
    /// `{"supported": [...], "requested": "..."}` (-32022).
    UnsupportedVersion {
        supported: &'a [&'a str],
        requested: &'a str,
    },
}

impl<'a> ErrorResponse<'a> {
    /// An error response with `id: null`, the given code and message (escaped as needed).
    pub const fn new(code: i64, message: &'a str) -> Self {
        ErrorResponse { id: None, code, message, data: Data::None, style: Style::Spaced }
    }

    /// -32021 `MissingRequiredClientCapability`, with
    /// `data: {"requiredCapabilities": CAPABILITIES}`; `capabilities` is a raw JSON object
    /// (a `ClientCapabilities` fragment, written verbatim: the caller vouches for it).
    ///
    /// ```
    /// use rpcscan::response::ErrorResponse;
    /// let v = ErrorResponse::missing_client_capability(br#"{"elicitation":{}}"#).id(b"3").to_vec();
    /// assert_eq!(v, br#"{"jsonrpc": "2.0", "id": 3, "error": {"code": -32021, "message": "Missing required client capability", "data": {"requiredCapabilities": {"elicitation":{}}}}}"#);
    /// ```
    pub const fn missing_client_capability(capabilities: &'a [u8]) -> Self {
        let mut response = ErrorResponse::new(
            MISSING_REQUIRED_CLIENT_CAPABILITY,
            "Missing required client capability",
        );
        response.data = Data::RequiredCapabilities(capabilities);
        response
    }

    /// -32022 `UnsupportedProtocolVersion`, with
    /// `data: {"supported": [SUPPORTED...], "requested": REQUESTED}` (strings escaped as
    /// needed; key order as in the specification's example).
    ///
    /// ```
    /// use rpcscan::response::{ErrorResponse, Style};
    /// let v = ErrorResponse::unsupported_protocol_version("1900-01-01", &["2026-07-28", "2025-11-25"])
    ///     .id(b"1")
    ///     .to_vec();
    /// assert_eq!(v, br#"{"jsonrpc": "2.0", "id": 1, "error": {"code": -32022, "message": "Unsupported protocol version", "data": {"supported": ["2026-07-28", "2025-11-25"], "requested": "1900-01-01"}}}"#);
    /// ```
    pub const fn unsupported_protocol_version(
        requested: &'a str,
        supported: &'a [&'a str],
    ) -> Self {
        let mut response =
            ErrorResponse::new(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version");
        response.data = Data::UnsupportedVersion { supported, requested };
        response
    }

    /// An error response with the standard message for `code` (`"Server error"` for codes
    /// without one).
    pub const fn standard(code: i64) -> Self {
        match standard_message(code) {
            Some(message) => ErrorResponse::new(code, message),
            None => ErrorResponse::new(code, "Server error"),
        }
    }

    /// Echo these raw id bytes verbatim (e.g. [`crate::Id::raw`]); the default is `null`.
    pub const fn id(mut self, raw: &'a [u8]) -> Self {
        self.id = Some(raw);
        self
    }

    /// Sets the `data` member: raw JSON bytes written verbatim (the caller vouches for
    /// them). Replaces any `data` a constructor set.
    pub const fn data(mut self, raw_json: &'a [u8]) -> Self {
        self.data = Data::Raw(raw_json);
        self
    }

    /// Chooses the layout.
    pub const fn style(mut self, style: Style) -> Self {
        self.style = style;
        self
    }

    /// Appends the response (no trailing newline) to `buf`.
    pub fn write<B: BufMut>(&self, buf: &mut B) {
        let (colon, comma) = write_head(buf, self.style, self.id.unwrap_or(b"null"), b"error");
        buf.put_slice(b"{\"code\"");
        buf.put_slice(colon);
        let mut digits = [0u8; 20];
        buf.put_slice(format_i64(self.code, &mut digits));
        buf.put_slice(comma);
        buf.put_slice(b"\"message\"");
        buf.put_slice(colon);
        write_json_string(buf, self.message);
        if !matches!(self.data, Data::None) {
            buf.put_slice(comma);
            buf.put_slice(b"\"data\"");
            buf.put_slice(colon);
        }
        match self.data {
            Data::None => {}
            Data::Raw(data) => buf.put_slice(data),
            Data::RequiredCapabilities(capabilities) => {
                buf.put_slice(b"{\"requiredCapabilities\"");
                buf.put_slice(colon);
                buf.put_slice(capabilities);
                buf.put_u8(b'}');
            }
            Data::UnsupportedVersion { supported, requested } => {
                buf.put_slice(b"{\"supported\"");
                buf.put_slice(colon);
                buf.put_u8(b'[');
                for (i, version) in supported.iter().enumerate() {
                    if i > 0 {
                        buf.put_slice(comma);
                    }
                    write_json_string(buf, version);
                }
                buf.put_u8(b']');
                buf.put_slice(comma);
                buf.put_slice(b"\"requested\"");
                buf.put_slice(colon);
                write_json_string(buf, requested);
                buf.put_u8(b'}');
            }
        }
        buf.put_slice(b"}}");
    }

    /// The response as a new `Vec` (convenience for tests and cold paths).
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(96 + self.message.len());
        self.write(&mut out);
        out
    }
}

/// A success response under construction: raw id bytes and raw result bytes, both
/// echoed verbatim (the caller vouches for them, e.g. [`crate::Id::raw`] and
/// [`crate::Raw::as_bytes`]).
///
/// ```
/// use rpcscan::response::{ResultResponse, Style};
/// let request = rpcscan::parse(br#"{"jsonrpc":"2.0","id":18446744073709551617,"method":"ping"}"#).unwrap();
/// let id = request.id().unwrap().raw();
/// assert_eq!(
///     ResultResponse::new(id, b"{}").to_vec(),
///     br#"{"jsonrpc": "2.0", "id": 18446744073709551617, "result": {}}"#
/// );
/// assert_eq!(
///     ResultResponse::new(id, br#"{"resultType": "complete"}"#).style(Style::Compact).to_vec(),
///     br#"{"jsonrpc":"2.0","id":18446744073709551617,"result":{"resultType": "complete"}}"#
/// );
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResultResponse<'a> {
    id: &'a [u8],
    result: &'a [u8],
    style: Style,
}

impl<'a> ResultResponse<'a> {
    /// A success response for the request whose raw id is `id`, carrying `result` (any
    /// JSON value).
    pub const fn new(id: &'a [u8], result: &'a [u8]) -> Self {
        ResultResponse { id, result, style: Style::Spaced }
    }

    /// Chooses the layout of the envelope (the result bytes are written as given).
    pub const fn style(mut self, style: Style) -> Self {
        self.style = style;
        self
    }

    /// Appends the response (no trailing newline) to `buf`.
    pub fn write<B: BufMut>(&self, buf: &mut B) {
        write_head(buf, self.style, self.id, b"result");
        buf.put_slice(self.result);
        buf.put_u8(b'}');
    }

    /// The response as a new `Vec`.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(40 + self.id.len() + self.result.len());
        self.write(&mut out);
        out
    }
}

/// Writes `{"jsonrpc": "2.0", "id": ID, "KEY": ` (the part every response shares) and
/// returns the style's colon and comma for the rest.
fn write_head<B: BufMut>(
    buf: &mut B,
    style: Style,
    id: &[u8],
    key: &[u8],
) -> (&'static [u8], &'static [u8]) {
    let (colon, comma): (&'static [u8], &'static [u8]) = match style {
        Style::Spaced => (b": ", b", "),
        Style::Compact => (b":", b","),
    };
    for part in [
        &b"{\"jsonrpc\""[..],
        colon,
        b"\"2.0\"",
        comma,
        b"\"id\"",
        colon,
        id,
        comma,
        b"\"",
        key,
        b"\"",
        colon,
    ] {
        buf.put_slice(part);
    }
    (colon, comma)
}

/// Writes `s` as a JSON string, quotes included: `"`, `\` and control characters escaped
/// (`\n`, `\r`, `\t`, else `\u00XX`), all other text as UTF-8.
///
/// ```
/// let mut out = Vec::new();
/// rpcscan::response::write_json_string(&mut out, "a\"b\n\u{1}é");
/// assert_eq!(out, "\"a\\\"b\\n\\u0001é\"".as_bytes());
/// ```
pub fn write_json_string<B: BufMut>(buf: &mut B, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    buf.put_u8(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0..=0x1F => b"",
            _ => continue,
        };
        buf.put_slice(bytes.get(start..i).unwrap_or_default());
        if escape.is_empty() {
            let hex =
                [b'\\', b'u', b'0', b'0', HEX[usize::from(b >> 4)], HEX[usize::from(b & 0xF)]];
            buf.put_slice(&hex);
        } else {
            buf.put_slice(escape);
        }
        start = i + 1;
    }
    buf.put_slice(bytes.get(start..).unwrap_or_default());
    buf.put_u8(b'"');
}

/// Formats an `i64` into `out`, returning the used tail.
fn format_i64(v: i64, out: &mut [u8; 20]) -> &[u8] {
    let mut n = v.unsigned_abs();
    let mut i = out.len();
    loop {
        i -= 1;
        out[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if v < 0 {
        i -= 1;
        out[i] = b'-';
    }
    &out[i..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_section_4_bytes() {
        assert_eq!(
            ErrorResponse::standard(PARSE_ERROR).to_vec(),
            br#"{"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}"#
        );
        assert_eq!(
            ErrorResponse::standard(INVALID_REQUEST).id(b"\"x\"").to_vec(),
            br#"{"jsonrpc": "2.0", "id": "x", "error": {"code": -32600, "message": "Invalid Request"}}"#
        );
        assert_eq!(
            ErrorResponse::standard(METHOD_NOT_FOUND).id(b"42").to_vec(),
            br#"{"jsonrpc": "2.0", "id": 42, "error": {"code": -32601, "message": "Method not found"}}"#
        );
    }

    #[test]
    fn formats_extreme_codes_and_escapes_messages() {
        let mut d = [0u8; 20];
        assert_eq!(format_i64(i64::MIN, &mut d), b"-9223372036854775808");
        assert_eq!(format_i64(0, &mut d), b"0");
        let v = ErrorResponse::new(1, "a\"b\\c\n\u{1}é").style(Style::Compact).to_vec();
        assert_eq!(
            v,
            "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":1,\"message\":\"a\\\"b\\\\c\\n\\u0001é\"}}".as_bytes()
        );
    }
}
