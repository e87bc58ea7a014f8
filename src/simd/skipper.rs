//! The container skipper: a whole container skipped 64 bytes at a time (envelope mode's
//! structural scan). Generic: each level instantiates [`walk`] with its masks, and
//! `simd::kernels` binds each level's instance to its `Kernels::skip_container`.
//!
//! Per block, each kernel level only builds five bit masks (quotes, backslashes, opening and
//! closing brackets, and which brackets are curly); everything after that is shared bit
//! logic: escaped characters from runs of backslashes (the simdjson method), the in-string
//! mask by prefix XOR of the unescaped quotes, then a walk over the brackets outside
//! strings with the depth limit and bracket types checked. A backslash always escapes the
//! byte after it, inside or outside a string (outside one the text is not JSON anyway).
//!
//! **Long strings.** After a block without quotes or backslashes that ends inside a
//! string, the level's *string run* ([`string_run`]) looks for the next quote or
//! backslash with one test per window, and the next block starts there: the bytes passed
//! over are string contents, which change nothing in the walk's state.
//!
//! Blocks start at the container's first byte, so no alignment is needed; the last partial
//! block is copied into a space-padded 64-byte buffer, so nothing is read past the slice.

// The block walk serves the vector levels only; without them (other architectures, miri,
// `--cfg rpcscan_disable_simd`) the scalar level's byte walk is all that runs.
#![cfg_attr(
    not(any(
        all(target_arch = "x86_64", not(miri), not(rpcscan_disable_simd)),
        all(
            target_arch = "aarch64",
            target_feature = "neon",
            not(miri),
            not(rpcscan_disable_simd)
        ),
        all(
            target_arch = "wasm32",
            target_feature = "simd128",
            not(miri),
            not(rpcscan_disable_simd)
        )
    )),
    allow(dead_code)
)]

use crate::error::JsonError;
use crate::invalid::Reason;
use crate::limits::MAX_DEPTH_LIMIT;

/// The bit masks of one 64-byte block (bit i = byte i).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Masks {
    pub(crate) quote: u64,
    pub(crate) backslash: u64,
    /// `{` or `[`.
    pub(crate) open: u64,
    /// `}` or `]`.
    pub(crate) close: u64,
    /// Bytes with bit 5 set: among brackets, the curly ones.
    pub(crate) curly: u64,
}

/// One bit per open container (1 = object). The first 64 levels live in a register; the
/// rest is only materialised for deeply nested input.
pub(crate) struct Nesting {
    first: u64,
    rest: Option<[u64; MAX_DEPTH_LIMIT / 64 - 1]>,
}

impl Nesting {
    #[inline(always)]
    pub(crate) const fn new() -> Self {
        Nesting { first: 0, rest: None }
    }

    #[inline(always)]
    pub(crate) fn set(&mut self, level: usize, object: bool) {
        let bit = 1u64 << (level % 64);
        let word = if level < 64 {
            &mut self.first
        } else {
            let rest = self.rest.get_or_insert([0; MAX_DEPTH_LIMIT / 64 - 1]);
            match rest.get_mut(level / 64 - 1) {
                Some(word) => word,
                None => return, // beyond MAX_DEPTH_LIMIT: the depth check refused it already
            }
        };
        if object {
            *word |= bit;
        } else {
            *word &= !bit;
        }
    }

    #[inline(always)]
    pub(crate) fn is_object(&self, level: usize) -> bool {
        let word = if level < 64 {
            self.first
        } else {
            self.rest.as_ref().and_then(|rest| rest.get(level / 64 - 1)).copied().unwrap_or(0)
        };
        word & (1u64 << (level % 64)) != 0
    }
}

