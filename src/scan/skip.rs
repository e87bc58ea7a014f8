//! Skipping one JSON value: strictly (every byte validated) or structurally (envelope
//! mode: strings and brackets matched, depth counted, nothing else checked).
//!
//! Containers are walked iteratively with an explicit bit stack, never by recursion, so
//! the depth limit is a number, not a stack size.

use super::envelope::{params_key, span, Noted, ParamsKey};
use super::ws;
use crate::error::JsonError;
use crate::invalid::Reason;
use crate::json::{literal, number, string};
use crate::simd::{skipper::Nesting, Kernels};

/// Skips the value at `pos` (whitespace already skipped); returns the offset after it.
/// `depth` is the nesting depth a container starting at `pos` would have. Envelope mode
/// skips containers and strings with the level's kernels.
#[inline(always)]
pub(crate) fn value<K: Kernels, const STRICT: bool>(
    k: K,
    buf: &[u8],
    pos: usize,
    depth: usize,
    max_depth: usize,
) -> Result<usize, JsonError> {
    match buf.get(pos) {
        Some(b'"') if STRICT => Ok(string::scan_strict(k, buf, pos)?.0),
        Some(b'"') => string::skip_structural(k, buf, pos),
        Some(b'{' | b'[') if STRICT => container_strict(k, buf, pos, depth, max_depth),
        Some(b'{' | b'[') => k.skip_container(buf, pos, depth, max_depth),
        _ => scalar(buf, pos),
    }
}

/// A number or a literal, always checked strictly (they are short, and checking them keeps
/// envelope mode closer to strict mode on bad input).
#[inline(never)]
pub(crate) fn scalar(buf: &[u8], pos: usize) -> Result<usize, JsonError> {
    scalar_inline(buf, pos)
}

/// [`scalar`], inlined into strict mode's container walk (most of a small container's
/// values are numbers and literals; inlined into envelope mode's walk too, it made that
/// walk slower).
#[inline(always)]
fn scalar_inline(buf: &[u8], pos: usize) -> Result<usize, JsonError> {
    match buf.get(pos) {
        Some(b't') => literal::scan(buf, pos, b"true"),
        Some(b'f') => literal::scan(buf, pos, b"false"),
        Some(b'n') => literal::scan(buf, pos, b"null"),
        Some(b'-' | b'0'..=b'9') => Ok(number::scan(buf, pos)?.0),
        _ => Err(JsonError::unexpected(buf, pos)),
    }
}

#[cold]
fn too_deep(at: usize) -> JsonError {
    JsonError::new(Reason::TooDeep, at)
}

/// After `,` in an object, or after `{`: a key, its colon, and the whitespace before the
/// value. Returns the offset after the key's closing quote and the offset of the value.
#[inline(always)]
fn member_key<K: Kernels>(k: K, buf: &[u8], i: usize) -> Result<(usize, usize), JsonError> {
    if buf.get(i) != Some(&b'"') {
        return Err(JsonError::unexpected(buf, i));
    }
    let (end, _) = string::scan_strict(k, buf, i)?;
    let colon = ws(buf, end);
    if buf.get(colon) != Some(&b':') {
        return Err(JsonError::unexpected(buf, colon));
    }
    Ok((end, ws(buf, colon + 1)))
}

/// A container, strictly. Out of line on purpose: once the walks became generic over the
/// kernel level, LLVM inlined each level's copy into the message walk, and tiny messages
/// in strict mode took 9% more instructions (callgrind, AVX2).
#[inline(never)]
fn container_strict<K: Kernels>(
    k: K,
    buf: &[u8],
    pos: usize,
    depth: usize,
    max_depth: usize,
) -> Result<usize, JsonError> {
    let mut unknown = Noted::UNKNOWN;
    container_strict_with::<K, false>(k, buf, pos, depth, max_depth, &mut unknown)
}

/// The object `params` at `pos` (nested at `depth`), skipped strictly as
/// [`container_strict`] skips it, noting its members `name` and `_meta` in `noted` on the
/// way.
pub(crate) fn container_strict_named<K: Kernels>(
    k: K,
    buf: &[u8],
    pos: usize,
    depth: usize,
    max_depth: usize,
    noted: &mut Noted,
) -> Result<usize, JsonError> {
    container_strict_with::<K, true>(k, buf, pos, depth, max_depth, noted)
}

