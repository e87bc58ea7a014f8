//! WebAssembly simd128 kernels for wasm32 (16 bytes per register, four per block): the
//! string window, the skipper's and stage 1's block masks, and the skipper and stage-1
//! block instantiated with them.
//!
//! WebAssembly has no run-time feature detection: a module that uses a simd128 instruction
//! does not validate on an engine without it. So this level is static, like NEON on
//! aarch64: the module is compiled only where `target_feature = "simd128"` holds (the
//! build enables it for the whole crate, `-C target-feature=+simd128`), and a build
//! without it runs the portable level. Every engine the npm package targets has simd128
//! (Node 16.4 and later, Deno, Cloudflare Workers, the browsers since 2021-2023).
//!
//! simd128 has a movemask (`i8x16.bitmask`), so a 64-bit mask (bit i = byte i) is four
//! 16-bit bitmasks side by side. The byte classes of stage 1 are the nibble lookup of the
//! x86 and NEON levels (`u8x16_swizzle`, which like NEON's `TBL` gives 0 for an index past
//! 15; the indices here are nibbles, so never past 15). Prefix XOR is the portable
//! shift-and-XOR one: there is no carry-less multiply.
//!
//! The crate is compiled with simd128 on, so these functions are safe to call from any of
//! its functions; the only `unsafe` is the load, from an array known to hold the 16 bytes
//! it reads.
//!
//! Tests: the crate's own tests do not build for `wasm32-unknown-unknown` (their
//! dev-dependencies need an OS), so this level is held to its scalar twin through the
//! WebAssembly module: `js/test/wasm-levels.test.mjs` runs the fuzz corpora, the sample
//! traffic, JSONTestSuite, the rule book's table and every byte value at every lane of a
//! block through the module built with simd128 and the one built without it (the portable
//! kernels), in strict and envelope mode, and asserts the same verdicts, offsets and members.

use core::arch::wasm32::*;

use super::skipper::{self, Masks};
use super::stage1::{self, Carry, EscapeMasks, TokenMasks, Utf8Carry};
use super::string::{self, plain_string_end};
use super::swar::prefix_xor;
use super::tables::classes;
use crate::error::JsonError;

/// A 64-byte block in four registers, byte 0 first.
#[derive(Clone, Copy)]
pub(super) struct Block([v128; 4]);

/// Loads 16 bytes.
#[inline]
#[target_feature(enable = "simd128")]
fn load16(bytes: &[u8; 16]) -> v128 {
    // SAFETY: `bytes` is 16 bytes, exactly what the unaligned load reads (`v128.load` has
    // no alignment requirement).
    unsafe { v128_load(bytes.as_ptr().cast::<v128>()) }
}

/// The first 16 bytes of `bytes` from `at` as an array, when they are there.
#[inline(always)]
fn sixteen(bytes: &[u8], at: usize) -> Option<&[u8; 16]> {
    bytes.get(at..at.checked_add(16)?)?.try_into().ok()
}

/// The `k`-th 16 bytes of a 64-byte chunk.
#[inline(always)]
fn quarter(chunk: &[u8; 64], k: usize) -> &[u8; 16] {
    let (quarters, _) = chunk.as_chunks::<16>();
    &quarters[k]
}

/// Loads a 64-byte block.
#[inline]
#[target_feature(enable = "simd128")]
pub(super) fn load_block(chunk: &[u8; 64]) -> Block {
    Block([
        load16(quarter(chunk, 0)),
        load16(quarter(chunk, 1)),
        load16(quarter(chunk, 2)),
        load16(quarter(chunk, 3)),
    ])
}

/// The mask of four comparison results (lanes 0x00 or 0xFF): bit i = lane i.
#[inline]
#[target_feature(enable = "simd128")]
fn bits64(m: [v128; 4]) -> u64 {
    u64::from(i8x16_bitmask(m[0]))
        | u64::from(i8x16_bitmask(m[1])) << 16
        | u64::from(i8x16_bitmask(m[2])) << 32
        | u64::from(i8x16_bitmask(m[3])) << 48
}

/// The mask of two comparison results, in the low 32 bits.
#[inline]
#[target_feature(enable = "simd128")]
fn bits32(m0: v128, m1: v128) -> u64 {
    u64::from(i8x16_bitmask(m0)) | u64::from(i8x16_bitmask(m1)) << 16
}

/// `f` applied to each register of a block.
#[inline]
#[target_feature(enable = "simd128")]
fn each(b: &Block, f: impl Fn(v128) -> v128) -> [v128; 4] {
    let [v0, v1, v2, v3] = b.0;
    [f(v0), f(v1), f(v2), f(v3)]
}

