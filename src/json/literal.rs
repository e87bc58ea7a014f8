//! `true`, `false`, `null`.

use crate::error::JsonError;

/// Checks that `lit` is written at `pos`; returns the offset after it. The error points at
/// the first byte that differs.
#[inline]
pub(crate) fn scan(buf: &[u8], pos: usize, lit: &'static [u8]) -> Result<usize, JsonError> {
    let end = pos + lit.len();
    if buf.get(pos..end) == Some(lit) {
        return Ok(end);
    }
    for (k, &want) in lit.iter().enumerate() {
        if buf.get(pos + k) != Some(&want) {
            return Err(JsonError::unexpected(buf, pos + k));
        }
    }
    Ok(end)
}
