//! UTF-8 validation (SPEC §2: no overlong forms, no encoded surrogates, nothing above
//! U+10FFFF). `core::str::from_utf8` implements exactly that definition.

/// `Ok` when all of `bytes` is UTF-8, else `Err(offset of the first offending byte)`.
#[inline]
pub(crate) fn validate(bytes: &[u8]) -> Result<(), usize> {
    crate::simd::utf8_valid_up_to(bytes)
}

/// `true` when a complete, valid UTF-8 character starts at `at`.
pub(crate) fn starts_valid_char(buf: &[u8], at: usize) -> bool {
    let end = buf.len().min(at.saturating_add(4));
    match buf.get(at..end) {
        Some(window) => match core::str::from_utf8(window) {
            Ok(_) => true,
            Err(e) => e.valid_up_to() > 0,
        },
        None => false,
    }
}
