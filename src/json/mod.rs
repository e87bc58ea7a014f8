//! Strict RFC 8259 pieces (docs/spec.md §2), usable on their own through [`validate`].
//!
//! The scanner uses the same functions for every value it validates, so `validate` and the
//! strict message verdicts can never disagree about what JSON is.

pub(crate) mod literal;
pub(crate) mod number;
pub(crate) mod string;
mod unescape;
pub(crate) mod utf8;

pub use crate::error::JsonError;
use crate::limits::DEFAULT_MAX_DEPTH;

/// Checks that `bytes` are exactly one JSON text under the stances of docs/spec.md §2: UTF-8 (no
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
    crate::dispatch::validate_value::<true>(bytes, DEFAULT_MAX_DEPTH).map(|_| ())
}
