//! The top of the scanning stack: the entry point of one JSON text ([`top`]), which picks
//! the path (strict mode's fast path, then the exact walk; or envelope mode's walk) and the
//! kernel level, and the per-level instantiations of the walks of `scan` (in `avx2.rs`,
//! `avx512.rs`, `neon.rs`; the scalar ones here). Nothing below names this module: the
//! generic walks take their kernels as parameters.
#![allow(unsafe_code)]

#[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
mod avx2;
#[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
mod avx512;
#[cfg(all(target_arch = "aarch64", target_feature = "neon", not(miri), not(rpcscan_disable_simd)))]
mod neon;

use crate::error::JsonError;
use crate::invalid::Reason;
use crate::json::utf8;
use crate::limits::MAX_MESSAGE_LEN;
use crate::scan::{self, envelope, envelope::Facts, stage2, Top};
#[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
use crate::simd::x86;
use crate::simd::{self, level, scalar, stage1, Level};

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
        return envelope_walk(buf, max_depth, facts);
    }
    if let Some(top) = strict_fast(buf, max_depth, facts) {
        return Ok(top);
    }
    match utf8::validate(buf) {
        Ok(()) => scan::walk::<true>(buf, max_depth, facts),
        Err(bad) => {
            let prefix = buf.get(..bad).unwrap_or_default();
            match scan::walk::<true>(prefix, max_depth, facts) {
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
pub(crate) fn strict_fast(buf: &[u8], max_depth: usize, facts: &mut Facts) -> Option<Top> {
    match level() {
        Level::Scalar => None,
        _ if buf.len() < FAST_MIN_LEN => None,
        level => {
            let top = strict_fast_at(level, buf, max_depth, facts);
            if top.is_none() {
                // It may have written facts before it gave up; the exact walk starts afresh.
                facts.reset();
            }
            top
        }
    }
}

/// Messages shorter than this skip strict mode's fast path: on them (pings, progress
/// notifications, empty results) its fixed costs outweigh what it saves. Measured on the
/// `tiny` shape (40–200 B; callgrind, AVX2 kernels): 25% fewer instructions through the
/// exact path with this threshold; see docs/performance.md.
const FAST_MIN_LEN: usize = 128;

/// [`strict_fast`] at a given level; the scalar level runs the fast path with the scalar
/// twins of the kernels (tests compare every level with the exact path).
pub(crate) fn strict_fast_at(
    level: Level,
    buf: &[u8],
    max_depth: usize,
    facts: &mut Facts,
) -> Option<Top> {
    match level {
        #[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
        Level::Avx512 if x86::has_avx512() => {
            // SAFETY: the CPU supports AVX-512BW and PCLMULQDQ (checked just above).
            unsafe { avx512::strict_fast_avx512(buf, max_depth, facts) }
        }
        #[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
        Level::Avx2 | Level::Avx512 if x86::has_avx2() => {
            // SAFETY: the CPU supports AVX2 and PCLMULQDQ (checked just above).
            unsafe { avx2::strict_fast_avx2(buf, max_depth, facts) }
        }
        #[cfg(all(
            target_arch = "aarch64",
            target_feature = "neon",
            not(miri),
            not(rpcscan_disable_simd)
        ))]
        Level::Neon => {
            // SAFETY: NEON is part of the aarch64 baseline (this arm is compiled only where
            // `target_feature = "neon"` holds).
            unsafe { neon::strict_fast_neon(buf, max_depth, facts) }
        }
        _ => stage2::walk::<_, true>(
            buf,
            max_depth,
            stage1::Stage1 {
                block: |carry: &mut stage1::Carry, bytes: &[u8]| {
                    let chunk = stage1::padded(bytes);
                    stage1::block(
                        carry,
                        &chunk,
                        scalar::token_masks,
                        scalar::escape_masks,
                        scalar::prefix_xor,
                        stage1::range_utf8,
                    )
                },
                run: |utf8: &mut stage1::Utf8Carry, rest: &[u8]| {
                    stage1::run(utf8, rest, scalar::plain_window, stage1::range_run_utf8)
                },
            },
            facts,
        ),
    }
}

/// Envelope mode's walk of one message (`scan::walk_with::<false>`), instantiated per kernel
/// level so the level's container skipper inlines into it: the level is looked up once per
/// message instead of once per skipped container.
#[inline]
pub(crate) fn envelope_walk(
    buf: &[u8],
    max_depth: usize,
    facts: &mut Facts,
) -> Result<Top, JsonError> {
    envelope_walk_at(level(), buf, max_depth, facts)
}

