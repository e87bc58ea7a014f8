//! Strict RFC 8259 pieces (SPEC §2), usable on their own through [`validate`].
//!
//! The scanner uses the same functions for every value it validates, so `validate` and the
//! strict message verdicts can never disagree about what JSON is.

pub(crate) mod literal;
pub(crate) mod number;
pub(crate) mod string;
pub(crate) mod utf8;

use core::fmt;

use crate::invalid::Reason;
use crate::parser::DEFAULT_MAX_DEPTH;

/// Why bytes are not one strict JSON text, and where.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JsonError {
    reason: Reason,
    offset: usize,
}

impl JsonError {
    pub(crate) const fn new(reason: Reason, offset: usize) -> Self {
        JsonError { reason, offset }
    }

    /// The input ended inside a value.
    pub(crate) const fn eof(len: usize) -> Self {
        JsonError::new(Reason::Syntax, len)
    }

    /// The byte at `at` is not allowed here. A byte that starts no valid UTF-8 sequence is
    /// reported as [`Reason::InvalidUtf8`], anything else (end of input included) as
    /// [`Reason::Syntax`].
    #[cold]
    pub(crate) fn unexpected(buf: &[u8], at: usize) -> Self {
        match buf.get(at) {
            Some(&b) if b >= 0x80 && !utf8::starts_valid_char(buf, at) => {
                JsonError::new(Reason::InvalidUtf8, at)
            }
            Some(_) => JsonError::new(Reason::Syntax, at),
            None => JsonError::eof(buf.len()),
        }
    }

    /// The reason: one of the -32700 family of [`Reason`].
    pub const fn reason(&self) -> Reason {
        self.reason
    }

    /// Byte offset of the first offending byte (the input length when it ended too early).
    pub const fn offset(&self) -> usize {
        self.offset
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.reason, self.offset)
    }
}

impl std::error::Error for JsonError {}

/// Checks that `bytes` are exactly one JSON text under the stances of SPEC §2: UTF-8 (no
/// BOM), RFC 8259 grammar, nesting at most 1024, nothing but whitespace after the value.
/// Any top-level value is accepted (a scalar is valid JSON, just not a valid message).
///
/// ```
/// use rpcscan::{json, Reason};
/// assert!(json::validate(b" [1, 2.5e-3, \"\\ud800\", {}] ").is_ok());
/// assert_eq!(json::validate(b"01").unwrap_err().reason(), Reason::TrailingBytes);
/// assert_eq!(json::validate(b"\xEF\xBB\xBF{}").unwrap_err().reason(), Reason::Bom);
/// ```
pub fn validate(bytes: &[u8]) -> Result<(), JsonError> {
    crate::scan::validate_value::<true>(bytes, DEFAULT_MAX_DEPTH).map(|_| ())
}
