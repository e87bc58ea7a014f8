//! AVX2 kernels (32 bytes per step): the string window, the skipper's and stage 1's block
//! masks, and the skipper and stage-1 block instantiated with them; stage 1 checks UTF-8
//! in the block and in the long-string run ([`utf8_block_avx2`], [`utf8_run_avx2`]).
//!
//! Every function here is `#[target_feature]`; callers reach them only after
//! [`has_avx2`](super::x86::has_avx2) said yes. Every load reads from a slice or array that
//! is known to hold the bytes read (the `SAFETY` comments say how).

use core::arch::x86_64::*;

use super::avx2_utf8::{utf8_block_avx2, utf8_run_avx2};
use super::skipper::{self, Masks};
use super::stage1::{self, Carry, EscapeMasks, TokenMasks, Utf8Carry};
use super::string::plain_string_end;
use super::x86::{prefix_xor_clmul, scan_from_32, table128};
use crate::error::JsonError;

#[target_feature(enable = "avx2")]
pub(super) fn scan_string_avx2(buf: &[u8], from: usize) -> Result<(usize, bool), JsonError> {
    scan_from_32(buf, from, false)
}

#[target_feature(enable = "avx2")]
pub(super) fn masks_avx2(chunk: &[u8; 64]) -> Masks {
    let quote = _mm256_set1_epi8(b'"' as i8);
    let backslash = _mm256_set1_epi8(b'\\' as i8);
    let bit5 = _mm256_set1_epi8(0x20);
    let open = _mm256_set1_epi8(b'{' as i8);
    let close = _mm256_set1_epi8(b'}' as i8);
    let half = |v: __m256i| {
        let folded = _mm256_or_si256(v, bit5);
        [
            _mm256_movemask_epi8(_mm256_cmpeq_epi8(v, quote)) as u32 as u64,
            _mm256_movemask_epi8(_mm256_cmpeq_epi8(v, backslash)) as u32 as u64,
            _mm256_movemask_epi8(_mm256_cmpeq_epi8(folded, open)) as u32 as u64,
            _mm256_movemask_epi8(_mm256_cmpeq_epi8(folded, close)) as u32 as u64,
            // Bit 5 of each byte moved to bit 7 (16-bit lanes: only bits within a byte matter).
            _mm256_movemask_epi8(_mm256_slli_epi16(v, 2)) as u32 as u64,
        ]
    };
    let (lo, hi) = halves256(chunk);
    let (lo, hi) = (half(lo), half(hi));
    Masks {
        quote: lo[0] | hi[0] << 32,
        backslash: lo[1] | hi[1] << 32,
        open: lo[2] | hi[2] << 32,
        close: lo[3] | hi[3] << 32,
        curly: lo[4] | hi[4] << 32,
    }
}

#[target_feature(enable = "avx2,pclmulqdq")]
#[inline]
pub(crate) fn skip_container_avx2(
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
            Ok(chunk) => masks_avx2(chunk),
            Err(_) => masks_avx2(&stage1::padded(bytes)),
        },
        |x| prefix_xor_clmul(x),
        |buf, i| string_run_avx2(buf, i),
    )
}

/// The string skip (`skipper::string_end`), 64 bytes per block.
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) fn skip_string_avx2(buf: &[u8], from: usize) -> Result<usize, JsonError> {
    skipper::string_end(
        buf,
        from,
        0,
        |bytes| {
            let (lo, hi) = match <&[u8; 64]>::try_from(bytes) {
                Ok(chunk) => halves256(chunk),
                Err(_) => halves256(&stage1::padded(bytes)),
            };
            let mask = |c| bits256(eq256(lo, c)) | bits256(eq256(hi, c)) << 32;
            Masks { quote: mask(b'"'), backslash: mask(b'\\'), ..Masks::default() }
        },
        |buf, i| string_run_avx2(buf, i),
    )
}

/// The skipper's string run (`skipper::string_run`), 64 bytes per test.
#[target_feature(enable = "avx2")]
#[inline]
pub(super) fn string_run_avx2(buf: &[u8], i: usize) -> usize {
    skipper::string_run::<64>(buf, i, |chunk| {
        let (lo, hi) = halves256(chunk);
        let hit = |v| _mm256_or_si256(eq256(v, b'"'), eq256(v, b'\\'));
        let (lo, hi) = (hit(lo), hit(hi));
        if _mm256_testz_si256(_mm256_or_si256(lo, hi), _mm256_set1_epi8(-1)) == 1 {
            return None;
        }
        Some((bits256(lo) | bits256(hi) << 32).trailing_zeros() as usize)
    })
}

