//! The byte-scanning kernels, the only home of `unsafe` besides `dispatch`.
//!
//! Every hot loop that looks at many bytes goes through a function here. The CPU level is
//! detected once and cached ([`level()`], `level.rs`). Each level is a type implementing
//! [`Kernels`] (`kernels.rs`); the walks above are generic over it, and `dispatch` matches
//! on the level once per public call ([`with_kernels!`]), so the walks call their level's
//! kernels directly. Each vector kernel has a portable twin in `swar.rs` that is always
//! compiled and is the reference the vector kernels are tested against.
//!
//! The layers inside:
//! - the generic loops, which never name an architecture (their one hint, `prefetch.rs`,
//!   is a no-op where it has none): `stage1.rs` (stage 1 of strict mode's fast path),
//!   `skipper.rs` (envelope mode's container skipper), `string.rs` (the string loop);
//! - the level files, which instantiate them with their instructions: `avx2.rs`
//!   (`avx2_utf8.rs`, `avx2_unescape.rs`), `avx512.rs` (`avx512_utf8.rs`,
//!   `avx512_unescape.rs`), `neon.rs`, `simd128.rs` (wasm32). No level file imports
//!   another;
//! - what the levels share without being one: `swar.rs` (the portable kernels: the scalar
//!   level's, and the tails shorter than a vector window), `tables.rs` (the lookup tables),
//!   `x86.rs` (detection and the helpers of both x86 levels), `sse2.rs` (the x86_64
//!   baseline's 16-byte looks, below);
//! - `kernels.rs`, which puts each level together from those files, and this file.
//!
//! Kernels that run per string are preceded by an inline look at the first bytes (16 at a
//! time: SSE2 and NEON are in their targets' baselines; SWAR words elsewhere), so short
//! strings (most keys) never pay for the out-of-line call. That look is the same at every
//! level (it needs no detection), so it lives here, not in a level.
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
pub(crate) mod kernels;
mod level;
#[cfg(all(target_arch = "aarch64", target_feature = "neon", not(miri), not(rpcscan_disable_simd)))]
pub(crate) mod neon;
mod prefetch;
#[cfg(all(
    target_arch = "wasm32",
    target_feature = "simd128",
    not(miri),
    not(rpcscan_disable_simd)
))]
pub(crate) mod simd128;
pub(crate) mod skipper;
#[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
mod sse2;
pub(crate) mod stage1;
pub(crate) mod string;
pub(crate) mod swar;
#[cfg(any(
    all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)),
    all(target_arch = "aarch64", target_feature = "neon", not(miri), not(rpcscan_disable_simd)),
    all(target_arch = "wasm32", target_feature = "simd128", not(miri), not(rpcscan_disable_simd))
))]
mod tables;
#[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
pub(crate) mod x86;

#[cfg(test)]
pub(crate) mod rand;

pub(crate) use kernels::{with_kernels, Kernels};
#[cfg(test)]
pub(crate) use level::level;
pub(crate) use level::{detected, Detected, Level};
pub use level::{kernel_level, KernelLevel};

/// The first string-special byte (`"`, `\\`, below 0x20) among the 16 at `from`:
/// `Some(offset)`; or, when fewer than 16 bytes remain, the answer for the rest of the
/// buffer (as [`swar::string_special_in_word`] gives it for 8). `None`: 16 plain bytes.
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
    #[cfg(all(
        target_arch = "wasm32",
        target_feature = "simd128",
        not(miri),
        not(rpcscan_disable_simd)
    ))]
    if let Some(window) = sixteen(buf, from) {
        // Safe to call: this arm is compiled only where simd128 is on for the whole crate.
        let mask = simd128::special_16_simd128(window);
        return (mask != 0).then(|| from + mask.trailing_zeros() as usize);
    }
    swar::string_special_in_16(buf, from)
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
    swar::quote_or_backslash(chunk)
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
                            let scan = crate::scan::envelope::checked_string::<_, false>(
                                kernels::Scalar,
                                buf,
                                0,
                            );
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
                    swar::quote_or_backslash(&chunk),
                    "{at} {b:#x}"
                );
            }
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "the vector look is not compiled under miri")]
    fn sixteen_byte_look_equals_its_twin() {
        let twin = swar::string_special_in_16;
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

    /// The kernels of every job at a given level (through the one match on the level), for
    /// the tests that compare the levels.
    pub(crate) fn scan_string_at(
        level: Level,
        buf: &[u8],
        from: usize,
    ) -> Result<(usize, bool), crate::error::JsonError> {
        with_kernels!(supported(level), k => k.scan_string(buf, from))
    }

    /// See [`scan_string_at`].
    pub(crate) fn skip_container_at(
        level: Level,
        buf: &[u8],
        open: usize,
        depth: usize,
        max_depth: usize,
    ) -> Result<usize, crate::error::JsonError> {
        with_kernels!(supported(level), k => k.skip_container(buf, open, depth, max_depth))
    }

    /// See [`scan_string_at`].
    pub(crate) fn skip_string_at(
        level: Level,
        buf: &[u8],
        from: usize,
    ) -> Result<usize, crate::error::JsonError> {
        with_kernels!(supported(level), k => k.skip_string(buf, from))
    }

    /// See [`scan_string_at`].
    pub(crate) fn unescape_simple_at(level: Level, raw: &[u8], dst: &mut [u8]) -> (usize, usize) {
        with_kernels!(supported(level), k => k.unescape_simple(raw, dst))
    }

    /// See [`scan_string_at`].
    fn special_window_at(level: Level, buf: &[u8], i: usize) -> Option<(u64, usize)> {
        with_kernels!(supported(level), k => k.special_window(buf, i))
    }

    /// See [`scan_string_at`].
    fn string_run_at(level: Level, buf: &[u8], i: usize) -> (usize, usize) {
        with_kernels!(supported(level), k => k.string_run(buf, i))
    }

    /// See [`scan_string_at`].
    fn plain_window_at(level: Level, chunk: &[u8; 64]) -> Option<bool> {
        with_kernels!(supported(level), k => k.plain_window(chunk))
    }

    /// See [`scan_string_at`].
    fn utf8_valid_up_to_at(level: Level, buf: &[u8]) -> Result<(), usize> {
        with_kernels!(supported(level), k => k.utf8_valid_up_to(buf))
    }

    /// `level` as a [`Detected`] one: the tests ask only for levels the CPU has.
    pub(crate) fn supported(level: Level) -> Detected {
        Detected::check(level).expect("a level this CPU has")
    }

    /// Every level this machine supports, scalar first.
    pub(crate) fn levels() -> Vec<Level> {
        let mut v = vec![Level::Scalar];
        match best_supported() {
            Level::Avx512 => v.extend([Level::Avx2, Level::Avx512]),
            Level::Avx2 => v.push(Level::Avx2),
            Level::Neon => v.push(Level::Neon),
            Level::Simd128 => v.push(Level::Simd128),
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
                        crate::simd::rand::xorshift(&mut seed);
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
                crate::simd::rand::xorshift(&mut seed);
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
