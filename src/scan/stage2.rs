//! Stage 2 of strict mode's fast path: the grammar, walked over the token stream of
//! `simd::stage1` instead of over bytes.
//!
//! Stage 1 already checked every string byte (control characters, escapes) and UTF-8 was
//! checked before; what is left is the order of the tokens, the exact grammar of every
//! number and literal (each must also use up its whole run of bytes), the depth limit, and
//! the envelope facts, which the same code as the exact path collects
//! ([`envelope::object`] over the [`Source`] trait). Any surprise is a [`Bail`]: the caller
//! then runs the exact path, which finds and reports the error. So this path never decides
//! what an error is; it only has to be right about what is valid.

use super::envelope::{self, Noted, ParamsKey, Source};
use super::Top;
use crate::json::{literal, number};
use crate::simd::skipper::Nesting;
use crate::simd::stage1::{Blocks, Cursor, Pos};
use crate::simd::Kernels;

/// "Not on the fast path": the exact path decides.
pub(crate) struct Bail;

/// The token-stream source of the walk.
struct Fast<'a, B> {
    buf: &'a [u8],
    max_depth: usize,
    tokens: Cursor<'a, B>,
}

/// Walks the whole message; `Some` only when it is valid JSON. UTF-8 is checked by stage 1
/// itself (AVX-512), or here over the blocks that have a byte that is not ASCII (most
/// messages are all ASCII: no validator call at all).
/// `k` is the kernel level: its stage-1 blocks, and whether it leaves UTF-8 to the range
/// check here ([`Blocks::RANGE_UTF8`]).
#[inline]
pub(crate) fn walk<K: Kernels>(
    k: K,
    buf: &[u8],
    max_depth: usize,
    facts: &mut envelope::Facts,
) -> Option<Top> {
    let mut s = Fast { buf, max_depth, tokens: Cursor::new(buf, k) };
    let first = s.tokens.next()?;
    let top = match buf.get(first) {
        Some(b'{') => {
            envelope::object(&mut s, first, facts).ok()?;
            Top::Object
        }
        Some(b'[') => {
            s.skip(first, 1).ok()?;
            Top::Array(first)
        }
        _ => {
            s.skip(first, 1).ok()?;
            Top::Scalar
        }
    };
    if !s.tokens.finish() {
        return None;
    }
    let non_ascii = s.tokens.non_ascii();
    if K::RANGE_UTF8 && !non_ascii.is_empty() {
        let part = buf.get(non_ascii).unwrap_or_default();
        if crate::json::utf8::validate(k, part).is_err() {
            return None;
        }
    }
    Some(top)
}

/// Whether a string the walk reads (a key, id, method: short) has an escape.
#[inline(always)]
fn has_backslash(content: &[u8]) -> bool {
    if content.len() > 32 {
        return memchr::memchr(b'\\', content).is_some();
    }
    content.iter().fold(false, |any, &b| any | (b == b'\\'))
}

/// A byte that may follow a number or literal: whitespace, structural, a quote, or the end.
#[inline(always)]
fn ends_scalar(b: Option<&u8>) -> bool {
    matches!(
        b,
        None | Some(b' ' | b'\t' | b'\n' | b'\r' | b',' | b':' | b'{' | b'}' | b'[' | b']' | b'"')
    )
}