/// Stage 1's long-string run (`stage1::run`): 64 bytes per test, UTF-8 checked in the
/// window as the block checks it ([`utf8_run_avx2`]).
#[target_feature(enable = "avx2")]
pub(crate) fn run_avx2(utf8: &mut Utf8Carry, rest: &[u8]) -> (usize, bool) {
    utf8_run_avx2(utf8, rest, |chunk| plain_window_avx2(chunk))
}

/// The window test of [`run_avx2`]: `None` when the 64 bytes hold a quote, backslash or
/// control byte, else the two halves loaded and the mask of the bytes that are not ASCII.
#[target_feature(enable = "avx2")]
#[inline]
pub(super) fn plain_window_avx2(chunk: &[u8; 64]) -> Option<((__m256i, __m256i), u64)> {
    let (lo, hi) = halves256(chunk);
    let special = |v| {
        _mm256_or_si256(_mm256_or_si256(eq256(v, b'"'), eq256(v, b'\\')), in_range256(v, 0, 0x1F))
    };
    let any = _mm256_or_si256(special(lo), special(hi));
    if _mm256_testz_si256(any, any) == 0 {
        return None;
    }
    Some(((lo, hi), bits256(lo) | bits256(hi) << 32))
}

/// Envelope mode's inline look at a string the walk reads (keys, `id`, `method`), when 32
/// bytes follow the opening quote at `open`: the offset after the closing quote when the
/// string is plain (see [`plain_string_end`]); `None` sends it to the portable scan.
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) fn plain_string_avx2(buf: &[u8], open: usize) -> Option<usize> {
    let start = open + 1;
    let chunk = buf.get(start..start + 32)?;
    // SAFETY: `chunk` holds exactly the 32 bytes the unaligned load reads.
    let v = unsafe { _mm256_loadu_si256(chunk.as_ptr().cast()) };
    let special = bits256(_mm256_or_si256(
        _mm256_or_si256(eq256(v, b'"'), eq256(v, b'\\')),
        in_range256(v, 0, 0x1F),
    ));
    plain_string_end(chunk, special, bits256(v)).map(|end| start + end)
}

/// The movemask of a 32-byte comparison result, as the low half of a 64-bit mask.
///
/// Written as inline assembly on purpose: with the intrinsic, LLVM merges the bit logic of
/// several movemasks back into 64-lane boolean vectors and then rebuilds them byte by byte
/// (hundreds of `vpinsrb`/`vpextrb` per block, 3× the instructions of the whole block).
#[target_feature(enable = "avx2")]
fn bits256(v: __m256i) -> u64 {
    let bits: u32;
    // SAFETY: `vpmovmskb` reads one register and writes one; no memory, no flags, no stack.
    unsafe {
        core::arch::asm!(
            "vpmovmskb {bits:e}, {v}",
            bits = lateout(reg) bits,
            v = in(ymm_reg) v,
            options(pure, nomem, nostack, preserves_flags),
        );
    }
    u64::from(bits)
}

#[target_feature(enable = "avx2")]
fn eq256(v: __m256i, c: u8) -> __m256i {
    _mm256_cmpeq_epi8(v, _mm256_set1_epi8(c as i8))
}

/// Bytes of `v` in `lo..=hi` (unsigned).
#[target_feature(enable = "avx2")]
fn in_range256(v: __m256i, lo: u8, hi: u8) -> __m256i {
    let shifted = _mm256_sub_epi8(v, _mm256_set1_epi8(lo as i8));
    let top = _mm256_set1_epi8(hi.wrapping_sub(lo) as i8);
    _mm256_cmpeq_epi8(_mm256_min_epu8(shifted, top), shifted)
}

