//! The byte-scanning kernels, the only home of `unsafe` besides `dispatch`, and the routing
//! point of the kernels that stand alone (the string loop, the container skipper, UTF-8).
//!
//! Every hot loop that looks at many bytes goes through a function here. The CPU level is
//! detected once and cached ([`level()`]). Each vector kernel has a scalar/SWAR twin in
//! `scalar.rs` that is always compiled and is the reference the vector kernels are tested
//! against.
//!
//! The layers inside: the generic algorithms (`stage1.rs`, stage 1 of strict mode's fast
//! path; `skipper.rs`, envelope mode's container skipper; `string.rs`, the string loop)
//! never name an architecture (their one hint, `prefetch.rs`, is a no-op where it has
//! none); the level files (`scalar.rs`, `avx2.rs`, `avx512.rs`, `avx512_utf8.rs`,
//! `avx2_unescape.rs`, `avx512_unescape.rs`, `neon.rs`, and `sse2.rs` for the x86_64
//! baseline, with `x86.rs` shared by the x86 ones and `classes.rs` by the vector ones)
//! instantiate them with their kernels; this file and `level.rs` pick the level. Walks of the layers above (stage 2, envelope mode's top-level walk) are
//! instantiated in `dispatch`.
//!
//! Kernels that run per string are preceded by an inline look at the first bytes (16 at a
//! time: SSE2 and NEON are in their targets' baselines; SWAR words elsewhere), so short
//! strings (most keys) never pay for the out-of-line call.
#![allow(unsafe_code)]

#[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
pub(crate) mod avx2;
#[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
mod avx2_unescape;
#[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
mod avx2_utf8;
#[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
pub(crate) mod avx512;
#[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
mod avx512_unescape;
#[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
mod avx512_utf8;
#[cfg(any(
    all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)),
    all(target_arch = "aarch64", target_feature = "neon", not(miri), not(rpcscan_disable_simd))
))]
mod classes;
mod level;
#[cfg(all(target_arch = "aarch64", target_feature = "neon", not(miri), not(rpcscan_disable_simd)))]
pub(crate) mod neon;
mod prefetch;
pub(crate) mod scalar;
pub(crate) mod skipper;
#[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
mod sse2;
pub(crate) mod stage1;
pub(crate) mod string;
#[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
pub(crate) mod x86;

use crate::error::JsonError;

pub use level::{kernel_level, KernelLevel};
pub(crate) use level::{level, Level};

/// The first string-special byte (`"`, `\\`, below 0x20) among the 16 at `from`:
/// `Some(offset)`; or, when fewer than 16 bytes remain, the answer for the rest of the
/// buffer (as [`scalar::string_special_in_word`] gives it for 8). `None`: 16 plain bytes.
///
/// One vector compare where the target has 16-byte vectors in its baseline (SSE2 on
/// x86_64, NEON on aarch64: no run-time detection, so it inlines into every string scan
/// at every level); two SWAR words elsewhere, its scalar twin.
#[inline(always)]
pub(crate) fn string_special_in_16(buf: &[u8], from: usize) -> Option<usize> {
    #[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
    if let Some(window) = sixteen(buf, from) {
        let mask = sse2::special_16(window);
        return (mask != 0).then(|| from + mask.trailing_zeros() as usize);
    }
    #[cfg(all(
        target_arch = "aarch64",
        target_feature = "neon",
        not(miri),
        not(rpcscan_disable_simd)
    ))]
    if let Some(window) = sixteen(buf, from) {
        // SAFETY: NEON is part of the aarch64 baseline (this arm is compiled only where
        // `target_feature = "neon"` holds).
        let mask = unsafe { neon::special_16_neon(window) };
        return (mask != 0).then(|| from + mask.trailing_zeros() as usize);
    }
    scalar::string_special_in_16(buf, from)
}

/// The offset of the first quote or backslash among 16 bytes (the scalar level's string
/// run, envelope mode's look at a string's start): SSE2 on x86_64.
#[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
#[inline(always)]
pub(crate) fn quote_or_backslash_16(chunk: &[u8; 16]) -> Option<usize> {
    let mask = sse2::quote_or_backslash_16(chunk);
    (mask != 0).then(|| mask.trailing_zeros() as usize)
}

/// The offset of the first quote or backslash among 16 bytes: two SWAR words where there
/// is no baseline 16-byte look.
#[cfg(not(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd))))]
#[inline(always)]
pub(crate) fn quote_or_backslash_16(chunk: &[u8; 16]) -> Option<usize> {
    scalar::quote_or_backslash(chunk)
}

