//! The single pass over one message: the prologue (size, BOM, UTF-8), the top-level walk,
//! and the rules of SPEC §3 applied to what the walk found.

pub(crate) mod decide;
pub(crate) mod envelope;
pub(crate) mod skip;
pub(crate) mod stage2;

use crate::error::JsonError;
use crate::invalid::Reason;
use crate::json::utf8;
use crate::limits::MAX_MESSAGE_LEN;

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

/// Validates one JSON text (strictly, or envelope-style when `STRICT` is false) and
/// collects the envelope facts of a top-level object.
///
/// Strict mode checks UTF-8 over the whole message first (one fast pass) so the string
/// loops need not look at non-ASCII bytes. To still report the *first* offending byte, the
/// grammar is then checked on the valid prefix: a grammar error inside that prefix wins,
/// anything else is the UTF-8 error.
///
/// Before all that, the fast path (`stage2`: a token stream built 64 bytes at a time, string
/// contents checked in bulk, UTF-8 only when a byte is not ASCII) either accepts the message
/// or hands it to the exact path described above; only the exact path reports errors, so
/// offsets and reasons never depend on the kernel level.
#[inline(always)]
pub(crate) fn top<const STRICT: bool>(
    buf: &[u8],
    max_depth: usize,
    facts: &mut envelope::Facts,
) -> Result<Top, JsonError> {
    if buf.len() > MAX_MESSAGE_LEN {
        return Err(JsonError::new(Reason::TooLarge, MAX_MESSAGE_LEN));
    }
    if buf.starts_with(BOM) {
        return Err(JsonError::new(Reason::Bom, 0));
    }
    if !STRICT {
        return crate::simd::envelope_walk(buf, max_depth, facts);
    }
    if let Some(top) = crate::simd::strict_fast(buf, max_depth, facts) {
        return Ok(top);
    }
    match utf8::validate(buf) {
        Ok(()) => walk::<true>(buf, max_depth, facts),
        Err(bad) => {
            let prefix = buf.get(..bad).unwrap_or_default();
            match walk::<true>(prefix, max_depth, facts) {
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
    top::<STRICT>(buf, max_depth, &mut envelope::Facts::default())
}

#[inline(always)]
pub(crate) fn walk<const STRICT: bool>(
    buf: &[u8],
    max_depth: usize,
    facts: &mut envelope::Facts,
) -> Result<Top, JsonError> {
    walk_with::<STRICT>(
        buf,
        max_depth,
        crate::simd::skip_container,
        envelope::checked_string::<STRICT>,
        facts,
    )
}

/// [`walk`], with envelope mode's containers skipped by `container` (each kernel level
/// instantiates the whole walk with its own skipper, so the skipper inlines).
#[inline(always)]
pub(crate) fn walk_with<const STRICT: bool>(
    buf: &[u8],
    max_depth: usize,
    container: impl skip::Container,
    string: impl skip::StringScan,
    facts: &mut envelope::Facts,
) -> Result<Top, JsonError> {
    let start = ws(buf, 0);
    let (top, end) = match buf.get(start) {
        None => return Err(JsonError::new(Reason::Empty, start)),
        Some(b'{') => {
            let mut exact = envelope::Exact::<STRICT, _, _> {
                buf,
                max_depth,
                container,
                string,
            };
            (Top::Object, envelope::object(&mut exact, start, facts)?)
        }
        Some(b'[') => (
            Top::Array(start),
            skip::value_with::<STRICT>(buf, start, 1, max_depth, container)?,
        ),
        Some(_) => (
            Top::Scalar,
            skip::value_with::<STRICT>(buf, start, 1, max_depth, container)?,
        ),
    };
    let rest = ws(buf, end);
    if rest < buf.len() {
        return Err(JsonError::new(Reason::TrailingBytes, rest));
    }
    Ok(top)
}
