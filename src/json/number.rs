//! The RFC 8259 number grammar, exactly: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
//! No magnitude limit: numbers are checked, never converted.

use super::JsonError;

/// Scans a number starting at `pos`. Returns the offset after it and whether it is an
/// integer literal (no fraction, no exponent). What follows the number is the caller's to
/// check (`01` scans as `0`, and the `1` is then out of place).
#[inline]
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

#[inline]
fn digits(buf: &[u8], mut i: usize) -> usize {
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
        assert_eq!(scan(b"1.e", 0).unwrap_err().offset(), 2);
        for bad in ["-", "+1", ".5", "1.", "1e", "1e+", "-a", "NaN", ""] {
            assert!(scan(bad.as_bytes(), 0).is_err(), "{bad}");
        }
    }
}
