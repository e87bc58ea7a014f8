//! JSON strings: the strict scan (escapes, control characters) and the structural skip.
//!
//! Neither checks UTF-8: strict mode validates the whole message up front (one fast pass,
//! see `scan::message`), and envelope mode checks the few strings it reads with
//! [`super::utf8::validate`].

use crate::error::JsonError;
use crate::simd;

/// Scans the string whose opening quote is at `open`. Returns the offset after the closing
/// quote and whether the string contains an escape.
#[inline(always)]
pub(crate) fn scan_strict(buf: &[u8], open: usize) -> Result<(usize, bool), JsonError> {
    let start = open + 1;
    // Short strings (keys, ids, versions, most methods) end in the first 16 bytes: no
    // kernel call.
    let hit = match simd::string_special_in_word(buf, start) {
        None => simd::string_special_in_word(buf, start + 8),
        hit => hit,
    };
    if let Some(hit) = hit {
        if buf.get(hit) == Some(&b'"') {
            return Ok((hit + 1, false));
        }
    }
    simd::scan_string(buf, start)
}

/// The string loop from `i` (inside a string). `window(buf, i)` is the level's kernel: the
/// exact mask of `"`, `\\` and control bytes among the `W` bytes at `i` (bit k = byte
/// `i + k`), or `None` when fewer than `W` bytes remain. Escapes are handled from the same
/// mask, so a string with many escapes costs one load per window, and the whole loop is
/// instantiated inside the kernel's target-feature context (one call per string).
///
/// When fewer than `W` bytes remain, `rest` takes over (a narrower window, finally
/// [`tail`]), so strings near the end of a message still go a word at a time.
#[inline(always)]
pub(crate) fn scan_from<const W: usize>(
    buf: &[u8],
    mut i: usize,
    mut escaped: bool,
    window: impl Fn(&[u8], usize) -> Option<u64>,
    rest: impl FnOnce(&[u8], usize, bool) -> Result<(usize, bool), JsonError>,
) -> Result<(usize, bool), JsonError> {
    while let Some(mut mask) = window(buf, i) {
        while mask != 0 {
            let at = i + mask.trailing_zeros() as usize;
            match buf.get(at) {
                Some(b'"') => return Ok((at + 1, escaped)),
                Some(b'\\') => {
                    escaped = true;
                    let next = escape(buf, at)?;
                    let used = next - i;
                    if used >= W {
                        i = next;
                        mask = window(buf, i).unwrap_or(0);
                        if mask == 0 && buf.len() < i + W {
                            return rest(buf, i, escaped);
                        }
                        continue;
                    }
                    mask &= !((1u64 << used) - 1);
                }
                // A raw control character (0x00-0x1F).
                _ => return Err(JsonError::unexpected(buf, at)),
            }
        }
        i += W;
    }
    rest(buf, i, escaped)
}

/// The portable chain: 8-byte SWAR windows, then bytes.
#[inline(always)]
pub(crate) fn scan_swar(buf: &[u8], i: usize, escaped: bool) -> Result<(usize, bool), JsonError> {
    scan_from::<8>(buf, i, escaped, crate::simd::string_special_window, tail)
}

/// The last bytes of the buffer, one at a time.
#[inline]
pub(crate) fn tail(
    buf: &[u8],
    mut i: usize,
    mut escaped: bool,
) -> Result<(usize, bool), JsonError> {
    loop {
        match buf.get(i) {
            Some(b'"') => return Ok((i + 1, escaped)),
            Some(b'\\') => {
                escaped = true;
                i = escape(buf, i)?;
            }
            Some(&b) if b < 0x20 => return Err(JsonError::unexpected(buf, i)),
            Some(_) => i += 1,
            None => return Err(JsonError::eof(buf.len())),
        }
    }
}

/// Checks the escape whose backslash is at `at`; returns the offset after it.
#[inline(always)]
fn escape(buf: &[u8], at: usize) -> Result<usize, JsonError> {
    match buf.get(at + 1) {
        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => Ok(at + 2),
        Some(b'u') => {
            for k in at + 2..at + 6 {
                match buf.get(k) {
                    Some(h) if h.is_ascii_hexdigit() => {}
                    _ => return Err(JsonError::unexpected(buf, k)),
                }
            }
            Ok(at + 6)
        }
        _ => Err(JsonError::unexpected(buf, at + 1)),
    }
}

/// Skips the string whose opening quote is at `open`, only matching quotes and backslashes
/// (envelope mode). Returns the offset after the closing quote.
#[inline]
pub(crate) fn skip_structural(buf: &[u8], open: usize) -> Result<usize, JsonError> {
    let mut i = open + 1;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Reason;

    #[test]
    fn strict_strings() {
        assert_eq!(scan_strict(br#""abc""#, 0), Ok((5, false)));
        assert_eq!(scan_strict(br#""a\"b""#, 0), Ok((6, true)));
        assert_eq!(scan_strict(br#""\u00e9\ud800""#, 0), Ok((14, true)));
        assert_eq!(scan_strict("\"é\"".as_bytes(), 0), Ok((4, false)));
        let err = |s: &[u8]| scan_strict(s, 0).unwrap_err();
        assert_eq!(err(b"\"a\x01\"").offset(), 2);
        assert_eq!(err(b"\"a\\x\"").offset(), 3);
        assert_eq!(err(b"\"\\u12g4\"").offset(), 5);
        assert_eq!(err(b"\"abc").offset(), 4);
        assert_eq!(err(b"\"\\").reason(), Reason::Syntax);
        assert_eq!(err(b"\"\\u12").offset(), 5);
    }

    #[test]
    fn structural_strings() {
        assert_eq!(skip_structural(br#""a\"b" x"#, 0), Ok(6));
        assert_eq!(skip_structural(br#""\\" x"#, 0), Ok(4));
        assert!(skip_structural(br#""\"#, 0).is_err());
        assert!(skip_structural(br#""abc"#, 0).is_err());
    }
}