/// Envelope mode's look at a string the walk reads (keys, `id`, `method`) at the scalar
/// level, when 16 bytes follow the opening quote at `open`: the offset after the closing
/// quote when the string ends among them with no escape and no byte above 0x7F (SSE2 on
/// x86_64, where the vector levels take 32 or 64 bytes); `None` sends it to the portable
/// scan.
#[inline(always)]
pub(crate) fn plain_string_16(buf: &[u8], open: usize) -> Option<usize> {
    #[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
    {
        let start = open.checked_add(1)?;
        let window = sixteen(buf, start)?;
        let (special, high) = sse2::special_and_high_16(window);
        string::plain_string_end(window, u64::from(special), u64::from(high)).map(|end| start + end)
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd))))]
    {
        let _ = (buf, open);
        None
    }
}

/// The 16 bytes of `buf` at `at`, when they are there.
#[allow(dead_code)] // Only targets with a 16-byte look read it.
#[inline(always)]
fn sixteen(buf: &[u8], at: usize) -> Option<&[u8; 16]> {
    buf.get(at..at.checked_add(16)?)?.try_into().ok()
}

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
            unsafe { avx512::scan_string_avx512(buf, from) }
        }
        #[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
        Level::Avx2 | Level::Avx512 if x86::has_avx2() => {
            // SAFETY: the CPU supports AVX2 (checked above; cached after the first call).
            unsafe { avx2::scan_string_avx2(buf, from) }
        }
        #[cfg(all(
            target_arch = "aarch64",
            target_feature = "neon",
            not(miri),
            not(rpcscan_disable_simd)
        ))]
        Level::Neon => {
            // SAFETY: NEON is part of the aarch64 baseline (this arm is compiled only where
            // `target_feature = "neon"` holds).
            unsafe { neon::scan_string_neon(buf, from) }
        }
        _ => scalar::scan_swar(buf, from, false),
    }
}

/// Skips the container whose `{` or `[` is at `open`; returns the offset after its close.
/// `depth` is the container's own nesting depth.
#[inline]
pub(crate) fn skip_container(
    buf: &[u8],
    open: usize,
    depth: usize,
    max_depth: usize,
) -> Result<usize, JsonError> {
    skip_container_at(level(), buf, open, depth, max_depth)
}

/// [`skip_container`] at a given level (tests compare every level).
pub(crate) fn skip_container_at(
    level: Level,
    buf: &[u8],
    open: usize,
    depth: usize,
    max_depth: usize,
) -> Result<usize, JsonError> {
    #[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
    {
        if level == Level::Avx512 && x86::has_avx512() {
            // SAFETY: the CPU supports AVX-512BW and PCLMULQDQ (checked just above).
            return unsafe { avx512::skip_container_avx512(buf, open, depth, max_depth) };
        }
        if level != Level::Scalar && x86::has_avx2() {
            // SAFETY: the CPU supports AVX2 and PCLMULQDQ (checked just above).
            return unsafe { avx2::skip_container_avx2(buf, open, depth, max_depth) };
        }
    }
    #[cfg(all(
        target_arch = "aarch64",
        target_feature = "neon",
        not(miri),
        not(rpcscan_disable_simd)
    ))]
    {
        if level == Level::Neon {
            // SAFETY: NEON is part of the aarch64 baseline (this block is compiled only
            // where `target_feature = "neon"` holds).
            return unsafe { neon::skip_container_neon(buf, open, depth, max_depth) };
        }
    }
    let _ = level;
    skipper::walk_bytes(buf, open, depth, max_depth, |buf, i| {
        skipper::string_run::<16>(buf, i, quote_or_backslash_16)
    })
}

/// The rest of a string from `from` (just inside it, no escape pending): the offset after
/// its closing quote, escapes matched and nothing else checked (envelope mode's skip, the
/// lenient lookups).
#[inline]
pub(crate) fn skip_string(buf: &[u8], from: usize) -> Result<usize, JsonError> {
    skip_string_at(level(), buf, from)
}

/// [`skip_string`] at a given level (tests compare every level).
pub(crate) fn skip_string_at(level: Level, buf: &[u8], from: usize) -> Result<usize, JsonError> {
    #[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
    {
        if level == Level::Avx512 && x86::has_avx512() {
            // SAFETY: the CPU supports AVX-512BW (checked just above).
            return unsafe { avx512::skip_string_avx512(buf, from) };
        }
        if level != Level::Scalar && x86::has_avx2() {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return unsafe { avx2::skip_string_avx2(buf, from) };
        }
    }
    #[cfg(all(
        target_arch = "aarch64",
        target_feature = "neon",
        not(miri),
        not(rpcscan_disable_simd)
    ))]
    {
        if level == Level::Neon {
            // SAFETY: NEON is part of the aarch64 baseline (this block is compiled only
            // where `target_feature = "neon"` holds).
            return unsafe { neon::skip_string_neon(buf, from) };
        }
    }
    let _ = level;
    scalar::skip_string(buf, from)
}

