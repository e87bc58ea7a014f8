//! NEON kernels for aarch64 (16 bytes per register, four per block): the string window,
//! the skipper's and stage 1's block masks, and the skipper and stage-1 block instantiated
//! with them.
//!
//! NEON is part of the aarch64 baseline, so nothing here needs run-time detection: the
//! module is compiled only where `target_feature = "neon"` holds. The functions are still
//! `#[target_feature(enable = "neon")]` (Rust asks for it to call the intrinsics safely),
//! so their callers outside say why NEON is there. Every load reads from an array that is
//! known to hold the bytes read (the `SAFETY` comments say how).
//!
//! NEON has no `movemask`. A 64-bit mask (bit i = byte i) is built from four comparison
//! results (0x00 or 0xFF per byte) as simdjson's arm64 stage 1 does: keep in each byte
//! the bit of its position within its group of eight, then three rounds of pairwise adds
//! (four `addp`) fold 64 bytes into the 8 bytes of the mask.
//!
//! Prefix XOR is the portable shift-and-XOR one: the carry-less multiply (`PMULL`) is an
//! optional extension on aarch64, and a static level may not assume it.

use core::arch::aarch64::*;

use super::skipper::{self, Masks};
use super::stage1::{self, Carry, EscapeMasks, TokenMasks, Utf8Carry};
use super::string::{self, plain_string_end};
use super::swar::prefix_xor;
use super::tables::classes;
use crate::error::JsonError;

/// A 64-byte block in four registers, byte 0 first.
#[derive(Clone, Copy)]
pub(super) struct Block([uint8x16_t; 4]);

/// Loads 16 bytes.
#[inline]
#[target_feature(enable = "neon")]
fn load16(bytes: &[u8; 16]) -> uint8x16_t {
    // SAFETY: `bytes` is 16 bytes, exactly what the unaligned load reads.
    unsafe { vld1q_u8(bytes.as_ptr()) }
}

/// The first 16 bytes of `bytes` from `at` as an array, when they are there.
#[inline(always)]
fn sixteen(bytes: &[u8], at: usize) -> Option<&[u8; 16]> {
    bytes.get(at..at.checked_add(16)?)?.try_into().ok()
}

/// Loads a 64-byte block.
#[inline]
#[target_feature(enable = "neon")]
pub(super) fn load_block(chunk: &[u8; 64]) -> Block {
    // SAFETY: `chunk` is 64 bytes, exactly what the four consecutive loads read.
    let v = unsafe { vld1q_u8_x4(chunk.as_ptr()) };
    Block([v.0, v.1, v.2, v.3])
}

/// Each byte's bit within its group of eight.
const WEIGHTS: [u8; 16] = [1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128];

/// The mask of four comparison results (lanes 0x00 or 0xFF): bit i = lane i.
#[inline]
#[target_feature(enable = "neon")]
fn bits64(m: [uint8x16_t; 4]) -> u64 {
    let w = load16(&WEIGHTS);
    let pairs01 = addp(vandq_u8(m[0], w), vandq_u8(m[1], w));
    let pairs23 = addp(vandq_u8(m[2], w), vandq_u8(m[3], w));
    let quads = addp(pairs01, pairs23);
    let eights = addp(quads, quads);
    vgetq_lane_u64::<0>(vreinterpretq_u64_u8(eights))
}

/// The mask of two comparison results, in the low 32 bits.
#[inline]
#[target_feature(enable = "neon")]
fn bits32(m0: uint8x16_t, m1: uint8x16_t) -> u64 {
    let w = load16(&WEIGHTS);
    let pairs = addp(vandq_u8(m0, w), vandq_u8(m1, w));
    let quads = addp(pairs, pairs);
    let eights = addp(quads, quads);
    u64::from(vgetq_lane_u32::<0>(vreinterpretq_u32_u8(eights)))
}

/// Pairwise add of bytes (`vpaddq_u8`: lanes 0..8 from `a`, 8..16 from `b`).
///
/// Written as inline assembly on purpose: with the intrinsic, LLVM rewrites the chain of
/// pairwise adds of a movemask into unzips and adds (`uzp1`, `uzp2`, `add`: three
/// instructions for each `addp`), which made the stage-1 block 40% longer.
#[inline]
#[target_feature(enable = "neon")]
fn addp(a: uint8x16_t, b: uint8x16_t) -> uint8x16_t {
    let sum: uint8x16_t;
    // SAFETY: `addp` reads two registers and writes one; no memory, no flags, no stack.
    unsafe {
        core::arch::asm!(
            "addp {sum:v}.16b, {a:v}.16b, {b:v}.16b",
            sum = lateout(vreg) sum,
            a = in(vreg) a,
            b = in(vreg) b,
            options(pure, nomem, nostack, preserves_flags),
        );
    }
    sum
}

