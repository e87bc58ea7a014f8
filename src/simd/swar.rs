//! Portable kernels: SWAR (8 bytes per step in a `u64`) with a byte loop for the tail.
//! Always compiled; the reference every vector kernel is tested against.

#[cfg(test)]
use super::skipper::Masks;
use super::stage1::{EscapeMasks, TokenMasks};
use super::string;
use crate::error::JsonError;

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;
const LOWS7: u64 = 0x7F7F_7F7F_7F7F_7F7F;

/// High bit set in every byte of `x` that is zero. Only the lowest flagged byte is exact
/// (a borrow can flag bytes above a true zero), which is all find-first callers use.
#[inline(always)]
const fn zero_bytes(x: u64) -> u64 {
    x.wrapping_sub(ONES) & !x & HIGHS
}

/// High bit set in every byte of `x` below `n` (n <= 0x80); lowest flag exact as above.
#[inline(always)]
const fn bytes_below(x: u64, n: u8) -> u64 {
    x.wrapping_sub(ONES * n as u64) & !x & HIGHS
}

/// High bit set in exactly the bytes of `x` equal to `c` (no borrows between bytes).
#[inline(always)]
const fn eq_exact(x: u64, c: u8) -> u64 {
    let t = x ^ (ONES * c as u64);
    !(((t & LOWS7) + LOWS7) | t) & HIGHS
}

/// Gathers the high bit of each byte into 8 bits, byte 0 into bit 0.
#[inline(always)]
const fn movemask(high_bits: u64) -> u64 {
    ((high_bits >> 7).wrapping_mul(0x0102_0408_1020_4080)) >> 56
}

#[inline(always)]
fn load(buf: &[u8], at: usize) -> Option<u64> {
    let chunk: [u8; 8] = buf.get(at..at.checked_add(8)?)?.try_into().ok()?;
    Some(u64::from_le_bytes(chunk))
}

/// Whether every byte of `buf` is ASCII, 8 bytes at a time (the last word overlapping the
/// one before it), with one test at the end: for short texts, where a validator call's own
/// set-up costs more than the bytes.
#[inline]
pub(crate) fn is_ascii_short(buf: &[u8]) -> bool {
    let n = buf.len();
    if n < 8 {
        return buf.iter().fold(0u8, |any, &b| any | b) < 0x80;
    }
    let mut any = load(buf, n - 8).unwrap_or(0);
    let mut at = 0;
    while let Some(x) = load(buf, at) {
        any |= x;
        at += 8;
    }
    any & HIGHS == 0
}

#[inline(always)]
fn is_string_special(b: u8) -> bool {
    b == b'"' || b == b'\\' || b < 0x20
}

/// The first string-special byte among the 8 at `from`: `Some(offset)`; or, when fewer than
/// 8 bytes remain, the answer for the rest of the buffer. `None`: 8 plain bytes.
#[inline(always)]
pub(crate) fn string_special_in_word(buf: &[u8], from: usize) -> Option<usize> {
    match load(buf, from) {
        Some(x) => {
            let m = zero_bytes(x ^ (ONES * b'"' as u64))
                | zero_bytes(x ^ (ONES * b'\\' as u64))
                | bytes_below(x, 0x20);
            (m != 0).then(|| from + (m.trailing_zeros() / 8) as usize)
        }
        None => Some(first_special_byte(buf, from)),
    }
}

/// The offset of the first string-special byte from `from` on, byte by byte (fewer than 8
/// are left), or the end of `buf`. A plain loop, always inlined: `Iterator::position` was
/// left out of line in the large walks.
#[inline(always)]
fn first_special_byte(buf: &[u8], from: usize) -> usize {
    let mut i = from;
    while let Some(&b) = buf.get(i) {
        if is_string_special(b) {
            return i;
        }
        i += 1;
    }
    buf.len().max(from)
}

/// [`string_special_in_word`] for the 16 bytes at `from`: two words (the scalar twin of
/// the 16-byte vector look, `simd::string_special_in_16`).
#[inline(always)]
pub(crate) fn string_special_in_16(buf: &[u8], from: usize) -> Option<usize> {
    match string_special_in_word(buf, from) {
        None => string_special_in_word(buf, from + 8),
        hit => hit,
    }
}

/// Exact mask of string-special bytes among the 8 at `at` (bit k = byte `at + k`).
#[inline(always)]
pub(crate) fn string_special_window(buf: &[u8], at: usize) -> Option<u64> {
    let x = load(buf, at)?;
    // A byte is below 0x20 exactly when its bits 7, 6 and 5 are all clear.
    let control = !(x | (x << 1) | (x << 2)) & HIGHS;
    Some(movemask(eq_exact(x, b'"') | eq_exact(x, b'\\') | control))
}

