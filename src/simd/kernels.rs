//! The kernel levels as types: one zero-sized type per level ([`Scalar`], [`Avx2`],
//! [`Avx512`], [`Neon`], [`Simd128`]) implementing [`Kernels`], and [`with_kernels!`](crate::simd::with_kernels),
//! the one `match` on the level.
//!
//! The walks above (`json`, `scan`) are generic over [`Kernels`] and call a level's kernels
//! as methods of its value; `dispatch` matches on the level once per public call and runs
//! the walk instantiated for it, so no walk asks for the level again. A vector level's
//! value can only be had from its constructor, which checks the CPU: holding one is the
//! proof that its kernels may run, and the methods below call them on that ground.
//!
//! This file is where the levels are put together, and the only one that names several:
//! the level files (`avx2*.rs`, `avx512*.rs`, `neon.rs`, `simd128.rs`) never import one another. What they
//! share is in files that are not levels: `swar.rs` (the portable kernels: the scalar
//! level's, every vector kernel's twin, and the tails shorter than a window), `x86.rs`,
//! `sse2.rs` (the 16-byte looks of the x86_64 baseline, which every level takes at a
//! string's start), `tables.rs`, and the generic loops (`string.rs`, `skipper.rs`,
//! `stage1.rs`).

#[cfg(any(
    all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)),
    all(target_arch = "aarch64", target_feature = "neon", not(miri), not(rpcscan_disable_simd)),
    all(target_arch = "wasm32", target_feature = "simd128", not(miri), not(rpcscan_disable_simd))
))]
use super::level::Detected;
use super::level::Level;
#[cfg(all(
    target_arch = "aarch64",
    target_feature = "neon",
    not(miri),
    not(rpcscan_disable_simd)
))]
use super::neon;
#[cfg(all(
    target_arch = "wasm32",
    target_feature = "simd128",
    not(miri),
    not(rpcscan_disable_simd)
))]
use super::simd128;
use super::stage1::{self, Blocks, Carry, Utf8Carry};
#[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
use super::{avx2, avx2_unescape, avx512, avx512_unescape, x86};
use super::{skipper, swar};
use crate::error::JsonError;

/// A kernel level's kernels. Every method is the level's kernel for one job, with the
/// answer its scalar twin gives (tests hold every level to that).
pub(crate) trait Kernels: Blocks + Copy {
    /// Which level this is.
    const LEVEL: Level;

    /// The rest of a string from `from` (just inside it): the offset after the closing
    /// quote and whether it had escapes, escapes and control bytes checked.
    fn scan_string(self, buf: &[u8], from: usize) -> Result<(usize, bool), JsonError>;

    /// Skips the container whose `{` or `[` is at `open` (nested at `depth`) structurally;
    /// returns the offset after its close.
    fn skip_container(
        self,
        buf: &[u8],
        open: usize,
        depth: usize,
        max_depth: usize,
    ) -> Result<usize, JsonError>;

    /// The rest of a string from `from` (just inside it, no escape pending): the offset
    /// after its closing quote, escapes matched and nothing else checked.
    fn skip_string(self, buf: &[u8], from: usize) -> Result<usize, JsonError>;

    /// Envelope mode's inline look at a string the walk reads (keys, `id`, `method`) whose
    /// quote is at `open`: the offset after the closing quote when the string ends in the
    /// level's window with no escape and no byte above 0x7F; `None` sends it to the
    /// portable scan.
    fn plain_string(self, buf: &[u8], open: usize) -> Option<usize>;

    /// Decodes the start of a string's raw bytes into `dst` (at least `raw.len()` bytes)
    /// in bulk while its escapes are one-character ones; returns `(read, written)`, and
    /// the caller's byte loop (`text::Str::decode_into`, the twin) decodes the rest.
    /// `(0, 0)` where the level has no such kernel.
    fn unescape_simple(self, raw: &[u8], dst: &mut [u8]) -> (usize, usize);

