//! What the two x86_64 vector levels share (this file is not a level): CPU feature
//! detection, prefix XOR by carry-less multiplication, 16-byte lookup tables in a register,
//! and the 32-byte string window (AVX2 instructions, which the AVX-512 level has too: it
//! finishes strings with fewer than 64 bytes left with it). The levels' own kernels are in
//! `avx2*.rs` and `avx512*.rs`.

use core::arch::x86_64::*;

use super::{string, swar};
use crate::error::JsonError;

/// AVX2 (and PCLMULQDQ, for prefix XOR) are available.
#[inline]
pub(crate) fn has_avx2() -> bool {
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("pclmulqdq")
}

/// AVX2 (and PCLMULQDQ) and POPCNT are available.
#[inline]
pub(crate) fn has_avx2_popcnt() -> bool {
    std::arch::is_x86_feature_detected!("popcnt") && has_avx2()
}

/// AVX-512BW (and PCLMULQDQ) are available.
#[inline]
pub(crate) fn has_avx512() -> bool {
    std::arch::is_x86_feature_detected!("avx512bw") && has_avx2()
}

/// AVX-512BW, VBMI2 (byte compress) and POPCNT are available.
#[inline]
pub(crate) fn has_avx512_vbmi2() -> bool {
    std::arch::is_x86_feature_detected!("avx512vbmi2")
        && std::arch::is_x86_feature_detected!("popcnt")
        && has_avx512()
}

/// Prefix XOR by carry-less multiplication with all ones.
#[target_feature(enable = "pclmulqdq,sse2")]
pub(super) fn prefix_xor_clmul(x: u64) -> u64 {
    let product = _mm_clmulepi64_si128(_mm_set_epi64x(0, x as i64), _mm_set1_epi8(-1), 0);
    _mm_cvtsi128_si64(product) as u64
}

