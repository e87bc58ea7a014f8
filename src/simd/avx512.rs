//! AVX-512BW kernels (64 bytes per step): the string window, the skipper's and stage 1's
//! block masks from one (masked) load, and the skipper and stage-1 block instantiated with
//! them; stage 1 checks UTF-8 in the block ([`utf8_block_avx512`]).
//!
//! Every function here is `#[target_feature]`; callers reach them only after
//! [`has_avx512`](super::x86::has_avx512) said yes. Every load reads from a slice or array
//! that is known to hold the bytes read (the `SAFETY` comments say how).

use core::arch::x86_64::*;

use super::avx512_utf8::{utf8_block_avx512, utf8_run_avx512};
use super::skipper::{self, Masks};
use super::stage1::{self, Carry, EscapeMasks, TokenMasks, Utf8Carry};
use super::string::{self, plain_string_end};
use super::x86::{prefix_xor_clmul, scan_from_32, table128};
use crate::error::JsonError;

/// Mask of `"`, `\\` and control bytes among the 64 at `i`.
#[target_feature(enable = "avx512bw,avx2")]
pub(super) fn special_window_avx512(buf: &[u8], i: usize) -> Option<u64> {
    let chunk = buf.get(i..i + 64)?;
    // SAFETY: `chunk` holds exactly the 64 bytes the unaligned load reads.
    let v = unsafe { _mm512_loadu_si512(chunk.as_ptr().cast()) };
    Some(
        _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(b'"' as i8))
            | _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(b'\\' as i8))
            | _mm512_cmple_epu8_mask(v, _mm512_set1_epi8(0x1F)),
    )
}

#[target_feature(enable = "avx512bw,avx2")]
pub(super) fn scan_string_avx512(buf: &[u8], from: usize) -> Result<(usize, bool), JsonError> {
    string::scan_from::<64>(
        buf,
        from,
        false,
        |b, i| special_window_avx512(b, i),
        // Fewer than 64 bytes left: 32-byte windows (the closure inherits this fn's AVX2).
        |b, i, escaped| scan_from_32(b, i, escaped),
    )
}

#[target_feature(enable = "avx512bw,avx2")]
pub(super) fn masks_avx512(v: __m512i) -> Masks {
    let folded = _mm512_or_si512(v, _mm512_set1_epi8(0x20));
    Masks {
        quote: _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(b'"' as i8)),
        backslash: _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(b'\\' as i8)),
        open: _mm512_cmpeq_epi8_mask(folded, _mm512_set1_epi8(b'{' as i8)),
        close: _mm512_cmpeq_epi8_mask(folded, _mm512_set1_epi8(b'}' as i8)),
        curly: _mm512_test_epi8_mask(v, _mm512_set1_epi8(0x20)),
    }
}

#[target_feature(enable = "avx512bw,avx2,pclmulqdq")]
#[inline]
pub(crate) fn skip_container_avx512(
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
        |bytes| masks_avx512(load512(bytes)),
        |x| prefix_xor_clmul(x),
        |buf, i| string_run_avx512(buf, i),
    )
}

/// The string skip (`skipper::string_end`), 64 bytes per block.
#[target_feature(enable = "avx512bw,avx2")]
#[inline]
pub(crate) fn skip_string_avx512(buf: &[u8], from: usize) -> Result<usize, JsonError> {
    skipper::string_end(
        buf,
        from,
        0,
        |bytes| {
            let v = load512(bytes);
            Masks { quote: eq512(v, b'"'), backslash: eq512(v, b'\\'), ..Masks::default() }
        },
        |buf, i| string_run_avx512(buf, i),
    )
}

/// The skipper's string run (`skipper::string_run`), 64 bytes per test.
#[target_feature(enable = "avx512bw,avx2")]
#[inline]
pub(super) fn string_run_avx512(buf: &[u8], i: usize) -> usize {
    skipper::string_run::<64>(buf, i, |chunk| {
        let v = load512(chunk);
        let hit = eq512(v, b'"') | eq512(v, b'\\');
        (hit != 0).then(|| hit.trailing_zeros() as usize)
    })
}