/// Decodes the start of a string's raw bytes into `dst` (at least `raw.len()` bytes) in
/// bulk while its escapes are one-character ones; returns `(read, written)`, and the
/// caller's byte loop (`text::Str::decode_into`, the twin) decodes the rest. AVX-512 VBMI2
/// compresses a block in one instruction; AVX2 compresses 8-byte groups by table
/// shuffles. `(0, 0)` where the level has no such kernel (scalar, NEON).
#[inline]
pub(crate) fn unescape_simple(raw: &[u8], dst: &mut [u8]) -> (usize, usize) {
    unescape_simple_at(level(), raw, dst)
}

/// [`unescape_simple`] at a given level (tests compare every level).
pub(crate) fn unescape_simple_at(level: Level, raw: &[u8], dst: &mut [u8]) -> (usize, usize) {
    #[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
    {
        if level == Level::Avx512 && x86::has_avx512_vbmi2() {
            // SAFETY: the CPU supports AVX-512BW, VBMI2 and POPCNT (checked just above).
            return unsafe { avx512_unescape::unescape_simple_avx512(raw, dst) };
        }
        if matches!(level, Level::Avx2 | Level::Avx512) && x86::has_avx2_popcnt() {
            // SAFETY: the CPU supports AVX2 and POPCNT (checked just above).
            return unsafe { avx2_unescape::unescape_simple_avx2(raw, dst) };
        }
    }
    let _ = (level, raw, dst);
    (0, 0)
}

/// The string-special mask of the window at `i` for a level, and the window's width.
#[cfg(test)]
pub(crate) fn special_window_at(level: Level, buf: &[u8], i: usize) -> Option<(u64, usize)> {
    match level {
        #[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
        Level::Avx512 if x86::has_avx512() => {
            // SAFETY: the CPU supports AVX-512BW (checked just above).
            unsafe { avx512::special_window_avx512(buf, i) }.map(|m| (m, 64))
        }
        #[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
        Level::Avx2 | Level::Avx512 if x86::has_avx2() => {
            // SAFETY: the CPU supports AVX2 (checked just above).
            unsafe { avx2::special_window_avx2(buf, i) }.map(|m| (m, 32))
        }
        #[cfg(all(
            target_arch = "aarch64",
            target_feature = "neon",
            not(miri),
            not(rpcscan_disable_simd)
        ))]
        Level::Neon => {
            // SAFETY: NEON is part of the aarch64 baseline (this arm is compiled only where
            // `target_feature = "neon"` holds).
            unsafe { neon::special_window_neon(buf, i) }.map(|m| (m, 32))
        }
        _ => scalar::string_special_window(buf, i).map(|m| (m, 8)),
    }
}

/// The skipper's string run (`skipper::string_run`) of a level, and its window width.
#[cfg(test)]
pub(crate) fn string_run_at(level: Level, buf: &[u8], i: usize) -> (usize, usize) {
    match level {
        #[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
        Level::Avx512 if x86::has_avx512() => {
            // SAFETY: the CPU supports AVX-512BW (checked just above).
            (unsafe { avx512::string_run_avx512(buf, i) }, 64)
        }
        #[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
        Level::Avx2 | Level::Avx512 if x86::has_avx2() => {
            // SAFETY: the CPU supports AVX2 (checked just above).
            (unsafe { avx2::string_run_avx2(buf, i) }, 64)
        }
        #[cfg(all(
            target_arch = "aarch64",
            target_feature = "neon",
            not(miri),
            not(rpcscan_disable_simd)
        ))]
        Level::Neon => {
            // SAFETY: NEON is part of the aarch64 baseline (this arm is compiled only where
            // `target_feature = "neon"` holds).
            (unsafe { neon::string_run_neon(buf, i) }, 64)
        }
        _ => (skipper::string_run::<16>(buf, i, quote_or_backslash_16), 16),
    }
}

