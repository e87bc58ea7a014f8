//! The one routing point for byte-scanning kernels.
//!
//! Every hot loop of the scanner that looks at many bytes goes through a function here.
//! This issue ships the portable scalar/SWAR kernels only (`scalar.rs`); vector kernels
//! join behind the same functions, each with its scalar twin kept as the reference.

mod scalar;

/// First offset `>= from` holding `"`, `\` or a control byte (< 0x20); `buf.len()` if none.
#[inline]
pub(crate) fn find_string_special(buf: &[u8], from: usize) -> usize {
    scalar::find_string_special(buf, from)
}

/// First offset `>= from` holding `"`, `{`, `}`, `[` or `]`; `buf.len()` if none.
#[inline]
pub(crate) fn find_structural(buf: &[u8], from: usize) -> usize {
    scalar::find_structural(buf, from)
}

/// `Ok` when `buf` is all UTF-8, else the offset of the first offending byte.
#[inline]
pub(crate) fn utf8_valid_up_to(buf: &[u8]) -> Result<(), usize> {
    core::str::from_utf8(buf)
        .map(|_| ())
        .map_err(|e| e.valid_up_to())
}
