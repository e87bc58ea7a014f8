//! The error of the JSON layers: why bytes are not one strict JSON text, and where.
//! A leaf: every layer from the kernels up returns it, so it imports only [`Reason`].

use core::fmt;

use crate::invalid::Reason;

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
            Some(&b) if b >= 0x80 && !starts_valid_char(buf, at) => {
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

/// `true` when a complete, valid UTF-8 character starts at `at`.
fn starts_valid_char(buf: &[u8], at: usize) -> bool {
    let end = buf.len().min(at.saturating_add(4));
    match buf.get(at..end) {
        Some(window) => match core::str::from_utf8(window) {
            Ok(_) => true,
            Err(e) => e.valid_up_to() > 0,
        },
        None => false,
    }
}