/// Stage 1's long-string run (`stage1::run`): 64 bytes per test, UTF-8 checked in the
/// window as the block checks it ([`utf8_block_avx512`]).
#[target_feature(enable = "avx512bw,avx2")]
pub(crate) fn run_avx512(utf8: &mut Utf8Carry, rest: &[u8]) -> (usize, bool) {
    utf8_run_avx512(utf8, rest, |chunk| plain_window_avx512(chunk), |quad| ascii_quad_avx512(quad))
}

/// The four-window test of [`run_avx512`]: the last 64 of the 256 bytes loaded, when all
/// 256 are ASCII from 0x20 up and none is a quote or backslash; else `None`. In vector
/// registers, one mask test per 256 bytes: a nibble lookup XOR-ed with the bytes is zero
/// at a quote or backslash (the minimum of the four is tested), and the signed minimum of
/// the four windows is below 0x20 when one byte is a control byte or above 0x7F (negative
/// as `i8`). The one-window loop (a load, three compares into masks, the high bits' mask
/// and two branches per 64 bytes) ran at ~45 GB/s, from L2 as from L3; twelve compares
/// into masks and their ORs per 256 bytes, ~60 GB/s; this, ~105 GB/s from L2 (AMD EPYC).
#[target_feature(enable = "avx512bw,avx2")]
#[inline]
pub(super) fn ascii_quad_avx512(quad: &[u8; 256]) -> Option<__m512i> {
    let (windows, _) = quad.as_chunks::<64>();
    let [v0, v1, v2, v3] = [0, 1, 2, 3].map(|k| load512(&windows[k]));
    // By the low nibble: the quote (2) or backslash (0xC) an ASCII byte could be; 0x80
    // (no ASCII byte) for the others. A byte above 0x7F looks up 0.
    let mut t = [0x80u8; 16];
    t[usize::from(b'"' & 0x0F)] = b'"';
    t[usize::from(b'\\' & 0x0F)] = b'\\';
    let table = table512(t);
    // Zero exactly at a quote or a backslash.
    let quote_zero = |v: __m512i| _mm512_xor_si512(v, _mm512_shuffle_epi8(table, v));
    let quotes = _mm512_min_epu8(
        _mm512_min_epu8(quote_zero(v0), quote_zero(v1)),
        _mm512_min_epu8(quote_zero(v2), quote_zero(v3)),
    );
    // The smallest byte as `i8`: below 0x20 when one is a control byte or above 0x7F.
    let low = _mm512_min_epi8(_mm512_min_epi8(v0, v1), _mm512_min_epi8(v2, v3));
    let bad = _mm512_testn_epi8_mask(quotes, quotes)
        | _mm512_cmple_epi8_mask(low, _mm512_set1_epi8(0x1F));
    (bad == 0).then_some(v3)
}

/// The window test of [`run_avx512`]: `None` when the 64 bytes hold a quote, backslash or
/// control byte, else the loaded bytes and the mask of those that are not ASCII.
#[target_feature(enable = "avx512bw,avx2")]
#[inline]
pub(super) fn plain_window_avx512(chunk: &[u8; 64]) -> Option<(__m512i, u64)> {
    let v = load512(chunk);
    let special =
        eq512(v, b'"') | eq512(v, b'\\') | _mm512_cmple_epu8_mask(v, _mm512_set1_epi8(0x1F));
    (special == 0).then(|| (v, _mm512_movepi8_mask(v)))
}

/// Envelope mode's inline look at a string the walk reads (keys, `id`, `method`): one
/// masked 64-byte load at the string. When its first quote, backslash or control byte is a
/// quote and no byte before it is above 0x7F, that is the whole answer (no escapes, ASCII
/// contents): the offset after the closing quote; `None` sends the string to the portable
/// scan. No loop whose exit depends on the length.
#[target_feature(enable = "avx512bw,avx2")]
#[inline]
pub(crate) fn plain_string_avx512(buf: &[u8], open: usize) -> Option<usize> {
    let start = open + 1;
    let rest = buf.get(start..).unwrap_or_default();
    let v = load512(rest.get(..64).unwrap_or(rest));
    let special =
        eq512(v, b'"') | eq512(v, b'\\') | _mm512_cmple_epu8_mask(v, _mm512_set1_epi8(0x1F));
    plain_string_end(rest, special, _mm512_movepi8_mask(v)).map(|end| start + end)
}

