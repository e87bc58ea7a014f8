//! UTF-8 validation inside stage 1's AVX-512 block, on the register stage 1 already holds.

use core::arch::x86_64::*;

use super::avx512::table512;
use super::stage1::Utf8Carry;
use super::tables::utf8::*;

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
pub(super) fn utf8_block_avx512(v: __m512i, high: u64, utf8: &mut Utf8Carry) {
    if high == 0 && !utf8.incomplete {
        utf8.tail = Utf8Carry::ASCII_TAIL;
        return;
    }
    let error = utf8_error_avx512(v, _mm512_set1_epi32(utf8.tail as i32));
    let tail = _mm_extract_epi32::<3>(_mm512_extracti32x4_epi32::<3>(v)) as u32;
    let [_, b61, b62, b63] = tail.to_le_bytes();
    utf8.tail = tail;
    utf8.incomplete = b63 >= 0xC0 || b62 >= 0xE0 || b61 >= 0xF0;
    utf8.invalid |= _mm512_test_epi8_mask(error, error) != 0;
}

/// Stage 1's long-string run of UTF-8 (`stage1::run`'s loop, with the check kept in
/// registers): up to the first window holding a quote, backslash or control byte
/// (`window`), each 64-byte window is checked as [`utf8_block_avx512`] checks a block,
/// but the previous window stays in a register, the errors are OR-ed into one vector
/// tested once at the end, and whether a window ends inside a character is one masked
/// compare: no round trip through general registers and memory per window (CJK text
/// has a byte above 0x7F in every one). After an ASCII window (and at the start, after a
/// complete character), 256 bytes at a time while `ascii_quad` finds them plain ASCII,
/// which need no check: base64 and long English text pass at one test per 256 bytes.
/// Returns the bytes passed and whether any was not ASCII, as `stage1::run` does.
#[target_feature(enable = "avx512bw,avx2")]
pub(super) fn utf8_run_avx512(
    utf8: &mut Utf8Carry,
    rest: &[u8],
    window: impl Fn(&[u8; 64]) -> Option<(__m512i, u64)>,
    ascii_quad: impl Fn(&[u8; 256]) -> Option<__m512i>,
) -> (usize, bool) {
    // Bytes 61, 62, 63 at or above these start a character the window does not finish.
    let starts = _mm512_set_epi64(
        i64::from_le_bytes([0, 0, 0, 0, 0, 0xF0, 0xE0, 0xC0]),
        0,
        0,
        0,
        0,
        0,
        0,
        0,
    );
    let mut prev = _mm512_set1_epi32(utf8.tail as i32);
    let mut incomplete = utf8.incomplete;
    let mut errors = _mm512_setzero_si512();
    let (mut n, mut high_seen) = (0, 0);
    // Whether the last window was ASCII after a complete character: then 256 bytes at a
    // time while they are plain ASCII (`ascii_quad`), which need no UTF-8 check.
    let mut ascii = !incomplete;
    loop {
        if ascii {
            while let Some(quad) = rest.get(n..n + 256).and_then(|q| <&[u8; 256]>::try_from(q).ok())
            {
                let Some(last) = ascii_quad(quad) else {
                    break;
                };
                prev = last;
                for k in 0..4 {
                    super::prefetch::prefetch_ahead(rest, n + 64 * k);
                }
                n += 256;
            }
        }
        let Some(chunk) = rest.get(n..n + 64).and_then(|c| <&[u8; 64]>::try_from(c).ok()) else {
            break;
        };
        let Some((v, high)) = window(chunk) else {
            break;
        };
        // An all-ASCII window after a complete character needs no check (its bytes then
        // stand before the next window as spaces would).
        ascii = high == 0 && !incomplete;
        if !ascii {
            errors = _mm512_or_si512(errors, utf8_error_avx512(v, prev));
            incomplete = _mm512_mask_cmpge_epu8_mask(0xE000_0000_0000_0000, v, starts) != 0;
        }
        prev = v;
        high_seen |= high;
        super::prefetch::prefetch_ahead(rest, n);
        n += 64;
    }
    if n > 0 {
        utf8.tail = _mm_extract_epi32::<3>(_mm512_extracti32x4_epi32::<3>(prev)) as u32;
        utf8.incomplete = incomplete;
        utf8.invalid |= _mm512_test_epi8_mask(errors, errors) != 0;
    }
    (n, high_seen != 0)
}

/// The UTF-8 errors of one block `v` (not zero where it breaks the rules), given a
/// register whose last four bytes are the four before the block (`before_src`: the
/// previous block, or its last four bytes broadcast).
#[target_feature(enable = "avx512bw,avx2")]
#[inline]
fn utf8_error_avx512(v: __m512i, before_src: __m512i) -> __m512i {
    // Each 16-byte lane preceded by the 16 bytes before it: lane 0 by the previous block's
    // last lane (only its last three bytes are read).
    let before = _mm512_alignr_epi32::<12>(v, before_src);
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
    _mm512_xor_si512(must_continue, special)
}

#[cfg(test)]
mod tests {
    use super::super::avx512::load512;
    use super::super::tables::for_each_utf8_case;
    use super::super::x86::has_avx512;
    use super::*;

    /// The in-block UTF-8 check over a whole buffer, the way the cursor runs it.
    fn utf8_blocks_avx512(buf: &[u8]) -> bool {
        let mut carry = Utf8Carry::default();
        for chunk in buf.chunks(64) {
            // SAFETY: only called after has_avx512() said yes.
            unsafe {
                let v = load512(chunk);
                utf8_block_avx512(v, _mm512_movepi8_mask(v), &mut carry)
            };
        }
        !carry.invalid && !carry.incomplete
    }

    /// The in-block UTF-8 check gives `core::str::from_utf8`'s verdict (its scalar twin) on
    /// every case of [`for_each_utf8_case`].
    #[test]
    fn utf8_in_blocks_equals_core() {
        if !has_avx512() {
            return;
        }
        for_each_utf8_case(|buf| {
            assert_eq!(utf8_blocks_avx512(buf), core::str::from_utf8(buf).is_ok(), "{buf:x?}");
        });
    }
}