/// `f` applied to each register of a block.
#[inline]
#[target_feature(enable = "neon")]
fn each(b: &Block, f: impl Fn(uint8x16_t) -> uint8x16_t) -> [uint8x16_t; 4] {
    let [v0, v1, v2, v3] = b.0;
    [f(v0), f(v1), f(v2), f(v3)]
}

#[inline]
#[target_feature(enable = "neon")]
fn eq(v: uint8x16_t, c: u8) -> uint8x16_t {
    vceqq_u8(v, vdupq_n_u8(c))
}

/// `"`, `\\` and control bytes.
#[inline]
#[target_feature(enable = "neon")]
fn special(v: uint8x16_t) -> uint8x16_t {
    vorrq_u8(vorrq_u8(eq(v, b'"'), eq(v, b'\\')), vcltq_u8(v, vdupq_n_u8(0x20)))
}

/// Bytes above 0x7F.
#[inline]
#[target_feature(enable = "neon")]
fn high(v: uint8x16_t) -> uint8x16_t {
    vcltzq_s8(vreinterpretq_s8_u8(v))
}

/// Mask of `"`, `\\` and control bytes among the 16 of `window` (bit k = byte k): the
/// look at a string's start (`simd::string_special_in_16`).
#[inline]
#[target_feature(enable = "neon")]
pub(super) fn special_16_neon(window: &[u8; 16]) -> u32 {
    let bits = vandq_u8(special(load16(window)), load16(&WEIGHTS));
    u32::from(vaddv_u8(vget_low_u8(bits))) | u32::from(vaddv_u8(vget_high_u8(bits))) << 8
}

/// Mask of `"`, `\\` and control bytes among the 32 at `i`.
#[inline]
#[target_feature(enable = "neon")]
pub(super) fn special_window_neon(buf: &[u8], i: usize) -> Option<u64> {
    let lo = sixteen(buf, i)?;
    let hi = sixteen(buf, i.checked_add(16)?)?;
    Some(bits32(special(load16(lo)), special(load16(hi))))
}

#[target_feature(enable = "neon")]
pub(super) fn scan_string_neon(buf: &[u8], from: usize) -> Result<(usize, bool), JsonError> {
    string::scan_from::<32>(
        buf,
        from,
        false,
        |b, i| special_window_neon(b, i),
        super::swar::scan_swar,
    )
}

/// The container skipper's masks of one block.
#[inline]
#[target_feature(enable = "neon")]
pub(super) fn masks_neon(b: &Block) -> Masks {
    let bit5 = vdupq_n_u8(0x20);
    Masks {
        quote: bits64(each(b, |v| eq(v, b'"'))),
        backslash: bits64(each(b, |v| eq(v, b'\\'))),
        // `[`/`{` and `]`/`}` differ only in bit 5.
        open: bits64(each(b, |v| eq(vorrq_u8(v, bit5), b'{'))),
        close: bits64(each(b, |v| eq(vorrq_u8(v, bit5), b'}'))),
        curly: bits64(each(b, |v| vtstq_u8(v, bit5))),
    }
}

#[target_feature(enable = "neon")]
#[inline]
pub(crate) fn skip_container_neon(
    buf: &[u8],
    open: usize,
    depth: usize,
    max_depth: usize,
) -> Result<usize, JsonError> {
    skipper::walk(
        buf,
        open,
        depth,
        max_depth,
        |bytes| match <&[u8; 64]>::try_from(bytes) {
            Ok(chunk) => masks_neon(&load_block(chunk)),
            Err(_) => masks_neon(&load_block(&stage1::padded(bytes))),
        },
        prefix_xor,
        |buf, i| string_run_neon(buf, i),
    )
}

/// Whether any lane of any of the four registers is not zero.
#[inline]
#[target_feature(enable = "neon")]
fn any4(m: [uint8x16_t; 4]) -> bool {
    vmaxvq_u8(vorrq_u8(vorrq_u8(m[0], m[1]), vorrq_u8(m[2], m[3]))) != 0
}