/// The two 32-byte halves of a block in registers.
#[target_feature(enable = "avx2")]
pub(super) fn halves256(chunk: &[u8; 64]) -> (__m256i, __m256i) {
    // SAFETY: `chunk` is 64 bytes; the loads read bytes 0..32 and 32..64.
    unsafe {
        (
            _mm256_loadu_si256(chunk.as_ptr().cast()),
            _mm256_loadu_si256(chunk.as_ptr().add(32).cast()),
        )
    }
}

/// The class bytes of 32 bytes for one table pair (see [`classes`](super::tables::classes)).
#[target_feature(enable = "avx2")]
fn classes256(v: __m256i, (lo, hi): ([u8; 16], [u8; 16])) -> __m256i {
    let table = |t: [u8; 16]| _mm256_broadcastsi128_si256(table128(t));
    let nibble = _mm256_set1_epi8(0x0F);
    let low = _mm256_and_si256(v, nibble);
    let high = _mm256_and_si256(_mm256_srli_epi16(v, 4), nibble);
    _mm256_and_si256(_mm256_shuffle_epi8(table(lo), low), _mm256_shuffle_epi8(table(hi), high))
}

/// Lanes whose class byte has any of `bits`, in the low 32 bits.
#[target_feature(enable = "avx2")]
fn any256(classes: __m256i, bits: u8) -> u64 {
    let none = _mm256_cmpeq_epi8(
        _mm256_and_si256(classes, _mm256_set1_epi8(bits as i8)),
        _mm256_setzero_si256(),
    );
    !bits256(none) & 0xFFFF_FFFF
}

/// The token masks of 32 bytes, in the low 32 bits.
#[target_feature(enable = "avx2")]
fn token_half_avx2(v: __m256i) -> TokenMasks {
    use super::tables::classes::*;
    let c = classes256(v, FIRST);
    TokenMasks {
        quote: any256(c, QUOTE),
        backslash: any256(c, BACKSLASH),
        control: bits256(in_range256(v, 0, 0x1F)),
        space: any256(c, SPACE | TAB_LF_CR),
        op: any256(c, BRACKET | COMMA | COLON),
        high: bits256(v),
    }
}

#[target_feature(enable = "avx2")]
pub(super) fn token_masks_avx2(chunk: &[u8; 64]) -> TokenMasks {
    let (lo, hi) = halves256(chunk);
    let (lo, hi) = (token_half_avx2(lo), token_half_avx2(hi));
    TokenMasks {
        quote: lo.quote | hi.quote << 32,
        backslash: lo.backslash | hi.backslash << 32,
        control: lo.control | hi.control << 32,
        space: lo.space | hi.space << 32,
        op: lo.op | hi.op << 32,
        high: lo.high | hi.high << 32,
    }
}

/// The escape masks of 32 bytes, in the low 32 bits.
#[target_feature(enable = "avx2")]
fn escape_half_avx2(v: __m256i) -> EscapeMasks {
    use super::tables::classes::*;
    let (c, d) = (classes256(v, FIRST), classes256(v, SECOND));
    EscapeMasks {
        allowed: any256(c, QUOTE | BACKSLASH | U) | any256(d, SLASH | B_F_N | R_T),
        unicode: any256(c, U),
        hex: any256(d, DIGIT | HEX_LETTER),
    }
}

#[target_feature(enable = "avx2")]
pub(super) fn escape_masks_avx2(chunk: &[u8; 64]) -> EscapeMasks {
    let (lo, hi) = halves256(chunk);
    let (lo, hi) = (escape_half_avx2(lo), escape_half_avx2(hi));
    EscapeMasks {
        allowed: lo.allowed | hi.allowed << 32,
        unicode: lo.unicode | hi.unicode << 32,
        hex: lo.hex | hi.hex << 32,
    }
}

/// One block of the fast path's token stream with AVX2 kernels.
#[target_feature(enable = "avx2,pclmulqdq")]
pub(crate) fn block_avx2(carry: &mut Carry, bytes: &[u8]) -> Option<u64> {
    let chunk = match <&[u8; 64]>::try_from(bytes) {
        Ok(chunk) => *chunk,
        Err(_) => stage1::padded(bytes),
    };
    stage1::block(
        carry,
        &chunk,
        |c| token_masks_avx2(c),
        |c| escape_masks_avx2(c),
        |x| prefix_xor_clmul(x),
        |c, high, utf8| utf8_block_avx2(c, high, utf8),
    )
}
