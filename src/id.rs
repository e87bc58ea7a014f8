//! Request ids and error codes: exact raw bytes plus typed access.

use core::fmt;
use core::hash::{Hash, Hasher};

use crate::text::Str;

/// A JSON-RPC id: a string, an integer literal of any size, or `null` (error responses only).
///
/// [`Id::raw`] is the exact bytes to echo: ids above 2^53, `-0` and escaped strings survive
/// a round trip. Equality and hashing follow the decoded value: `"a"` equals `"\u0061"`,
/// `-0` equals `0`, and `1` never equals `"1"`.
///
/// ```
/// let msg = rpcscan::parse(br#"{"jsonrpc":"2.0","id":18446744073709551617,"method":"m"}"#).unwrap();
/// let id = msg.id().unwrap();
/// assert_eq!(id.raw(), b"18446744073709551617"); // above u64, kept verbatim
/// assert_eq!(id.as_u64(), None);
/// assert!(id.is_integer());
/// ```
#[derive(Clone, Copy)]
pub struct Id<'a> {
    raw: &'a [u8],
    kind: IdKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IdKind {
    Integer,
    String { escaped: bool },
    Null,
}

impl<'a> Id<'a> {
    pub(crate) const fn new(raw: &'a [u8], kind: IdKind) -> Self {
        Id { raw, kind }
    }

    /// The id's exact bytes in the message (with the quotes, for a string id).
    pub const fn raw(&self) -> &'a [u8] {
        self.raw
    }

    /// `true` for an integer literal id.
    pub const fn is_integer(&self) -> bool {
        matches!(self.kind, IdKind::Integer)
    }

    /// `true` for a string id.
    pub const fn is_string(&self) -> bool {
        matches!(self.kind, IdKind::String { .. })
    }

    /// `true` for `null` (only error responses carry one).
    pub const fn is_null(&self) -> bool {
        matches!(self.kind, IdKind::Null)
    }

    /// The integer value when the id is an integer that fits an `i64`.
    pub fn as_i64(&self) -> Option<i64> {
        match self.kind {
            IdKind::Integer => parse_i64(self.raw),
            _ => None,
        }
    }

    /// The integer value when the id is a non-negative integer (or `-0`) that fits a `u64`.
    pub fn as_u64(&self) -> Option<u64> {
        match self.kind {
            IdKind::Integer => parse_u64(self.raw),
            _ => None,
        }
    }

    /// The string when the id is a string; [`Str::decode`] gives the text.
    pub fn as_str(&self) -> Option<Str<'a>> {
        match self.kind {
            IdKind::String { escaped } => {
                let inner = self.raw.get(1..self.raw.len().saturating_sub(1))?;
                Some(Str::new(inner, escaped))
            }
            _ => None,
        }
    }

    /// Integer digits with `-0` folded into `0`, for equality and hashing.
    fn integer_key(&self) -> &'a [u8] {
        if self.raw == b"-0" {
            b"0"
        } else {
            self.raw
        }
    }
}

impl PartialEq for Id<'_> {
    fn eq(&self, other: &Id<'_>) -> bool {
        match (self.kind, other.kind) {
            (IdKind::Integer, IdKind::Integer) => self.integer_key() == other.integer_key(),
            (IdKind::Null, IdKind::Null) => true,
            (IdKind::String { .. }, IdKind::String { .. }) => self.as_str() == other.as_str(),
            _ => false,
        }
    }
}

impl Eq for Id<'_> {}

impl Hash for Id<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match self.kind {
            IdKind::Integer => {
                state.write_u8(0);
                state.write(self.integer_key());
            }
            IdKind::String { .. } => {
                state.write_u8(1);
                if let Some(s) = self.as_str() {
                    s.hash_decoded(state);
                }
            }
            IdKind::Null => state.write_u8(2),
        }
    }
}

impl fmt::Debug for Id<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Id({})", String::from_utf8_lossy(self.raw))
    }
}

