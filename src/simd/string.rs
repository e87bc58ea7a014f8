//! The string loop every level shares: a level's window kernel finds the quotes,
//! backslashes and control bytes, and this code walks them (escapes checked exactly).
//! Generic: a level instantiates it with its kernel inside its target-feature context.

use crate::error::JsonError;

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

/// The shared decision of the inline string looks: given the masks of a window over a
/// string's contents (`special`: quotes, backslashes, control bytes; `high`: bytes above
/// 0x7F), the offset after the closing quote when the first special byte is a quote and no
/// byte before it is above 0x7F; `None` sends the string to the portable scan.
#[cfg(any(
    all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)),
    all(target_arch = "aarch64", target_feature = "neon", not(miri), not(rpcscan_disable_simd)),
    all(target_arch = "wasm32", target_feature = "simd128", not(miri), not(rpcscan_disable_simd))
))]
#[inline(always)]
pub(super) fn plain_string_end(window: &[u8], special: u64, high: u64) -> Option<usize> {
    let k = special.trailing_zeros();
    let before = 1u64.checked_shl(k).map_or(u64::MAX, |bit| bit - 1);
    (window.get(k as usize) == Some(&b'"') && high & before == 0).then_some(k as usize + 1)
}
