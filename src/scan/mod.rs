//! The single pass over one message: the prologue (size, BOM, UTF-8), the top-level walk,
//! and the rules of SPEC §3 applied to what the walk found.

pub(crate) mod batch;
pub(crate) mod envelope;
pub(crate) mod fast;
pub(crate) mod skip;

use crate::invalid::Reason;
use crate::json::{utf8, JsonError};

/// Spans are `u32`: one message may not exceed 4 GiB (reported as `too_large`).
pub(crate) const MAX_MESSAGE_LEN: usize = u32::MAX as usize;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Skips JSON whitespace (space, tab, LF, CR) from `i`.
#[inline(always)]
pub(crate) fn ws(buf: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = buf.get(i) {
        i += 1;
    }
    i
}

/// What the top level of a JSON text turned out to be.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Top {
    /// An object, with the envelope facts the walk collected.
    Object(envelope::Facts),
    /// An array whose `[` is at this offset.
    Array(usize),
    /// A string, number or literal.
    Scalar,
}

/// Validates one JSON text (strictly, or envelope-style when `STRICT` is false) and
/// collects the envelope facts of a top-level object.
///
/// Strict mode checks UTF-8 over the whole message first (one fast pass) so the string
/// loops need not look at non-ASCII bytes. To still report the *first* offending byte, the
/// grammar is then checked on the valid prefix: a grammar error inside that prefix wins,
/// anything else is the UTF-8 error.
///
/// Before all that, the fast path (`fast`: a token stream built 64 bytes at a time, string
/// contents checked in bulk, UTF-8 only when a byte is not ASCII) either accepts the message
/// or hands it to the exact path described above; only the exact path reports errors, so
/// offsets and reasons never depend on the kernel level.
pub(crate) fn top<const STRICT: bool>(buf: &[u8], max_depth: usize) -> Result<Top, JsonError> {
    if buf.len() > MAX_MESSAGE_LEN {
        return Err(JsonError::new(Reason::TooLarge, MAX_MESSAGE_LEN));
    }
    if buf.starts_with(BOM) {
        return Err(JsonError::new(Reason::Bom, 0));
    }
    if !STRICT {
        return walk::<false>(buf, max_depth);
    }
    if let Some(top) = crate::simd::strict_fast(buf, max_depth) {
        return Ok(top);
    }
    match utf8::validate(buf) {
        Ok(()) => walk::<true>(buf, max_depth),
        Err(bad) => {
            let prefix = buf.get(..bad).unwrap_or_default();
            match walk::<true>(prefix, max_depth) {
                Err(e) if e.offset() < bad => Err(e),
                _ => Err(JsonError::new(Reason::InvalidUtf8, bad)),
            }
        }
    }
}

/// [`top`], for callers that only want to know the text is valid.
pub(crate) fn validate_value<const STRICT: bool>(
    buf: &[u8],
    max_depth: usize,
) -> Result<Top, JsonError> {
    top::<STRICT>(buf, max_depth)
}

pub(crate) fn walk<const STRICT: bool>(buf: &[u8], max_depth: usize) -> Result<Top, JsonError> {
    let start = ws(buf, 0);
    let (top, end) = match buf.get(start) {
        None => return Err(JsonError::new(Reason::Empty, start)),
        Some(b'{') => {
            let mut exact = envelope::Exact::<STRICT> { buf, max_depth };
            let (facts, end) = envelope::object(&mut exact, start)?;
            (Top::Object(facts), end)
        }
        Some(b'[') => (
            Top::Array(start),
            skip::value::<STRICT>(buf, start, 1, max_depth)?,
        ),
        Some(_) => (
            Top::Scalar,
            skip::value::<STRICT>(buf, start, 1, max_depth)?,
        ),
    };
    let rest = ws(buf, end);
    if rest < buf.len() {
        return Err(JsonError::new(Reason::TrailingBytes, rest));
    }
    Ok(top)
}
