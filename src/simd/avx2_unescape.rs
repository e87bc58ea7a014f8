//! Decoding the escapes of a JSON string 64 bytes at a time with AVX2, which has no byte
//! compress: the backslashes are dropped 8 bytes at a time, each group's keep mask picking
//! its shuffle from a table (the way simdjson's minifier compresses). What a JSON log
//! record holding a message as a string needs on CPUs without AVX-512 VBMI2 (AMD before
//! Zen 4, Intel before Ice Lake), where the byte loop was half of `--json-field` time.

use core::arch::x86_64::*;

use super::skipper::escaped;

/// `SHUFFLES[m]`: the positions of the set bits of `m`, lowest first, then zeros. A shuffle
/// by it packs the bytes an 8-bit keep mask selects at the start of their 8-byte group.
static SHUFFLES: [[u8; 8]; 256] = shuffles();

const fn shuffles() -> [[u8; 8]; 256] {
    let mut table = [[0u8; 8]; 256];
    let mut m = 0;
    while m < 256 {
        let mut out = 0;
        let mut bit = 0;
        while bit < 8 {
            if m & (1 << bit) != 0 {
                table[m][out] = bit as u8;
                out += 1;
            }
            bit += 1;
        }
        m += 1;
    }
    table
}

/// Decodes the raw bytes of a string (between its quotes) into `dst` while every escape
/// is a one-character one, 64 bytes per block; the contract of
/// [`super::avx512_unescape::unescape_simple_avx512`], whose twin is the same byte loop
/// (`text::Str::decode_into`). Blocks are cut every 64 bytes, an escape cut by the
/// boundary carrying into the next block.
///
/// Each 8-byte group is stored whole, 8 bytes, at where its kept bytes go (the next group
/// writes over the rest): a block needs 8 bytes of room past its last decoded byte, and
/// stops before a block without it.
#[target_feature(enable = "avx2,popcnt")]
pub(crate) fn unescape_simple_avx2(raw: &[u8], dst: &mut [u8]) -> (usize, usize) {
    let (mut r, mut w) = (0usize, 0usize);
    // 1 when the last block's last byte started an escape (its backslash is dropped).
    let mut carry = 0u64;
    while let Some(rest) = raw.get(r..).filter(|rest| !rest.is_empty()) {
        let n = rest.len().min(64);
        // Every store writes 8 bytes at most `n` bytes past `w` (see above).
        let Some(room) = dst.get_mut(w..w + n + 8) else { break };
        let valid = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
        let padded;
        let block = match rest.get(..64) {
            Some(whole) => whole,
            None => {
                padded = super::stage1::padded(rest);
                &padded[..]
            }
        };
        // SAFETY: `block` holds 64 bytes; each unaligned load reads 32 of them.
        let halves = unsafe {
            [
                _mm256_loadu_si256(block.as_ptr().cast()),
                _mm256_loadu_si256(block.as_ptr().add(32).cast()),
            ]
        };
        let [lo, hi] = halves;
        let eq = |v: __m256i, c: u8| _mm256_cmpeq_epi8(v, _mm256_set1_epi8(c as i8));
        let mask = |l: __m256i, h: __m256i| {
            u64::from(_mm256_movemask_epi8(l) as u32)
                | u64::from(_mm256_movemask_epi8(h) as u32) << 32
        };
        let mut next = carry;
        let esc = escaped(&mut next, mask(eq(lo, b'\\'), eq(hi, b'\\')) & valid);
        let simple = mask(simple_escape(lo), simple_escape(hi));
        // A lone backslash ending a short block escapes the lane after the string.
        if esc & !(valid & simple) != 0 {
            break;
        }
        // Every escaped character follows the backslash that starts its escape; one that
        // starts an escape in the last lane is dropped too.
        let keep = valid & !(esc >> 1) & !(next << 63);
        let out = room.as_mut_ptr();
        let mut at = 0usize;
        for (half, v) in halves.into_iter().enumerate() {
            let t = translate(v, (esc >> (32 * half)) as u32);
            let lanes = [_mm256_castsi256_si128(t), _mm256_extracti128_si256::<1>(t)];
            for (l, lane) in lanes.into_iter().enumerate() {
                // The keep masks of this lane's two 8-byte groups.
                let pair = (keep >> (32 * half + 16 * l)) as u16;
                let [m0, m1] = pair.to_le_bytes();
                let lo = u64::from_le_bytes(SHUFFLES[usize::from(m0)]);
                // The high group's positions count from lane byte 8.
                let hi = u64::from_le_bytes(SHUFFLES[usize::from(m1)]) + 0x0808_0808_0808_0808;
                let packed = _mm_shuffle_epi8(lane, _mm_set_epi64x(hi as i64, lo as i64));
                for (m, bytes) in [(m0, packed), (m1, _mm_unpackhi_epi64(packed, packed))] {
                    // `at` counts the bytes kept by the groups before this one, all valid
                    // lanes: at most `n`, so the 8 bytes stored fit in `room` (`n + 8`).
                    debug_assert!(at + 8 <= room.len());
                    // SAFETY: `out + at` and the 7 bytes after it lie in `room` (above).
                    unsafe { _mm_storel_epi64(out.add(at).cast(), bytes) };
                    at += m.count_ones() as usize;
                }
            }
        }
        r += n;
        w += at;
        carry = next;
    }
    // Stopped (or the string ended) right after a backslash whose escape was not decoded:
    // it goes back to the byte loop.
    (r - carry as usize, w)
}