impl<'a, B> Fast<'a, B>
where
    B: Blocks,
{
    #[inline(always)]
    fn next(&mut self) -> Result<usize, Bail> {
        self.tokens.next().ok_or(Bail)
    }

    #[inline(always)]
    fn is(&self, at: usize, byte: u8) -> bool {
        self.buf.get(at) == Some(&byte)
    }

    /// The next token from a position held in a local (see `Cursor::next_at`).
    #[inline(always)]
    fn next_at(&mut self, pos: &mut Pos) -> Result<usize, Bail> {
        self.tokens.next_at(pos).ok_or(Bail)
    }

    /// The closing quote of the string opened at the previous token: the offset after it.
    /// Stage 1 hands out no token inside a string but its closing quote, so the token after
    /// an opening quote is that quote, or there is none (an unterminated string): its byte
    /// need not be looked at.
    #[inline(always)]
    fn close_string_at(&mut self, pos: &mut Pos) -> Result<usize, Bail> {
        let close = self.next_at(pos)?;
        debug_assert!(self.is(close, b'"'));
        Ok(close + 1)
    }

    /// [`close_string_at`](Self::close_string_at) from the cursor's own position.
    #[inline(always)]
    fn close_string(&mut self) -> Result<usize, Bail> {
        let mut pos = self.tokens.pos();
        let end = self.close_string_at(&mut pos);
        self.tokens.set_pos(pos);
        end
    }

    /// A number or literal at `at`, which must use up its run of bytes.
    #[inline(always)]
    fn scalar(&mut self, at: usize) -> Result<usize, Bail> {
        let end = match self.buf.get(at) {
            Some(b't') => literal::scan(self.buf, at, b"true"),
            Some(b'f') => literal::scan(self.buf, at, b"false"),
            Some(b'n') => literal::scan(self.buf, at, b"null"),
            _ => number::scan(self.buf, at).map(|(end, _)| end),
        }
        .map_err(|_| Bail)?;
        if !ends_scalar(self.buf.get(end)) {
            return Err(Bail);
        }
        Ok(end)
    }

    /// After `{` or `,` in an object: the key at token `at`, its colon, and the value's token.
    /// Returns the offset after the key's closing quote and the value's token.
    #[inline(always)]
    fn member_at(&mut self, at: usize, pos: &mut Pos) -> Result<(usize, usize), Bail> {
        if !self.is(at, b'"') {
            return Err(Bail);
        }
        let key_end = self.close_string_at(pos)?;
        let colon = self.next_at(pos)?;
        if !self.is(colon, b':') {
            return Err(Bail);
        }
        Ok((key_end, self.next_at(pos)?))
    }

    /// With `NAMED`, a member key of the outermost container (`params`) at `at`, ending at
    /// `key_end`: which noted member it is, if any (`name`, `_meta`).
    #[inline(always)]
    fn params_key<const NAMED: bool>(
        &self,
        level: usize,
        at: usize,
        key_end: usize,
    ) -> Option<ParamsKey> {
        if NAMED && level == 1 {
            envelope::params_key(self.buf, at, key_end)
        } else {
            None
        }
    }

    /// The container at `open` (nested at `depth`), iteratively: the offset after its close.
    /// Out of line: it is reached from every member kind of the envelope. Most tokens of a
    /// message are read here, so the stream position is held in a local.
    #[inline(never)]
    fn container(&mut self, open: usize, depth: usize) -> Result<usize, Bail> {
        let mut pos = self.tokens.pos();
        let mut unknown = Noted::UNKNOWN;
        let end = self.container_at::<false>(open, depth, &mut pos, &mut unknown);
        self.tokens.set_pos(pos);
        end
    }

    /// [`container`](Self::container) for the object `params`, noting its members `name`
    /// and `_meta`.
    #[inline(never)]
    fn container_named(&mut self, open: usize, noted: &mut Noted) -> Result<usize, Bail> {
        let mut pos = self.tokens.pos();
        let end = self.container_at::<true>(open, 2, &mut pos, noted);
        self.tokens.set_pos(pos);
        end
    }

    /// The walk of [`container`](Self::container); with `NAMED`, the members `name` and
    /// `_meta` of the outermost container (an object: `params`) go to `noted`.
    #[inline(always)]
    fn container_at<const NAMED: bool>(
        &mut self,
        open: usize,
        depth: usize,
        pos: &mut Pos,
        noted: &mut Noted,
    ) -> Result<usize, Bail> {
        // Where the value of a noted member of the outermost object starts; its end is
        // known when the walk is back at that object's level.
        let mut pending: Option<(usize, ParamsKey)> = None;
        let mut nest = Nesting::new();
        let mut level = 0usize;
        let mut i = open;
        'value: loop {
            let mut end = match self.buf.get(i) {
                Some(&b @ (b'{' | b'[')) => {
                    if depth + level > self.max_depth {
                        return Err(Bail);
                    }
                    let object = b == b'{';
                    nest.set(level, object);
                    level += 1;
                    let t = self.next_at(pos)?;
                    match self.buf.get(t) {
                        Some(b'}') if object => {
                            level -= 1;
                            t + 1
                        }
                        Some(b']') if !object => {
                            level -= 1;
                            t + 1
                        }
                        _ if object => {
                            let (key_end, value) = self.member_at(t, pos)?;
                            if NAMED && level == 1 {
                                pending =
                                    self.params_key::<NAMED>(level, t, key_end).map(|k| (value, k));
                            }
                            i = value;
                            continue 'value;
                        }
                        _ => {
                            i = t;
                            continue 'value;
                        }
                    }
                }
                Some(b'"') => self.close_string_at(pos)?,
                _ => self.scalar(i)?,
            };
            // After a value: `,` or the close of the innermost container.
            loop {
                if level == 0 {
                    return Ok(end);
                }
                if NAMED && level == 1 {
                    if let Some((start, key)) = pending.take() {
                        noted.found(key, envelope::span(start, end));
                    }
                }
                let t = self.next_at(pos)?;
                let object = nest.is_object(level - 1);
                match self.buf.get(t) {
                    Some(b',') => {
                        let k = self.next_at(pos)?;
                        i = if object {
                            let (key_end, value) = self.member_at(k, pos)?;
                            if NAMED && level == 1 {
                                pending =
                                    self.params_key::<NAMED>(level, k, key_end).map(|k| (value, k));
                            }
                            value
                        } else {
                            k
                        };
                        continue 'value;
                    }
                    Some(b'}') if object => {}
                    Some(b']') if !object => {}
                    _ => return Err(Bail),
                }
                level -= 1;
                end = t + 1;
            }
        }
    }
}