/// The string skip (`skipper::string_end`), 64 bytes per block.
#[inline]
#[target_feature(enable = "neon")]
pub(crate) fn skip_string_neon(buf: &[u8], from: usize) -> Result<usize, JsonError> {
    skipper::string_end(
        buf,
        from,
        0,
        |bytes| {
            let b = match <&[u8; 64]>::try_from(bytes) {
                Ok(chunk) => load_block(chunk),
                Err(_) => load_block(&stage1::padded(bytes)),
            };
            Masks {
                quote: bits64(each(&b, |v| eq(v, b'"'))),
                backslash: bits64(each(&b, |v| eq(v, b'\\'))),
                ..Masks::default()
            }
        },
        |buf, i| string_run_neon(buf, i),
    )
}

/// The skipper's string run (`skipper::string_run`), 64 bytes per test.
#[inline]
#[target_feature(enable = "neon")]
pub(super) fn string_run_neon(buf: &[u8], i: usize) -> usize {
    skipper::string_run::<64>(buf, i, |chunk| {
        let b = load_block(chunk);
        let hit = each(&b, |v| vorrq_u8(eq(v, b'"'), eq(v, b'\\')));
        any4(hit).then(|| bits64(hit).trailing_zeros() as usize)
    })
}

/// Stage 1's long-string run (`stage1::run`): 64 bytes per test; UTF-8 is left to the
/// range check.
#[target_feature(enable = "neon")]
pub(crate) fn run_neon(utf8: &mut Utf8Carry, rest: &[u8]) -> (usize, bool) {
    stage1::run(utf8, rest, |chunk| plain_window_neon(chunk), stage1::range_run_utf8)
}

/// The window test of [`run_neon`]: `None` when the 64 bytes hold a quote, backslash or
/// control byte, else not zero when a byte is not ASCII (the largest byte's high bit).
#[inline]
#[target_feature(enable = "neon")]
pub(super) fn plain_window_neon(chunk: &[u8; 64]) -> Option<((), u64)> {
    let b = load_block(chunk);
    if any4(each(&b, |v| special(v))) {
        return None;
    }
    let [v0, v1, v2, v3] = b.0;
    let largest = vmaxvq_u8(vorrq_u8(vorrq_u8(v0, v1), vorrq_u8(v2, v3)));
    Some(((), u64::from(largest & 0x80)))
}

/// Envelope mode's inline look at a string the walk reads (keys, `id`, `method`), when 32
/// bytes follow the opening quote at `open`: the offset after the closing quote when the
/// string is plain (see [`plain_string_end`]); `None` sends it to the portable scan.
#[inline]
#[target_feature(enable = "neon")]
pub(crate) fn plain_string_neon(buf: &[u8], open: usize) -> Option<usize> {
    let start = open + 1;
    let chunk = buf.get(start..start + 32)?;
    let (lo, hi) = (load16(sixteen(chunk, 0)?), load16(sixteen(chunk, 16)?));
    let specials = bits32(special(lo), special(hi));
    plain_string_end(chunk, specials, bits32(high(lo), high(hi))).map(|end| start + end)
}

/// The class bytes of 16 bytes for one table pair (see [`classes`]): `TBL` on each nibble.
#[inline]
#[target_feature(enable = "neon")]
fn classes16(v: uint8x16_t, (lo, hi): &([u8; 16], [u8; 16])) -> uint8x16_t {
    let low = vandq_u8(v, vdupq_n_u8(0x0F));
    let high = vshrq_n_u8::<4>(v);
    vandq_u8(vqtbl1q_u8(load16(lo), low), vqtbl1q_u8(load16(hi), high))
}

/// Lanes whose class byte has any of `bits`.
#[inline]
#[target_feature(enable = "neon")]
fn any(classes: uint8x16_t, bits: u8) -> uint8x16_t {
    vtstq_u8(classes, vdupq_n_u8(bits))
}

/// Stage 1's token masks of one block.
#[inline]
#[target_feature(enable = "neon")]
pub(super) fn token_masks_neon(b: &Block) -> TokenMasks {
    use classes::*;
    let c = each(b, |v| classes16(v, &FIRST));
    let of = |bits: u8| bits64(c.map(|c| any(c, bits)));
    TokenMasks {
        quote: bits64(each(b, |v| eq(v, b'"'))),
        backslash: bits64(each(b, |v| eq(v, b'\\'))),
        control: bits64(each(b, |v| vcltq_u8(v, vdupq_n_u8(0x20)))),
        space: of(SPACE | TAB_LF_CR),
        op: of(BRACKET | COMMA | COLON),
        high: bits64(each(b, |v| high(v))),
    }
}

