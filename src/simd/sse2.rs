//! SSE2, the x86_64 baseline (no run-time detection): the 16-byte look at the start of a
//! string that strict mode's string scan (`json::string::scan_strict`) takes before any
//! kernel call. Its scalar twin is two words of `scalar::string_special_in_word`
//! (`scalar::string_special_in_16`); the tests in `simd/mod.rs` hold them equal.

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
