//! The one routing point for byte-scanning kernels, and the only home of `unsafe`.
//!
//! Every hot loop that looks at many bytes goes through a function here. The CPU level is
//! detected once and cached in an atomic (no per-call detection); `RPCSCAN_FORCE=scalar|
//! avx2|avx512|neon` picks a level for tests and benchmarks (a level the CPU lacks falls
//! back to the best it has), and miri or `--cfg rpcscan_disable_simd` always use the
//! portable twin. Each vector kernel has a scalar/SWAR twin in `scalar.rs` that is always
//! compiled and is the reference the vector kernels are tested against.
//!
//! Kernels that run per string are preceded by an inline SWAR look at the first bytes, so
//! short strings (most keys) never pay for the out-of-line call.
//!
//! The block loops (the skipper, stage 1) issue a prefetch hint 4 KiB ahead of the block
//! they read, which may point past the end of the message: in a contiguous stream (an
//! NDJSON buffer, a mapped file) that is the next messages. A prefetch returns no data and
//! cannot fault, so nothing is read past the slice. It made no measurable difference on
//! input that is in cache and brought throughput at 200 MB (input from DRAM, where memchr
//! itself drops from ~28 to ~6.6 GB/s on the development VM) from 70-73% to 82-84% of the
//! 1 MB figure in envelope mode, and from 70-86% to 90-96% in strict mode.
#![allow(unsafe_code)]

mod scalar;
pub(crate) mod skipper;
pub(crate) mod stage1;
#[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
mod x86;

use core::sync::atomic::{AtomicU8, Ordering};

use crate::error::JsonError;
use crate::json::string;
use crate::scan::{envelope::Facts, Top};

pub(crate) use skipper::skip_container;

/// A kernel level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Level {
    Scalar = 1,
    Avx2 = 2,
    Avx512 = 3,
}

impl Level {
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Level::Scalar => "scalar",
            Level::Avx2 => "avx2",
            Level::Avx512 => "avx512",
        }
    }
}

static LEVEL: AtomicU8 = AtomicU8::new(0);

/// The cached kernel level.
#[inline(always)]
pub(crate) fn level() -> Level {
    match LEVEL.load(Ordering::Relaxed) {
        1 => Level::Scalar,
        2 => Level::Avx2,
        3 => Level::Avx512,
        _ => detect(),
    }
}

/// The best level this CPU supports.
pub(crate) fn best_supported() -> Level {
    #[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
    {
        if x86::has_avx512() {
            return Level::Avx512;
        }
        if x86::has_avx2() {
            return Level::Avx2;
        }
    }
    Level::Scalar
}

#[cold]
fn detect() -> Level {
    let best = best_supported();
    let level = match std::env::var_os("RPCSCAN_FORCE") {
        Some(v) if v == "scalar" => Level::Scalar,
        Some(v) if v == "avx2" && best == Level::Avx512 => Level::Avx2,
        // "avx512", "neon" (not on this architecture), anything else: the best we have.
        _ => best,
    };
    LEVEL.store(level as u8, Ordering::Relaxed);
    level
}

/// The name of the kernel level in use (`"scalar"`, `"avx2"` or `"avx512"`).
pub fn kernel_level() -> &'static str {
    level().name()
}

pub(crate) use scalar::{string_special_in_word, string_special_window};

/// Prefetch hint for the bytes `PREFETCH_DISTANCE` after `at` in `buf`'s memory, which
/// may lie past the end of `buf` (in a contiguous stream, the next messages). A prefetch
/// is a hint, not a read: it returns nothing and cannot fault. A no-op on other
/// architectures, under miri and with `--cfg rpcscan_disable_simd`.
#[inline(always)]
pub(crate) fn prefetch_ahead(buf: &[u8], at: usize) {
    #[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
    {
        let ptr = buf
            .as_ptr()
            .wrapping_add(at)
            .wrapping_add(PREFETCH_DISTANCE);
        // SAFETY: PREFETCHT0 only hints the cache; it accesses no memory architecturally
        // and never faults, whatever the address (SSE, part of the x86_64 baseline).
        unsafe {
            core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(ptr.cast())
        };
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd))))]
    let _ = (buf, at);
}