/// Stage 1's long-string window test of a level: `None` for a window with a quote,
/// backslash or control byte, else whether a byte is not ASCII.
#[cfg(test)]
pub(crate) fn plain_window_at(level: Level, chunk: &[u8; 64]) -> Option<bool> {
    match level {
        #[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
        Level::Avx512 if x86::has_avx512() => {
            // SAFETY: the CPU supports AVX-512BW (checked just above).
            unsafe { avx512::plain_window_avx512(chunk) }.map(|(_, high)| high != 0)
        }
        #[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
        Level::Avx2 | Level::Avx512 if x86::has_avx2() => {
            // SAFETY: the CPU supports AVX2 (checked just above).
            unsafe { avx2::plain_window_avx2(chunk) }.map(|(_, high)| high != 0)
        }
        #[cfg(all(
            target_arch = "aarch64",
            target_feature = "neon",
            not(miri),
            not(rpcscan_disable_simd)
        ))]
        Level::Neon => {
            // SAFETY: NEON is part of the aarch64 baseline (this arm is compiled only where
            // `target_feature = "neon"` holds).
            unsafe { neon::plain_window_neon(chunk) }.map(|(_, high)| high != 0)
        }
        _ => scalar::plain_window(chunk).map(|(_, high)| high != 0),
    }
}

/// Up to this many bytes, [`utf8_valid_up_to_at`] first asks whether the text is all ASCII,
/// 8 bytes at a time, before calling a validator.
const SHORT_ASCII_MAX: usize = 256;

/// `Ok` when `buf` is all UTF-8, else the offset of the first offending byte.
#[inline]
pub(crate) fn utf8_valid_up_to(buf: &[u8]) -> Result<(), usize> {
    utf8_valid_up_to_at(level(), buf)
}