/// The portable chain: plain 16-byte steps ([`plain_run`]), then 8-byte SWAR windows,
/// then bytes.
#[inline(always)]
pub(crate) fn scan_swar(buf: &[u8], i: usize, escaped: bool) -> Result<(usize, bool), JsonError> {
    string::scan_from::<8>(buf, plain_run(buf, i), escaped, string_special_window, string::tail)
}

/// From `i`, inside a string: past the 16-byte steps that hold no quote, backslash or
/// control byte (one test each, no mask built), so long strings cost less than the exact
/// windows of [`string_special_window`].
#[inline(always)]
fn plain_run(buf: &[u8], mut i: usize) -> usize {
    let special = |x: u64| {
        zero_bytes(x ^ (ONES * b'"' as u64))
            | zero_bytes(x ^ (ONES * b'\\' as u64))
            | bytes_below(x, 0x20)
    };
    while let (Some(a), Some(b)) = (load(buf, i), load(buf, i + 8)) {
        if (special(a) | special(b)) != 0 {
            break;
        }
        i += 16;
    }
    i
}

/// Stage 1's long-string window test (`stage1::run`), 8 bytes at a time: `None` when the
/// 64 bytes hold a quote, backslash or control byte, else the high bits of the bytes that
/// are not ASCII (not zero when there is one).
#[inline(always)]
pub(crate) fn plain_window(chunk: &[u8; 64]) -> Option<((), u64)> {
    let (mut special, mut high) = (0, 0);
    for word in chunk.chunks_exact(8) {
        let x = word.try_into().map_or(0, u64::from_le_bytes);
        // Each of these is not zero exactly when such a byte is there (only the lowest
        // flag is exact, and only whether one is there matters).
        special |= zero_bytes(x ^ (ONES * b'"' as u64))
            | zero_bytes(x ^ (ONES * b'\\' as u64))
            | bytes_below(x, 0x20);
        high |= x & HIGHS;
    }
    (special == 0).then_some(((), high))
}

/// The container skipper's string run (`skipper::string_run`), 16 bytes at a time: the
/// offset of the first quote or backslash among them.
#[cfg_attr(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)), allow(dead_code))]
#[inline(always)]
pub(crate) fn quote_or_backslash(chunk: &[u8; 16]) -> Option<usize> {
    let word = |k: usize| {
        let x = chunk.get(k..k + 8).and_then(|w| w.try_into().ok()).map_or(0, u64::from_le_bytes);
        zero_bytes(x ^ (ONES * b'"' as u64)) | zero_bytes(x ^ (ONES * b'\\' as u64))
    };
    let (lo, hi) = (word(0), word(8));
    if (lo | hi) == 0 {
        return None;
    }
    // The lowest flag of a word is exact.
    Some(if lo != 0 {
        lo.trailing_zeros() as usize / 8
    } else {
        8 + hi.trailing_zeros() as usize / 8
    })
}

/// The string skip of the scalar level, and the twin of the vector levels' block skip
/// (`skipper::string_end`): from `from` (inside a string, no escape pending), one search
/// for the next quote or backslash per escape.
pub(crate) fn skip_string(buf: &[u8], from: usize) -> Result<usize, JsonError> {
    let mut i = from;
    loop {
        let rest = buf.get(i..).unwrap_or_default();
        match memchr::memchr2(b'"', b'\\', rest) {
            Some(k) => {
                i += k;
                if buf.get(i) == Some(&b'"') {
                    return Ok(i + 1);
                }
                i += 2;
            }
            None => return Err(JsonError::eof(buf.len())),
        }
    }
}

/// The masks of one 64-byte block, 8 bytes at a time: the twin the vector levels' skipper
/// masks are tested against (the scalar level's skipper walks bytes instead).
#[cfg(test)]
pub(crate) fn block_masks(chunk: &[u8; 64]) -> Masks {
    let mut m = Masks::default();
    for (k, word) in chunk.chunks_exact(8).enumerate() {
        let Ok(word) = <[u8; 8]>::try_from(word) else {
            continue;
        };
        let x = u64::from_le_bytes(word);
        let folded = x | (ONES * 0x20); // `[`/`{` and `]`/`}` differ only in bit 5
        let shift = 8 * k;
        m.quote |= movemask(eq_exact(x, b'"')) << shift;
        m.backslash |= movemask(eq_exact(x, b'\\')) << shift;
        m.open |= movemask(eq_exact(folded, b'{')) << shift;
        m.close |= movemask(eq_exact(folded, b'}')) << shift;
        m.curly |= movemask((x << 2) & HIGHS) << shift;
    }
    m
}