    /// `Ok` when `buf` is all UTF-8, else the offset of the first offending byte.
    fn utf8_valid_up_to(self, buf: &[u8]) -> Result<(), usize>;

    /// The string-special mask of the window at `i`, and the window's width.
    #[cfg(test)]
    fn special_window(self, buf: &[u8], i: usize) -> Option<(u64, usize)>;

    /// The skipper's string run (`skipper::string_run`), and its window width.
    #[cfg(test)]
    fn string_run(self, buf: &[u8], i: usize) -> (usize, usize);

    /// Stage 1's long-string window test: `None` for a window with a quote, backslash or
    /// control byte, else whether a byte is not ASCII.
    #[cfg(test)]
    fn plain_window(self, chunk: &[u8; 64]) -> Option<bool>;
}

/// Runs `$body` with `$k` bound to the kernels of the level `$detected` (a
/// [`Detected`](super::Detected)) names: the one `match` on the level. `$body` is compiled
/// once per level, each time with that level's kernels.
#[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
macro_rules! with_kernels {
    ($detected:expr, $k:ident => $body:expr) => {{
        let detected: $crate::simd::Detected = $detected;
        if let Some($k) = $crate::simd::kernels::Avx512::new(detected) {
            $body
        } else if let Some($k) = $crate::simd::kernels::Avx2::new(detected) {
            $body
        } else {
            let $k = $crate::simd::kernels::Scalar;
            $body
        }
    }};
}

/// Runs `$body` with `$k` bound to the kernels of the level `$detected` names (see the
/// x86_64 version).
#[cfg(all(target_arch = "aarch64", target_feature = "neon", not(miri), not(rpcscan_disable_simd)))]
macro_rules! with_kernels {
    ($detected:expr, $k:ident => $body:expr) => {{
        let detected: $crate::simd::Detected = $detected;
        if let Some($k) = $crate::simd::kernels::Neon::new(detected) {
            $body
        } else {
            let $k = $crate::simd::kernels::Scalar;
            $body
        }
    }};
}

/// Runs `$body` with `$k` bound to the kernels of the level `$detected` names (see the
/// x86_64 version).
#[cfg(all(
    target_arch = "wasm32",
    target_feature = "simd128",
    not(miri),
    not(rpcscan_disable_simd)
))]
macro_rules! with_kernels {
    ($detected:expr, $k:ident => $body:expr) => {{
        let detected: $crate::simd::Detected = $detected;
        if let Some($k) = $crate::simd::kernels::Simd128::new(detected) {
            $body
        } else {
            let $k = $crate::simd::kernels::Scalar;
            $body
        }
    }};
}

/// Runs `$body` with `$k` bound to the portable kernels, the only level where there is no
/// vector one.
#[cfg(not(any(
    all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)),
    all(target_arch = "aarch64", target_feature = "neon", not(miri), not(rpcscan_disable_simd)),
    all(target_arch = "wasm32", target_feature = "simd128", not(miri), not(rpcscan_disable_simd))
)))]
macro_rules! with_kernels {
    ($detected:expr, $k:ident => $body:expr) => {{
        let _: $crate::simd::Detected = $detected;
        let $k = $crate::simd::kernels::Scalar;
        $body
    }};
}
pub(crate) use with_kernels;

/// Up to this many bytes, `utf8_valid_up_to` first asks whether the text is all ASCII, 8
/// bytes at a time, before calling a validator.
const SHORT_ASCII_MAX: usize = 256;

/// `Kernels::utf8_valid_up_to`. The vector levels' validator is the `simdutf8` crate (its
/// own run-time dispatch); the scalar level's, its twin, is `core::str::from_utf8`. Both
/// implement the same definition of UTF-8, and the error offset always comes from `core`.
fn utf8_valid_up_to<const VECTOR: bool>(buf: &[u8]) -> Result<(), usize> {
    // Short texts (tiny messages on the exact path, keys, ids) are nearly always ASCII:
    // a few word ORs answer that without a validator call.
    if buf.len() <= SHORT_ASCII_MAX && swar::is_ascii_short(buf) {
        return Ok(());
    }
    if VECTOR && simdutf8::basic::from_utf8(buf).is_ok() {
        return Ok(());
    }
    core::str::from_utf8(buf).map(|_| ()).map_err(|e| e.valid_up_to())
}