/// The block walk shared by every level; `masks`, `prefix_xor` and `run` (the string run:
/// [`string_run`] with the level's window) are the level's kernels.
#[inline(always)]
pub(crate) fn walk(
    buf: &[u8],
    open: usize,
    depth: usize,
    max_depth: usize,
    masks: impl Fn(&[u8]) -> Masks,
    prefix_xor: impl Fn(u64) -> u64,
    run: impl Fn(&[u8], usize) -> usize,
) -> Result<usize, JsonError> {
    let mut state =
        State { prev_escaped: 0, in_string: 0, quotes: 0, level: 0, nest: Nesting::new() };
    let mut base = open;
    while base < buf.len() {
        // The next 64 bytes, or the last 1 to 63: the level's kernel reads them as if
        // followed by spaces (a masked load, or a padded copy).
        let chunk = buf.get(base..buf.len().min(base + 64)).unwrap_or_default();
        let m = masks(chunk);
        let was_in_string = state.in_string;
        if let Some(end) = state.block(base, m, depth, max_depth, &prefix_xor)? {
            return Ok(end);
        }
        super::prefetch::prefetch_ahead(buf, base);
        base += 64;
        // A whole block of string contents (in dense traffic, rare): a long string, maybe
        // escape-dense (source code in a tool result). Its end is found by the string skip,
        // which needs only the quotes and backslashes of each block (and crosses plain
        // stretches by the run); the walk resumes after its closing quote.
        if was_in_string != 0 && state.quotes == 0 {
            base = string_end(buf, base, state.prev_escaped, &masks, &run)?;
            state.in_string = 0;
            state.prev_escaped = 0;
        }
    }
    Err(JsonError::eof(buf.len()))
}

