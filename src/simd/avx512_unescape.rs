//! Decoding the escapes of a JSON string 64 bytes at a time (AVX-512 VBMI2): what a JSON
//! log record holding a message as a string needs, where the escapes (`\"` around every
//! key and string) come every few bytes and a loop per escape pays a branch each.

use core::arch::x86_64::*;

use super::skipper::escaped;

/// Decodes the raw bytes of a string (between its quotes) into `dst` while every escape
/// is a one-character one (`\" \\ \/ \b \f \n \r \t`), 64 bytes per block: the escaped
/// characters are translated in the register and the backslashes before them dropped with
/// one compress. Returns `(read, written)`: the raw bytes consumed and the decoded bytes
/// stored at the start of `dst`. It stops before the first block holding anything else
/// (a `\u` escape, a backslash before a byte that is no escape, a backslash ending the
/// string), and leaves the rest to the byte loop (`text::Str::decode_into`), its twin.
///
/// Blocks are cut every 64 bytes whatever they hold, so that where the next one starts
/// never waits for this one's masks: an escape cut by the boundary carries into the next
/// block (its backslash dropped here, its character translated there), the way stage 1
/// carries escapes. Where the decoding stops right after such a backslash, `read` backs
/// off by one, so that it never ends inside an escape.
#[target_feature(enable = "avx512bw,avx512vbmi2,avx2,popcnt")]
pub(crate) fn unescape_simple_avx512(raw: &[u8], dst: &mut [u8]) -> (usize, usize) {
    let (mut r, mut w) = (0usize, 0usize);
    // 1 when the last block's last byte started an escape (its backslash is dropped).
    let mut carry = 0u64;
    while let Some(rest) = raw.get(r..).filter(|rest| !rest.is_empty()) {
        let n = rest.len().min(64);
        let valid = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
        let v = load(rest, valid);
        let eq = |c: u8| _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(c as i8));
        let mut next = carry;
        let esc = escaped(&mut next, eq(b'\\') & valid);
        let simple =
            eq(b'"') | eq(b'\\') | eq(b'/') | eq(b'b') | eq(b'f') | eq(b'n') | eq(b'r') | eq(b't');
        // A lone backslash ending a short block escapes the lane after the string.
        if esc & !(valid & simple) != 0 {
            break;
        }
        let mut t = v;
        for (c, to) in [(b'b', 0x08u8), (b'f', 0x0C), (b'n', b'\n'), (b'r', b'\r'), (b't', b'\t')] {
            t = _mm512_mask_mov_epi8(t, esc & eq(c), _mm512_set1_epi8(to as i8));
        }
        // Every escaped character follows the backslash that starts its escape; one that
        // starts an escape in the last lane is dropped too.
        let keep = valid & !(esc >> 1) & !(next << 63);
        let out = _mm512_maskz_compress_epi8(keep, t);
        let len = keep.count_ones() as usize;
        let Some(slot) = dst.get_mut(w..w + len) else { break };
        let store = if len == 64 { u64::MAX } else { (1u64 << len) - 1 };
        // SAFETY: the masked store writes the first `len` bytes at `slot`'s start only
        // (masked-off lanes are not accessed), and `slot` holds exactly `len` bytes.
        unsafe { _mm512_mask_storeu_epi8(slot.as_mut_ptr().cast(), store, out) };
        r += n;
        w += len;
        carry = next;
    }
    // Stopped (or the string ended) right after a backslash whose escape was not decoded:
    // it goes back to the byte loop.
    (r - carry as usize, w)
}

/// The first `valid.count_ones()` bytes of `rest` (at most 64; `valid` is a run of low
/// bits no longer than `rest`), the other lanes zero.
#[target_feature(enable = "avx512bw,avx2")]
fn load(rest: &[u8], valid: u64) -> __m512i {
    if let Some(chunk) = rest.get(..64) {
        // SAFETY: `chunk` holds exactly the 64 bytes the unaligned load reads.
        return unsafe { _mm512_loadu_si512(chunk.as_ptr().cast()) };
    }
    // SAFETY: `valid` selects the first `rest.len()` (< 64) lanes or fewer, all inside
    // `rest`; masked-off lanes are not accessed and cannot fault.
    unsafe { _mm512_maskz_loadu_epi8(valid, rest.as_ptr().cast()) }
}