/// The portable level: SWAR words, and the 16-byte looks of the target's baseline
/// (`simd::string_special_in_16` and its kin: SSE2 on x86_64). Every target, miri, and
/// `--cfg rpcscan_disable_simd`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Scalar;

impl Blocks for Scalar {
    const RANGE_UTF8: bool = true;

    #[inline(always)]
    fn block(&self, carry: &mut Carry, bytes: &[u8]) -> Option<u64> {
        let chunk = stage1::padded(bytes);
        stage1::block(
            carry,
            &chunk,
            swar::token_masks,
            swar::escape_masks,
            swar::prefix_xor,
            stage1::range_utf8,
        )
    }

    #[inline(always)]
    fn run(&self, utf8: &mut Utf8Carry, rest: &[u8]) -> (usize, bool) {
        stage1::run(utf8, rest, swar::plain_window, stage1::range_run_utf8)
    }
}

impl Kernels for Scalar {
    const LEVEL: Level = Level::Scalar;

    #[inline(always)]
    fn scan_string(self, buf: &[u8], from: usize) -> Result<(usize, bool), JsonError> {
        scalar_scan_string(buf, from)
    }

    #[inline(always)]
    fn skip_container(
        self,
        buf: &[u8],
        open: usize,
        depth: usize,
        max_depth: usize,
    ) -> Result<usize, JsonError> {
        scalar_skip_container(buf, open, depth, max_depth)
    }

    #[inline(always)]
    fn skip_string(self, buf: &[u8], from: usize) -> Result<usize, JsonError> {
        scalar_skip_string(buf, from)
    }

    #[inline(always)]
    fn plain_string(self, buf: &[u8], open: usize) -> Option<usize> {
        super::plain_string_16(buf, open)
    }

    #[inline(always)]
    fn unescape_simple(self, _: &[u8], _: &mut [u8]) -> (usize, usize) {
        (0, 0)
    }

    #[inline(always)]
    fn utf8_valid_up_to(self, buf: &[u8]) -> Result<(), usize> {
        utf8_valid_up_to::<false>(buf)
    }

    #[cfg(test)]
    fn special_window(self, buf: &[u8], i: usize) -> Option<(u64, usize)> {
        swar::string_special_window(buf, i).map(|m| (m, 8))
    }

    #[cfg(test)]
    fn string_run(self, buf: &[u8], i: usize) -> (usize, usize) {
        (skipper::string_run::<16>(buf, i, super::quote_or_backslash_16), 16)
    }

    #[cfg(test)]
    fn plain_window(self, chunk: &[u8; 64]) -> Option<bool> {
        swar::plain_window(chunk).map(|(_, high)| high != 0)
    }
}

/// The scalar level's string scan, out of line as the vector levels' are (their target
/// features keep them so). Inlined, the SWAR chain went into every string read of the
/// walks, and strict mode's scalar walk on tiny messages, whose strings nearly all end in
/// the 32-byte look before it, took 4% more instructions than before the levels became
/// types (callgrind; docs/performance.md).
#[inline(never)]
fn scalar_scan_string(buf: &[u8], from: usize) -> Result<(usize, bool), JsonError> {
    swar::scan_swar(buf, from, false)
}

/// The scalar level's string skip, out of line for the same reason.
#[inline(never)]
fn scalar_skip_string(buf: &[u8], from: usize) -> Result<usize, JsonError> {
    swar::skip_string(buf, from)
}

/// The scalar level's container skip: byte by byte, with the 16-byte look for a string's
/// quote or backslash.
fn scalar_skip_container(
    buf: &[u8],
    open: usize,
    depth: usize,
    max_depth: usize,
) -> Result<usize, JsonError> {
    skipper::walk_bytes(buf, open, depth, max_depth, |buf, i| {
        skipper::string_run::<16>(buf, i, super::quote_or_backslash_16)
    })
}

