//! The top of the scanning stack: the entry point of one JSON text ([`top`]), which picks
//! the kernel level once (`simd::with_kernels!`, the one match on the level) and then the
//! path (strict mode's fast path, then the exact walk; or envelope mode's walk), each
//! instantiated for that level. Nothing below names this module: the walks are generic
//! over the level's kernels (`simd::Kernels`).
//!
//! The walks are compiled once per level from the same generic code. Envelope mode's walk
//! is also compiled inside the level's target features ([`Walks`], one macro for every
//! level), so that its container skipper and string look inline into it; strict mode's
//! walks call their kernels out of line (one call per long string or per 64-byte block).
//!
//! The public calls that are not a message walk (`Members`, `Batch`, `Str::decode_into`)
//! pick the level with the same macro, once per call.
#![allow(unsafe_code)]

use crate::error::JsonError;
use crate::invalid::Reason;
use crate::json::utf8;
use crate::limits::MAX_MESSAGE_LEN;
use crate::scan::{self, envelope::Facts, stage2, Top};
use crate::simd::{self, with_kernels, Kernels, Level};

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Validates one JSON text (strictly, or envelope-style when `STRICT` is false) and
/// collects the envelope facts of a top-level object.
///
/// Strict mode checks UTF-8 over the whole message first (one fast pass) so the string
/// loops need not look at non-ASCII bytes. To still report the *first* offending byte, the
/// grammar is then checked on the valid prefix: a grammar error inside that prefix wins,
/// anything else is the UTF-8 error.
///
/// Before all that, the fast path (stage 2 over stage 1: a token stream built 64 bytes at a
/// time, string contents checked in bulk, UTF-8 only when a byte is not ASCII) either
/// accepts the message or hands it to the exact path described above; only the exact path
/// reports errors, so offsets and reasons never depend on the kernel level.
#[inline(always)]
pub(crate) fn top<const STRICT: bool>(
    buf: &[u8],
    max_depth: usize,
    facts: &mut Facts,
) -> Result<Top, JsonError> {
    if buf.len() > MAX_MESSAGE_LEN {
        return Err(JsonError::new(Reason::TooLarge, MAX_MESSAGE_LEN));
    }
    if buf.starts_with(BOM) {
        return Err(JsonError::new(Reason::Bom, 0));
    }
    if !STRICT {
        return with_kernels!(simd::detected(), k => envelope_with(k, buf, max_depth, facts));
    }
    with_kernels!(simd::detected(), k => strict_with(k, buf, max_depth, facts))
}

/// Envelope mode's [`top`] with the kernels of one level. Out of line: inlined, the three
/// levels' walks shared one function body with the callers' code, and envelope mode took
/// 2% more instructions on tiny messages (callgrind, AVX2).
#[inline(never)]
fn envelope_with<K: Walks>(
    k: K,
    buf: &[u8],
    max_depth: usize,
    facts: &mut Facts,
) -> Result<Top, JsonError> {
    k.envelope_walk(buf, max_depth, facts)
}

