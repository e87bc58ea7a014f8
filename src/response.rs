//! Building responses that echo raw ids verbatim into any [`bytes::BufMut`].
//!
//! The default layout is the one of SPEC §4, byte for byte (Python `json.dumps` spacing):
//! `{"jsonrpc": "2.0", "id": ID, "error": {"code": -32600, "message": "Invalid Request"}}`.
//! [`Style::Compact`] drops the spaces.

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

/// The standard message of a JSON-RPC 2.0 error code, if it has one.
pub const fn standard_message(code: i64) -> Option<&'static str> {
    match code {
        PARSE_ERROR => Some("Parse error"),
        INVALID_REQUEST => Some("Invalid Request"),
        METHOD_NOT_FOUND => Some("Method not found"),
        INVALID_PARAMS => Some("Invalid params"),
        INTERNAL_ERROR => Some("Internal error"),
        _ => None,
    }
}

/// Layout of the written JSON.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Style {
    /// `{"jsonrpc": "2.0", "id": 1, ...}`: the spacing of SPEC §4 and the CLI.
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
    data: Option<&'a [u8]>,
    style: Style,
}

impl<'a> ErrorResponse<'a> {
    /// An error response with `id: null`, the given code and message (escaped as needed).
    pub const fn new(code: i64, message: &'a str) -> Self {
        ErrorResponse {
            id: None,
            code,
            message,
            data: None,
            style: Style::Spaced,
        }
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

    /// Adds a `data` member: raw JSON bytes written verbatim (the caller vouches for them).
    pub const fn data(mut self, raw_json: &'a [u8]) -> Self {
        self.data = Some(raw_json);
        self
    }

    /// Chooses the layout.
    pub const fn style(mut self, style: Style) -> Self {
        self.style = style;
        self
    }

    /// Appends the response (no trailing newline) to `buf`.
    pub fn write<B: BufMut>(&self, buf: &mut B) {
        let (colon, comma) = match self.style {
            Style::Spaced => (&b": "[..], &b", "[..]),
            Style::Compact => (&b":"[..], &b","[..]),
        };
        buf.put_slice(b"{\"jsonrpc\"");
        buf.put_slice(colon);
        buf.put_slice(b"\"2.0\"");
        buf.put_slice(comma);
        buf.put_slice(b"\"id\"");
        buf.put_slice(colon);
        buf.put_slice(self.id.unwrap_or(b"null"));
        buf.put_slice(comma);
        buf.put_slice(b"\"error\"");
        buf.put_slice(colon);
        buf.put_slice(b"{\"code\"");
        buf.put_slice(colon);
        let mut digits = [0u8; 20];
        buf.put_slice(format_i64(self.code, &mut digits));
        buf.put_slice(comma);
        buf.put_slice(b"\"message\"");
        buf.put_slice(colon);
        write_json_string(buf, self.message);
        if let Some(data) = self.data {
            buf.put_slice(comma);
            buf.put_slice(b"\"data\"");
            buf.put_slice(colon);
            buf.put_slice(data);
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

/// Writes `s` as a JSON string: `"` and `\` and control characters escaped, other text as
/// UTF-8.
pub(crate) fn write_json_string<B: BufMut>(buf: &mut B, s: &str) {
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
            let hex = [
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 0xF)],
            ];
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
        let v = ErrorResponse::new(1, "a\"b\\c\n\u{1}é")
            .style(Style::Compact)
            .to_vec();
        assert_eq!(
            v,
            "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":1,\"message\":\"a\\\"b\\\\c\\n\\u0001é\"}}".as_bytes()
        );
    }
}