/// The AVX2 level (with PCLMULQDQ): 32 bytes per compare. Only [`Avx2::new`] makes one,
/// from a [`Detected`] level at or above it.
#[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx2(());

#[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
impl Avx2 {
    /// The AVX2 kernels, when the detected level is AVX2 or AVX-512 (so the CPU has AVX2
    /// and PCLMULQDQ).
    #[inline(always)]
    pub(crate) fn new(detected: Detected) -> Option<Self> {
        matches!(detected.level(), Level::Avx2 | Level::Avx512).then_some(Avx2(()))
    }
}

#[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
impl Blocks for Avx2 {
    const RANGE_UTF8: bool = false;

    #[inline(always)]
    fn block(&self, carry: &mut Carry, bytes: &[u8]) -> Option<u64> {
        // SAFETY: an `Avx2` exists only where the CPU has AVX2 and PCLMULQDQ (`Avx2::new`
        // makes one from a `Detected` level, which the CPU has).
        unsafe { avx2::block_avx2(carry, bytes) }
    }

    #[inline(always)]
    fn run(&self, utf8: &mut Utf8Carry, rest: &[u8]) -> (usize, bool) {
        // SAFETY: as in `block`.
        unsafe { avx2::run_avx2(utf8, rest) }
    }
}

#[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
impl Kernels for Avx2 {
    const LEVEL: Level = Level::Avx2;

    #[inline(always)]
    fn scan_string(self, buf: &[u8], from: usize) -> Result<(usize, bool), JsonError> {
        // SAFETY: an `Avx2` exists only where the CPU has AVX2 and PCLMULQDQ (`Avx2::new`
        // makes one from a `Detected` level, which the CPU has).
        unsafe { avx2::scan_string_avx2(buf, from) }
    }

    #[inline(always)]
    fn skip_container(
        self,
        buf: &[u8],
        open: usize,
        depth: usize,
        max_depth: usize,
    ) -> Result<usize, JsonError> {
        // SAFETY: as in `scan_string`.
        unsafe { avx2::skip_container_avx2(buf, open, depth, max_depth) }
    }

    #[inline(always)]
    fn skip_string(self, buf: &[u8], from: usize) -> Result<usize, JsonError> {
        // SAFETY: as in `scan_string`.
        unsafe { avx2::skip_string_avx2(buf, from) }
    }

    #[inline(always)]
    fn plain_string(self, buf: &[u8], open: usize) -> Option<usize> {
        // SAFETY: as in `scan_string`.
        unsafe { avx2::plain_string_avx2(buf, open) }
    }

    #[inline(always)]
    fn unescape_simple(self, raw: &[u8], dst: &mut [u8]) -> (usize, usize) {
        if !x86::has_avx2_popcnt() {
            return (0, 0);
        }
        // SAFETY: the CPU has AVX2 and POPCNT (checked just above).
        unsafe { avx2_unescape::unescape_simple_avx2(raw, dst) }
    }

    #[inline(always)]
    fn utf8_valid_up_to(self, buf: &[u8]) -> Result<(), usize> {
        utf8_valid_up_to::<true>(buf)
    }

    #[cfg(test)]
    fn special_window(self, buf: &[u8], i: usize) -> Option<(u64, usize)> {
        // SAFETY: as in `scan_string`.
        unsafe { x86::special_window_32(buf, i) }.map(|m| (m, 32))
    }

    #[cfg(test)]
    fn string_run(self, buf: &[u8], i: usize) -> (usize, usize) {
        // SAFETY: as in `scan_string`.
        (unsafe { avx2::string_run_avx2(buf, i) }, 64)
    }

    #[cfg(test)]
    fn plain_window(self, chunk: &[u8; 64]) -> Option<bool> {
        // SAFETY: as in `scan_string`.
        unsafe { avx2::plain_window_avx2(chunk) }.map(|(_, high)| high != 0)
    }
}

