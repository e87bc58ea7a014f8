//! x86_64 kernels: AVX2 (32 bytes per step) and AVX-512BW (64 bytes per step).
//!
//! Every function here is `#[target_feature]`; callers in `mod.rs`/`blocks.rs` reach them
//! only after `has_avx2`/`has_avx512` said yes. Every load reads from a slice or array
//! that is known to hold the bytes read (the `SAFETY` comments say how).

use core::arch::x86_64::*;

use super::skipper::{self, Masks};
use super::stage1::{self, Carry, EscapeMasks, TokenMasks};
use crate::error::JsonError;
use crate::json::string;
use crate::scan::{envelope::Facts, Top};

/// AVX2 (and PCLMULQDQ, for prefix XOR) are available.
#[inline]
pub(super) fn has_avx2() -> bool {
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("pclmulqdq")
}

/// AVX-512BW (and PCLMULQDQ) are available.
#[inline]
pub(super) fn has_avx512() -> bool {
    std::arch::is_x86_feature_detected!("avx512bw") && has_avx2()
}

/// Mask of `"`, `\\` and control bytes among the 32 at `i`.
#[target_feature(enable = "avx2")]
pub(super) fn special_window_avx2(buf: &[u8], i: usize) -> Option<u64> {
    let chunk = buf.get(i..i + 32)?;
    // SAFETY: `chunk` holds exactly the 32 bytes the unaligned load reads.
    let v = unsafe { _mm256_loadu_si256(chunk.as_ptr().cast()) };
    let hit = _mm256_or_si256(
        _mm256_or_si256(
            _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'"' as i8)),
            _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'\\' as i8)),
        ),
        _mm256_cmpeq_epi8(_mm256_min_epu8(v, _mm256_set1_epi8(0x1F)), v),
    );
    Some(u64::from(_mm256_movemask_epi8(hit) as u32))
}

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

#[target_feature(enable = "avx2")]
pub(super) fn scan_string_avx2(buf: &[u8], from: usize) -> Result<(usize, bool), JsonError> {
    scan_from_avx2(buf, from, false)
}

#[target_feature(enable = "avx2")]
fn scan_from_avx2(buf: &[u8], from: usize, escaped: bool) -> Result<(usize, bool), JsonError> {
    string::scan_from::<32>(
        buf,
        from,
        escaped,
        |b, i| special_window_avx2(b, i),
        string::scan_swar,
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
        |b, i, escaped| scan_from_avx2(b, i, escaped),
    )
}

/// Prefix XOR by carry-less multiplication with all ones.
#[target_feature(enable = "pclmulqdq,sse2")]
fn prefix_xor_clmul(x: u64) -> u64 {
    let product = _mm_clmulepi64_si128(_mm_set_epi64x(0, x as i64), _mm_set1_epi8(-1), 0);
    _mm_cvtsi128_si64(product) as u64
}

#[target_feature(enable = "avx2")]
fn masks_avx2(chunk: &[u8; 64]) -> Masks {
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

#[target_feature(enable = "avx512bw,avx2")]
fn masks_avx512(v: __m512i) -> Masks {
    let folded = _mm512_or_si512(v, _mm512_set1_epi8(0x20));
    Masks {
        quote: _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(b'"' as i8)),
        backslash: _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(b'\\' as i8)),
        open: _mm512_cmpeq_epi8_mask(folded, _mm512_set1_epi8(b'{' as i8)),
        close: _mm512_cmpeq_epi8_mask(folded, _mm512_set1_epi8(b'}' as i8)),
        curly: _mm512_test_epi8_mask(v, _mm512_set1_epi8(0x20)),
    }
}

#[target_feature(enable = "avx2,pclmulqdq")]
#[inline]
pub(super) fn skip_container_avx2(
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
    )
}

#[target_feature(enable = "avx512bw,avx2,pclmulqdq")]
#[inline]
pub(super) fn skip_container_avx512(
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
    )
}