/// How far ahead the block loops hint: 1 KiB gained less at 200 MB (envelope 81-82% of
/// the 1 MB throughput instead of 82-84%).
#[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
const PREFETCH_DISTANCE: usize = 4096;

/// The rest of a string from `from` (just inside it): the offset after the closing quote
/// and whether it had escapes. One call per string, whatever its escapes.
#[inline]
pub(crate) fn scan_string(buf: &[u8], from: usize) -> Result<(usize, bool), JsonError> {
    scan_string_at(level(), buf, from)
}

/// [`scan_string`] at a given level.
pub(crate) fn scan_string_at(
    level: Level,
    buf: &[u8],
    from: usize,
) -> Result<(usize, bool), JsonError> {
    match level {
        #[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
        Level::Avx512 if x86::has_avx512() => {
            // SAFETY: the CPU supports AVX-512BW (checked above; cached after the first call).
            unsafe { x86::scan_string_avx512(buf, from) }
        }
        #[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
        Level::Avx2 | Level::Avx512 if x86::has_avx2() => {
            // SAFETY: the CPU supports AVX2 (checked above; cached after the first call).
            unsafe { x86::scan_string_avx2(buf, from) }
        }
        _ => string::scan_swar(buf, from, false),
    }
}

/// Strict mode's fast path (`scan::stage2`): `Some` when the message is valid JSON, with the
/// walk's result; `None` means "use the exact path". At the scalar level the exact path
/// goes first: byte-at-a-time token masks would be slower than it.
#[inline]
pub(crate) fn strict_fast(buf: &[u8], max_depth: usize, facts: &mut Facts) -> Option<Top> {
    match level() {
        Level::Scalar => None,
        level => strict_fast_at(level, buf, max_depth, facts),
    }
}

/// [`strict_fast`] at a given level; the scalar level runs the fast path with the scalar
/// twins of the kernels (tests compare every level with the exact path).
pub(crate) fn strict_fast_at(
    level: Level,
    buf: &[u8],
    max_depth: usize,
    facts: &mut Facts,
) -> Option<Top> {
    match level {
        #[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
        Level::Avx512 if x86::has_avx512() => {
            // SAFETY: the CPU supports AVX-512BW and PCLMULQDQ (checked just above).
            unsafe { x86::strict_fast_avx512(buf, max_depth, facts) }
        }
        #[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
        Level::Avx2 | Level::Avx512 if x86::has_avx2() => {
            // SAFETY: the CPU supports AVX2 and PCLMULQDQ (checked just above).
            unsafe { x86::strict_fast_avx2(buf, max_depth, facts) }
        }
        _ => crate::scan::stage2::walk::<_, true>(
            buf,
            max_depth,
            |carry: &mut stage1::Carry, bytes: &[u8]| {
                let chunk = stage1::padded(bytes);
                stage1::block(
                    carry,
                    &chunk,
                    scalar::token_masks,
                    scalar::escape_masks,
                    scalar::prefix_xor,
                    stage1::range_utf8,
                )
            },
            facts,
        ),
    }
}

/// Envelope mode's walk of one message (`scan::walk_with::<false>`), instantiated per kernel
/// level so the level's container skipper inlines into it: the level is looked up once per
/// message instead of once per skipped container.
#[inline]
pub(crate) fn envelope_walk(
    buf: &[u8],
    max_depth: usize,
    facts: &mut Facts,
) -> Result<Top, JsonError> {
    envelope_walk_at(level(), buf, max_depth, facts)
}