/// `v` with each escaped character (the lanes set in `esc`) turned into the byte it
/// stands for: `n t r b f` into control characters; `" \ /` are themselves.
#[inline]
#[target_feature(enable = "avx2")]
fn translate(v: __m256i, esc: u32) -> __m256i {
    // Byte k of the broadcast mask to lanes 8k..8k+8, then one bit per lane.
    let spread = _mm256_shuffle_epi8(
        _mm256_set1_epi32(esc as i32),
        _mm256_setr_epi8(
            0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3,
            3, 3, 3,
        ),
    );
    let lane_bit = _mm256_set1_epi64x(0x8040_2010_0804_0201u64 as i64);
    let escaped = _mm256_cmpeq_epi8(_mm256_and_si256(spread, lane_bit), lane_bit);
    // `b f n r t` are the escape characters from 0x60 up, the others (`" \ /`) below;
    // (c - 0x60) / 2 tells the five apart: 1, 3, 7, 9, 10.
    let controls = _mm256_setr_epi8(
        0,
        0x08,
        0,
        0x0C,
        0,
        0,
        0,
        b'\n' as i8,
        0,
        b'\r' as i8,
        b'\t' as i8,
        0,
        0,
        0,
        0,
        0,
        0,
        0x08,
        0,
        0x0C,
        0,
        0,
        0,
        b'\n' as i8,
        0,
        b'\r' as i8,
        b'\t' as i8,
        0,
        0,
        0,
        0,
        0,
    );
    let key = _mm256_and_si256(
        _mm256_srli_epi16::<1>(_mm256_sub_epi8(v, _mm256_set1_epi8(0x60))),
        _mm256_set1_epi8(0x0F),
    );
    let control = _mm256_and_si256(escaped, _mm256_cmpgt_epi8(v, _mm256_set1_epi8(0x5F)));
    _mm256_blendv_epi8(v, _mm256_shuffle_epi8(controls, key), control)
}

/// The lanes holding a character that may follow a backslash in a one-character escape
/// (`" \ / b f n r t`): a bit per high nibble (2, 5, 6, 7), looked up by the low nibble
/// and by the high nibble, must be in both.
#[inline]
#[target_feature(enable = "avx2")]
fn simple_escape(v: __m256i) -> __m256i {
    // Low nibble -> the high nibbles that make an escape character with it:
    // 2: '"' (2) 'b' (6) 'r' (7); 4: 't' (7); 6: 'f' (6); C: '\' (5); E: 'n' (6); F: '/' (2).
    let by_low = _mm256_setr_epi8(
        0, 0, 0b1101, 0, 0b1000, 0, 0b0100, 0, 0, 0, 0, 0, 0b0010, 0, 0b0100, 0b0001, 0, 0, 0b1101,
        0, 0b1000, 0, 0b0100, 0, 0, 0, 0, 0, 0b0010, 0, 0b0100, 0b0001,
    );
    // High nibble -> its bit: 2 -> 1, 5 -> 2, 6 -> 4, 7 -> 8 (8..F: none).
    let by_high = _mm256_setr_epi8(
        0, 0, 0b0001, 0, 0, 0b0010, 0b0100, 0b1000, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0b0001, 0, 0,
        0b0010, 0b0100, 0b1000, 0, 0, 0, 0, 0, 0, 0, 0,
    );
    let nibble = _mm256_set1_epi8(0x0F);
    let low = _mm256_shuffle_epi8(by_low, _mm256_and_si256(v, nibble));
    let high = _mm256_shuffle_epi8(by_high, _mm256_and_si256(_mm256_srli_epi16::<4>(v), nibble));
    let none = _mm256_cmpeq_epi8(_mm256_and_si256(low, high), _mm256_setzero_si256());
    // All ones where the lane is one of them.
    _mm256_xor_si256(none, _mm256_set1_epi8(-1))
}