#[inline]
#[target_feature(enable = "simd128")]
fn eq(v: v128, c: u8) -> v128 {
    u8x16_eq(v, u8x16_splat(c))
}

/// Zero exactly in the lanes of `"`, `\\` and control bytes: `v ^ '"'` is zero for a
/// quote, `v ^ '\\'` for a backslash, `v - 0x1F` (saturating) for a byte below 0x20, and
/// the smallest of the three is zero when one is. Five operations where three compares
/// and two ORs take six or more (an unsigned `lt` is two or three x86 instructions).
#[inline]
#[target_feature(enable = "simd128")]
fn special_zero(v: v128) -> v128 {
    let quote = v128_xor(v, u8x16_splat(b'"'));
    let backslash = v128_xor(v, u8x16_splat(b'\\'));
    u8x16_min(u8x16_min(quote, backslash), u8x16_sub_sat(v, u8x16_splat(0x1F)))
}

/// `"`, `\\` and control bytes.
#[inline]
#[target_feature(enable = "simd128")]
fn special(v: v128) -> v128 {
    eq(special_zero(v), 0)
}

/// Mask of `"`, `\\` and control bytes among the 16 of `window` (bit k = byte k): the
/// look at a string's start (`simd::string_special_in_16`).
#[inline]
#[target_feature(enable = "simd128")]
pub(super) fn special_16_simd128(window: &[u8; 16]) -> u32 {
    u32::from(i8x16_bitmask(special(load16(window))))
}

/// Mask of `"`, `\\` and control bytes among the 32 at `i`.
#[inline]
#[target_feature(enable = "simd128")]
pub(super) fn special_window_simd128(buf: &[u8], i: usize) -> Option<u64> {
    let lo = sixteen(buf, i)?;
    let hi = sixteen(buf, i.checked_add(16)?)?;
    Some(bits32(special(load16(lo)), special(load16(hi))))
}

#[target_feature(enable = "simd128")]
pub(super) fn scan_string_simd128(buf: &[u8], from: usize) -> Result<(usize, bool), JsonError> {
    string::scan_from::<32>(
        buf,
        from,
        false,
        |b, i| special_window_simd128(b, i),
        super::swar::scan_swar,
    )
}

/// The container skipper's masks of one block.
#[inline]
#[target_feature(enable = "simd128")]
pub(super) fn masks_simd128(b: &Block) -> Masks {
    let bit5 = u8x16_splat(0x20);
    let zero = u8x16_splat(0);
    Masks {
        quote: bits64(each(b, |v| eq(v, b'"'))),
        backslash: bits64(each(b, |v| eq(v, b'\\'))),
        // `[`/`{` and `]`/`}` differ only in bit 5.
        open: bits64(each(b, |v| eq(v128_or(v, bit5), b'{'))),
        close: bits64(each(b, |v| eq(v128_or(v, bit5), b'}'))),
        curly: bits64(each(b, |v| u8x16_ne(v128_and(v, bit5), zero))),
    }
}

#[target_feature(enable = "simd128")]
#[inline]
pub(crate) fn skip_container_simd128(
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
            Ok(chunk) => masks_simd128(&load_block(chunk)),
            Err(_) => masks_simd128(&load_block(&stage1::padded(bytes))),
        },
        prefix_xor,
        |buf, i| string_run_simd128(buf, i),
    )
}

/// Whether any lane of any of the four registers is not zero.
#[inline]
#[target_feature(enable = "simd128")]
fn any4(m: [v128; 4]) -> bool {
    v128_any_true(v128_or(v128_or(m[0], m[1]), v128_or(m[2], m[3])))
}

/// The string skip (`skipper::string_end`), 64 bytes per block.
#[inline]
#[target_feature(enable = "simd128")]
pub(crate) fn skip_string_simd128(buf: &[u8], from: usize) -> Result<usize, JsonError> {
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
        |buf, i| string_run_simd128(buf, i),
    )
}

/// The skipper's string run (`skipper::string_run`), 64 bytes per test.
#[inline]
#[target_feature(enable = "simd128")]
pub(super) fn string_run_simd128(buf: &[u8], i: usize) -> usize {
    skipper::string_run::<64>(buf, i, |chunk| {
        let b = load_block(chunk);
        let hit = each(&b, |v| v128_or(eq(v, b'"'), eq(v, b'\\')));
        any4(hit).then(|| bits64(hit).trailing_zeros() as usize)
    })
}

