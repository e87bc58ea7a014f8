//! The RFC 8259 number grammar, exactly: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
//! No magnitude limit: numbers are checked, never converted.

use crate::error::JsonError;

/// Scans a number starting at `pos`. Returns the offset after it and whether it is an
/// integer literal (no fraction, no exponent). What follows the number is the caller's to
/// check (`01` scans as `0`, and the `1` is then out of place).
#[inline(always)]
pub(crate) fn scan(buf: &[u8], pos: usize) -> Result<(usize, bool), JsonError> {
    let mut i = pos;
    if buf.get(i) == Some(&b'-') {
        i += 1;
    }
    match buf.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i = digits(buf, i + 1),
        _ => return Err(JsonError::unexpected(buf, i)),
    }
    let mut integer = true;
    if buf.get(i) == Some(&b'.') {
        integer = false;
        i = one_or_more_digits(buf, i + 1)?;
    }
    if matches!(buf.get(i), Some(b'e' | b'E')) {
        integer = false;
        i += 1;
        if matches!(buf.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        i = one_or_more_digits(buf, i)?;
    }
    Ok((i, integer))
}

/// The end of the run of digits at `i`. Eight bytes at a time, without a branch per digit:
/// how many digits a number has varies from message to message, and a byte loop's exit is
/// then a mispredicted branch.
#[inline]
fn digits(buf: &[u8], mut i: usize) -> usize {
    const ONES: u64 = u64::MAX / 255;
    while let Some(bytes) = buf.get(i..i + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(bytes);
        let y = u64::from_le_bytes(word) ^ (ONES * 0x30);
        // Per byte, no carry across bytes: the high bit is set unless the byte was a digit
        // (y below 0x80 and y + 0x76 below 0x80, i.e. y at most 9).
        let non_digit = (((y & (ONES * 0x7F)) + ONES * 0x76) | y) & (ONES * 0x80);
        if non_digit != 0 {
            return i + (non_digit.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(b'0'..=b'9') = buf.get(i) {
        i += 1;
    }
    i
}

#[inline]
fn one_or_more_digits(buf: &[u8], i: usize) -> Result<usize, JsonError> {
    match buf.get(i) {
        Some(b'0'..=b'9') => Ok(digits(buf, i + 1)),
        _ => Err(JsonError::unexpected(buf, i)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grammar() {
        let ok = |s: &str, integer: bool| {
            assert_eq!(scan(s.as_bytes(), 0), Ok((s.len(), integer)), "{s}");
        };
        ok("0", true);
        ok("-0", true);
        ok("123456789012345678901234567890", true);
        ok("1.5", false);
        ok("-0.0e+00", false);
        ok("1E400", false);
        // A prefix is a number; what follows is the caller's problem.
        assert_eq!(scan(b"01", 0), Ok((1, true)));
        // Runs of digits of every length, ended by every byte, at every offset.
        for len in 0..=20usize {
            for end in 0..=255u8 {
                for lead in 0..3usize {
                    let mut buf = vec![b'-'; lead];
                    buf.extend((0..len).map(|k| b'1' + (k % 9) as u8));
                    buf.push(end);
                    let want = lead + len + usize::from(end.is_ascii_digit());
                    assert_eq!(digits(&buf, lead), want, "{len} {end:#x} {lead}");
                }
            }
        }
        assert_eq!(scan(b"1.e", 0).unwrap_err().offset(), 2);
        for bad in ["-", "+1", ".5", "1.", "1e", "1e+", "-a", "NaN", ""] {
            assert!(scan(bad.as_bytes(), 0).is_err(), "{bad}");
        }
    }
}
