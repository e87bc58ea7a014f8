//! The walks of `scan` instantiated with the AVX2 kernels: stage 2 over the AVX2
//! stage-1 blocks, and envelope mode's top-level walk with the AVX2 skipper and string
//! look inlined.

use crate::error::JsonError;
use crate::scan::{self, envelope, envelope::Facts, stage2, Top};
use crate::simd::{
    self,
    stage1::{self, Carry, Utf8Carry},
};

/// Strict mode's fast path (`scan::stage2`) with AVX2 kernels.
///
/// # Safety
/// The CPU must support AVX2 and PCLMULQDQ.
pub(super) unsafe fn strict_fast_avx2(
    buf: &[u8],
    max_depth: usize,
    facts: &mut Facts,
) -> Option<Top> {
    stage2::walk::<_, false>(
        buf,
        max_depth,
        stage1::Stage1 {
            block: |carry: &mut Carry, bytes: &[u8]| {
                // SAFETY: the caller guarantees AVX2 and PCLMULQDQ.
                unsafe { simd::avx2::block_avx2(carry, bytes) }
            },
            run: |utf8: &mut Utf8Carry, rest: &[u8]| {
                // SAFETY: the caller guarantees AVX2 and PCLMULQDQ.
                unsafe { simd::avx2::run_avx2(utf8, rest) }
            },
        },
        facts,
    )
}

/// Envelope mode's walk of one message with the AVX2 skipper inlined.
///
/// # Safety
/// The CPU must support AVX2 and PCLMULQDQ.
#[target_feature(enable = "avx2,pclmulqdq")]
pub(super) unsafe fn envelope_walk_avx2(
    buf: &[u8],
    max_depth: usize,
    facts: &mut Facts,
) -> Result<Top, JsonError> {
    scan::walk_with::<false>(
        buf,
        max_depth,
        |buf, open, depth, max| simd::avx2::skip_container_avx2(buf, open, depth, max),
        |buf, open| string_avx2(buf, open),
        facts,
    )
}

/// Envelope mode's strings that the walk reads, with a 32-byte look when 32 bytes follow
/// the opening quote ([`plain_string_avx2`](simd::avx2::plain_string_avx2)); anything
/// else takes the portable scan.
#[target_feature(enable = "avx2")]
#[inline]
pub(super) fn string_avx2(buf: &[u8], open: usize) -> Result<(usize, bool), JsonError> {
    if let Some(end) = simd::avx2::plain_string_avx2(buf, open) {
        return Ok((end, false));
    }
    envelope::checked_string::<false>(buf, open)
}