/// [`utf8_valid_up_to`] at a given level. The vector path is the `simdutf8` crate (its own
/// runtime dispatch); the scalar twin is `core::str::from_utf8`. Both implement the same
/// definition of UTF-8, and the error offset always comes from `core`.
pub(crate) fn utf8_valid_up_to_at(level: Level, buf: &[u8]) -> Result<(), usize> {
    // Short texts (tiny messages on the exact path, keys, ids) are nearly always ASCII:
    // a few word ORs answer that without a validator call.
    if buf.len() <= SHORT_ASCII_MAX && scalar::is_ascii_short(buf) {
        return Ok(());
    }
    if level != Level::Scalar && simdutf8::basic::from_utf8(buf).is_ok() {
        return Ok(());
    }
    core::str::from_utf8(buf).map(|_| ()).map_err(|e| e.valid_up_to())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::level::best_supported;
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

    /// The 16-byte look at a string's start (SSE2 / NEON where the target has it) gives its
    /// scalar twin's answer: every byte value at every position of the window, a second
    /// special byte after the first, windows cut short by the end of the buffer, every
    /// alignment.
    /// Where the scalar level's plain-string look answers, the portable scan gives the same
    /// end (and no escape): every byte value at every position of the 16, with a quote
    /// after it or not, at every alignment.
    #[test]
    #[cfg_attr(miri, ignore = "the vector look is not compiled under miri")]
    fn plain_string_look_agrees_with_the_scan() {
        let mut answered = 0;
        for at in 0..18usize {
            for b in 0..=255u8 {
                for quote in [None, Some(at + 1), Some(at + 4)] {
                    let mut buf = vec![b'k'; 24];
                    buf[0] = b'"';
                    buf[1 + at.min(22)] = b;
                    if let Some(q) = quote {
                        if let Some(slot) = buf.get_mut(1 + q) {
                            *slot = b'"';
                        }
                    }
                    at_each_alignment(&buf, |buf| {
                        if let Some(end) = plain_string_16(buf, 0) {
                            answered += 1;
                            let scan = crate::scan::envelope::checked_string::<false>(buf, 0);
                            assert_eq!(scan, Ok((end, false)), "{at} {b:#x} {quote:?}");
                        }
                    });
                }
            }
        }
        assert!(answered > 0 || !cfg!(target_arch = "x86_64"));
    }

    /// The 16-byte look for a quote or backslash (the scalar level's string run, envelope
    /// mode's look at a string's start) equals its twin: every byte value at every position
    /// of a window, with a second backslash after it.
    #[test]
    #[cfg_attr(miri, ignore = "the vector look is not compiled under miri")]
    fn quote_or_backslash_look_equals_its_twin() {
        for at in 0..16usize {
            for b in 0..=255u8 {
                let mut chunk = [b'k'; 16];
                chunk[at] = b;
                if let Some(next) = chunk.get_mut(at + 2) {
                    *next = b'\\';
                }
                assert_eq!(
                    quote_or_backslash_16(&chunk),
                    scalar::quote_or_backslash(&chunk),
                    "{at} {b:#x}"
                );
            }
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "the vector look is not compiled under miri")]
    fn sixteen_byte_look_equals_its_twin() {
        let twin = scalar::string_special_in_16;
        for len in 0..=40usize {
            for from in 0..=len.min(20) {
                let base = vec![b'k'; len];
                assert_eq!(string_special_in_16(&base, from), twin(&base, from), "{len} {from}");
                for at in from..len.min(from + 17) {
                    for b in 0..=255u8 {
                        let mut buf = base.clone();
                        buf[at] = b;
                        if let Some(next) = buf.get_mut(at + 3) {
                            *next = b'"';
                        }
                        at_each_alignment(&buf, |buf| {
                            assert_eq!(
                                string_special_in_16(buf, from),
                                twin(buf, from),
                                "{len} {from} {at} {b:#x}"
                            );
                        });
                    }
                }
            }
        }
    }

    /// Every level this machine supports, scalar first.
    pub(crate) fn levels() -> Vec<Level> {
        let mut v = vec![Level::Scalar];
        match best_supported() {
            Level::Avx512 => v.extend([Level::Avx2, Level::Avx512]),
            Level::Avx2 => v.push(Level::Avx2),
            Level::Neon => v.push(Level::Neon),
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

    /// Stage 1's long-string window test at every level equals the byte-by-byte answer
    /// (and so the scalar twin): every byte value at every lane of a plain window, and
    /// random windows.
    #[test]
    fn plain_windows_agree_with_the_bytes() {
        let want = |chunk: &[u8; 64]| {
            let special = chunk.iter().any(|&b| b == b'"' || b == b'\\' || b < 0x20);
            (!special).then(|| chunk.iter().any(|&b| b >= 0x80))
        };
        let mut chunks = Vec::new();
        for at in 0..64 {
            for b in 0..=255u8 {
                let mut chunk = [b'a'; 64];
                chunk[at] = b;
                chunks.push(chunk);
            }
        }
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..20_000 {
            chunks.push(core::array::from_fn(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                // Mostly plain bytes, so that some windows are plain.
                if seed.is_multiple_of(97) {
                    b"\"\\\x00\x1f\x20\x7f\x80\xff"[(seed >> 8) as usize % 8]
                } else {
                    b"ab \xc3\xa9~!{}"[(seed >> 8) as usize % 9]
                }
            }));
        }
        for level in levels() {
            for chunk in &chunks {
                assert_eq!(plain_window_at(level, chunk), want(chunk), "{level:?} {chunk:x?}");
            }
        }
    }

    /// The skipper's string run at every level stops at the first quote or backslash, or
    /// where fewer bytes than its window remain, having passed over only other bytes; and
    /// where a level finds one, the scalar twin finds the same one.
    #[test]
    fn string_runs_stop_at_the_first_quote_or_backslash() {
        let mut storage = vec![b'x'; 400];
        for len in 0..=300usize {
            for hit in [0usize, 1, 15, 16, 17, 63, 64, 65, 127, 128, 200, 250, 299, len] {
                for special in [b'"', b'\\'] {
                    for from in [0usize, 1, 7, 64, 100] {
                        let buf = &mut storage[3..3 + len];
                        for (k, b) in buf.iter_mut().enumerate() {
                            *b = b"a\xc3\xa9{}[]\x01 "[k % 9];
                        }
                        if hit < len {
                            buf[hit] = special;
                        }
                        let from = from.min(len);
                        let (twin, _) = string_run_at(Level::Scalar, buf, from);
                        for level in levels() {
                            let (r, width) = string_run_at(level, buf, from);
                            assert!(r >= from && r <= len, "{level:?} {len} {hit} {from}");
                            let passed = &buf[from..r];
                            assert!(!passed.iter().any(|&b| b == b'"' || b == b'\\'));
                            let found = matches!(buf.get(r), Some(b'"' | b'\\'));
                            assert!(found || len - r < width, "{level:?} {len} {hit} {from}");
                            if found {
                                assert_eq!(r, twin, "{level:?} {len} {hit} {from}");
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn utf8_levels_agree() {
        let cases: [&[u8]; 6] =
            [b"", b"plain ascii", "é😀".as_bytes(), b"ab\xff", b"\xed\xa0\x80", b"abc\xe2\x82"];
        for level in levels() {
            for c in cases {
                assert_eq!(utf8_valid_up_to_at(level, c), utf8_valid_up_to_at(Level::Scalar, c));
            }
        }
    }

    #[test]
    fn forced_level_never_exceeds_the_cpu() {
        assert!(level() as u8 <= best_supported() as u8);
        assert!(["scalar", "avx2", "avx512", "neon"].contains(&kernel_level().as_str()));
    }
}