#[target_feature(enable = "avx512bw,avx2")]
fn eq512(v: __m512i, c: u8) -> u64 {
    _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(c as i8))
}

/// The bytes of one block (64, or the last 1 to 63 followed by spaces) in a register.
#[target_feature(enable = "avx512bw,avx2")]
pub(super) fn load512(bytes: &[u8]) -> __m512i {
    if let Some(chunk) = bytes.get(..64) {
        // SAFETY: `chunk` holds exactly the 64 bytes the unaligned load reads.
        return unsafe { _mm512_loadu_si512(chunk.as_ptr().cast()) };
    }
    // Only the first `len` lanes are loaded; the rest are spaces. Masked-off lanes are not
    // accessed (and cannot fault), so this never reads past the slice, and no copy is made.
    let keep = (1u64 << bytes.len()) - 1;
    // SAFETY: `bytes` holds the `bytes.len()` (< 64) bytes the mask selects.
    unsafe { _mm512_mask_loadu_epi8(_mm512_set1_epi8(b' ' as i8), keep, bytes.as_ptr().cast()) }
}

/// The class bytes of a block for one table pair (see [`classes`](super::tables::classes)).
#[target_feature(enable = "avx512bw,avx2")]
fn classes512(v: __m512i, (lo, hi): ([u8; 16], [u8; 16])) -> __m512i {
    let nibble = _mm512_set1_epi8(0x0F);
    let low = _mm512_and_si512(v, nibble);
    let high = _mm512_and_si512(_mm512_srli_epi16(v, 4), nibble);
    _mm512_and_si512(
        _mm512_shuffle_epi8(table512(lo), low),
        _mm512_shuffle_epi8(table512(hi), high),
    )
}

/// A 16-byte table in every lane of a 512-bit register (for `vpshufb` lookups).
#[target_feature(enable = "avx512bw,avx2")]
pub(super) fn table512(t: [u8; 16]) -> __m512i {
    _mm512_broadcast_i32x4(table128(t))
}

/// Lanes whose class byte has any of `bits`.
#[target_feature(enable = "avx512bw,avx2")]
fn any512(classes: __m512i, bits: u8) -> u64 {
    _mm512_test_epi8_mask(classes, _mm512_set1_epi8(bits as i8))
}

#[target_feature(enable = "avx512bw,avx2")]
pub(super) fn token_masks_avx512(v: __m512i) -> TokenMasks {
    use super::tables::classes::*;
    let c = classes512(v, FIRST);
    TokenMasks {
        quote: any512(c, QUOTE),
        backslash: any512(c, BACKSLASH),
        control: _mm512_cmple_epu8_mask(v, _mm512_set1_epi8(0x1F)),
        space: any512(c, SPACE | TAB_LF_CR),
        op: any512(c, BRACKET | COMMA | COLON),
        high: _mm512_movepi8_mask(v),
    }
}

#[target_feature(enable = "avx512bw,avx2")]
pub(super) fn escape_masks_avx512(v: __m512i) -> EscapeMasks {
    use super::tables::classes::*;
    let (c, d) = (classes512(v, FIRST), classes512(v, SECOND));
    EscapeMasks {
        allowed: any512(c, QUOTE | BACKSLASH | U) | any512(d, SLASH | B_F_N | R_T),
        unicode: any512(c, U),
        hex: any512(d, DIGIT | HEX_LETTER),
    }
}

/// One block of the fast path's token stream with AVX-512BW kernels.
#[target_feature(enable = "avx512bw,avx2,pclmulqdq")]
pub(crate) fn block_avx512(carry: &mut Carry, bytes: &[u8]) -> Option<u64> {
    let v = load512(bytes);
    stage1::block(
        carry,
        &v,
        |v| token_masks_avx512(*v),
        |v| escape_masks_avx512(*v),
        |x| prefix_xor_clmul(x),
        |v, high, utf8| utf8_block_avx512(*v, high, utf8),
    )
}