/// The AVX-512BW level (with AVX2 and PCLMULQDQ): 64 bytes per compare. Only
/// [`Avx512::new`] makes one, from a [`Detected`] level.
#[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx512(());

#[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
impl Avx512 {
    /// The AVX-512BW kernels, when the detected level is AVX-512 (so the CPU has
    /// AVX-512BW, AVX2 and PCLMULQDQ).
    #[inline(always)]
    pub(crate) fn new(detected: Detected) -> Option<Self> {
        (detected.level() == Level::Avx512).then_some(Avx512(()))
    }
}

#[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
impl Blocks for Avx512 {
    const RANGE_UTF8: bool = false;

    #[inline(always)]
    fn block(&self, carry: &mut Carry, bytes: &[u8]) -> Option<u64> {
        // SAFETY: an `Avx512` exists only where the CPU has AVX-512BW, AVX2 and PCLMULQDQ
        // (`Avx512::new` makes one from a `Detected` level, which the CPU has).
        unsafe { avx512::block_avx512(carry, bytes) }
    }

    #[inline(always)]
    fn run(&self, utf8: &mut Utf8Carry, rest: &[u8]) -> (usize, bool) {
        // SAFETY: as in `block`.
        unsafe { avx512::run_avx512(utf8, rest) }
    }
}

#[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
impl Kernels for Avx512 {
    const LEVEL: Level = Level::Avx512;

    #[inline(always)]
    fn scan_string(self, buf: &[u8], from: usize) -> Result<(usize, bool), JsonError> {
        // SAFETY: an `Avx512` exists only where the CPU has AVX-512BW, AVX2 and PCLMULQDQ
        // (`Avx512::new` makes one from a `Detected` level, which the CPU has).
        unsafe { avx512::scan_string_avx512(buf, from) }
    }

    #[inline(always)]
    fn skip_container(
        self,
        buf: &[u8],
        open: usize,
        depth: usize,
        max_depth: usize,
    ) -> Result<usize, JsonError> {
        // SAFETY: as in `scan_string`.
        unsafe { avx512::skip_container_avx512(buf, open, depth, max_depth) }
    }

    #[inline(always)]
    fn skip_string(self, buf: &[u8], from: usize) -> Result<usize, JsonError> {
        // SAFETY: as in `scan_string`.
        unsafe { avx512::skip_string_avx512(buf, from) }
    }

    #[inline(always)]
    fn plain_string(self, buf: &[u8], open: usize) -> Option<usize> {
        // SAFETY: as in `scan_string`.
        unsafe { avx512::plain_string_avx512(buf, open) }
    }

    /// The byte compress of VBMI2 where the CPU has it; else the AVX2 level's decoder,
    /// which every AVX-512BW CPU can run.
    #[inline(always)]
    fn unescape_simple(self, raw: &[u8], dst: &mut [u8]) -> (usize, usize) {
        if x86::has_avx512_vbmi2() {
            // SAFETY: the CPU has AVX-512BW, VBMI2 and POPCNT (checked just above).
            return unsafe { avx512_unescape::unescape_simple_avx512(raw, dst) };
        }
        if x86::has_avx2_popcnt() {
            // SAFETY: the CPU has AVX2 and POPCNT (checked just above).
            return unsafe { avx2_unescape::unescape_simple_avx2(raw, dst) };
        }
        (0, 0)
    }

    #[inline(always)]
    fn utf8_valid_up_to(self, buf: &[u8]) -> Result<(), usize> {
        utf8_valid_up_to::<true>(buf)
    }

    #[cfg(test)]
    fn special_window(self, buf: &[u8], i: usize) -> Option<(u64, usize)> {
        // SAFETY: as in `scan_string`.
        unsafe { avx512::special_window_avx512(buf, i) }.map(|m| (m, 64))
    }

    #[cfg(test)]
    fn string_run(self, buf: &[u8], i: usize) -> (usize, usize) {
        // SAFETY: as in `scan_string`.
        (unsafe { avx512::string_run_avx512(buf, i) }, 64)
    }