/// Mask of `"`, `\\` and control bytes among the 32 at `i`.
#[target_feature(enable = "avx2")]
pub(super) fn special_window_32(buf: &[u8], i: usize) -> Option<u64> {
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

/// The string loop (`string::scan_from`) over 32-byte windows, then SWAR words: the AVX2
/// level's whole string scan, and the end of the AVX-512 one.
#[target_feature(enable = "avx2")]
pub(super) fn scan_from_32(
    buf: &[u8],
    from: usize,
    escaped: bool,
) -> Result<(usize, bool), JsonError> {
    string::scan_from::<32>(buf, from, escaped, |b, i| special_window_32(b, i), swar::scan_swar)
}

/// A 16-byte table in a register.
#[target_feature(enable = "avx2")]
pub(super) fn table128(t: [u8; 16]) -> __m128i {
    // SAFETY: `t` is 16 bytes, exactly what the unaligned load reads.
    unsafe { _mm_loadu_si128(t.as_ptr().cast()) }
}

#[cfg(test)]
mod tests {
    use super::super::avx2::*;
    use super::super::avx512::*;
    use super::super::{stage1, swar};
    use super::*;

    /// The nibble-lookup classes give the scalar twin's masks for every byte value, at every
    /// lane (each block holds 64 consecutive byte values, starting at every offset).
    #[test]
    fn every_byte_value_in_every_lane() {
        if !has_avx2() {
            return;
        }
        for start in 0..=255u8 {
            let chunk: [u8; 64] = core::array::from_fn(|k| start.wrapping_add(k as u8));
            let want = (swar::token_masks(&chunk), swar::escape_masks(&chunk));
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

    /// The long-string run's four-window test equals the byte-by-byte answer (256 plain
    /// ASCII bytes: none below 0x20, above 0x7F, a quote or a backslash): every byte value
    /// at every position of a plain quad, and random quads; a plain one hands back its last
    /// 64 bytes.
    #[test]
    fn ascii_quads_agree_with_the_bytes() {
        if !has_avx512() {
            return;
        }
        let check = |quad: &[u8; 256]| {
            let want = quad.iter().all(|&b| (0x20..0x80).contains(&b) && b != b'"' && b != b'\\');
            // SAFETY: AVX-512BW is available (checked at the top of the test).
            let got = unsafe { ascii_quad_avx512(quad) }.map(|v| {
                let mut last = [0u8; 64];
                // SAFETY: `last` holds the 64 bytes the unaligned store writes.
                unsafe { _mm512_storeu_si512(last.as_mut_ptr().cast(), v) };
                last
            });
            assert_eq!(got.is_some(), want, "{quad:x?}");
            if let Some(last) = got {
                assert_eq!(last[..], quad[192..]);
            }
        };
        let plain: [u8; 256] = core::array::from_fn(|k| b' ' + (k % 95) as u8);
        let plain = plain.map(|b| if b == b'"' || b == b'\\' { b'a' } else { b });
        check(&plain);
        for at in 0..256 {
            for b in 0..=255u8 {
                let mut quad = plain;
                quad[at] = b;
                check(&quad);
            }
        }
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..20_000 {
            let quad: [u8; 256] = core::array::from_fn(|_| {
                crate::simd::rand::xorshift(&mut seed);
                // Mostly plain bytes, so that some quads are plain.
                if seed.is_multiple_of(500) {
                    b"\"\\\x00\x1f\x7f\x80\xff\xc3"[(seed >> 8) as usize % 8]
                } else {
                    b"ab +/=~!{}"[(seed >> 8) as usize % 10]
                }
            });
            check(&quad);
        }
    }

    #[test]
    fn masked_tail_loads_equal_padded_blocks() {
        if !has_avx512() {
            return;
        }
        let bytes: Vec<u8> =
            (0..64u8).map(|k| b"{\"a\\u0f\x01\xc3 :,]"[usize::from(k) % 13]).collect();
        for len in 1..64 {
            let tail = &bytes[..len];
            // SAFETY: AVX-512BW is available (checked at the top of the test).
            let (tokens, escapes) = unsafe {
                let v = load512(tail);
                (token_masks_avx512(v), escape_masks_avx512(v))
            };
            let padded = stage1::padded(tail);
            // SAFETY: as above.
            let skipper = unsafe { masks_avx512(load512(tail)) };
            assert_eq!(skipper, swar::block_masks(&padded), "{len}");
            assert_eq!(tokens, swar::token_masks(&padded), "{len}");
            assert_eq!(escapes, swar::escape_masks(&padded), "{len}");
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
                crate::simd::rand::xorshift(&mut seed);
                b"{}[]\"\\ax\xdb\xfb\x5b\x7d\x00\xff ,:\t\n\r\x1f\x20ubfnrt/09afAFgG\x0c"
                    [(seed % 38) as usize]
            });
            let want = swar::block_masks(&chunk);
            // SAFETY: AVX2 is available (checked at the top of the test).
            assert_eq!(unsafe { masks_avx2(&chunk) }, want);
            if has_avx512() {
                // SAFETY: AVX-512BW is available.
                assert_eq!(unsafe { masks_avx512(load512(&chunk)) }, want);
            }
            // SAFETY: AVX2 is available (checked at the top of the test).
            let (tokens, escapes) =
                unsafe { (token_masks_avx2(&chunk), escape_masks_avx2(&chunk)) };
            assert_eq!(tokens, swar::token_masks(&chunk));
            assert_eq!(escapes, swar::escape_masks(&chunk));
            if has_avx512() {
                // SAFETY: AVX-512BW is available.
                let (tokens, escapes) = unsafe {
                    let v = load512(&chunk);
                    (token_masks_avx512(v), escape_masks_avx512(v))
                };
                assert_eq!(tokens, swar::token_masks(&chunk));
                assert_eq!(escapes, swar::escape_masks(&chunk));
            }
            let x = seed;
            // SAFETY: PCLMULQDQ is available (part of has_avx2).
            assert_eq!(unsafe { prefix_xor_clmul(x) }, swar::prefix_xor(x));
        }
    }
}