/// Stage 1's long-string run (`stage1::run`'s loop): 64 bytes per test, and after an
/// ASCII window (and at the start) 256 bytes per test while they are plain ASCII
/// ([`ascii_quad_simd128`]); after the first plain 256 bytes of a run, 512 bytes per test
/// ([`ascii_pair_quick_simd128`], which also stops at a space or `!`) until that test
/// fails, once per run. UTF-8 is left to the range check (`utf8` is not touched).
/// Trying the 256-byte test only once, at the start, with `stage1::run` after it, was
/// slower on image results (V8 compiled the window loop worse).
#[target_feature(enable = "simd128")]
pub(crate) fn run_simd128(_utf8: &mut Utf8Carry, rest: &[u8]) -> (usize, bool) {
    let (mut n, mut high_seen) = (0, 0);
    let mut ascii = true;
    // The 512-byte test has not run yet in this run: base64 and other text without spaces
    // goes through it; text with spaces stops it at once and stays with the exact test.
    let mut quick = true;
    loop {
        if ascii {
            while let Some(quad) = rest.get(n..n + 256).and_then(|q| <&[u8; 256]>::try_from(q).ok())
            {
                if !ascii_quad_simd128(quad) {
                    break;
                }
                n += 256;
                if quick {
                    quick = false;
                    while let Some(pair) =
                        rest.get(n..n + 512).and_then(|q| <&[u8; 512]>::try_from(q).ok())
                    {
                        if !ascii_pair_quick_simd128(pair) {
                            break;
                        }
                        n += 512;
                    }
                }
            }
        }
        let Some(chunk) = rest.get(n..n + 64).and_then(|c| <&[u8; 64]>::try_from(c).ok()) else {
            break;
        };
        let Some(((), high)) = plain_window_simd128(chunk) else {
            break;
        };
        ascii = high == 0;
        high_seen |= high;
        n += 64;
    }
    (n, high_seen != 0)
}

/// Whether 256 bytes are all ASCII from 0x20 up, none a quote or backslash. Per 16 bytes,
/// four operations folded into one running signed minimum: `v ^ 2` swaps the quote (0x22)
/// with the space (0x20) and `!` with `#`, and leaves the control bytes below 0x20 and
/// every byte from 0x80 up negative; a backslash is made 0xFF (`| (v == '\\')`). So the
/// minimum is above 0x20 exactly when every byte is plain; one test per 256 bytes. Five
/// operations before (`v ^ '\\'` and `(v ^ 0x7D) + 0x21`, their minimum), six before
/// that (38 against 32.5 GB/s alone on 64 KB in module memory, AMD EPYC, Node 20).
/// Slower variants: two running minimums (XORs unsigned, the bytes signed), which LLVM
/// turns into two trees keeping all sixteen loaded registers live (V8's x64 code has
/// sixteen xmm registers in all), and four running minimums.
#[inline]
#[target_feature(enable = "simd128")]
pub(super) fn ascii_quad_simd128(quad: &[u8; 256]) -> bool {
    let (rows, _) = quad.as_chunks::<16>();
    let (backslash, swap) = (u8x16_splat(b'\\'), u8x16_splat(2));
    let mut least = i8x16_splat(0x7F);
    for row in rows {
        let v = load16(row);
        least = i8x16_min(least, v128_or(v128_xor(v, swap), i8x16_eq(v, backslash)));
    }
    i8x16_all_true(i8x16_gt(least, i8x16_splat(0x20)))
}

/// Whether 512 bytes are all ASCII above `"`, none a backslash: the quick test of
/// [`run_simd128`], three operations per 16 bytes. A backslash is made 0xFF (`v | (v ==
/// '\\')`), and the signed minimum of what is left is below `#` at a backslash, a quote, a
/// control byte and every byte from 0x80 up (negative), but also at a space and `!`: a
/// false stop only, after which the run goes on with the exact test. The test of four
/// operations before (`v ^ '\\'` and `v - '"'`, their minimum) ran at 50 GB/s alone on
/// 64 KB in module memory; two running minimums (the bytes signed, `v ^ '\\'` unsigned)
/// were slower: LLVM computes one chain over all 32 rows before the other, and V8 spills.
#[inline]
#[target_feature(enable = "simd128")]
pub(super) fn ascii_pair_quick_simd128(pair: &[u8; 512]) -> bool {
    let (rows, _) = pair.as_chunks::<16>();
    let backslash = u8x16_splat(b'\\');
    let mut least = i8x16_splat(0x7F);
    for row in rows {
        let v = load16(row);
        least = i8x16_min(least, v128_or(v, i8x16_eq(v, backslash)));
    }
    i8x16_all_true(i8x16_gt(least, i8x16_splat(b'"' as i8)))
}