/// [`envelope_walk`] at a given level.
pub(crate) fn envelope_walk_at(
    level: Level,
    buf: &[u8],
    max_depth: usize,
    facts: &mut Facts,
) -> Result<Top, JsonError> {
    match level {
        #[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
        Level::Avx512 if x86::has_avx512() => {
            // SAFETY: the CPU supports AVX-512BW and PCLMULQDQ (checked just above).
            unsafe { x86::envelope_walk_avx512(buf, max_depth, facts) }
        }
        #[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
        Level::Avx2 | Level::Avx512 if x86::has_avx2() => {
            // SAFETY: the CPU supports AVX2 and PCLMULQDQ (checked just above).
            unsafe { x86::envelope_walk_avx2(buf, max_depth, facts) }
        }
        _ => crate::scan::walk_with::<false>(
            buf,
            max_depth,
            |buf, open, depth, max| {
                skipper::skip_container_at(Level::Scalar, buf, open, depth, max)
            },
            crate::scan::envelope::checked_string::<false>,
            facts,
        ),
    }
}

/// The string-special mask of the window at `i` for a level, and the window's width.
#[cfg(test)]
pub(crate) fn special_window_at(level: Level, buf: &[u8], i: usize) -> Option<(u64, usize)> {
    match level {
        #[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
        Level::Avx512 if x86::has_avx512() => {
            // SAFETY: the CPU supports AVX-512BW (checked just above).
            unsafe { x86::special_window_avx512(buf, i) }.map(|m| (m, 64))
        }
        #[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
        Level::Avx2 | Level::Avx512 if x86::has_avx2() => {
            // SAFETY: the CPU supports AVX2 (checked just above).
            unsafe { x86::special_window_avx2(buf, i) }.map(|m| (m, 32))
        }
        _ => scalar::string_special_window(buf, i).map(|m| (m, 8)),
    }
}

/// `Ok` when `buf` is all UTF-8, else the offset of the first offending byte.
#[inline]
pub(crate) fn utf8_valid_up_to(buf: &[u8]) -> Result<(), usize> {
    utf8_valid_up_to_at(level(), buf)
}

