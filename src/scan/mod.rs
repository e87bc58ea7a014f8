//! The walk over one JSON text: the exact top-level walk (`envelope`, over `skip` for the
//! values it does not read), stage 2 of strict mode's fast path (`stage2`), and the rules
//! of docs/spec.md §3 applied to what the walk found (`decide`). The walks are generic over
//! the kernel level (`simd::Kernels`); which walk runs, and at which level, is `dispatch`'s
//! choice.

pub(crate) mod decide;
pub(crate) mod envelope;
pub(crate) mod skip;
pub(crate) mod stage2;

use crate::error::JsonError;
use crate::invalid::Reason;
use crate::simd::Kernels;

/// Skips JSON whitespace (space, tab, LF, CR) from `i`.
#[inline(always)]
pub(crate) fn ws(buf: &[u8], mut i: usize) -> usize {
    // Most calls find no whitespace at all (compact JSON): one compare answers them.
    match buf.get(i) {
        Some(&b) if b > b' ' => return i,
        None => return i,
        _ => {}
    }
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = buf.get(i) {
        i += 1;
    }
    i
}

/// What the top level of a JSON text turned out to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Top {
    /// An object; the walk wrote its envelope facts to the caller's [`envelope::Facts`]
    /// (an out-parameter, so the facts are never copied between the walk and `decide`).
    Object,
    /// An array whose `[` is at this offset.
    Array(usize),
    /// A string, number or literal.
    Scalar,
}

/// The exact walk (every byte looked at in order, errors with their first offending
/// offset), with the kernels of one level (`dispatch` instantiates it per level, envelope
/// mode's inside the level's target features so that its skipper and string look inline).
#[inline(always)]
pub(crate) fn walk<K: Kernels, const STRICT: bool>(
    k: K,
    buf: &[u8],
    max_depth: usize,
    facts: &mut envelope::Facts,
) -> Result<Top, JsonError> {
    let start = ws(buf, 0);
    let (top, end) = match buf.get(start) {
        None => return Err(JsonError::new(Reason::Empty, start)),
        Some(b'{') => {
            let mut exact = envelope::Exact::<STRICT, K> { buf, max_depth, kernels: k };
            (Top::Object, envelope::object(&mut exact, start, facts)?)
        }
        Some(b'[') => (Top::Array(start), skip::value::<K, STRICT>(k, buf, start, 1, max_depth)?),
        Some(_) => (Top::Scalar, skip::value::<K, STRICT>(k, buf, start, 1, max_depth)?),
    };
    let rest = ws(buf, end);
    if rest < buf.len() {
        return Err(JsonError::new(Reason::TrailingBytes, rest));
    }
    Ok(top)
}