impl fmt::Display for Id<'_> {
    /// The raw id as it appears in the message.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&String::from_utf8_lossy(self.raw))
    }
}

/// An error response's `code`: an integer literal of any size.
///
/// ```
/// let msg = rpcscan::parse(br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"nope"}}"#).unwrap();
/// let code = msg.error_code().unwrap();
/// assert_eq!(code.as_i64(), Some(-32601));
/// assert_eq!(code.raw(), b"-32601");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ErrorCode<'a> {
    raw: &'a [u8],
}

impl<'a> ErrorCode<'a> {
    pub(crate) const fn new(raw: &'a [u8]) -> Self {
        ErrorCode { raw }
    }

    /// The literal digits (with a leading `-` when negative), exactly as sent.
    pub const fn raw(&self) -> &'a [u8] {
        self.raw
    }

    /// The value when it fits an `i64`.
    pub fn as_i64(&self) -> Option<i64> {
        parse_i64(self.raw)
    }
}

impl fmt::Debug for ErrorCode<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ErrorCode({})", String::from_utf8_lossy(self.raw))
    }
}

/// Parses an integer literal (`-?digits`) into an `i64`, `None` on overflow or non-digits.
pub(crate) fn parse_i64(raw: &[u8]) -> Option<i64> {
    let (negative, digits) = match raw.split_first()? {
        (b'-', rest) => (true, rest),
        _ => (false, raw),
    };
    if digits.is_empty() {
        return None;
    }
    let mut v: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        let d = i64::from(d - b'0');
        v = v.checked_mul(10)?;
        v = if negative { v.checked_sub(d)? } else { v.checked_add(d)? };
    }
    Some(v)
}

fn parse_u64(raw: &[u8]) -> Option<u64> {
    let digits = match raw.split_first()? {
        (b'-', rest) => {
            // Only -0 is a non-negative integer.
            return (!rest.is_empty() && rest.iter().all(|&d| d == b'0')).then_some(0);
        }
        _ => raw,
    };
    let mut v: u64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::hash_map::DefaultHasher;

    fn int(raw: &str) -> Id<'_> {
        Id::new(raw.as_bytes(), IdKind::Integer)
    }
    fn string(raw: &str) -> Id<'_> {
        Id::new(raw.as_bytes(), IdKind::String { escaped: raw.contains('\\') })
    }
    fn hash(id: Id<'_>) -> u64 {
        let mut h = DefaultHasher::new();
        id.hash(&mut h);
        h.finish()
    }

    #[test]
    fn integers() {
        assert_eq!(int("9223372036854775807").as_i64(), Some(i64::MAX));
        assert_eq!(int("-9223372036854775808").as_i64(), Some(i64::MIN));
        assert_eq!(int("9223372036854775808").as_i64(), None);
        assert_eq!(int("18446744073709551615").as_u64(), Some(u64::MAX));
        assert_eq!(int("18446744073709551616").as_u64(), None);
        assert_eq!(int("-1").as_u64(), None);
        assert_eq!(int("-0").as_u64(), Some(0));
        assert_eq!(int("-0").as_i64(), Some(0));
        assert_eq!(parse_i64(b"-"), None);
        assert_eq!(parse_i64(b""), None);
    }

    #[test]
    fn equality_follows_decoded_value() {
        assert_eq!(string(r#""a""#), string(r#""\u0061""#));
        assert_eq!(hash(string(r#""a""#)), hash(string(r#""\u0061""#)));
        assert_eq!(int("-0"), int("0"));
        assert_eq!(hash(int("-0")), hash(int("0")));
        assert_ne!(int("1"), string(r#""1""#));
        assert_ne!(hash(int("1")), hash(string(r#""1""#)));
        assert_ne!(int("10"), int("1"));
        assert_eq!(Id::new(b"null", IdKind::Null), Id::new(b"null", IdKind::Null));
        assert_eq!(string(r#""x""#).as_str().unwrap().decode().unwrap(), "x");
    }
}