/// [`utf8_valid_up_to`] at a given level. The vector path is the `simdutf8` crate (its own
/// runtime dispatch); the scalar twin is `core::str::from_utf8`. Both implement the same
/// definition of UTF-8, and the error offset always comes from `core`.
pub(crate) fn utf8_valid_up_to_at(level: Level, buf: &[u8]) -> Result<(), usize> {
    if level != Level::Scalar && simdutf8::basic::from_utf8(buf).is_ok() {
        return Ok(());
    }
    core::str::from_utf8(buf)
        .map(|_| ())
        .map_err(|e| e.valid_up_to())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Runs `f` on copies of `msg` that start at 8 different alignments.
    pub(crate) fn at_each_alignment(msg: &[u8], mut f: impl FnMut(&[u8])) {
        let mut storage = vec![0u8; msg.len() + 8];
        for align in 0..8 {
            let buf = &mut storage[align..align + msg.len()];
            buf.copy_from_slice(msg);
            f(buf);
        }
    }

    /// Every level this machine supports, scalar first.
    pub(crate) fn levels() -> Vec<Level> {
        let mut v = vec![Level::Scalar];
        match best_supported() {
            Level::Avx512 => v.extend([Level::Avx2, Level::Avx512]),
            Level::Avx2 => v.push(Level::Avx2),
            Level::Scalar => {}
        }
        v
    }

    #[test]
    fn window_masks_are_exact_on_every_length_alignment_and_offset() {
        let mut storage = vec![0u8; 300];
        for level in levels() {
            for len in 0..=200usize {
                for align in 0..4usize {
                    for hit in [0usize, 1, 31, 32, 63, 64, len.saturating_sub(1)] {
                        for special in [b'"', b'\\', 0x00, 0x1F] {
                            let buf = &mut storage[align..align + len];
                            for (k, b) in buf.iter_mut().enumerate() {
                                *b = b"ab\x7f\x20\xc3\xa9z!"[k % 8];
                            }
                            if hit < len {
                                buf[hit] = special;
                            }
                            for from in [0, 1, 7, 8, 9, 33, len / 2, len] {
                                let from = from.min(len);
                                match special_window_at(level, buf, from) {
                                    Some((mask, width)) => {
                                        let want: u64 = (0..width)
                                            .filter(|&k| {
                                                matches!(buf[from + k], b'"' | b'\\' | 0..=0x1F)
                                            })
                                            .map(|k| 1u64 << k)
                                            .sum();
                                        assert_eq!(
                                            mask, want,
                                            "{level:?} len {len} align {align} from {from}"
                                        );
                                    }
                                    None => {
                                        assert!(len - from < 64, "{level:?} refused a full window")
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn string_scans_agree_on_every_level() {
        let mut seed = 7u64;
        for len in 0..=200usize {
            for _ in 0..40 {
                let buf: Vec<u8> = (0..len)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        b"aaaaaaaaaaaa\\\"nu0F\x01\xc3\xa9"[(seed % 21) as usize]
                    })
                    .collect();
                for from in [0, 1, 9, len / 2] {
                    let from = from.min(len);
                    let want = scan_string_at(Level::Scalar, &buf, from);
                    for level in levels() {
                        assert_eq!(
                            scan_string_at(level, &buf, from),
                            want,
                            "{level:?} {buf:?} {from}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn utf8_levels_agree() {
        let cases: [&[u8]; 6] = [
            b"",
            b"plain ascii",
            "é😀".as_bytes(),
            b"ab\xff",
            b"\xed\xa0\x80",
            b"abc\xe2\x82",
        ];
        for level in levels() {
            for c in cases {
                assert_eq!(
                    utf8_valid_up_to_at(level, c),
                    utf8_valid_up_to_at(Level::Scalar, c)
                );
            }
        }
    }

    /// Envelope mode's walk, instantiated per level with that level's skipper, gives the
    /// same verdict, offsets and facts at every level as the walk with the dispatching
    /// skipper.
    fn envelope_levels_agree(buf: &[u8], max_depth: usize) {
        let outcome = |r: Result<Top, JsonError>, facts: Facts| {
            r.map(|top| (top, (top == Top::Object).then_some(facts)))
        };
        let mut facts = Facts::default();
        let want = outcome(
            crate::scan::walk::<false>(buf, max_depth, &mut facts),
            facts,
        );
        for level in levels() {
            let mut facts = Facts::default();
            let got = outcome(envelope_walk_at(level, buf, max_depth, &mut facts), facts);
            assert_eq!(got, want, "{level:?} on {:?}", String::from_utf8_lossy(buf));
        }
    }

    #[test]
    fn envelope_walk_agrees_on_every_level() {
        let sample = include_bytes!("../../examples/mcp-traffic.ndjson");
        let take = if cfg!(miri) { 8 } else { usize::MAX };
        for line in sample.split(|&b| b == b'\n').take(take) {
            for max_depth in [1, 2, 3, 1024] {
                envelope_levels_agree(line, max_depth);
            }
            // Cut short inside containers, strings and blocks.
            for cut in (0..line.len()).step_by(if cfg!(miri) { 97 } else { 7 }) {
                envelope_levels_agree(&line[..cut], 1024);
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: if cfg!(miri) { 12 } else { 3000 }, failure_persistence: None, ..proptest::prelude::ProptestConfig::default() })]
        #[test]
        fn envelope_walk_agrees_on_token_soup(
            body in proptest::collection::vec(
                proptest::sample::select(&crate::scan::stage2::tests::TOKEN_SOUP[..]),
                0..60,
            ),
            max in 1usize..6,
        ) {
            envelope_levels_agree(&body.concat(), max);
        }
    }

    #[test]
    fn forced_level_never_exceeds_the_cpu() {
        assert!(level() as u8 <= best_supported() as u8);
        assert!(["scalar", "avx2", "avx512"].contains(&kernel_level()));
    }
}