/// Strict mode's [`top`] with the kernels of one level. Inlined into the caller: out of
/// line, the call cost tiny messages 2-3% of their throughput against the dispatcher
/// before the levels became types (interleaved pairs, AVX-512 and AVX2).
#[inline(always)]
fn strict_with<K: Walks>(
    k: K,
    buf: &[u8],
    max_depth: usize,
    facts: &mut Facts,
) -> Result<Top, JsonError> {
    if let Some(top) = strict_fast(k, buf, max_depth, facts) {
        return Ok(top);
    }
    match utf8::validate(k, buf) {
        Ok(()) => scan::walk::<K, true>(k, buf, max_depth, facts),
        Err(bad) => {
            let prefix = buf.get(..bad).unwrap_or_default();
            match scan::walk::<K, true>(k, prefix, max_depth, facts) {
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
    top::<STRICT>(buf, max_depth, &mut Facts::default())
}

/// Strict mode's fast path (`scan::stage2`): `Some` when the message is valid JSON, with the
/// walk's result; `None` means "use the exact path". At the scalar level, and for messages
/// under [`FAST_MIN_LEN`] bytes, the exact path goes first: byte-at-a-time token masks
/// would be slower than it, and so are the fast path's fixed costs on tiny messages.
#[inline]
fn strict_fast<K: Kernels>(k: K, buf: &[u8], max_depth: usize, facts: &mut Facts) -> Option<Top> {
    if K::LEVEL == Level::Scalar || buf.len() < FAST_MIN_LEN {
        return None;
    }
    let top = stage2::walk(k, buf, max_depth, facts);
    if top.is_none() {
        // It may have written facts before it gave up; the exact walk starts afresh.
        facts.reset();
    }
    top
}

/// Messages shorter than this skip strict mode's fast path: on them (pings, progress
/// notifications, empty results) its fixed costs outweigh what it saves. Measured on the
/// `tiny` shape (40–200 B; callgrind, AVX2 kernels): 25% fewer instructions through the
/// exact path with this threshold; see docs/performance.md.
const FAST_MIN_LEN: usize = 128;

/// The walks a level runs inside its target features.
pub(crate) trait Walks: Kernels {
    /// Envelope mode's walk of one message (`scan::walk::<_, false>`), compiled with the
    /// level's target features so that its container skipper and string look inline.
    fn envelope_walk(
        self,
        buf: &[u8],
        max_depth: usize,
        facts: &mut Facts,
    ) -> Result<Top, JsonError>;
}

/// Implements [`Walks`] for a level whose kernels need the target features `$features`
/// (none: the portable level).
macro_rules! walks {
    ($kernels:ty) => {
        impl Walks for $kernels {
            fn envelope_walk(
                self,
                buf: &[u8],
                max_depth: usize,
                facts: &mut Facts,
            ) -> Result<Top, JsonError> {
                scan::walk::<$kernels, false>(self, buf, max_depth, facts)
            }
        }
    };
    ($kernels:ty, $features:literal) => {
        impl Walks for $kernels {
            #[inline(always)]
            fn envelope_walk(
                self,
                buf: &[u8],
                max_depth: usize,
                facts: &mut Facts,
            ) -> Result<Top, JsonError> {
                #[target_feature(enable = $features)]
                fn envelope_walk(
                    k: $kernels,
                    buf: &[u8],
                    max_depth: usize,
                    facts: &mut Facts,
                ) -> Result<Top, JsonError> {
                    scan::walk::<$kernels, false>(k, buf, max_depth, facts)
                }
                // SAFETY: a value of the level's type exists only where the CPU has the
                // level's target features (`simd::kernels`), and these are they.
                unsafe { envelope_walk(self, buf, max_depth, facts) }
            }
        }
    };
}

walks!(simd::kernels::Scalar);
#[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
walks!(simd::kernels::Avx2, "avx2,pclmulqdq");
#[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
walks!(simd::kernels::Avx512, "avx512bw,avx2,pclmulqdq");
#[cfg(all(target_arch = "aarch64", target_feature = "neon", not(miri), not(rpcscan_disable_simd)))]
walks!(simd::kernels::Neon, "neon");
#[cfg(all(
    target_arch = "wasm32",
    target_feature = "simd128",
    not(miri),
    not(rpcscan_disable_simd)
))]
// The whole crate is compiled with simd128 on there: no function needs the feature added.
walks!(simd::kernels::Simd128);

/// Strict mode's fast path at a given level, the scalar one too (the tests compare every
/// level with the exact path).
#[cfg(test)]
pub(crate) fn strict_fast_at(
    level: Level,
    buf: &[u8],
    max_depth: usize,
    facts: &mut Facts,
) -> Option<Top> {
    let top =
        with_kernels!(simd::tests::supported(level), k => stage2::walk(k, buf, max_depth, facts));
    if top.is_none() {
        facts.reset();
    }
    top
}