/// [`container_strict`]; with `NAMED`, the members `name` and `_meta` of the outermost
/// container (an object: `params`) go to `noted`.
#[inline(always)]
fn container_strict_with<K: Kernels, const NAMED: bool>(
    k: K,
    buf: &[u8],
    pos: usize,
    depth: usize,
    max_depth: usize,
    noted: &mut Noted,
) -> Result<usize, JsonError> {
    // The value of a noted member of the outermost object starts here; its end is known
    // when the walk is back at that object's level.
    let mut pending: Option<(usize, ParamsKey)> = None;
    let mut nest = Nesting::new();
    let mut level = 0usize; // containers open inside this call
    let mut i = pos;
    'value: loop {
        // One value starts at `i`.
        match buf.get(i) {
            Some(&open @ (b'{' | b'[')) => {
                if depth + level > max_depth {
                    return Err(too_deep(i));
                }
                let object = open == b'{';
                nest.set(level, object);
                level += 1;
                i = ws(buf, i + 1);
                match buf.get(i) {
                    Some(b'}') if object => {
                        level -= 1;
                        i += 1;
                    }
                    Some(b']') if !object => {
                        level -= 1;
                        i += 1;
                    }
                    _ if object => {
                        let (key_end, value) = member_key(k, buf, i)?;
                        if NAMED && level == 1 {
                            pending = params_key(buf, i, key_end).map(|key| (value, key));
                        }
                        i = value;
                        continue 'value;
                    }
                    _ => continue 'value,
                }
            }
            Some(b'"') => i = string::scan_strict(k, buf, i)?.0,
            _ => i = scalar_inline(buf, i)?,
        }
        // After a value: `,` or the close of the innermost container.
        loop {
            if level == 0 {
                return Ok(i);
            }
            if NAMED && level == 1 {
                if let Some((start, key)) = pending.take() {
                    noted.found(key, span(start, i));
                }
            }
            i = ws(buf, i);
            let object = nest.is_object(level - 1);
            match buf.get(i) {
                Some(b',') => {
                    i = ws(buf, i + 1);
                    if object {
                        let (key_end, value) = member_key(k, buf, i)?;
                        if NAMED && level == 1 {
                            pending = params_key(buf, i, key_end).map(|key| (value, key));
                        }
                        i = value;
                    }
                    continue 'value;
                }
                Some(b'}') if object => {}
                Some(b']') if !object => {}
                _ => return Err(JsonError::unexpected(buf, i)),
            }
            level -= 1;
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::simd::{detected, with_kernels};

    fn strict(s: &[u8]) -> Result<usize, JsonError> {
        with_kernels!(detected(), k => value::<_, true>(k, s, 0, 1, 1024))
    }
    fn structural(s: &[u8]) -> Result<usize, JsonError> {
        with_kernels!(detected(), k => value::<_, false>(k, s, 0, 1, 1024))
    }

    #[test]
    fn skips_valid_values_to_their_end() {
        for v in [
            &br#"{}"#[..],
            b"[]",
            br#"{"a":[1,{"b":null}],"c":"}"}"#,
            b"[ 1 , [ ] , { } , \"x\" ]",
            b"-1.5e3",
            b"true",
        ] {
            let mut s = v.to_vec();
            s.extend_from_slice(b" ,x");
            assert_eq!(strict(&s), Ok(v.len()), "{}", String::from_utf8_lossy(v));
            assert_eq!(structural(&s), Ok(v.len()), "{}", String::from_utf8_lossy(v));
        }
    }

    #[test]
    fn strict_rejects_what_structural_lets_through() {
        for v in [&b"[1,]"[..], b"{\"a\" 1}", b"[01]", b"{1:2}", b"[tru]", b"[1 2]"] {
            assert!(strict(v).is_err(), "{}", String::from_utf8_lossy(v));
            assert!(structural(v).is_ok(), "{}", String::from_utf8_lossy(v));
        }
        for v in [&b"[}"[..], b"{]", b"[", b"[\"]"] {
            assert!(strict(v).is_err());
            assert!(structural(v).is_err());
        }
    }

    #[test]
    fn depth_is_counted_without_recursion() {
        for depth in [1usize, 63, 64, 65, 200, 1024, 1025, 4096] {
            let s = [vec![b'['; depth], vec![b']'; depth]].concat();
            let expect_ok = depth <= 1024;
            assert_eq!(strict(&s).is_ok(), expect_ok, "{depth}");
            assert_eq!(structural(&s).is_ok(), expect_ok, "{depth}");
            let mixed: Vec<u8> = (0..depth)
                .flat_map(|k| if k % 3 == 0 { *b"{\"k\":" } else { *b"[    " })
                .chain(b"0".iter().copied())
                .chain((0..depth).rev().map(|k| if k % 3 == 0 { b'}' } else { b']' }))
                .collect();
            assert_eq!(strict(&mixed).is_ok(), expect_ok, "mixed {depth}");
            assert_eq!(structural(&mixed).is_ok(), expect_ok, "mixed {depth}");
        }
        let deep = vec![b'['; 100_000];
        assert_eq!(strict(&deep).unwrap_err().reason(), Reason::TooDeep);
        assert_eq!(
            with_kernels!(detected(), k => value::<_, true>(k, &deep, 0, 1, crate::MAX_DEPTH_LIMIT))
                .unwrap_err()
                .offset(),
            crate::MAX_DEPTH_LIMIT
        );
    }
}
