//! UTF-8 validation (docs/spec.md §2: no overlong forms, no encoded surrogates, nothing above
//! U+10FFFF). `core::str::from_utf8` implements exactly that definition.

use crate::simd::Kernels;

/// `Ok` when all of `bytes` is UTF-8, else `Err(offset of the first offending byte)`.
#[inline]
pub(crate) fn validate<K: Kernels>(k: K, bytes: &[u8]) -> Result<(), usize> {
    k.utf8_valid_up_to(bytes)
}