/// Whether a block holds no quote, backslash or control byte: one test for the whole
/// block (a lane of the smallest [`special_zero`] is zero when a byte is special).
#[inline]
#[target_feature(enable = "simd128")]
fn plain_block(b: &Block) -> bool {
    let [z0, z1, z2, z3] = each(b, |v| special_zero(v));
    u8x16_all_true(u8x16_min(u8x16_min(z0, z1), u8x16_min(z2, z3)))
}

/// The window test of [`run_simd128`]: `None` when the 64 bytes hold a quote, backslash
/// or control byte, else not zero when a byte is not ASCII (the high bits' bitmask).
#[inline]
#[target_feature(enable = "simd128")]
pub(super) fn plain_window_simd128(chunk: &[u8; 64]) -> Option<((), u64)> {
    let b = load_block(chunk);
    if !plain_block(&b) {
        return None;
    }
    let [v0, v1, v2, v3] = b.0;
    Some(((), u64::from(i8x16_bitmask(v128_or(v128_or(v0, v1), v128_or(v2, v3))))))
}

/// Envelope mode's inline look at a string the walk reads (keys, `id`, `method`), when 32
/// bytes follow the opening quote at `open`: the offset after the closing quote when the
/// string is plain (see [`plain_string_end`]); `None` sends it to the portable scan.
#[inline]
#[target_feature(enable = "simd128")]
pub(crate) fn plain_string_simd128(buf: &[u8], open: usize) -> Option<usize> {
    let start = open.checked_add(1)?;
    let chunk = buf.get(start..start.checked_add(32)?)?;
    let (lo, hi) = (load16(sixteen(chunk, 0)?), load16(sixteen(chunk, 16)?));
    let specials = bits32(special(lo), special(hi));
    let high = u64::from(i8x16_bitmask(lo)) | u64::from(i8x16_bitmask(hi)) << 16;
    plain_string_end(chunk, specials, high).map(|end| start + end)
}

/// The class bytes of 16 bytes for one table pair (see [`classes`]): a swizzle on each
/// nibble.
#[inline]
#[target_feature(enable = "simd128")]
fn classes16(v: v128, (lo, hi): &([u8; 16], [u8; 16])) -> v128 {
    let low = v128_and(v, u8x16_splat(0x0F));
    let high = u8x16_shr(v, 4);
    v128_and(u8x16_swizzle(load16(lo), low), u8x16_swizzle(load16(hi), high))
}

/// Lanes whose class byte has any of `bits`.
#[inline]
#[target_feature(enable = "simd128")]
fn any(classes: v128, bits: u8) -> v128 {
    u8x16_ne(v128_and(classes, u8x16_splat(bits)), u8x16_splat(0))
}

/// Stage 1's token masks of one block.
#[inline]
#[target_feature(enable = "simd128")]
pub(super) fn token_masks_simd128(b: &Block) -> TokenMasks {
    use classes::*;
    let c = each(b, |v| classes16(v, &FIRST));
    let of = |bits: u8| bits64(c.map(|c| any(c, bits)));
    TokenMasks {
        quote: bits64(each(b, |v| eq(v, b'"'))),
        backslash: bits64(each(b, |v| eq(v, b'\\'))),
        control: bits64(each(b, |v| u8x16_lt(v, u8x16_splat(0x20)))),
        space: of(SPACE | TAB_LF_CR),
        op: of(BRACKET | COMMA | COLON),
        // The bitmask takes each byte's high bit: exactly the bytes above 0x7F.
        high: bits64(b.0),
    }
}

/// Stage 1's escape masks of one block.
#[inline]
#[target_feature(enable = "simd128")]
pub(super) fn escape_masks_simd128(b: &Block) -> EscapeMasks {
    use classes::*;
    let allowed = each(b, |v| {
        v128_or(
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

/// One block of the fast path's token stream with simd128 kernels.
#[target_feature(enable = "simd128")]
pub(crate) fn block_simd128(carry: &mut Carry, bytes: &[u8]) -> Option<u64> {
    let b = match <&[u8; 64]>::try_from(bytes) {
        Ok(chunk) => load_block(chunk),
        Err(_) => load_block(&stage1::padded(bytes)),
    };
    stage1::block(
        carry,
        &b,
        |b| token_masks_simd128(b),
        |b| escape_masks_simd128(b),
        prefix_xor,
        stage1::range_utf8,
    )
}
