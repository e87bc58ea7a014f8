//! SSE2, the x86_64 baseline (no run-time detection): the 16-byte look at the start of a
//! string that strict mode's string scan (`json::string::scan_strict`) takes before any
//! kernel call, and the 16-byte look for a quote or backslash of the scalar level's
//! container skip and of envelope mode's string skip. Their scalar twins are SWAR words
//! (`swar::string_special_in_16`, `swar::quote_or_backslash`); the tests in
//! `simd/mod.rs` hold them equal.

use core::arch::x86_64::*;

/// Mask of `"`, `\\` and control bytes among the 16 of `window` (bit k = byte k).
#[inline(always)]
pub(crate) fn special_16(window: &[u8; 16]) -> u32 {
    // SAFETY: `window` holds exactly the 16 bytes the unaligned load reads; SSE2 is part of
    // the x86_64 baseline, so every instruction here exists on every x86_64 CPU.
    unsafe {
        let v = _mm_loadu_si128(window.as_ptr().cast());
        let hit = _mm_or_si128(
            _mm_or_si128(
                _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8)),
                _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8)),
            ),
            // Below 0x20: the unsigned minimum with 0x1F is the byte itself.
            _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1F)), v),
        );
        _mm_movemask_epi8(hit) as u32
    }
}

/// Mask of `"` and `\\` among the 16 of `window`: the scalar level's string run in the
/// container skip and envelope mode's look at a string's start
/// (`simd::quote_or_backslash_16`).
#[inline(always)]
pub(crate) fn quote_or_backslash_16(window: &[u8; 16]) -> u32 {
    // SAFETY: as in `special_16`: 16 bytes loaded from a 16-byte array, SSE2 only.
    unsafe {
        let v = _mm_loadu_si128(window.as_ptr().cast());
        let hit = _mm_or_si128(
            _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8)),
            _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8)),
        );
        _mm_movemask_epi8(hit) as u32
    }
}

/// Masks of `"`, `\\` and control bytes, and of bytes above 0x7F, among the 16 of
/// `window`: envelope mode's look at a string the walk reads, at the scalar level
/// (`simd::plain_string_16`).
#[inline(always)]
pub(crate) fn special_and_high_16(window: &[u8; 16]) -> (u32, u32) {
    // SAFETY: as in `special_16`: 16 bytes loaded from a 16-byte array, SSE2 only.
    let high = unsafe { _mm_movemask_epi8(_mm_loadu_si128(window.as_ptr().cast())) as u32 };
    (special_16(window), high)
}