/// Envelope mode's walk of one message with the AVX2 skipper inlined.
///
/// # Safety
/// The CPU must support AVX2 and PCLMULQDQ.
#[target_feature(enable = "avx2,pclmulqdq")]
pub(super) unsafe fn envelope_walk_avx2(
    buf: &[u8],
    max_depth: usize,
    facts: &mut Facts,
) -> Result<Top, JsonError> {
    crate::scan::walk_with::<false>(
        buf,
        max_depth,
        |buf, open, depth, max| skip_container_avx2(buf, open, depth, max),
        |buf, open| string_avx2(buf, open),
        facts,
    )
}

/// Envelope mode's walk of one message with the AVX-512BW skipper inlined.
///
/// # Safety
/// The CPU must support AVX-512BW, AVX2 and PCLMULQDQ.
#[target_feature(enable = "avx512bw,avx2,pclmulqdq")]
pub(super) unsafe fn envelope_walk_avx512(
    buf: &[u8],
    max_depth: usize,
    facts: &mut Facts,
) -> Result<Top, JsonError> {
    crate::scan::walk_with::<false>(
        buf,
        max_depth,
        |buf, open, depth, max| skip_container_avx512(buf, open, depth, max),
        |buf, open| string_avx512(buf, open),
        facts,
    )
}

/// Envelope mode's strings that the walk reads (keys, `id`, `method`): one masked 64-byte
/// load at the string. When its first quote, backslash or control byte is a quote and no
/// byte before it is above 0x7F, that is the whole answer (no escapes, ASCII contents);
/// anything else takes the portable scan. No loop whose exit depends on the length.
#[target_feature(enable = "avx512bw,avx2")]
#[inline]
fn string_avx512(buf: &[u8], open: usize) -> Result<(usize, bool), JsonError> {
    let start = open + 1;
    let rest = buf.get(start..).unwrap_or_default();
    let v = load512(rest.get(..64).unwrap_or(rest));
    let special =
        eq512(v, b'"') | eq512(v, b'\\') | _mm512_cmple_epu8_mask(v, _mm512_set1_epi8(0x1F));
    if let Some(end) = plain_string_end(rest, special, _mm512_movepi8_mask(v)) {
        return Ok((start + end, false));
    }
    crate::scan::envelope::checked_string::<false>(buf, open)
}

/// The shared decision of the inline string looks: given the masks of a window over a
/// string's contents (`special`: quotes, backslashes, control bytes; `high`: bytes above
/// 0x7F), the offset after the closing quote when the first special byte is a quote and no
/// byte before it is above 0x7F; `None` sends the string to the portable scan.
#[inline(always)]
fn plain_string_end(window: &[u8], special: u64, high: u64) -> Option<usize> {
    let k = special.trailing_zeros();
    let before = 1u64.checked_shl(k).map_or(u64::MAX, |bit| bit - 1);
    (window.get(k as usize) == Some(&b'"') && high & before == 0).then_some(k as usize + 1)
}