/// [`envelope_walk`] at a given level.
pub(crate) fn envelope_walk_at(
    level: Level,
    buf: &[u8],
    max_depth: usize,
    facts: &mut Facts,
) -> Result<Top, JsonError> {
    match level {
        #[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
        Level::Avx512 if x86::has_avx512() => {
            // SAFETY: the CPU supports AVX-512BW and PCLMULQDQ (checked just above).
            unsafe { avx512::envelope_walk_avx512(buf, max_depth, facts) }
        }
        #[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
        Level::Avx2 | Level::Avx512 if x86::has_avx2() => {
            // SAFETY: the CPU supports AVX2 and PCLMULQDQ (checked just above).
            unsafe { avx2::envelope_walk_avx2(buf, max_depth, facts) }
        }
        #[cfg(all(
            target_arch = "aarch64",
            target_feature = "neon",
            not(miri),
            not(rpcscan_disable_simd)
        ))]
        Level::Neon => {
            // SAFETY: NEON is part of the aarch64 baseline (this arm is compiled only where
            // `target_feature = "neon"` holds).
            unsafe { neon::envelope_walk_neon(buf, max_depth, facts) }
        }
        _ => scan::walk_with::<false>(
            buf,
            max_depth,
            |buf, open, depth, max| simd::skip_container_at(Level::Scalar, buf, open, depth, max),
            |buf, open| match simd::plain_string_16(buf, open) {
                Some(end) => Ok((end, false)),
                None => envelope::checked_string::<false>(buf, open),
            },
            facts,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simd::tests::levels;

    /// Envelope mode's walk, instantiated per level with that level's skipper, gives the
    /// same verdict, offsets and facts at every level as the walk with the dispatching
    /// skipper.
    fn envelope_levels_agree(buf: &[u8], max_depth: usize) {
        let outcome = |r: Result<Top, JsonError>, facts: Facts| {
            r.map(|top| (top, (top == Top::Object).then_some(facts)))
        };
        let mut facts = Facts::default();
        let want = outcome(scan::walk::<false>(buf, max_depth, &mut facts), facts);
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

    type StringLook<'a> = &'a dyn Fn(&[u8], usize) -> Result<(usize, bool), JsonError>;

    /// The inline string look gives the portable scan's answer (end, escapes, error and
    /// its offset) for strings of every length up to past one window, with a quote,
    /// backslash escape, control byte, UTF-8 or invalid byte at every position, at every
    /// alignment, with and without bytes after the string.
    #[allow(dead_code)]
    fn inline_string_look_agrees(looks: &[(&str, StringLook<'_>)]) {
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
                            let want = envelope::checked_string::<false>(buf, 0);
                            for (name, look) in looks {
                                let got = look(buf, 0);
                                assert_eq!(got, want, "{name} {:?}", String::from_utf8_lossy(buf));
                            }
                        });
                    }
                }
            }
        }
    }

    #[cfg(all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)))]
    #[test]
    fn inline_string_look_equals_the_portable_scan() {
        if !x86::has_avx2() {
            return;
        }
        // SAFETY: AVX2 is available (checked at the top of the test).
        let avx2 = |buf: &[u8], open| unsafe { avx2::string_avx2(buf, open) };
        // SAFETY: only called when AVX-512BW is available (checked below).
        let avx512 = |buf: &[u8], open| unsafe { avx512::string_avx512(buf, open) };
        let mut looks: Vec<(&str, StringLook<'_>)> = vec![("avx2", &avx2)];
        if x86::has_avx512() {
            looks.push(("avx512", &avx512));
        }
        inline_string_look_agrees(&looks);
    }

    #[cfg(all(
        target_arch = "aarch64",
        target_feature = "neon",
        not(miri),
        not(rpcscan_disable_simd)
    ))]
    #[test]
    fn inline_string_look_equals_the_portable_scan_neon() {
        // SAFETY: NEON is part of the aarch64 baseline (this test is compiled only where
        // `target_feature = "neon"` holds).
        let look = |buf: &[u8], open| unsafe { neon::string_neon(buf, open) };
        inline_string_look_agrees(&[("neon", &look)]);
    }
}
