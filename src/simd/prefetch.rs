//! The block loops (the skipper, stage 1) issue a prefetch hint 4 KiB ahead of the block
//! they read, which may point past the end of the message: in a contiguous stream (an
//! NDJSON buffer, a mapped file) that is the next messages. A prefetch returns no data and
//! cannot fault, so nothing is read past the slice. It made no difference on input that
//! is in cache, and helped both modes on input much larger than the caches (read from
//! memory).

/// Prefetch hint for the bytes `PREFETCH_DISTANCE` after `at` in `buf`'s memory, which
/// may lie past the end of `buf` (in a contiguous stream, the next messages). A prefetch
/// is a hint, not a read: it returns nothing and cannot fault. A no-op on other
/// architectures, under miri and with `--cfg rpcscan_disable_simd`.
#[inline(always)]
pub(crate) fn prefetch_ahead(buf: &[u8], at: usize) {
    #[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
    {
        let ptr = buf.as_ptr().wrapping_add(at).wrapping_add(PREFETCH_DISTANCE);
        // SAFETY: PREFETCHT0 only hints the cache; it accesses no memory architecturally
        // and never faults, whatever the address (SSE, part of the x86_64 baseline).
        unsafe {
            core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(ptr.cast())
        };
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd))))]
    let _ = (buf, at);
}

/// How far ahead the block loops hint (a 1 KiB distance gained less on input much larger
/// than the caches).
#[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
const PREFETCH_DISTANCE: usize = 4096;