/// Stage 1's escape masks of one block.
#[inline]
#[target_feature(enable = "neon")]
pub(super) fn escape_masks_neon(b: &Block) -> EscapeMasks {
    use classes::*;
    let allowed = each(b, |v| {
        vorrq_u8(
            any(classes16(v, &FIRST), QUOTE | BACKSLASH | U),
            any(classes16(v, &SECOND), SLASH | B_F_N | R_T),
        )
    });
    EscapeMasks {
        allowed: bits64(allowed),
        unicode: bits64(each(b, |v| eq(v, b'u'))),
        hex: bits64(each(b, |v| any(classes16(v, &SECOND), DIGIT | HEX_LETTER))),
    }
}

/// One block of the fast path's token stream with NEON kernels.
#[target_feature(enable = "neon")]
pub(crate) fn block_neon(carry: &mut Carry, bytes: &[u8]) -> Option<u64> {
    let b = match <&[u8; 64]>::try_from(bytes) {
        Ok(chunk) => load_block(chunk),
        Err(_) => load_block(&stage1::padded(bytes)),
    };
    stage1::block(
        carry,
        &b,
        |b| token_masks_neon(b),
        |b| escape_masks_neon(b),
        prefix_xor,
        stage1::range_utf8,
    )
}

#[cfg(test)]
mod tests {
    use super::super::swar;
    use super::*;

    fn all_masks(chunk: &[u8; 64]) -> (Masks, TokenMasks, EscapeMasks) {
        // SAFETY: NEON is part of the aarch64 baseline (this module needs it to compile).
        unsafe {
            let b = load_block(chunk);
            (masks_neon(&b), token_masks_neon(&b), escape_masks_neon(&b))
        }
    }

    fn scalar_masks(chunk: &[u8; 64]) -> (Masks, TokenMasks, EscapeMasks) {
        (swar::block_masks(chunk), swar::token_masks(chunk), swar::escape_masks(chunk))
    }

    /// The nibble-lookup classes and the compares give the scalar twins' masks for every
    /// byte value, at every lane (each block holds 64 consecutive byte values, starting at
    /// every offset).
    #[test]
    fn every_byte_value_in_every_lane() {
        for start in 0..=255u8 {
            let chunk: [u8; 64] = core::array::from_fn(|k| start.wrapping_add(k as u8));
            assert_eq!(all_masks(&chunk), scalar_masks(&chunk), "start {start:#x}");
        }
    }

    #[test]
    fn vector_masks_equal_scalar_masks() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..20_000 {
            let chunk: [u8; 64] = core::array::from_fn(|_| {
                crate::simd::rand::xorshift(&mut seed);
                b"{}[]\"\\ax\xdb\xfb\x5b\x7d\x00\xff ,:\t\n\r\x1f\x20ubfnrt/09afAFgG\x0c"
                    [(seed % 38) as usize]
            });
            assert_eq!(all_masks(&chunk), scalar_masks(&chunk));
        }
    }

    /// One set bit at every position, alone, so a lane mixed up with another shows.
    #[test]
    fn single_lanes_land_on_their_bit() {
        for at in 0..64 {
            let mut chunk = [b'a'; 64];
            chunk[at] = b'"';
            assert_eq!(all_masks(&chunk), scalar_masks(&chunk), "{at}");
            // SAFETY: NEON is part of the aarch64 baseline.
            let window = unsafe { special_window_neon(&chunk, at.min(32)) };
            assert_eq!(window, scalar_window(&chunk, at.min(32)), "{at}");
        }
    }

    fn scalar_window(buf: &[u8], i: usize) -> Option<u64> {
        let lo = swar::string_special_window(buf, i)?;
        let rest: Vec<u64> =
            (1..4).map(|k| swar::string_special_window(buf, i + 8 * k)).collect::<Option<_>>()?;
        Some(rest.iter().enumerate().fold(lo, |m, (k, w)| m | w << (8 * (k + 1))))
    }

    #[test]
    fn tails_are_padded_like_the_scalar_level() {
        let bytes: Vec<u8> =
            (0..64u8).map(|k| b"{\"a\\u0f\x01\xc3 :,]"[usize::from(k) % 13]).collect();
        for len in 0..64 {
            let padded = stage1::padded(&bytes[..len]);
            assert_eq!(all_masks(&padded), scalar_masks(&padded), "{len}");
        }
    }
}
