//! UTF-8 validation inside stage 1's AVX2 block and long-string run: the AVX-512 check
//! ([`avx512_utf8`](super::avx512_utf8)) on the two 32-byte halves of each 64 bytes.
//!
//! AVX2 once left UTF-8 to one validator call over the range of non-ASCII blocks after the
//! walk. On long non-ASCII strings (CJK text) that read every byte twice: once in the run
//! that looks for the string's end, once in the validator. Here the run checks the
//! registers it already loaded.

use core::arch::x86_64::*;

use super::avx2::halves256 as halves;
use super::stage1::Utf8Carry;
use super::tables::utf8::*;
use super::x86::table128;

/// UTF-8 validation of one block (the AVX-512 check's rules and carry; see
/// [`utf8_block_avx512`](super::avx512_utf8::utf8_block_avx512)): an invalid block (with
/// the bytes carried from the one before) sets `utf8.invalid`; `utf8.incomplete` says
/// whether it ends inside a character. An all-ASCII block after a complete character costs
/// one branch.
#[target_feature(enable = "avx2")]
#[inline]
pub(super) fn utf8_block_avx2(chunk: &[u8; 64], high: u64, utf8: &mut Utf8Carry) {
    if high == 0 && !utf8.incomplete {
        utf8.tail = Utf8Carry::ASCII_TAIL;
        return;
    }
    let (lo, hi) = halves(chunk);
    let prev = _mm256_set1_epi32(utf8.tail as i32);
    let error = _mm256_or_si256(utf8_error_avx2(lo, prev), utf8_error_avx2(hi, lo));
    let &[.., b60, b61, b62, b63] = chunk;
    utf8.tail = u32::from_le_bytes([b60, b61, b62, b63]);
    utf8.incomplete = b63 >= 0xC0 || b62 >= 0xE0 || b61 >= 0xF0;
    utf8.invalid |= _mm256_testz_si256(error, error) == 0;
}

/// Stage 1's long-string run of UTF-8 (`stage1::run`'s loop, with the check kept in
/// registers): up to the first window holding a quote, backslash or control byte
/// (`window`, which hands back the two halves it loaded), each 64-byte window is checked
/// as [`utf8_block_avx2`] checks a block, with the previous half in a register and the
/// errors OR-ed into one vector tested once at the end. Returns the bytes passed and
/// whether any was not ASCII, as `stage1::run` does.
#[target_feature(enable = "avx2")]
#[inline]
pub(super) fn utf8_run_avx2(
    utf8: &mut Utf8Carry,
    rest: &[u8],
    window: impl Fn(&[u8; 64]) -> Option<((__m256i, __m256i), u64)>,
) -> (usize, bool) {
    // Bytes 29, 30, 31 of the high half (61, 62, 63 of the window) above these start a
    // character the window does not finish.
    let last = _mm256_set_epi64x(
        i64::from_le_bytes([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xEF, 0xDF, 0xBF]),
        -1,
        -1,
        -1,
    );
    let mut prev = _mm256_set1_epi32(utf8.tail as i32);
    let mut incomplete = utf8.incomplete;
    let mut errors = _mm256_setzero_si256();
    let (mut n, mut high_seen) = (0, 0);
    while let Some(chunk) = rest.get(n..n + 64).and_then(|c| <&[u8; 64]>::try_from(c).ok()) {
        let Some(((lo, hi), high)) = window(chunk) else {
            break;
        };
        // An all-ASCII window after a complete character needs no check (its bytes then
        // stand before the next window as spaces would).
        if high != 0 || incomplete {
            let error = _mm256_or_si256(utf8_error_avx2(lo, prev), utf8_error_avx2(hi, lo));
            errors = _mm256_or_si256(errors, error);
            let cut = _mm256_subs_epu8(hi, last);
            incomplete = _mm256_testz_si256(cut, cut) == 0;
        }
        prev = hi;
        high_seen |= high;
        super::prefetch::prefetch_ahead(rest, n);
        n += 64;
    }
    if n > 0 {
        utf8.tail = _mm256_extract_epi32::<7>(prev) as u32;
        utf8.incomplete = incomplete;
        utf8.invalid |= _mm256_testz_si256(errors, errors) == 0;
    }
    (n, high_seen != 0)
}