/// [`string_avx512`] with a 32-byte look, when 32 bytes follow the opening quote.
#[target_feature(enable = "avx2")]
#[inline]
fn string_avx2(buf: &[u8], open: usize) -> Result<(usize, bool), JsonError> {
    let start = open + 1;
    if let Some(chunk) = buf.get(start..start + 32) {
        // SAFETY: `chunk` holds exactly the 32 bytes the unaligned load reads.
        let v = unsafe { _mm256_loadu_si256(chunk.as_ptr().cast()) };
        let special = bits256(_mm256_or_si256(
            _mm256_or_si256(eq256(v, b'"'), eq256(v, b'\\')),
            in_range256(v, 0, 0x1F),
        ));
        if let Some(end) = plain_string_end(chunk, special, bits256(v)) {
            return Ok((start + end, false));
        }
    }
    crate::scan::envelope::checked_string::<false>(buf, open)
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
fn halves256(chunk: &[u8; 64]) -> (__m256i, __m256i) {
    // SAFETY: `chunk` is 64 bytes; the loads read bytes 0..32 and 32..64.
    unsafe {
        (
            _mm256_loadu_si256(chunk.as_ptr().cast()),
            _mm256_loadu_si256(chunk.as_ptr().add(32).cast()),
        )
    }
}

/// The class bytes of 32 bytes for one table pair (see [`class`]).
#[target_feature(enable = "avx2")]
fn classes256(v: __m256i, (lo, hi): ([u8; 16], [u8; 16])) -> __m256i {
    let table = |t: [u8; 16]| _mm256_broadcastsi128_si256(table128(t));
    let nibble = _mm256_set1_epi8(0x0F);
    let low = _mm256_and_si256(v, nibble);
    let high = _mm256_and_si256(_mm256_srli_epi16(v, 4), nibble);
    _mm256_and_si256(
        _mm256_shuffle_epi8(table(lo), low),
        _mm256_shuffle_epi8(table(hi), high),
    )
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
    use class::*;
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
fn token_masks_avx2(chunk: &[u8; 64]) -> TokenMasks {
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
    use class::*;
    let (c, d) = (classes256(v, FIRST), classes256(v, SECOND));
    EscapeMasks {
        allowed: any256(c, QUOTE | BACKSLASH | U) | any256(d, SLASH | B_F_N | R_T),
        unicode: any256(c, U),
        hex: any256(d, DIGIT | HEX_LETTER),
    }
}

#[target_feature(enable = "avx2")]
fn escape_masks_avx2(chunk: &[u8; 64]) -> EscapeMasks {
    let (lo, hi) = halves256(chunk);
    let (lo, hi) = (escape_half_avx2(lo), escape_half_avx2(hi));
    EscapeMasks {
        allowed: lo.allowed | hi.allowed << 32,
        unicode: lo.unicode | hi.unicode << 32,
        hex: lo.hex | hi.hex << 32,
    }
}

#[target_feature(enable = "avx512bw,avx2")]
fn eq512(v: __m512i, c: u8) -> u64 {
    _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(c as i8))
}

/// The bytes of one block (64, or the last 1 to 63 followed by spaces) in a register.
#[target_feature(enable = "avx512bw,avx2")]
fn load512(bytes: &[u8]) -> __m512i {
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

/// Byte classes by nibble lookup (the simdjson method): a byte is in a class when the
/// class's bit is set both in the entry of its low nibble and in the entry of its high
/// nibble, so every class is a product of a low-nibble set and a high-nibble set. Two
/// table pairs give 16 classes; a mask of one class or a union of classes is then one
/// `vptestmb`. On AVX-512 every byte compare and test runs on one port (5): this needs 4
/// shuffles and 8 tests per block where one compare per character needed about 22.
mod class {
    // First pair.
    pub(super) const QUOTE: u8 = 1 << 0; // 0x22
    pub(super) const BACKSLASH: u8 = 1 << 1; // 0x5C
    pub(super) const SPACE: u8 = 1 << 2; // 0x20
    pub(super) const TAB_LF_CR: u8 = 1 << 3; // 0x09 0x0A 0x0D
    pub(super) const BRACKET: u8 = 1 << 4; // 0x5B 0x5D 0x7B 0x7D
    pub(super) const COMMA: u8 = 1 << 5; // 0x2C
    pub(super) const COLON: u8 = 1 << 6; // 0x3A
    pub(super) const U: u8 = 1 << 7; // 0x75
                                     // Second pair.
    pub(super) const DIGIT: u8 = 1 << 0; // 0x30-0x39
    pub(super) const HEX_LETTER: u8 = 1 << 1; // 0x41-0x46 0x61-0x66
    pub(super) const SLASH: u8 = 1 << 2; // 0x2F
    pub(super) const B_F_N: u8 = 1 << 3; // 0x62 0x66 0x6E
    pub(super) const R_T: u8 = 1 << 4; // 0x72 0x74

    /// The (low-nibble, high-nibble) tables of classes given as (bit, byte values).
    pub(super) const fn tables(classes: &[(u8, &[u8])]) -> ([u8; 16], [u8; 16]) {
        let (mut lo, mut hi) = ([0u8; 16], [0u8; 16]);
        let mut c = 0;
        while c < classes.len() {
            let (bit, bytes) = classes[c];
            let mut k = 0;
            while k < bytes.len() {
                lo[(bytes[k] & 0x0F) as usize] |= bit;
                hi[(bytes[k] >> 4) as usize] |= bit;
                k += 1;
            }
            c += 1;
        }
        (lo, hi)
    }

    pub(super) const FIRST: ([u8; 16], [u8; 16]) = tables(&[
        (QUOTE, b"\""),
        (BACKSLASH, b"\\"),
        (SPACE, b" "),
        (TAB_LF_CR, b"\t\n\r"),
        (BRACKET, b"[]{}"),
        (COMMA, b","),
        (COLON, b":"),
        (U, b"u"),
    ]);
    pub(super) const SECOND: ([u8; 16], [u8; 16]) = tables(&[
        (DIGIT, b"0123456789"),
        (HEX_LETTER, b"ABCDEFabcdef"),
        (SLASH, b"/"),
        (B_F_N, b"bfn"),
        (R_T, b"rt"),
    ]);
}

/// The class bytes of a block for one table pair (see [`class`]).
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
fn table512(t: [u8; 16]) -> __m512i {
    _mm512_broadcast_i32x4(table128(t))
}

/// A 16-byte table in a register.
#[target_feature(enable = "avx2")]
fn table128(t: [u8; 16]) -> __m128i {
    // SAFETY: `t` is 16 bytes, exactly what the unaligned load reads.
    unsafe { _mm_loadu_si128(t.as_ptr().cast()) }
}

/// Lanes whose class byte has any of `bits`.
#[target_feature(enable = "avx512bw,avx2")]
fn any512(classes: __m512i, bits: u8) -> u64 {
    _mm512_test_epi8_mask(classes, _mm512_set1_epi8(bits as i8))
}

#[target_feature(enable = "avx512bw,avx2")]
fn token_masks_avx512(v: __m512i) -> TokenMasks {
    use class::*;
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
fn escape_masks_avx512(v: __m512i) -> EscapeMasks {
    use class::*;
    let (c, d) = (classes512(v, FIRST), classes512(v, SECOND));
    EscapeMasks {
        allowed: any512(c, QUOTE | BACKSLASH | U) | any512(d, SLASH | B_F_N | R_T),
        unicode: any512(c, U),
        hex: any512(d, DIGIT | HEX_LETTER),
    }
}

/// One block of the fast path's token stream with AVX2 kernels.
#[target_feature(enable = "avx2,pclmulqdq")]
fn block_avx2(carry: &mut Carry, bytes: &[u8]) -> Option<u64> {
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
        stage1::range_utf8,
    )
}

/// One block of the fast path's token stream with AVX-512BW kernels.
#[target_feature(enable = "avx512bw,avx2,pclmulqdq")]
fn block_avx512(carry: &mut Carry, bytes: &[u8]) -> Option<u64> {
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

/// UTF-8 validation of one block already in a register (the lookup method of Keiser and
/// Lemire, "Validating UTF-8 In Less Than One Instruction Per Byte", as simdjson and
/// simdutf8 use it): three 16-entry nibble tables classify each byte with the one before
/// it, and the bytes two and three before it say where a third or fourth byte of a
/// character must stand. An invalid block (with the bytes carried from the one before)
/// sets `utf8.invalid`; `utf8.incomplete` says whether it ends inside a character.
/// The last partial block is padded with spaces, so a character cut by the end of the
/// message is an error here; one cut by a full last block is left in `incomplete` for the
/// cursor's end check. An all-ASCII block after a complete character costs one branch.
#[target_feature(enable = "avx512bw,avx2")]
fn utf8_block_avx512(v: __m512i, high: u64, utf8: &mut stage1::Utf8Carry) {
    use utf8_tables::*;
    if high == 0 && !utf8.incomplete {
        utf8.tail = stage1::Utf8Carry::ASCII_TAIL;
        return;
    }
    // Each 16-byte lane preceded by the 16 bytes before it: lane 0 by the previous block's
    // last lane (only its last three bytes are read, and `tail` holds its last four).
    let before = _mm512_alignr_epi32::<12>(v, _mm512_set1_epi32(utf8.tail as i32));
    let prev1 = _mm512_alignr_epi8::<15>(v, before);
    let prev2 = _mm512_alignr_epi8::<14>(v, before);
    let prev3 = _mm512_alignr_epi8::<13>(v, before);
    let nibble = _mm512_set1_epi8(0x0F);
    let high_nibble = |x: __m512i| _mm512_and_si512(_mm512_srli_epi16(x, 4), nibble);
    let special = _mm512_and_si512(
        _mm512_and_si512(
            _mm512_shuffle_epi8(table512(BYTE_1_HIGH), high_nibble(prev1)),
            _mm512_shuffle_epi8(table512(BYTE_1_LOW), _mm512_and_si512(prev1, nibble)),
        ),
        _mm512_shuffle_epi8(table512(BYTE_2_HIGH), high_nibble(v)),
    );
    // Third and fourth bytes of a character: 0x80 where one must stand.
    let must_continue = _mm512_and_si512(
        _mm512_or_si512(
            _mm512_subs_epu8(prev2, _mm512_set1_epi8((0xE0u8 - 0x80) as i8)),
            _mm512_subs_epu8(prev3, _mm512_set1_epi8((0xF0u8 - 0x80) as i8)),
        ),
        _mm512_set1_epi8(0x80u8 as i8),
    );
    let error = _mm512_xor_si512(must_continue, special);
    let tail = _mm_extract_epi32::<3>(_mm512_extracti32x4_epi32::<3>(v)) as u32;
    let [_, b61, b62, b63] = tail.to_le_bytes();
    utf8.tail = tail;
    utf8.incomplete = b63 >= 0xC0 || b62 >= 0xE0 || b61 >= 0xF0;
    utf8.invalid |= _mm512_test_epi8_mask(error, error) != 0;
}

/// The lookup tables of [`utf8_block_avx512`]: what a byte's nibbles (and the high nibble
/// of the byte after it) say is wrong, one bit per kind of error; a byte pair is invalid
/// when the three entries share a bit.
mod utf8_tables {
    const TOO_SHORT: u8 = 1 << 0; // a lead byte (or ASCII) where a continuation must be
    const TOO_LONG: u8 = 1 << 1; // ASCII followed by a continuation byte
    const OVERLONG_3: u8 = 1 << 2; // 11100000 100_____
    const TOO_LARGE: u8 = 1 << 3; // above U+10FFFF
    const SURROGATE: u8 = 1 << 4; // 11101101 101_____
    const OVERLONG_2: u8 = 1 << 5; // 1100000_ 10______
    const TOO_LARGE_1000: u8 = 1 << 6; // 11110101.. 1000____ and above
    const OVERLONG_4: u8 = 1 << 6; // 11110000 1000____
    const TWO_CONTS: u8 = 1 << 7; // two continuation bytes (fine in the middle of a character)
    const CARRY: u8 = TOO_SHORT | TOO_LONG | TWO_CONTS;

    /// By the high nibble of the first byte of a pair.
    pub(super) const BYTE_1_HIGH: [u8; 16] = [
        TOO_LONG,
        TOO_LONG,
        TOO_LONG,
        TOO_LONG,
        TOO_LONG,
        TOO_LONG,
        TOO_LONG,
        TOO_LONG,
        TWO_CONTS,
        TWO_CONTS,
        TWO_CONTS,
        TWO_CONTS,
        TOO_SHORT | OVERLONG_2,
        TOO_SHORT,
        TOO_SHORT | OVERLONG_3 | SURROGATE,
        TOO_SHORT | TOO_LARGE | TOO_LARGE_1000 | OVERLONG_4,
    ];
    /// By the low nibble of the first byte of a pair.
    pub(super) const BYTE_1_LOW: [u8; 16] = [
        CARRY | OVERLONG_3 | OVERLONG_2 | OVERLONG_4,
        CARRY | OVERLONG_2,
        CARRY,
        CARRY,
        CARRY | TOO_LARGE,
        CARRY | TOO_LARGE | TOO_LARGE_1000,
        CARRY | TOO_LARGE | TOO_LARGE_1000,
        CARRY | TOO_LARGE | TOO_LARGE_1000,
        CARRY | TOO_LARGE | TOO_LARGE_1000,
        CARRY | TOO_LARGE | TOO_LARGE_1000,
        CARRY | TOO_LARGE | TOO_LARGE_1000,
        CARRY | TOO_LARGE | TOO_LARGE_1000,
        CARRY | TOO_LARGE | TOO_LARGE_1000,
        CARRY | TOO_LARGE | TOO_LARGE_1000 | SURROGATE,
        CARRY | TOO_LARGE | TOO_LARGE_1000,
        CARRY | TOO_LARGE | TOO_LARGE_1000,
    ];
    /// By the high nibble of the second byte of a pair.
    pub(super) const BYTE_2_HIGH: [u8; 16] = [
        TOO_SHORT,
        TOO_SHORT,
        TOO_SHORT,
        TOO_SHORT,
        TOO_SHORT,
        TOO_SHORT,
        TOO_SHORT,
        TOO_SHORT,
        TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE_1000 | OVERLONG_4,
        TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE,
        TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE,
        TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE,
        TOO_SHORT,
        TOO_SHORT,
        TOO_SHORT,
        TOO_SHORT,
    ];
}

/// Strict mode's fast path (`scan::stage2`) with AVX2 kernels.
///
/// # Safety
/// The CPU must support AVX2 and PCLMULQDQ.
pub(super) unsafe fn strict_fast_avx2(
    buf: &[u8],
    max_depth: usize,
    facts: &mut Facts,
) -> Option<Top> {
    crate::scan::stage2::walk::<_, true>(
        buf,
        max_depth,
        |carry: &mut Carry, bytes: &[u8]| {
            // SAFETY: the caller guarantees AVX2 and PCLMULQDQ.
            unsafe { block_avx2(carry, bytes) }
        },
        facts,
    )
}

/// Strict mode's fast path (`scan::stage2`) with AVX-512BW kernels.
///
/// # Safety
/// The CPU must support AVX-512BW, AVX2 and PCLMULQDQ.
pub(super) unsafe fn strict_fast_avx512(
    buf: &[u8],
    max_depth: usize,
    facts: &mut Facts,
) -> Option<Top> {
    crate::scan::stage2::walk::<_, false>(
        buf,
        max_depth,
        |carry: &mut Carry, bytes: &[u8]| {
            // SAFETY: the caller guarantees AVX-512BW, AVX2 and PCLMULQDQ.
            unsafe { block_avx512(carry, bytes) }
        },
        facts,
    )
}

#[cfg(test)]
mod tests {
    use super::super::scalar;
    use super::*;

    /// The inline string look gives the portable scan's answer (end, escapes, error and
    /// its offset) for strings of every length up to past one window, with a quote,
    /// backslash escape, control byte, UTF-8 or invalid byte at every position, at every
    /// alignment, with and without bytes after the string.
    #[test]
    fn inline_string_look_equals_the_portable_scan() {
        if !has_avx2() {
            return;
        }
        let specials: [&[u8]; 7] = [
            b"\"",
            b"\\\"",
            b"\\u00e9",
            b"\x01",
            "é".as_bytes(),
            b"\xff",
            b"\\",
        ];
        for len in 0..=130usize {
            for at in (0..len).map(Some).chain([None]) {
                for special in specials {
                    for tail in [&b""[..], b"\"", b"\":1}"] {
                        let mut msg = b"\"".to_vec();
                        msg.extend(std::iter::repeat_n(b'k', len));
                        if let Some(at) = at {
                            let end = (1 + at + special.len()).min(msg.len());
                            msg.splice(1 + at..end, special.iter().copied());
                        }
                        msg.extend_from_slice(tail);
                        crate::simd::tests::at_each_alignment(&msg, |buf| {
                            let want = crate::scan::envelope::checked_string::<false>(buf, 0);
                            // SAFETY: AVX2 is available (checked at the top of the test).
                            let got = unsafe { string_avx2(buf, 0) };
                            assert_eq!(got, want, "avx2 {:?}", String::from_utf8_lossy(buf));
                            if has_avx512() {
                                // SAFETY: AVX-512BW is available (checked just above).
                                let got = unsafe { string_avx512(buf, 0) };
                                assert_eq!(got, want, "avx512 {:?}", String::from_utf8_lossy(buf));
                            }
                        });
                    }
                }
            }
        }
    }

    /// The nibble-lookup classes give the scalar twin's masks for every byte value, at every
    /// lane (each block holds 64 consecutive byte values, starting at every offset).
    #[test]
    fn every_byte_value_in_every_lane() {
        if !has_avx2() {
            return;
        }
        for start in 0..=255u8 {
            let chunk: [u8; 64] = core::array::from_fn(|k| start.wrapping_add(k as u8));
            let want = (scalar::token_masks(&chunk), scalar::escape_masks(&chunk));
            // SAFETY: AVX2 is available (checked at the top of the test).
            let avx2 = unsafe { (token_masks_avx2(&chunk), escape_masks_avx2(&chunk)) };
            assert_eq!(avx2, want, "avx2, start {start:#x}");
            if has_avx512() {
                // SAFETY: AVX-512BW is available (checked just above).
                let avx512 = unsafe {
                    let v = load512(&chunk);
                    (token_masks_avx512(v), escape_masks_avx512(v))
                };
                assert_eq!(avx512, want, "avx512, start {start:#x}");
            }
        }
    }

    /// The in-block UTF-8 check over a whole buffer, the way the cursor runs it.
    fn utf8_blocks_avx512(buf: &[u8]) -> bool {
        let mut carry = stage1::Utf8Carry::default();
        for chunk in buf.chunks(64) {
            // SAFETY: only called after has_avx512() said yes.
            unsafe {
                let v = load512(chunk);
                utf8_block_avx512(v, _mm512_movepi8_mask(v), &mut carry)
            };
        }
        !carry.invalid && !carry.incomplete
    }

    /// The in-block UTF-8 check gives `core::str::from_utf8`'s verdict (its scalar twin):
    /// every two-byte sequence at the offsets around a block boundary, three- and
    /// four-byte sequences over every lead byte with edge continuations, and random
    /// mixtures of valid characters and broken ones at every length 0..=200 and 8
    /// alignments.
    #[test]
    fn utf8_in_blocks_equals_core() {
        if !has_avx512() {
            return;
        }
        let check = |buf: &[u8]| {
            assert_eq!(
                utf8_blocks_avx512(buf),
                core::str::from_utf8(buf).is_ok(),
                "{buf:x?}"
            );
        };
        let mut buf = vec![b'a'; 130];
        for at in [0usize, 1, 61, 62, 63, 64, 65, 126, 127, 128] {
            for b0 in 0..=255u8 {
                for b1 in 0..=255u8 {
                    buf.fill(b'a');
                    buf[at] = b0;
                    if at + 1 < buf.len() {
                        buf[at + 1] = b1;
                    }
                    check(&buf);
                    check(&buf[..(at + 2).min(buf.len())]);
                }
            }
        }
        let edges = [0x00u8, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF];
        for at in [0usize, 61, 62, 63, 64] {
            for lead in 0xC0..=0xFFu8 {
                for &c1 in &edges {
                    for &c2 in &edges {
                        for &c3 in &edges {
                            let mut buf = vec![b' '; 70];
                            buf[at..at + 4].copy_from_slice(&[lead, c1, c2, c3]);
                            check(&buf);
                            check(&buf[..at + 3]);
                        }
                    }
                }
            }
        }
        let pieces: [&[u8]; 18] = [
            b"a",
            b"{\"k\": ",
            "é".as_bytes(),
            "日本".as_bytes(),
            "😀".as_bytes(),
            "\u{10FFFF}".as_bytes(),
            b"\x80",
            b"\xC3",
            b"\xE2\x82",
            b"\xF0\x9F\x98",
            b"\xC0\xAF",
            b"\xE0\x80\xAF",
            b"\xF0\x80\x80\xAF",
            b"\xED\xA0\x80",
            b"\xF4\x90\x80\x80",
            b"\xF5\x80\x80\x80",
            b"\xFF",
            b"                ",
        ];
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut storage = vec![0u8; 400];
        for len in 0..=200usize {
            for _ in 0..30 {
                let mut msg = Vec::new();
                while msg.len() < len {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    // Mostly valid characters, so that errors are rare and land anywhere.
                    let piece = if seed.is_multiple_of(32) {
                        pieces[6 + (seed >> 8) as usize % 12]
                    } else {
                        pieces[(seed >> 8) as usize % 6]
                    };
                    msg.extend_from_slice(piece);
                }
                msg.truncate(len);
                for align in 0..8 {
                    let b = &mut storage[align..align + msg.len()];
                    b.copy_from_slice(&msg);
                    check(b);
                }
            }
        }
    }

    #[test]
    fn masked_tail_loads_equal_padded_blocks() {
        if !has_avx512() {
            return;
        }
        let bytes: Vec<u8> = (0..64u8)
            .map(|k| b"{\"a\\u0f\x01\xc3 :,]"[usize::from(k) % 13])
            .collect();
        for len in 1..64 {
            let tail = &bytes[..len];
            // SAFETY: AVX-512BW is available (checked at the top of the test).
            let (tokens, escapes) = unsafe {
                let v = load512(tail);
                (token_masks_avx512(v), escape_masks_avx512(v))
            };
            let padded = super::super::stage1::padded(tail);
            // SAFETY: as above.
            let skipper = unsafe { masks_avx512(load512(tail)) };
            assert_eq!(skipper, scalar::block_masks(&padded), "{len}");
            assert_eq!(tokens, scalar::token_masks(&padded), "{len}");
            assert_eq!(escapes, scalar::escape_masks(&padded), "{len}");
        }
    }

    #[test]
    fn vector_masks_equal_scalar_masks() {
        if !has_avx2() {
            return;
        }
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..20_000 {
            let chunk: [u8; 64] = core::array::from_fn(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                b"{}[]\"\\ax\xdb\xfb\x5b\x7d\x00\xff ,:\t\n\r\x1f\x20ubfnrt/09afAFgG\x0c"
                    [(seed % 38) as usize]
            });
            let want = scalar::block_masks(&chunk);
            // SAFETY: AVX2 is available (checked at the top of the test).
            assert_eq!(unsafe { masks_avx2(&chunk) }, want);
            if has_avx512() {
                // SAFETY: AVX-512BW is available.
                assert_eq!(unsafe { masks_avx512(load512(&chunk)) }, want);
            }
            // SAFETY: AVX2 is available (checked at the top of the test).
            let (tokens, escapes) =
                unsafe { (token_masks_avx2(&chunk), escape_masks_avx2(&chunk)) };
            assert_eq!(tokens, scalar::token_masks(&chunk));
            assert_eq!(escapes, scalar::escape_masks(&chunk));
            if has_avx512() {
                // SAFETY: AVX-512BW is available.
                let (tokens, escapes) = unsafe {
                    let v = load512(&chunk);
                    (token_masks_avx512(v), escape_masks_avx512(v))
                };
                assert_eq!(tokens, scalar::token_masks(&chunk));
                assert_eq!(escapes, scalar::escape_masks(&chunk));
            }
            let x = seed;
            // SAFETY: PCLMULQDQ is available (part of has_avx2).
            assert_eq!(unsafe { prefix_xor_clmul(x) }, scalar::prefix_xor(x));
        }
    }
}
