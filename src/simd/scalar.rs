//! Portable kernels: SWAR (8 bytes per step in a `u64`) with a byte loop for the tail.
//! Always compiled; the reference every vector kernel is tested against.

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// High bit set in every byte of `x` that is zero. Only the lowest flagged byte is exact
/// (a borrow can flag bytes above a true zero), which is all the callers use.
#[inline(always)]
const fn zero_bytes(x: u64) -> u64 {
    x.wrapping_sub(ONES) & !x & HIGHS
}

/// High bit set in every byte of `x` below `n` (n <= 0x80); lowest flag exact as above.
#[inline(always)]
const fn bytes_below(x: u64, n: u8) -> u64 {
    x.wrapping_sub(ONES * n as u64) & !x & HIGHS
}

#[inline(always)]
fn load(buf: &[u8], at: usize) -> Option<u64> {
    let chunk: [u8; 8] = buf.get(at..at + 8)?.try_into().ok()?;
    Some(u64::from_le_bytes(chunk))
}

pub(crate) fn find_string_special(buf: &[u8], mut i: usize) -> usize {
    while let Some(x) = load(buf, i) {
        let m = zero_bytes(x ^ (ONES * b'"' as u64))
            | zero_bytes(x ^ (ONES * b'\\' as u64))
            | bytes_below(x, 0x20);
        if m != 0 {
            return i + (m.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&b) = buf.get(i) {
        if b == b'"' || b == b'\\' || b < 0x20 {
            return i;
        }
        i += 1;
    }
    buf.len().max(i)
}

/// Bytes that matter to a structural scan: quotes and brackets.
static STRUCTURAL: [bool; 256] = {
    let mut t = [false; 256];
    t[b'"' as usize] = true;
    t[b'{' as usize] = true;
    t[b'}' as usize] = true;
    t[b'[' as usize] = true;
    t[b']' as usize] = true;
    t
};

pub(crate) fn find_structural(buf: &[u8], mut i: usize) -> usize {
    while let Some(x) = load(buf, i) {
        // `{`/`[` and `}`/`]` differ only in bit 5 (0x7B/0x5B, 0x7D/0x5D).
        let y = x | (ONES * 0x20);
        let m = zero_bytes(x ^ (ONES * b'"' as u64))
            | zero_bytes(y ^ (ONES * b'{' as u64))
            | zero_bytes(y ^ (ONES * b'}' as u64));
        if m != 0 {
            return i + (m.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&b) = buf.get(i) {
        if STRUCTURAL[usize::from(b)] {
            return i;
        }
        i += 1;
    }
    buf.len().max(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(buf: &[u8], from: usize, hit: impl Fn(u8) -> bool) -> usize {
        (from..buf.len())
            .find(|&i| hit(buf[i]))
            .unwrap_or(buf.len())
    }

    #[test]
    fn kernels_match_naive_on_every_byte_and_offset() {
        for special in 0u8..=255 {
            for len in 0..20 {
                for pos in 0..len {
                    let mut buf = vec![b'a'; len];
                    buf[pos] = special;
                    for from in 0..=len {
                        assert_eq!(
                            find_string_special(&buf, from),
                            naive(&buf, from, |b| b == b'"' || b == b'\\' || b < 0x20)
                        );
                        assert_eq!(
                            find_structural(&buf, from),
                            naive(&buf, from, |b| STRUCTURAL[b as usize])
                        );
                    }
                }
            }
        }
    }
}
