//! The walks of `scan` instantiated with the NEON kernels: stage 2 over the NEON stage-1
//! blocks, and envelope mode's top-level walk with the NEON skipper and string look
//! inlined. NEON is aarch64's baseline; the functions are `#[target_feature]` only so the
//! kernels inline into them.

use crate::error::JsonError;
use crate::scan::{self, envelope, envelope::Facts, stage2, Top};
use crate::simd::{
    self,
    stage1::{self, Carry, Utf8Carry},
};

/// Strict mode's fast path (`scan::stage2`) with NEON kernels.
#[target_feature(enable = "neon")]
pub(super) fn strict_fast_neon(buf: &[u8], max_depth: usize, facts: &mut Facts) -> Option<Top> {
    stage2::walk::<_, true>(
        buf,
        max_depth,
        stage1::Stage1 {
            block: |carry: &mut Carry, bytes: &[u8]| simd::neon::block_neon(carry, bytes),
            run: |utf8: &mut Utf8Carry, rest: &[u8]| simd::neon::run_neon(utf8, rest),
        },
        facts,
    )
}

/// Envelope mode's walk of one message with the NEON skipper inlined.
#[target_feature(enable = "neon")]
pub(super) fn envelope_walk_neon(
    buf: &[u8],
    max_depth: usize,
    facts: &mut Facts,
) -> Result<Top, JsonError> {
    scan::walk_with::<false>(
        buf,
        max_depth,
        |buf, open, depth, max| simd::neon::skip_container_neon(buf, open, depth, max),
        |buf, open| string_neon(buf, open),
        facts,
    )
}

/// Envelope mode's strings that the walk reads, with a 32-byte look when 32 bytes follow
/// the opening quote ([`plain_string_neon`](simd::neon::plain_string_neon)); anything
/// else takes the portable scan.
#[target_feature(enable = "neon")]
#[inline]
pub(super) fn string_neon(buf: &[u8], open: usize) -> Result<(usize, bool), JsonError> {
    if let Some(end) = simd::neon::plain_string_neon(buf, open) {
        return Ok((end, false));
    }
    envelope::checked_string::<false>(buf, open)
}