    #[cfg(test)]
    fn plain_window(self, chunk: &[u8; 64]) -> Option<bool> {
        // SAFETY: as in `scan_string`.
        unsafe { avx512::plain_window_avx512(chunk) }.map(|(_, high)| high != 0)
    }
}

/// The NEON level of aarch64 (its baseline: no run-time check): 16 bytes per register,
/// four registers per 64-byte block.
#[cfg(all(target_arch = "aarch64", target_feature = "neon", not(miri), not(rpcscan_disable_simd)))]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Neon(());

#[cfg(all(target_arch = "aarch64", target_feature = "neon", not(miri), not(rpcscan_disable_simd)))]
impl Neon {
    /// The NEON kernels, when the detected level is NEON (this type exists only where
    /// `target_feature = "neon"` holds).
    #[inline(always)]
    pub(crate) fn new(detected: Detected) -> Option<Self> {
        (detected.level() == Level::Neon).then_some(Neon(()))
    }
}

#[cfg(all(target_arch = "aarch64", target_feature = "neon", not(miri), not(rpcscan_disable_simd)))]
impl Blocks for Neon {
    const RANGE_UTF8: bool = true;

    #[inline(always)]
    fn block(&self, carry: &mut Carry, bytes: &[u8]) -> Option<u64> {
        // SAFETY: NEON is part of the aarch64 baseline (this type is compiled only where
        // `target_feature = "neon"` holds).
        unsafe { neon::block_neon(carry, bytes) }
    }

    #[inline(always)]
    fn run(&self, utf8: &mut Utf8Carry, rest: &[u8]) -> (usize, bool) {
        // SAFETY: as in `block`.
        unsafe { neon::run_neon(utf8, rest) }
    }
}

#[cfg(all(target_arch = "aarch64", target_feature = "neon", not(miri), not(rpcscan_disable_simd)))]
impl Kernels for Neon {
    const LEVEL: Level = Level::Neon;

    #[inline(always)]
    fn scan_string(self, buf: &[u8], from: usize) -> Result<(usize, bool), JsonError> {
        // SAFETY: NEON is part of the aarch64 baseline (this type is compiled only where
        // `target_feature = "neon"` holds).
        unsafe { neon::scan_string_neon(buf, from) }
    }

    #[inline(always)]
    fn skip_container(
        self,
        buf: &[u8],
        open: usize,
        depth: usize,
        max_depth: usize,
    ) -> Result<usize, JsonError> {
        // SAFETY: as in `scan_string`.
        unsafe { neon::skip_container_neon(buf, open, depth, max_depth) }
    }

    #[inline(always)]
    fn skip_string(self, buf: &[u8], from: usize) -> Result<usize, JsonError> {
        // SAFETY: as in `scan_string`.
        unsafe { neon::skip_string_neon(buf, from) }
    }

    #[inline(always)]
    fn plain_string(self, buf: &[u8], open: usize) -> Option<usize> {
        // SAFETY: as in `scan_string`.
        unsafe { neon::plain_string_neon(buf, open) }
    }

    #[inline(always)]
    fn unescape_simple(self, _: &[u8], _: &mut [u8]) -> (usize, usize) {
        (0, 0)
    }

    #[inline(always)]
    fn utf8_valid_up_to(self, buf: &[u8]) -> Result<(), usize> {
        utf8_valid_up_to::<true>(buf)
    }

    #[cfg(test)]
    fn special_window(self, buf: &[u8], i: usize) -> Option<(u64, usize)> {
        // SAFETY: as in `scan_string`.
        unsafe { neon::special_window_neon(buf, i) }.map(|m| (m, 32))
    }

    #[cfg(test)]
    fn string_run(self, buf: &[u8], i: usize) -> (usize, usize) {
        // SAFETY: as in `scan_string`.
        (unsafe { neon::string_run_neon(buf, i) }, 64)
    }