impl<'a, B> Source<'a> for Fast<'a, B>
where
    B: Blocks,
{
    type Error = Bail;

    #[inline(always)]
    fn buf(&self) -> &'a [u8] {
        self.buf
    }

    #[inline(always)]
    fn max_depth(&self) -> usize {
        self.max_depth
    }

    #[inline(always)]
    fn too_deep(&self, _at: usize) -> Bail {
        Bail
    }

    #[inline(always)]
    fn version_first(&mut self, _open: usize) -> Option<usize> {
        // The token stream would have to be moved past the member's six tokens one by one:
        // no shortcut.
        None
    }

    #[inline(always)]
    fn enter(&mut self, _open: usize) -> Result<Result<usize, usize>, Bail> {
        let t = self.next()?;
        Ok(if self.is(t, b'}') { Err(t + 1) } else { Ok(t) })
    }

    #[inline(always)]
    fn known_key(&mut self, at: usize) -> Result<Option<(envelope::Key, usize)>, Bail> {
        let Some((key, end)) = envelope::known_key(self.buf, at) else {
            return Ok(None);
        };
        // The closing quote is the next token (nothing inside the key is one), then `:`.
        let mut pos = self.tokens.pos();
        let close = self.next_at(&mut pos)?;
        let colon = self.next_at(&mut pos)?;
        if close + 1 != end || !self.is(colon, b':') {
            return Err(Bail);
        }
        let value = self.next_at(&mut pos)?;
        self.tokens.set_pos(pos);
        Ok(Some((key, value)))
    }

    #[inline(always)]
    fn key(&mut self, at: usize) -> Result<(&'a [u8], bool, usize), Bail> {
        if !self.is(at, b'"') {
            return Err(Bail);
        }
        let (end, escaped) = self.string(at)?;
        let colon = self.next()?;
        if !self.is(colon, b':') {
            return Err(Bail);
        }
        let raw = self.buf.get(at + 1..end - 1).unwrap_or_default();
        Ok((raw, escaped, self.next()?))
    }

    #[inline(always)]
    fn string(&mut self, at: usize) -> Result<(usize, bool), Bail> {
        let end = self.close_string()?;
        let content = self.buf.get(at + 1..end - 1).unwrap_or_default();
        Ok((end, has_backslash(content)))
    }

    #[inline(always)]
    fn plain_string(&mut self, end: usize) -> Result<usize, Bail> {
        // Nothing inside the string is a token: the next one is its closing quote.
        if self.close_string()? != end {
            return Err(Bail);
        }
        Ok(end)
    }

    #[inline(always)]
    fn number(&mut self, at: usize) -> Result<(usize, bool), Bail> {
        let (end, integer) = number::scan(self.buf, at).map_err(|_| Bail)?;
        if !ends_scalar(self.buf.get(end)) {
            return Err(Bail);
        }
        Ok((end, integer))
    }

    #[inline(always)]
    fn null(&mut self, at: usize) -> Result<usize, Bail> {
        let end = literal::scan(self.buf, at, b"null").map_err(|_| Bail)?;
        if !ends_scalar(self.buf.get(end)) {
            return Err(Bail);
        }
        Ok(end)
    }

    #[inline(always)]
    fn params(&mut self, at: usize) -> Result<(usize, Noted), Bail> {
        if !self.is(at, b'{') {
            return Ok((self.skip(at, 2)?, Noted::MISSING));
        }
        let mut noted = Noted::MISSING;
        let end = self.container_named(at, &mut noted)?;
        Ok((end, noted))
    }

    #[inline(always)]
    fn skip(&mut self, at: usize, depth: usize) -> Result<usize, Bail> {
        match self.buf.get(at) {
            Some(b'"') => self.close_string(),
            Some(b'{' | b'[') => self.container(at, depth),
            _ => self.scalar(at),
        }
    }

    #[inline(always)]
    fn next_member(&mut self, _end: usize) -> Result<(bool, usize), Bail> {
        let t = self.next()?;
        match self.buf.get(t) {
            Some(b',') => Ok((true, self.next()?)),
            Some(b'}') => Ok((false, t + 1)),
            _ => Err(Bail),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::scan::{envelope::Facts, Top};
    use crate::simd::{detected, with_kernels};

    /// The exact walk at the level in use.
    fn exact_walk<const STRICT: bool>(
        buf: &[u8],
        max_depth: usize,
        facts: &mut Facts,
    ) -> Result<Top, crate::json::JsonError> {
        with_kernels!(detected(), k => super::super::walk::<_, STRICT>(k, buf, max_depth, facts))
    }

    /// Facts as a walk that gave up part way might leave them, and `reset` forgets them
    /// all but the caller's input.
    #[test]
    fn reset_forgets_all_a_walk_found() {
        for note_params_name in [false, true] {
            let mut facts = Facts { note_params_name, ..Facts::default() };
            let old = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"n"},"result":2,"error":{"code":1,"message":"x","data":3}}"#;
            exact_walk::<true>(old, 64, &mut facts).ok();
            assert_ne!(facts, Facts::default());
            facts.reset();
            assert_eq!(facts, Facts { note_params_name, ..Facts::default() });
            assert_eq!(facts.note_params_name, note_params_name);
        }
    }
    use crate::dispatch;
    use crate::simd::tests::levels;
    use proptest::prelude::*;

    /// The fast path at every level agrees with the exact path: when it answers, the exact
    /// path accepts with the same facts; on valid JSON it always answers.
    pub(crate) fn check(buf: &[u8], max_depth: usize) {
        // Under miri (interpreted, ~10^4 times slower) the noting walk alone: it runs the
        // plain container walk too, for every container but `params`.
        if !cfg!(miri) {
            check_noting(buf, max_depth, false);
        }
        check_noting(buf, max_depth, true);
    }

    /// [`check`], with the walks noting `params.name` or not.
    fn check_noting(buf: &[u8], max_depth: usize, note_params_name: bool) {
        let mut exact_facts = Facts { note_params_name, ..Facts::default() };
        let exact = match crate::json::utf8::validate(crate::simd::kernels::Scalar, buf) {
            Ok(()) => exact_walk::<true>(buf, max_depth, &mut exact_facts),
            Err(bad) => Err(crate::json::JsonError::new(crate::Reason::InvalidUtf8, bad)),
        };
        // Facts are only written (and read) for an object.
        let facts_of = |top: &Top, facts: Facts| (*top == Top::Object).then_some(facts);
        let exact = exact.map(|top| (top, facts_of(&top, exact_facts)));
        for level in levels() {
            let mut facts = Facts { note_params_name, ..Facts::default() };
            match dispatch::strict_fast_at(level, buf, max_depth, &mut facts) {
                Some(top) => assert_eq!(
                    exact.as_ref().ok(),
                    Some(&(top, facts_of(&top, facts))),
                    "{level:?} accepted {:?}",
                    String::from_utf8_lossy(buf)
                ),
                None => assert!(
                    exact.is_err(),
                    "{level:?} gave up on valid {:?}",
                    String::from_utf8_lossy(buf)
                ),
            }
        }
    }

    /// Asked to, both strict walks note `params.name` and `params._meta` (the exact one
    /// under 128 bytes, the fast path at every level above), the same way; envelope mode
    /// does not look, and neither walk does unasked.
    #[test]
    fn strict_walks_note_params_name_and_meta() {
        use crate::scan::envelope::Named;
        let short = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"name":1,"_meta":2},"name":"echo","_meta":{"progressToken":7}}}"#.to_vec();
        let mut long = short.clone();
        long.splice(1..1, format!(r#""pad":"{}","#, "x".repeat(120)).bytes());
        let twice = br#"{"jsonrpc":"2.0","method":"m","params":{"name":[1,{"name":2}],"n\u0061me":3,"_meta":{},"\u005f\u006d\u0065\u0074\u0061":4}}"#;
        let escaped = br#"{"jsonrpc":"2.0","method":"m","params":{"\u005fmeta":{"progressToken":"t"},"_met":1,"_metaa":2,"nam\u0065":"n"}}"#;
        let neither = br#"{"jsonrpc":"2.0","method":"m","params":{"names":1,"meta":{"_meta":1}}}"#;
        // (message, params.name, params._meta)
        type Case<'c> = (&'c [u8], Option<&'c [u8]>, Option<&'c [u8]>);
        let cases: &[Case<'_>] = &[
            (&short, Some(br#""echo""#), Some(br#"{"progressToken":7}"#)),
            (&long, Some(br#""echo""#), Some(br#"{"progressToken":7}"#)),
            (twice, None, None),
            (escaped, Some(br#""n""#), Some(br#"{"progressToken":"t"}"#)),
            (neither, Some(b""), Some(b"")),
        ];
        // `Some(b"")`: missing; `None`: duplicate.
        let check = |noted: Named, want: Option<&[u8]>, msg: &[u8]| match want {
            Some(b"") => assert_eq!(noted, Named::Missing),
            Some(want) => {
                assert!(matches!(noted, Named::Unique(span) if span.of(msg) == want), "{noted:?}")
            }
            None => assert_eq!(noted, Named::Duplicate),
        };
        for &(msg, name, meta) in cases {
            let noting = Facts { note_params_name: true, ..Facts::default() };
            let mut exact = noting;
            assert_eq!(exact_walk::<true>(msg, 64, &mut exact), Ok(Top::Object));
            check(exact.params_name, name, msg);
            check(exact.params_meta, meta, msg);
            for level in levels() {
                let mut fast = noting;
                assert_eq!(dispatch::strict_fast_at(level, msg, 64, &mut fast), Some(Top::Object));
                assert_eq!(fast.params_name, exact.params_name, "{level:?}");
                assert_eq!(fast.params_meta, exact.params_meta, "{level:?}");
                // Not asked: not noted.
                let mut quiet = Facts::default();
                assert_eq!(dispatch::strict_fast_at(level, msg, 64, &mut quiet), Some(Top::Object));
                assert_eq!(
                    (quiet.params_name, quiet.params_meta),
                    (Named::Unknown, Named::Unknown)
                );
            }
            let mut quiet = Facts::default();
            assert_eq!(exact_walk::<true>(msg, 64, &mut quiet), Ok(Top::Object));
            assert_eq!((quiet.params_name, quiet.params_meta), (Named::Unknown, Named::Unknown));
            let mut envelope = noting;
            assert_eq!(exact_walk::<false>(msg, 64, &mut envelope), Ok(Top::Object));
            assert_eq!(
                (envelope.params_name, envelope.params_meta),
                (Named::Unknown, Named::Unknown)
            );
        }
    }

    #[test]
    fn tables() {
        for s in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[1,2.5,-0,true,false,null,"x\"y"]}}"#[..],
            br#" { "jsonrpc" : "2\u002e0" , "id" : "a\\b" , "result" : [ ] , "x" : { } } "#,
            br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"m","data":{"k":[]}}}"#,
            br#"{"jsonrpc":"2.0","id":1e3,"error":{"code":1.5,"message":1,"code":2}}"#,
            br#"{"\u006dethod":"m","jsonrpc":"2.0","method":"n"}"#,
            // The exact path reads a plain `{"jsonrpc":"2.0",` at once.
            br#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            br#"{"jsonrpc":"2.0", "id":1,"result":{}}"#,
            br#"{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"result":{}}"#,
            br#"{"jsonrpc":"2.0","jsonrpc":"1.0","id":1,"result":{}}"#,
            br#"{"jsonrpc":"2.0","#,
            br#"{"jsonrpc":"2.0",}"#,
            br#"{"jsonrpc":"2.0",,"id":1}"#,
            br#"[1,{"a":"b"},[]]"#,
            br#""just a string""#,
            b"123",
            b"  true ",
            b"{}",
            // Invalid: every one of these must go to the exact path.
            b"",
            b"   ",
            b"{",
            b"{\"a\":1,}",
            b"{\"a\":1 \"b\":2}",
            b"{\"a\" 1}",
            b"[1,]",
            b"[1 2]",
            b"[01]",
            b"[1x]",
            b"[truex]",
            b"[tru]",
            b"{\"a\":1}x",
            b"{\"a\":1} \"",
            b"{\"a\":1}}",
            b"\"a\x01\"",
            b"\"\\x\"",
            b"\"\\u12\"",
            b"[\"a\"\"b\"]",
            b"{\"a\":\"b\":1}",
            b"{1:2}",
            b"[\\\"]",
            b"[}",
            b"{]",
            b"[,1]",
            b"[:]",
            b"-",
            b"1.",
            b"[1.e5]",
            b"{\"a\":[1,{\"b\":}]}",
            b"\"unterminated",
            b"\"escape at end\\",
            // Not UTF-8 (only checked when a byte is not ASCII), or not ASCII outside strings.
            b"\"\xff\"",
            b"{\"a\":\"\xed\xa0\x80\"}",
            b"[\"\xc0\xaf\"]",
            b"[\"\xe2\x82\"]",
            b"[\xc3\xa9]",
            b"{\"\xc3\xa9\":1}",
        ] {
            check(s, 1024);
        }
        let deep = [vec![b'['; 300], vec![b']'; 300]].concat();
        check(&deep, 1024);
        check(&deep, 200);
        check(&deep, 300);
        check(&deep, 299);
        let mut long = br#"{"jsonrpc":"2.0","id":1,"result":""#.to_vec();
        for k in 0..500 {
            long.extend_from_slice(if k % 7 == 0 { b"\\u00e9" } else { b"ab\\n" });
        }
        long.extend_from_slice(b"\"}");
        check(&long, 1024);
    }

    /// Every length 0..=200 and every start alignment 0..8, with a special sequence at the
    /// offsets around the block boundaries inside a string (valid and invalid ones), at every
    /// level.
    #[test]
    fn every_length_alignment_and_boundary() {
        let head = br#"{"jsonrpc":"2.0","id":1,"result":""#;
        let tail = br#""}"#;
        let specials: [&[u8]; 9] = [
            b"\\n",
            b"\\u00e9",
            "é".as_bytes(),
            "😀".as_bytes(),
            b"\\\"",
            b"\x01",
            b"\\x",
            b"\"",
            b"\xc3",
        ];
        let step = if cfg!(miri) { 37 } else { 1 };
        for len in (0..=200usize).step_by(step) {
            for at in [0, 1, 28, 29, 30, 31, 62, 63, 64, 65, 94, 126, 127, 128, 129, 190, 191] {
                for special in specials {
                    let mut msg = if len >= head.len() + tail.len() {
                        let mut m = head.to_vec();
                        m.resize(len - tail.len(), b'a');
                        m.extend_from_slice(tail);
                        m
                    } else {
                        // Too short for an envelope: a number after whitespace.
                        let mut m = vec![b' '; len];
                        if let Some(last) = m.last_mut() {
                            *last = b'7';
                        }
                        m
                    };
                    let start = head.len() + at;
                    if len >= head.len() + tail.len() && start + special.len() <= len - tail.len() {
                        msg[start..start + special.len()].copy_from_slice(special);
                    }
                    crate::simd::tests::at_each_alignment(&msg, |buf| check(buf, 1024));
                }
            }
        }
    }

    #[test]
    fn utf8_is_checked_across_block_boundaries() {
        let seqs: [&[u8]; 8] = [
            "é".as_bytes(),
            "😀".as_bytes(),
            "日".as_bytes(),
            b"\xc3",
            b"\xe2\x82",
            b"\xed\xa0\x80",
            b"\xf4\x90\x80\x80",
            b"\x80",
        ];
        let step = if cfg!(miri) { 29 } else { 1 };
        for pad in (0..140).step_by(step) {
            for seq in seqs {
                for tail in [&b""[..], b"x", b"xyz\xc3\xa9"] {
                    let mut s = br#"{"jsonrpc":"2.0","id":1,"result":""#.to_vec();
                    s.extend(std::iter::repeat_n(b'a', pad));
                    s.extend_from_slice(seq);
                    s.extend_from_slice(tail);
                    s.extend_from_slice(b"\"}");
                    check(&s, 1024);
                }
            }
        }
    }

    /// Strings of several blocks (where stage 1 passes over plain windows without the
    /// block's work) with an escape, a control byte, a character or a broken one at every
    /// offset, starting at several offsets from a block boundary, over ASCII and non-ASCII
    /// fillers, followed by more members: every level agrees with the exact path.
    #[test]
    fn long_strings_with_a_special_at_every_offset() {
        let specials: [&[u8]; 17] = [
            b"\\n",
            b"\\\"",
            b"\\\\",
            b"\\u00e9",
            b"\\u12G4",
            b"\\x",
            b"\\",
            b"\x01",
            b"\x1f",
            b"\x7f",
            "é".as_bytes(),
            "日本".as_bytes(),
            "😀".as_bytes(),
            b"\xff",
            b"\xc3",
            b"\xed\xa0\x80",
            b"\"",
        ];
        let fillers: &[&str] = if cfg!(miri) { &["é"] } else { &["a", "é", "日本語"] };
        let pads: &[usize] = if cfg!(miri) { &[1, 63] } else { &[0, 1, 33, 63] };
        let step = if cfg!(miri) { 41 } else { 1 };
        for &filler in fillers {
            for &pad in pads {
                // 600: several 256-byte steps of the AVX-512 and simd128 runs.
                for len in [150usize, 260, 600] {
                    let body: Vec<u8> = filler.bytes().cycle().take(len).collect();
                    for at in (0..len).step_by(step) {
                        for special in specials {
                            let mut s = br#"{"jsonrpc":"2.0","id":1,"result":{"#.to_vec();
                            s.extend(std::iter::repeat_n(b' ', pad));
                            s.extend_from_slice(br#""text":""#);
                            let mut text = body.clone();
                            let end = (at + special.len()).min(text.len());
                            text.splice(at..end, special.iter().copied());
                            s.extend_from_slice(&text);
                            s.extend_from_slice(br#"","n":[1,"x"]}}"#);
                            check(&s, 1024);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn every_split_of_generated_traffic() {
        let corpus = rpcscan_oracle_free_corpus();
        let lines = if cfg!(miri) { 12 } else { usize::MAX };
        for line in corpus.split(|&b| b == b'\n').take(lines) {
            check(line, 1024);
        }
    }

    /// A little traffic without the oracle crate (the library's unit tests do not depend on
    /// it): the sample file that ships with the crate.
    fn rpcscan_oracle_free_corpus() -> &'static [u8] {
        include_bytes!("../../examples/mcp-traffic.ndjson")
    }

    /// The pieces random messages are made of in the token-soup tests: structure, the
    /// envelope's keys and values, scalars right and wrong, escapes, control bytes, UTF-8
    /// and invalid bytes, and a run long enough to cross blocks.
    pub(crate) const TOKEN_SOUP: [&[u8]; 35] = [
        b"{",
        b"}",
        b"[",
        b"]",
        b",",
        b":",
        b" ",
        b"\"",
        b"\"k\"",
        b"\"jsonrpc\"",
        b"\"2.0\"",
        b"\"id\"",
        b"\"method\"",
        b"\"result\"",
        b"\"error\"",
        b"\"code\"",
        b"\"message\"",
        b"\"params\"",
        b"1",
        b"-0",
        b"2.5e3",
        b"true",
        b"null",
        b"x",
        b"\\",
        b"\\\"",
        b"\\u00e9",
        b"\\n",
        b"\t",
        b"\x01",
        b"\xc3\xa9",
        b"\xff",
        b"0",
        b".",
        &[b'a'; 61],
    ];

    proptest! {
        // Miri runs every test of this module, with fewer cases.
        #![proptest_config(ProptestConfig { cases: if cfg!(miri) { 12 } else { 6000 }, failure_persistence: None, ..ProptestConfig::default() })]
        #[test]
        fn fast_path_agrees_on_token_soup(
            body in proptest::collection::vec(prop::sample::select(&TOKEN_SOUP[..]), 0..80),
            max in 1usize..6,
        ) {
            let buf: Vec<u8> = body.concat();
            check(&buf, max);
        }
    }
}
