//! JSON strings: the strict scan (escapes, control characters) and the structural skip.
//!
//! Neither checks UTF-8: strict mode validates the whole message up front (one fast pass,
//! see `dispatch::top`), and envelope mode checks the few strings it reads with
//! [`super::utf8::validate`].

use crate::error::JsonError;
use crate::simd::{self, Kernels};

/// Scans the string whose opening quote is at `open`. Returns the offset after the closing
/// quote and whether the string contains an escape.
#[inline(always)]
pub(crate) fn scan_strict<K: Kernels>(
    k: K,
    buf: &[u8],
    open: usize,
) -> Result<(usize, bool), JsonError> {
    let start = open + 1;
    // Short strings (keys, ids, versions, methods such as `notifications/progress`) end in
    // the first 32 bytes: no kernel call.
    // (A `match`, not `or_else`: the closure call was left out of line.)
    let hit = match simd::string_special_in_16(buf, start) {
        None => simd::string_special_in_16(buf, start + 16),
        hit => hit,
    };
    if let Some(hit) = hit {
        if buf.get(hit) == Some(&b'"') {
            return Ok((hit + 1, false));
        }
    }
    k.scan_string(buf, start)
}

/// Skips the string whose opening quote is at `open`, only matching quotes and backslashes
/// (envelope mode). Returns the offset after the closing quote.
#[inline]
pub(crate) fn skip_structural<K: Kernels>(
    k: K,
    buf: &[u8],
    open: usize,
) -> Result<usize, JsonError> {
    let start = open + 1;
    // Short strings without escapes (most values) end in the first 16 bytes: no kernel
    // call.
    if let Some(chunk) = buf.get(start..start + 16).and_then(|c| <&[u8; 16]>::try_from(c).ok()) {
        if let Some(k) = simd::quote_or_backslash_16(chunk) {
            if chunk.get(k) == Some(&b'"') {
                return Ok(start + k + 1);
            }
        }
    }
    k.skip_string(buf, start)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simd::{detected, with_kernels};
    use crate::Reason;

    fn scan_strict(buf: &[u8], open: usize) -> Result<(usize, bool), JsonError> {
        with_kernels!(detected(), k => super::scan_strict(k, buf, open))
    }

    fn skip_structural(buf: &[u8], open: usize) -> Result<usize, JsonError> {
        with_kernels!(detected(), k => super::skip_structural(k, buf, open))
    }

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