/// Envelope mode's walk at a given level.
#[cfg(test)]
fn envelope_walk_at(
    level: Level,
    buf: &[u8],
    max_depth: usize,
    facts: &mut Facts,
) -> Result<Top, JsonError> {
    with_kernels!(simd::tests::supported(level), k => k.envelope_walk(buf, max_depth, facts))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simd::tests::levels;

    /// Envelope mode's walk, instantiated per level inside its target features, gives the
    /// same verdict, offsets and facts at every level as the portable walk.
    fn envelope_levels_agree(buf: &[u8], max_depth: usize) {
        let outcome = |r: Result<Top, JsonError>, facts: Facts| {
            r.map(|top| (top, (top == Top::Object).then_some(facts)))
        };
        let mut facts = Facts::default();
        let want = outcome(
            scan::walk::<_, false>(simd::kernels::Scalar, buf, max_depth, &mut facts),
            facts,
        );
        for level in levels() {
            let mut facts = Facts::default();
            let got = outcome(envelope_walk_at(level, buf, max_depth, &mut facts), facts);
            assert_eq!(got, want, "{level:?} on {:?}", String::from_utf8_lossy(buf));
        }
    }

    #[test]
    fn envelope_walk_agrees_on_every_level() {
        let sample = include_bytes!("../../examples/mcp-traffic.ndjson");
        let take = if cfg!(miri) { 8 } else { usize::MAX };
        for line in sample.split(|&b| b == b'\n').take(take) {
            for max_depth in [1, 2, 3, 1024] {
                envelope_levels_agree(line, max_depth);
            }
            // Cut short inside containers, strings and blocks.
            for cut in (0..line.len()).step_by(if cfg!(miri) { 97 } else { 7 }) {
                envelope_levels_agree(&line[..cut], 1024);
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: if cfg!(miri) { 12 } else { 3000 }, failure_persistence: None, ..proptest::prelude::ProptestConfig::default() })]
        #[test]
        fn envelope_walk_agrees_on_token_soup(
            body in proptest::collection::vec(
                proptest::sample::select(&crate::scan::stage2::tests::TOKEN_SOUP[..]),
                0..60,
            ),
            max in 1usize..6,
        ) {
            envelope_levels_agree(&body.concat(), max);
        }
    }

    /// Envelope mode's string read at every level (the level's inline look, then the
    /// portable scan) gives the portable scan's answer (end, escapes, error and its
    /// offset) for strings of every length up to past one window, with a quote, backslash
    /// escape, control byte, UTF-8 or invalid byte at every position, at every alignment,
    /// with and without bytes after the string.
    #[test]
    #[cfg_attr(miri, ignore = "the vector looks are not compiled under miri")]
    fn inline_string_look_equals_the_portable_scan() {
        use crate::scan::envelope::{checked_string, read_string};
        let specials: [&[u8]; 7] =
            [b"\"", b"\\\"", b"\\u00e9", b"\x01", "é".as_bytes(), b"\xff", b"\\"];
        for len in 0..=130usize {
            for at in (0..len).map(Some).chain([None]) {
                for special in specials {
                    for tail in [&b""[..], b"\"", b"\":1}"] {
                        let mut msg = b"\"".to_vec();
                        msg.extend(std::iter::repeat_n(b'k', len));
                        if let Some(at) = at {
                            let end = (1 + at + special.len()).min(msg.len());
                            msg.splice(1 + at..end, special.iter().copied());
                        }
                        msg.extend_from_slice(tail);
                        crate::simd::tests::at_each_alignment(&msg, |buf| {
                            let want = checked_string::<_, false>(simd::kernels::Scalar, buf, 0);
                            for level in levels() {
                                let got = with_kernels!(simd::tests::supported(level), k => {
                                    read_string::<_, false>(k, buf, 0)
                                });
                                assert_eq!(
                                    got,
                                    want,
                                    "{level:?} {:?}",
                                    String::from_utf8_lossy(buf)
                                );
                            }
                        });
                    }
                }
            }
        }
    }
}