/// The token masks of one 64-byte block, a byte at a time (the reference for the vector
/// kernels; the scalar level only uses the fast path in tests).
pub(crate) fn token_masks(chunk: &[u8; 64]) -> TokenMasks {
    let mut m = TokenMasks::default();
    for (i, &b) in chunk.iter().enumerate() {
        let bit = 1u64 << i;
        let set = |mask: &mut u64, yes: bool| *mask |= if yes { bit } else { 0 };
        set(&mut m.quote, b == b'"');
        set(&mut m.backslash, b == b'\\');
        set(&mut m.control, b < 0x20);
        set(&mut m.space, matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
        set(&mut m.op, matches!(b, b'{' | b'}' | b'[' | b']' | b',' | b':'));
        set(&mut m.high, b >= 0x80);
    }
    m
}

/// The escape masks of one 64-byte block, a byte at a time.
pub(crate) fn escape_masks(chunk: &[u8; 64]) -> EscapeMasks {
    let mut m = EscapeMasks::default();
    for (i, &b) in chunk.iter().enumerate() {
        let bit = 1u64 << i;
        let set = |mask: &mut u64, yes: bool| *mask |= if yes { bit } else { 0 };
        set(
            &mut m.allowed,
            matches!(b, b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' | b'u'),
        );
        set(&mut m.unicode, b == b'u');
        set(&mut m.hex, b.is_ascii_hexdigit());
    }
    m
}

/// Prefix XOR: bit i of the result is the XOR of bits 0..=i of `x`.
#[inline(always)]
pub(crate) const fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The short ASCII test agrees with `is_ascii` for every length up to past a few words,
    /// with one byte above 0x7F at every position (and none).
    #[test]
    fn short_ascii_test_is_exact() {
        for len in 0..=40usize {
            for at in (0..len).map(Some).chain([None]) {
                for high in [0x80u8, 0xC3, 0xFF] {
                    let mut buf = vec![b'a'; len];
                    if let Some(at) = at {
                        buf[at] = high;
                    }
                    assert_eq!(is_ascii_short(&buf), buf.is_ascii(), "{len} {at:?}");
                }
            }
        }
    }

    #[test]
    fn swar_helpers_are_exact() {
        for b in 0u8..=255 {
            for pos in 0..8 {
                let mut bytes = [b'a'; 8];
                bytes[pos] = b;
                let x = u64::from_le_bytes(bytes);
                for c in [b'"', b'\\', b'{', b'a', 0, 0xFF] {
                    let want: u64 =
                        bytes.iter().enumerate().map(|(k, &v)| u64::from(v == c) << k).sum();
                    assert_eq!(movemask(eq_exact(x, c)), want, "byte {b} at {pos} vs {c}");
                }
            }
        }
        assert_eq!(prefix_xor(0b1001), 0b0111);
        assert_eq!(prefix_xor(1), u64::MAX);
    }

    /// The SWAR string scan (plain steps, windows, tail) gives the byte loop's answer on
    /// strings of every length up to several steps, with an escape, control byte, quote
    /// or character at every offset.
    #[test]
    fn swar_string_scan_equals_the_byte_loop() {
        let specials: [&[u8]; 8] =
            [b"\"", b"\\n", b"\\u12G4", b"\\x", b"\x01", b"\x1f", "é".as_bytes(), b"\\"];
        // Under miri (UB on the scalar paths) a sample of lengths and offsets: every one
        // would take tens of minutes there.
        let step = if cfg!(miri) { 13 } else { 1 };
        for len in (0..=80usize).step_by(step) {
            for at in (0..=len).step_by(step) {
                for special in specials {
                    let mut buf = vec![b'a'; len];
                    buf.splice(at..(at + special.len()).min(len), special.iter().copied());
                    for tail in [&b""[..], b"\"", b"xyz\""] {
                        let mut s = buf.clone();
                        s.extend_from_slice(tail);
                        assert_eq!(scan_swar(&s, 0, false), string::tail(&s, 0, false), "{s:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn block_masks_match_bytes() {
        let chunk: [u8; 64] = core::array::from_fn(|i| b"{\"a\\\"}[]x\xdb\xfb\x5b\x7d"[i % 13]);
        let m = block_masks(&chunk);
        for (i, &b) in chunk.iter().enumerate() {
            let bit = |mask: u64| mask >> i & 1 == 1;
            assert_eq!(bit(m.quote), b == b'"');
            assert_eq!(bit(m.backslash), b == b'\\');
            assert_eq!(bit(m.open), b == b'{' || b == b'[');
            assert_eq!(bit(m.close), b == b'}' || b == b']');
            assert_eq!(bit(m.curly), b & 0x20 != 0);
        }
    }
}
