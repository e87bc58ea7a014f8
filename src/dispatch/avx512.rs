//! The walks of `scan` instantiated with the AVX-512BW kernels: stage 2 over the AVX-512BW
//! stage-1 blocks, and envelope mode's top-level walk with the AVX-512BW skipper and string
//! look inlined.

use crate::error::JsonError;
use crate::scan::{self, envelope, envelope::Facts, stage2, Top};
use crate::simd::{
    self,
    stage1::{self, Carry, Utf8Carry},
};

/// Strict mode's fast path (`scan::stage2`) with AVX-512BW kernels.
///
/// # Safety
/// The CPU must support AVX-512BW, AVX2 and PCLMULQDQ.
pub(super) unsafe fn strict_fast_avx512(
    buf: &[u8],
    max_depth: usize,
    facts: &mut Facts,
) -> Option<Top> {
    stage2::walk::<_, false>(
        buf,
        max_depth,
        stage1::Stage1 {
            block: |carry: &mut Carry, bytes: &[u8]| {
                // SAFETY: the caller guarantees AVX-512BW, AVX2 and PCLMULQDQ.
                unsafe { simd::avx512::block_avx512(carry, bytes) }
            },
            run: |utf8: &mut Utf8Carry, rest: &[u8]| {
                // SAFETY: the caller guarantees AVX-512BW, AVX2 and PCLMULQDQ.
                unsafe { simd::avx512::run_avx512(utf8, rest) }
            },
        },
        facts,
    )
}

/// Envelope mode's walk of one message with the AVX-512BW skipper inlined.
///
/// # Safety
/// The CPU must support AVX-512BW, AVX2 and PCLMULQDQ.
#[target_feature(enable = "avx512bw,avx2,pclmulqdq")]
pub(super) unsafe fn envelope_walk_avx512(
    buf: &[u8],
    max_depth: usize,
    facts: &mut Facts,
) -> Result<Top, JsonError> {
    scan::walk_with::<false>(
        buf,
        max_depth,
        |buf, open, depth, max| simd::avx512::skip_container_avx512(buf, open, depth, max),
        |buf, open| string_avx512(buf, open),
        facts,
    )
}

/// Envelope mode's strings that the walk reads (keys, `id`, `method`): one masked 64-byte
/// look at the string ([`plain_string_avx512`](simd::avx512::plain_string_avx512)), which
/// answers for plain ones; anything else takes the portable scan.
#[target_feature(enable = "avx512bw,avx2")]
#[inline]
pub(super) fn string_avx512(buf: &[u8], open: usize) -> Result<(usize, bool), JsonError> {
    if let Some(end) = simd::avx512::plain_string_avx512(buf, open) {
        return Ok((end, false));
    }
    envelope::checked_string::<false>(buf, open)
}