    #[cfg(test)]
    fn plain_window(self, chunk: &[u8; 64]) -> Option<bool> {
        // SAFETY: as in `scan_string`.
        unsafe { neon::plain_window_neon(chunk) }.map(|(_, high)| high != 0)
    }
}

/// The simd128 level of wasm32 (static: WebAssembly has no run-time feature detection, so
/// the module is built with `target_feature = "simd128"` or without this level): 16 bytes
/// per register, four registers per 64-byte block.
///
/// Its kernels are safe to call: a `simd128` function may be called from any function of
/// a crate compiled with simd128 on (the engine checks the module as a whole when it
/// loads it), so no call here needs an `unsafe` block.
#[cfg(all(
    target_arch = "wasm32",
    target_feature = "simd128",
    not(miri),
    not(rpcscan_disable_simd)
))]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Simd128(());

#[cfg(all(
    target_arch = "wasm32",
    target_feature = "simd128",
    not(miri),
    not(rpcscan_disable_simd)
))]
impl Simd128 {
    /// The simd128 kernels, when the detected level is simd128 (this type exists only
    /// where `target_feature = "simd128"` holds).
    #[inline(always)]
    pub(crate) fn new(detected: Detected) -> Option<Self> {
        (detected.level() == Level::Simd128).then_some(Simd128(()))
    }
}

#[cfg(all(
    target_arch = "wasm32",
    target_feature = "simd128",
    not(miri),
    not(rpcscan_disable_simd)
))]
impl Blocks for Simd128 {
    const RANGE_UTF8: bool = true;

    #[inline(always)]
    fn block(&self, carry: &mut Carry, bytes: &[u8]) -> Option<u64> {
        simd128::block_simd128(carry, bytes)
    }

    #[inline(always)]
    fn run(&self, utf8: &mut Utf8Carry, rest: &[u8]) -> (usize, bool) {
        simd128::run_simd128(utf8, rest)
    }
}

#[cfg(all(
    target_arch = "wasm32",
    target_feature = "simd128",
    not(miri),
    not(rpcscan_disable_simd)
))]
impl Kernels for Simd128 {
    const LEVEL: Level = Level::Simd128;

    #[inline(always)]
    fn scan_string(self, buf: &[u8], from: usize) -> Result<(usize, bool), JsonError> {
        simd128::scan_string_simd128(buf, from)
    }

    #[inline(always)]
    fn skip_container(
        self,
        buf: &[u8],
        open: usize,
        depth: usize,
        max_depth: usize,
    ) -> Result<usize, JsonError> {
        simd128::skip_container_simd128(buf, open, depth, max_depth)
    }

    #[inline(always)]
    fn skip_string(self, buf: &[u8], from: usize) -> Result<usize, JsonError> {
        simd128::skip_string_simd128(buf, from)
    }

    #[inline(always)]
    fn plain_string(self, buf: &[u8], open: usize) -> Option<usize> {
        simd128::plain_string_simd128(buf, open)
    }

    #[inline(always)]
    fn unescape_simple(self, _: &[u8], _: &mut [u8]) -> (usize, usize) {
        (0, 0)
    }

    /// `simdutf8`'s simd128 validator (compiled in where `target_feature = "simd128"`
    /// holds), with the scalar level's twin for the error offset.
    #[inline(always)]
    fn utf8_valid_up_to(self, buf: &[u8]) -> Result<(), usize> {
        utf8_valid_up_to::<true>(buf)
    }

    #[cfg(test)]
    fn special_window(self, buf: &[u8], i: usize) -> Option<(u64, usize)> {
        simd128::special_window_simd128(buf, i).map(|m| (m, 32))
    }

    #[cfg(test)]
    fn string_run(self, buf: &[u8], i: usize) -> (usize, usize) {
        (simd128::string_run_simd128(buf, i), 64)
    }

    #[cfg(test)]
    fn plain_window(self, chunk: &[u8; 64]) -> Option<bool> {
        simd128::plain_window_simd128(chunk).map(|(_, high)| high != 0)
    }
}