/// The UTF-8 errors of 32 bytes `v` (not zero where they break the rules), given a
/// register whose last four bytes are the four before them (`before_src`: the previous
/// half, or the carried tail broadcast).
#[target_feature(enable = "avx2")]
#[inline]
fn utf8_error_avx2(v: __m256i, before_src: __m256i) -> __m256i {
    // Each 16-byte lane preceded by the 16 bytes before it: the low lane by the previous
    // register's high lane (only its last three bytes are read), the high lane by the low.
    let before = _mm256_permute2x128_si256::<0x21>(before_src, v);
    let prev1 = _mm256_alignr_epi8::<15>(v, before);
    let prev2 = _mm256_alignr_epi8::<14>(v, before);
    let prev3 = _mm256_alignr_epi8::<13>(v, before);
    let table = |t: [u8; 16]| _mm256_broadcastsi128_si256(table128(t));
    let nibble = _mm256_set1_epi8(0x0F);
    let high_nibble = |x: __m256i| _mm256_and_si256(_mm256_srli_epi16(x, 4), nibble);
    let special = _mm256_and_si256(
        _mm256_and_si256(
            _mm256_shuffle_epi8(table(BYTE_1_HIGH), high_nibble(prev1)),
            _mm256_shuffle_epi8(table(BYTE_1_LOW), _mm256_and_si256(prev1, nibble)),
        ),
        _mm256_shuffle_epi8(table(BYTE_2_HIGH), high_nibble(v)),
    );
    // Third and fourth bytes of a character: 0x80 where one must stand.
    let must_continue = _mm256_and_si256(
        _mm256_or_si256(
            _mm256_subs_epu8(prev2, _mm256_set1_epi8((0xE0u8 - 0x80) as i8)),
            _mm256_subs_epu8(prev3, _mm256_set1_epi8((0xF0u8 - 0x80) as i8)),
        ),
        _mm256_set1_epi8(0x80u8 as i8),
    );
    _mm256_xor_si256(must_continue, special)
}

#[cfg(test)]
mod tests {
    use super::super::tables::for_each_utf8_case;
    use super::super::x86::has_avx2;
    use super::*;

    /// The bytes above 0x7F, bit k for byte k.
    fn high(chunk: &[u8; 64]) -> u64 {
        chunk.iter().enumerate().fold(0u64, |m, (i, &b)| m | u64::from(b >= 0x80) << i)
    }

    /// The window test of the run for these tests: every 64 bytes pass (the cases hold no
    /// quote, backslash or control byte once `plain` has replaced them).
    fn any_window(chunk: &[u8; 64]) -> Option<((__m256i, __m256i), u64)> {
        // SAFETY: only called after has_avx2() said yes.
        Some((unsafe { halves(chunk) }, high(chunk)))
    }

    /// `buf` with quotes, backslashes and control bytes made `a`, padded with `a` to whole
    /// 64-byte windows.
    fn plain(buf: &[u8]) -> Vec<u8> {
        let mut out: Vec<u8> = buf
            .iter()
            .map(|&b| if b < 0x20 || b == b'"' || b == b'\\' { b'a' } else { b })
            .collect();
        out.resize(buf.len().div_ceil(64).max(1) * 64, b'a');
        out
    }

    /// The block check over a whole buffer (the last block padded with spaces, as the
    /// cursor pads it), and the run over it after the first block.
    fn verdicts(buf: &[u8]) -> (bool, Option<bool>) {
        let mut carry = Utf8Carry::default();
        for chunk in buf.chunks(64) {
            let block = super::super::stage1::padded(chunk);
            // SAFETY: only called after has_avx2() said yes.
            unsafe { utf8_block_avx2(&block, high(&block), &mut carry) };
        }
        let blocks = !carry.invalid && !carry.incomplete;
        // The run: whole windows only, after one block.
        let run = (buf.len().is_multiple_of(64) && buf.len() > 64).then(|| {
            let mut carry = Utf8Carry::default();
            let (first, rest) = buf.split_at(64);
            let first = <&[u8; 64]>::try_from(first).unwrap();
            // SAFETY: only called after has_avx2() said yes.
            let (n, _) = unsafe {
                utf8_block_avx2(first, high(first), &mut carry);
                utf8_run_avx2(&mut carry, rest, any_window)
            };
            assert_eq!(n, rest.len());
            !carry.invalid && !carry.incomplete
        });
        (blocks, run)
    }

    /// The block check and the run give `core::str::from_utf8`'s verdict (their scalar
    /// twin) on the cases the AVX-512 check is tested with, and on the same cases made
    /// plain and padded to whole windows (so that the run reads them).
    #[test]
    fn utf8_in_blocks_and_runs_equals_core() {
        if !has_avx2() {
            return;
        }
        for_each_utf8_case(|buf| {
            let (blocks, _) = verdicts(buf);
            assert_eq!(blocks, core::str::from_utf8(buf).is_ok(), "{buf:x?}");
            let plain = plain(buf);
            let want = core::str::from_utf8(&plain).is_ok();
            let (blocks, run) = verdicts(&plain);
            assert_eq!(blocks, want, "{plain:x?}");
            if let Some(run) = run {
                assert_eq!(run, want, "run: {plain:x?}");
            }
        });
    }
}