/// The container skipper of the scalar level: the same walk one byte at a time outside
/// strings, and through strings by `run` (the string run, [`string_run`] with the level's
/// window). Without vector registers, 64-byte block masks built word by word cost more
/// than looking at each byte once, most of all on small containers (an empty `{}` would
/// pay for a whole padded block).
#[inline(always)]
pub(crate) fn walk_bytes(
    buf: &[u8],
    open: usize,
    depth: usize,
    max_depth: usize,
    run: impl Fn(&[u8], usize) -> usize,
) -> Result<usize, JsonError> {
    let mut nest = Nesting::new();
    let mut level = 0usize;
    let mut i = open;
    while let Some(&b) = buf.get(i) {
        match b {
            b'"' => {
                i += 1;
                // To the closing quote: the run stops at a quote or backslash, or where too
                // few bytes remain for its window (then a byte at a time).
                loop {
                    i = run(buf, i);
                    match buf.get(i) {
                        Some(b'"') => break,
                        Some(b'\\') => i += 2,
                        Some(_) => i += 1,
                        None => return Err(JsonError::eof(buf.len())),
                    }
                }
            }
            // A backslash escapes the byte after it, inside or outside a string.
            b'\\' => i += 1,
            b'{' | b'[' => {
                if depth + level > max_depth {
                    return Err(JsonError::new(Reason::TooDeep, i));
                }
                nest.set(level, b == b'{');
                level += 1;
            }
            b'}' | b']' => {
                if level == 0 || nest.is_object(level - 1) != (b == b'}') {
                    return Err(JsonError::new(Reason::Syntax, i));
                }
                level -= 1;
                if level == 0 {
                    return Ok(i + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    Err(JsonError::eof(buf.len()))
}

/// The string skip shared by the vector levels: from `from` (inside a string;
/// `prev_escaped` is 1 when the byte at `from` is escaped), the offset after its closing
/// quote, 64 bytes per block whatever the escapes (escaped characters from runs of
/// backslashes, as in [`walk`]); after a block without quotes or backslashes, the level's
/// string run (`run`) crosses plain text. [`walk`] hands it the rest of a long string.
/// Envelope mode and the lenient lookups read the strings they skip this way: an escaped
/// message inside a log record has an escape every few bytes, where a search per escape
/// (`memchr2`, the scalar level's twin) pays a call each.
#[inline(always)]
pub(crate) fn string_end(
    buf: &[u8],
    from: usize,
    mut prev_escaped: u64,
    masks: impl Fn(&[u8]) -> Masks,
    run: impl Fn(&[u8], usize) -> usize,
) -> Result<usize, JsonError> {
    let mut base = from;
    while base < buf.len() {
        // As in `walk`: the last 1 to 63 bytes are read as if followed by spaces, which
        // are never quotes, so a quote found is inside `buf`.
        let chunk = buf.get(base..buf.len().min(base + 64)).unwrap_or_default();
        let m = masks(chunk);
        let quotes = m.quote & !escaped(&mut prev_escaped, m.backslash);
        if quotes != 0 {
            return Ok(base + quotes.trailing_zeros() as usize + 1);
        }
        base += 64;
        // No backslash in the block: no escape pending either.
        if (m.quote | m.backslash) == 0 {
            base = run(buf, base);
        }
    }
    Err(JsonError::eof(buf.len()))
}

/// The string run shared by every level: from `i` (inside a string, no escape pending),
/// the offset of the first quote or backslash, found `W` bytes at a time by `window` (the
/// offset of the first one among them); when fewer than `W` bytes remain, the offset where
/// the search stopped (the block loop reads the rest).
#[inline(always)]
pub(crate) fn string_run<const W: usize>(
    buf: &[u8],
    mut i: usize,
    window: impl Fn(&[u8; W]) -> Option<usize>,
) -> usize {
    while let Some(chunk) = buf.get(i..i + W).and_then(|c| <&[u8; W]>::try_from(c).ok()) {
        if let Some(k) = window(chunk) {
            return i + k;
        }
        if i % 64 < W {
            super::prefetch::prefetch_ahead(buf, i);
        }
        i += W;
    }
    i
}

/// Characters escaped by a preceding backslash (odd-length runs; the simdjson method),
/// carrying across blocks: `prev_escaped` is 1 when the previous block ended with an
/// escaping backslash, and is updated for the next block.
#[inline(always)]
pub(crate) fn escaped(prev_escaped: &mut u64, backslash: u64) -> u64 {
    const EVEN: u64 = 0x5555_5555_5555_5555;
    let backslash = backslash & !*prev_escaped;
    let follows_escape = (backslash << 1) | *prev_escaped;
    let odd_starts = backslash & !EVEN & !follows_escape;
    let (even_sequences, overflow) = odd_starts.overflowing_add(backslash);
    *prev_escaped = u64::from(overflow);
    let invert = even_sequences << 1;
    (EVEN ^ invert) & follows_escape
}

struct State {
    /// 1 when the previous block ended with an escaping backslash.
    prev_escaped: u64,
    /// All ones when the previous block ended inside a string.
    in_string: u64,
    /// The unescaped quotes of the last block.
    quotes: u64,
    level: usize,
    nest: Nesting,
}

impl State {
    #[inline(always)]
    fn block(
        &mut self,
        base: usize,
        m: Masks,
        depth: usize,
        max_depth: usize,
        prefix_xor: &impl Fn(u64) -> u64,
    ) -> Result<Option<usize>, JsonError> {
        let escaped = escaped(&mut self.prev_escaped, m.backslash);
        let quotes = m.quote & !escaped;
        self.quotes = quotes;
        let in_string = prefix_xor(quotes) ^ self.in_string;
        self.in_string = ((in_string as i64) >> 63) as u64;
        let mut brackets = (m.open | m.close) & !in_string & !escaped;
        while brackets != 0 {
            let bit = brackets.trailing_zeros();
            brackets &= brackets - 1;
            let pos = base + bit as usize;
            let curly = (m.curly >> bit) & 1 == 1;
            if (m.open >> bit) & 1 == 1 {
                if depth + self.level > max_depth {
                    return Err(JsonError::new(Reason::TooDeep, pos));
                }
                self.nest.set(self.level, curly);
                self.level += 1;
            } else {
                if self.level == 0 || self.nest.is_object(self.level - 1) != curly {
                    return Err(JsonError::new(Reason::Syntax, pos));
                }
                self.level -= 1;
                if self.level == 0 {
                    return Ok(Some(pos + 1));
                }
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simd::tests::levels;
    use crate::simd::tests::skip_container_at;
    use proptest::prelude::*;

    /// The obviously correct byte walk with the same semantics.
    fn naive(buf: &[u8], open: usize, depth: usize, max: usize) -> Result<usize, JsonError> {
        let mut stack = Vec::new();
        let mut in_string = false;
        let mut i = open;
        while let Some(&b) = buf.get(i) {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = !in_string,
                b'{' | b'[' if !in_string => {
                    if depth + stack.len() > max {
                        return Err(JsonError::new(Reason::TooDeep, i));
                    }
                    stack.push(b == b'{');
                }
                b'}' | b']' if !in_string => {
                    if stack.pop() != Some(b == b'}') {
                        return Err(JsonError::new(Reason::Syntax, i));
                    }
                    if stack.is_empty() {
                        return Ok(i + 1);
                    }
                }
                _ => {}
            }
            i += 1;
        }
        Err(JsonError::eof(buf.len()))
    }

    fn check(buf: &[u8], max: usize) {
        let Some(open) = buf.iter().position(|&b| b == b'{' || b == b'[') else {
            return;
        };
        let want = naive(buf, open, 2, max);
        for level in levels() {
            assert_eq!(
                skip_container_at(level, buf, open, 2, max),
                want,
                "{level:?} on {:?}",
                String::from_utf8_lossy(buf)
            );
        }
    }

    /// Every length 0..=200 and every start alignment 0..8, with a special sequence at the
    /// offsets around the block boundaries, outside and inside a string, at every level.
    #[test]
    fn every_length_alignment_and_boundary() {
        let specials: [&[u8]; 6] = [b"\\\"", b"\\\\", b"]", b"{\"k\":[]}", b"\"", b"\\"];
        let step = if cfg!(miri) { 37 } else { 1 };
        for len in (0..=200usize).step_by(step) {
            for in_string in [false, true] {
                for at in [1, 2, 62, 63, 64, 65, 126, 127, 128, 129, 190, 191, 192, len / 2] {
                    for special in specials {
                        let mut msg = vec![b'a'; len];
                        if let [first, .., last] = &mut msg[..] {
                            (*first, *last) = (b'[', b']');
                        }
                        if in_string && len >= 4 {
                            msg[1] = b'"';
                            msg[len - 2] = b'"';
                        }
                        if at + special.len() < len.saturating_sub(1) {
                            msg[at..at + special.len()].copy_from_slice(special);
                        }
                        crate::simd::tests::at_each_alignment(&msg, |buf| check(buf, 1024));
                    }
                }
            }
        }
    }

    #[test]
    fn tables() {
        for s in [
            &br#"{"a":[1,2,{"b":"]}"}],"c":"\\"}tail"#[..],
            br#"["\"[", "\\\"]", "\\\\"] x"#,
            br#"{"k":"v\\\\\\"}"}"#,
            b"[}",
            b"[[[",
            b"{\"unterminated",
            b"[\"a\\",
        ] {
            check(s, 1024);
        }
        let deep = [vec![b'['; 300], vec![b']'; 300]].concat();
        check(&deep, 1024);
        check(&deep, 200);
        // Wrong closes and depth limits on both sides of 64 open containers.
        for n in [62usize, 63, 64, 65, 66, 130] {
            for close in [&b"}"[..], b"]}", b"{]", b"{}]", b"[}"] {
                let mut s = vec![b'['; n];
                s.extend_from_slice(close);
                s.extend(vec![b']'; n]);
                check(&s, 1024);
                check(&s, n);
                check(&s, n + 1);
            }
        }
        let long_string = format!("[\"{}\\\"{}\" ,1]", "x".repeat(100), "\\\\".repeat(70));
        check(long_string.as_bytes(), 1024);
    }

    /// Strings of several blocks (where the string run takes over) with a quote, an
    /// escape or a bracket at every offset, over ASCII and non-ASCII fillers, at every
    /// level.
    #[test]
    fn long_strings_with_a_special_at_every_offset() {
        let specials: [&[u8]; 6] = [b"\"", b"\\\"", b"\\\\", b"\\", b"]", b"\"]"];
        let step = if cfg!(miri) { 53 } else { 1 };
        // Plain ASCII, non-ASCII, and escape-dense text with brackets inside (source code;
        // not under miri, whose budget the first two fill).
        let fillers: &[&str] =
            if cfg!(miri) { &["a", "é日"] } else { &["a", "é日", r#"f(x\"]{\\y\n"#] };
        for &filler in fillers {
            for pad in [0usize, 1, 63] {
                let body: Vec<u8> = filler.bytes().cycle().take(300).collect();
                for at in (0..300).step_by(step) {
                    for special in specials {
                        let mut s = b"{\"k\":[".to_vec();
                        s.extend(std::iter::repeat_n(b' ', pad));
                        s.push(b'"');
                        let mut text = body.clone();
                        text.splice(at..(at + special.len()).min(300), special.iter().copied());
                        s.extend_from_slice(&text);
                        s.extend_from_slice(b"\",{\"x\":\"y\"}]} tail");
                        check(&s, 1024);
                        check(&s[..s.len() - 20], 1024);
                    }
                }
            }
        }
    }

    /// The string skip's reference: the byte walk.
    fn naive_string_end(buf: &[u8], from: usize) -> Result<usize, JsonError> {
        let mut i = from;
        while let Some(&b) = buf.get(i) {
            match b {
                b'\\' => i += 2,
                b'"' => return Ok(i + 1),
                _ => i += 1,
            }
        }
        Err(JsonError::eof(buf.len()))
    }

    fn check_string(buf: &[u8], from: usize) {
        let want = naive_string_end(buf, from);
        for level in levels() {
            assert_eq!(
                crate::simd::tests::skip_string_at(level, buf, from),
                want,
                "{level:?} from {from} on {:?}",
                String::from_utf8_lossy(buf)
            );
        }
    }

    /// Strings of every length up to 200 and of several blocks, escape-dense (an escaped
    /// message in a log record) or plain, with a quote, backslash run or escape at every
    /// offset around the block boundaries, cut short or not, at every level and start
    /// alignment.
    #[test]
    fn string_skip_every_length_offset_and_level() {
        let specials: [&[u8]; 7] =
            [b"\"", b"\\\"", b"\\\\", b"\\\\\\\"", b"\\", b"\\\\\"", b"\xe6\x97\xa5"];
        // Under miri (scalar level only), a few lengths and offsets of the escape-dense text.
        let fillers: &[&[u8]] = if cfg!(miri) {
            &[b"{\\\"id\\\":1,\\\"m\\\":\\\"x\\\\y\\\"}"]
        } else {
            &[b"a", b"{\\\"id\\\":1,\\\"m\\\":\\\"x\\\\y\\\"}", "é日".as_bytes()]
        };
        let lengths: Vec<usize> = if cfg!(miri) { vec![1, 130] } else { (0..=200).collect() };
        let offsets = |len: usize| -> Vec<usize> {
            if cfg!(miri) {
                vec![63, len / 2]
            } else {
                vec![0, 1, 62, 63, 64, 65, 126, 127, 128, 129, len / 2]
            }
        };
        for &filler in fillers {
            for &len in &lengths {
                for at in offsets(len) {
                    for special in specials {
                        let mut text: Vec<u8> = filler.iter().copied().cycle().take(len).collect();
                        if at + special.len() <= len {
                            text[at..at + special.len()].copy_from_slice(special);
                        }
                        let mut s = b"\"".to_vec();
                        s.extend_from_slice(&text);
                        let whole = [&s[..], b"\" ,\"tail\""].concat();
                        crate::simd::tests::at_each_alignment(&whole, |buf| {
                            check_string(buf, 1);
                            check_string(&buf[..s.len()], 1);
                        });
                    }
                }
            }
        }
        // Long plain stretches (the string run) then escapes.
        let long =
            [vec![b'x'; 500], b"\\\\\\\"".to_vec(), vec![b'y'; 300], b"\"".to_vec()].concat();
        for from in [0, 1, 7, 63, 64, 65, 499, 500, 501, 502, 503] {
            check_string(&long, from);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 3000, failure_persistence: None, ..ProptestConfig::default() })]
        #[test]
        fn every_level_matches_the_naive_walk(
            body in proptest::collection::vec(prop::sample::select(&b"{}[]\"\\ax\xdb\xfb,:"[..]), 0..300),
            prefix in 0usize..70,
            max in 1usize..40,
        ) {
            let mut buf = vec![b' '; prefix];
            buf.push(b'[');
            buf.extend_from_slice(&body);
            check(&buf, max);
        }

        #[test]
        fn every_level_skips_strings_as_the_byte_walk(
            body in proptest::collection::vec(prop::sample::select(&b"\"\\ax\xdb\xfb{"[..]), 0..400),
            from in 0usize..70,
        ) {
            check_string(&body, from.min(body.len()));
        }
    }
}
