//! The top-level walk: find the six envelope members, read `jsonrpc`, `id`, `method` and
//! the error object strictly, skip everything else, then apply docs/spec.md §3.
//!
//! The walk only collects facts; verdicts are decided in [`decide`](super::decide) once the
//! whole text is known to be JSON, so a -32600 reason never hides a -32700 one further on.

use super::{skip, ws};
use crate::error::JsonError;
use crate::id::IdKind;
use crate::invalid::Reason;
use crate::json::{literal, number, string, utf8};
use crate::limits::Span;
use crate::simd::Kernels;
use crate::text::Str;

/// The envelope keys, as bits of [`Facts::seen`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Key {
    Jsonrpc = 1,
    Id = 2,
    Method = 4,
    Params = 8,
    Result = 16,
    Error = 32,
    Other = 0,
}

impl Key {
    #[inline]
    fn from_name(name: &[u8]) -> Key {
        match name {
            b"jsonrpc" => Key::Jsonrpc,
            b"id" => Key::Id,
            b"method" => Key::Method,
            b"params" => Key::Params,
            b"result" => Key::Result,
            b"error" => Key::Error,
            _ => Key::Other,
        }
    }
}

/// The 8 bytes of `name` followed by its closing quote (zeros after), as a little-endian word.
const fn word(name: &[u8]) -> (u64, u64) {
    let mut bytes = [0u8; 8];
    let mut k = 0;
    while k < name.len() {
        bytes[k] = name[k];
        k += 1;
    }
    bytes[name.len()] = b'"';
    let mask = if name.len() + 1 == 8 { u64::MAX } else { (1u64 << (8 * (name.len() + 1))) - 1 };
    (u64::from_le_bytes(bytes), mask)
}

/// The envelope keys as (word, mask, key, bytes up to and including the closing quote).
const KNOWN: [(u64, u64, Key, usize); 6] = {
    const fn entry(name: &[u8], key: Key) -> (u64, u64, Key, usize) {
        let (w, m) = word(name);
        (w, m, key, name.len() + 1)
    }
    [
        entry(b"jsonrpc", Key::Jsonrpc),
        entry(b"id", Key::Id),
        entry(b"method", Key::Method),
        entry(b"params", Key::Params),
        entry(b"result", Key::Result),
        entry(b"error", Key::Error),
    ]
};

/// How nearly every message starts: read as one compare on the exact path
/// ([`Source::version_first`]).
const VERSION_FIRST: &[u8] = br#"{"jsonrpc":"2.0","#;

/// The key whose opening quote is at `at`, when it is one of the six envelope names
/// written plainly (no escapes): the key and the offset after its closing quote. One
/// 8-byte load and a few compares instead of a string scan and a name match; `None`
/// (anything else, or fewer than 8 bytes left) means "read it the long way", which gives
/// the same answer.
#[inline(always)]
pub(crate) fn known_key(buf: &[u8], at: usize) -> Option<(Key, usize)> {
    let bytes: [u8; 8] = buf.get(at + 1..at + 9)?.try_into().ok()?;
    if buf.get(at) != Some(&b'"') {
        return None;
    }
    let w = u64::from_le_bytes(bytes);
    KNOWN
        .iter()
        .find(|&&(word, mask, _, _)| w & mask == word)
        .map(|&(_, _, key, len)| (key, at + 1 + len))
}

/// Members of the error object that matter.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ErrorKey {
    Code,
    Message,
    Data,
    Other,
}

impl ErrorKey {
    #[inline]
    fn from_name(name: &[u8]) -> ErrorKey {
        match name {
            b"code" => ErrorKey::Code,
            b"message" => ErrorKey::Message,
            b"data" => ErrorKey::Data,
            _ => ErrorKey::Other,
        }
    }
}

/// Calls `f` with the decoded key when it could be one of ours (at most 8 bytes decoded),
/// else with an empty slice. Keys without escapes are passed as they are.
#[inline]
fn with_key<T>(raw: &[u8], escaped: bool, f: impl Fn(&[u8]) -> T) -> T {
    if !escaped {
        return f(raw);
    }
    let mut tmp = [0u8; 8];
    let mut n = 0;
    for b in Str::new(raw, true).decoded_bytes() {
        match tmp.get_mut(n) {
            Some(slot) => *slot = b,
            None => return f(b""),
        }
        n += 1;
    }
    f(tmp.get(..n).unwrap_or_default())
}

/// `params.name`, as the strict walk found it on its way through `params` (the member
/// routers and tool policies ask for), so that reading it takes no second pass over
/// `params`. Keys are compared after unescaping, as [`crate::Raw::get`] compares them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Named {
    /// Not looked for: envelope mode, whose skipper sees no keys (or no `params`).
    #[default]
    Unknown,
    /// `params` is not an object, or has no member `name`.
    Missing,
    /// Exactly one member `name`: its value.
    Unique(Span),
    /// Two or more.
    Duplicate,
}

/// The members of `params` the strict walk notes on its way, when asked: `name` (the tool
/// of a `tools/call`) and `_meta` (where a progress token lives).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Noted {
    pub(crate) name: Named,
    pub(crate) meta: Named,
}

impl Noted {
    /// Not looked for.
    pub(crate) const UNKNOWN: Noted = Noted { name: Named::Unknown, meta: Named::Unknown };
    /// Looked for, none found (yet).
    pub(crate) const MISSING: Noted = Noted { name: Named::Missing, meta: Named::Missing };

    /// One more member `key`, whose value is `value`.
    #[inline(always)]
    pub(crate) fn found(&mut self, key: ParamsKey, value: Span) {
        match key {
            ParamsKey::Name => self.name.found(value),
            ParamsKey::Meta => self.meta.found(value),
        }
    }
}

/// A member of `params` the strict walk notes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ParamsKey {
    Name,
    Meta,
}

impl Named {
    /// One more member `name`, whose value is `value`.
    #[inline(always)]
    pub(crate) fn found(&mut self, value: Span) {
        *self = match *self {
            Named::Unique(_) | Named::Duplicate => Named::Duplicate,
            Named::Unknown | Named::Missing => Named::Unique(value),
        };
    }
}

/// Whether the key whose quotes are at `open` and `end - 1` (its contents already checked)
/// is `name` or `_meta` after unescaping. Plain `name` and `_meta` are one length test and
/// one compare; an escaped one is 9 to 30 bytes long (`\u006e` for each letter at most),
/// starts with its first letter or a backslash and ends with its last letter or the last
/// digit of its escape (`5` of `\u0065`, `1` of `\u0061`), so other keys are turned away
/// by their length and two bytes, without looking for a backslash.
#[inline(always)]
pub(crate) fn params_key(buf: &[u8], open: usize, end: usize) -> Option<ParamsKey> {
    let len = end.wrapping_sub(open + 2);
    match len {
        4 => return (buf.get(open + 1..open + 5) == Some(b"name")).then_some(ParamsKey::Name),
        5 => return (buf.get(open + 1..open + 6) == Some(b"_meta")).then_some(ParamsKey::Meta),
        _ => {}
    }
    // Escaped: `\u0065` is six bytes for one, so `name` takes at most 24, `_meta` 30.
    if !(6..=30).contains(&len) {
        return None;
    }
    match buf.get(open + 1..end - 1) {
        Some(raw @ [first, .., last]) => {
            if matches!(first, b'n' | b'\\')
                && matches!(last, b'e' | b'5')
                && with_key(raw, true, |k| k == b"name")
            {
                Some(ParamsKey::Name)
            } else if matches!(first, b'_' | b'\\')
                && matches!(last, b'a' | b'1')
                && with_key(raw, true, |k| k == b"_meta")
            {
                Some(ParamsKey::Meta)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// What the walk found at the top level of an object.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub(crate) struct Facts {
    pub(super) seen: u8,
    pub(super) duplicate: bool,
    pub(super) version_ok: bool,
    pub(super) id_count: u8,
    /// The (last) `id` member; `None` kind when it is not a string, integer or null.
    pub(super) id: Option<(Span, Option<IdKind>)>,
    /// `Some(None)`: present but not a string.
    pub(super) method: Option<Option<(Span, bool)>>,
    pub(super) params: Option<Span>,
    pub(super) params_ok: bool,
    /// `params.name` (strict mode, when `note_params_name` asked for it; else
    /// [`Named::Unknown`]).
    pub(super) params_name: Named,
    /// `params._meta`, likewise.
    pub(super) params_meta: Named,
    /// Given to the walk, not found by it (kept when the walk resets the facts): note
    /// `params.name` on the way through `params`.
    pub(crate) note_params_name: bool,
    pub(super) result: Option<Span>,
    pub(super) error: Option<Span>,
    pub(super) error_ok: bool,
    pub(super) error_code: Option<Span>,
    pub(super) error_message: Option<(Span, bool)>,
    pub(super) error_data: Option<Span>,
}

impl Facts {
    /// Forgets what a walk found, keeping the caller's inputs (`note_params_name`): for a
    /// second walk of the same message after one that gave up part way.
    #[inline]
    pub(crate) fn reset(&mut self) {
        *self = Facts { note_params_name: self.note_params_name, ..Facts::default() };
    }
}

#[inline(always)]
pub(crate) fn span(start: usize, end: usize) -> Span {
    // Messages are at most MAX_MESSAGE_LEN (u32::MAX) bytes, checked before the walk.
    Span::new(start as u32, end as u32)
}

/// Up to this many bytes, [`checked_string`] asks whether a string is ASCII 8 bytes at a
/// time, inline, instead of calling `is_ascii`.
const SHORT_ASCII_MAX: usize = 64;

/// A string whose contents the scanner reads: grammar always, and UTF-8 in envelope mode
/// (strict mode checked the whole message already).
#[inline(always)]
pub(crate) fn checked_string<K: Kernels, const STRICT: bool>(
    k: K,
    buf: &[u8],
    open: usize,
) -> Result<(usize, bool), JsonError> {
    let (end, escaped) = string::scan_strict(k, buf, open)?;
    if !STRICT {
        let content = buf.get(open + 1..end - 1).unwrap_or_default();
        // Keys and ids are short and nearly always ASCII: skip the validator call then
        // (and for short ones, the out-of-line `is_ascii` call too). The word-at-a-time
        // look up to 64 bytes only at the scalar level: in the vector levels' walks it
        // grew envelope mode's walk past inlining its container skip, and long strings
        // (CJK text, images) ran 25-40% slower at AVX2 (docs/performance.md).
        let ascii = if content.len() <= 16 {
            content.iter().fold(0u8, |any, &b| any | b) < 0x80
        } else if matches!(K::LEVEL, crate::simd::Level::Scalar) && content.len() <= SHORT_ASCII_MAX
        {
            crate::simd::swar::is_ascii_short(content)
        } else {
            content.is_ascii()
        };
        if ascii {
            return Ok((end, escaped));
        }
        if let Err(bad) = utf8::validate(k, content) {
            return Err(JsonError::new(Reason::InvalidUtf8, open + 1 + bad));
        }
    }
    Ok((end, escaped))
}

/// A string the walk reads (its quote at `open`), as [`checked_string`] reads it; envelope
/// mode first takes the level's inline look ([`Kernels::plain_string`]), which answers for
/// plain strings.
#[inline(always)]
pub(crate) fn read_string<K: Kernels, const STRICT: bool>(
    k: K,
    buf: &[u8],
    open: usize,
) -> Result<(usize, bool), JsonError> {
    if !STRICT {
        if let Some(end) = k.plain_string(buf, open) {
            return Ok((end, false));
        }
    }
    checked_string::<K, STRICT>(k, buf, open)
}

/// Reads `"key" :` at `i`; returns the raw key, whether it is escaped, and the offset of
/// the value (whitespace skipped).
#[inline(always)]
fn key<K: Kernels, const STRICT: bool>(
    k: K,
    buf: &[u8],
    i: usize,
) -> Result<(&[u8], bool, usize), JsonError> {
    if buf.get(i) != Some(&b'"') {
        return Err(JsonError::unexpected(buf, i));
    }
    let (end, escaped) = read_string::<K, STRICT>(k, buf, i)?;
    let raw = buf.get(i + 1..end - 1).unwrap_or_default();
    let colon = ws(buf, end);
    if buf.get(colon) != Some(&b':') {
        return Err(JsonError::unexpected(buf, colon));
    }
    Ok((raw, escaped, ws(buf, colon + 1)))
}

/// After a member's value: `,` (returns the next key's offset) or `}` (returns `None` and
/// the offset after the object).
#[inline(always)]
fn next_member(buf: &[u8], i: usize) -> Result<(bool, usize), JsonError> {
    let i = ws(buf, i);
    match buf.get(i) {
        Some(b',') => Ok((true, ws(buf, i + 1))),
        Some(b'}') => Ok((false, i + 1)),
        _ => Err(JsonError::unexpected(buf, i)),
    }
}

/// Where the walk's syntax comes from: [`Exact`] (byte by byte, with exact error offsets)
/// or the fast path's token stream (`scan::stage2`, which only knows "valid" or "don't know").
/// Offsets are the same in both: a value's first byte, the offset after it.
pub(crate) trait Source<'a> {
    /// What a failed walk returns.
    type Error;
    /// The message.
    fn buf(&self) -> &'a [u8];
    /// The nesting limit.
    fn max_depth(&self) -> usize;
    /// The error for a container at `at` that is nested too deep.
    fn too_deep(&self, at: usize) -> Self::Error;
    /// After the `{` at `open`: `Ok(Ok(key))`, the offset of the first key, or `Ok(Err(end))`
    /// for an empty object.
    fn enter(&mut self, open: usize) -> Result<Result<usize, usize>, Self::Error>;
    /// When the object at `open` starts with `{"jsonrpc":"2.0",` written plainly (nearly
    /// every message does): the offset of the second key, the first member read at once.
    /// `None` sends the walk the usual way, which gives the same facts.
    fn version_first(&mut self, open: usize) -> Option<usize>;
    /// The key at `at`: its raw bytes, whether it has escapes, and the offset of its value.
    fn key(&mut self, at: usize) -> Result<(&'a [u8], bool, usize), Self::Error>;
    /// The key at `at` when [`known_key`] recognises it: the key and the offset of its
    /// value; `Ok(None)` sends the walk to [`key`](Source::key).
    fn known_key(&mut self, at: usize) -> Result<Option<(Key, usize)>, Self::Error>;
    /// A string the walk reads (its quote at `at`): the offset after it, and whether it has
    /// escapes.
    fn string(&mut self, at: usize) -> Result<(usize, bool), Self::Error>;
    /// The string the caller has seen ends at `end` (after its closing quote) and has
    /// printable ASCII contents without a backslash: move past it; returns `end`.
    fn plain_string(&mut self, end: usize) -> Result<usize, Self::Error>;
    /// A number at `at`: the offset after it, and whether it is an integer literal.
    fn number(&mut self, at: usize) -> Result<(usize, bool), Self::Error>;
    /// `null` at `at`: the offset after it.
    fn null(&mut self, at: usize) -> Result<usize, Self::Error>;
    /// Any value at `at`, nested at `depth`: the offset after it.
    fn skip(&mut self, at: usize, depth: usize) -> Result<usize, Self::Error>;
    /// The value of `params` at `at` (nested at depth 2): the offset after it, and
    /// `params.name` as the walk found it.
    fn params(&mut self, at: usize) -> Result<(usize, Noted), Self::Error>;
    /// After a member's value ending at `end`: `(true, next key)` or `(false, offset after
    /// the object)`.
    fn next_member(&mut self, end: usize) -> Result<(bool, usize), Self::Error>;
}

/// The exact path: every byte looked at in order, errors with their first offending offset.
pub(crate) struct Exact<'a, const STRICT: bool, K> {
    pub(crate) buf: &'a [u8],
    pub(crate) max_depth: usize,
    /// The level's kernels (envelope mode's container skipper and string look, every
    /// level's string scan).
    pub(crate) kernels: K,
}

impl<'a, const STRICT: bool, K: Kernels> Source<'a> for Exact<'a, STRICT, K> {
    type Error = JsonError;

    #[inline(always)]
    fn buf(&self) -> &'a [u8] {
        self.buf
    }

    #[inline(always)]
    fn max_depth(&self) -> usize {
        self.max_depth
    }

    #[inline(always)]
    fn too_deep(&self, at: usize) -> JsonError {
        JsonError::new(Reason::TooDeep, at)
    }

    #[inline(always)]
    fn version_first(&mut self, open: usize) -> Option<usize> {
        (self.buf.get(open..open + VERSION_FIRST.len()) == Some(VERSION_FIRST))
            .then(|| ws(self.buf, open + VERSION_FIRST.len()))
    }

    #[inline(always)]
    fn enter(&mut self, open: usize) -> Result<Result<usize, usize>, JsonError> {
        let i = ws(self.buf, open + 1);
        Ok(if self.buf.get(i) == Some(&b'}') { Err(i + 1) } else { Ok(i) })
    }

    #[inline(always)]
    fn key(&mut self, at: usize) -> Result<(&'a [u8], bool, usize), JsonError> {
        key::<K, STRICT>(self.kernels, self.buf, at)
    }

    #[inline(always)]
    fn known_key(&mut self, at: usize) -> Result<Option<(Key, usize)>, JsonError> {
        let Some((key, end)) = known_key(self.buf, at) else {
            return Ok(None);
        };
        let colon = ws(self.buf, end);
        if self.buf.get(colon) != Some(&b':') {
            return Err(JsonError::unexpected(self.buf, colon));
        }
        Ok(Some((key, ws(self.buf, colon + 1))))
    }

    #[inline(always)]
    fn string(&mut self, at: usize) -> Result<(usize, bool), JsonError> {
        read_string::<K, STRICT>(self.kernels, self.buf, at)
    }

    #[inline(always)]
    fn plain_string(&mut self, end: usize) -> Result<usize, JsonError> {
        Ok(end)
    }

    #[inline(always)]
    fn number(&mut self, at: usize) -> Result<(usize, bool), JsonError> {
        number::scan(self.buf, at)
    }

    #[inline(always)]
    fn null(&mut self, at: usize) -> Result<usize, JsonError> {
        literal::scan(self.buf, at, b"null")
    }

    #[inline(always)]
    fn skip(&mut self, at: usize, depth: usize) -> Result<usize, JsonError> {
        skip::value::<K, STRICT>(self.kernels, self.buf, at, depth, self.max_depth)
    }

    #[inline(always)]
    fn params(&mut self, at: usize) -> Result<(usize, Noted), JsonError> {
        if !STRICT {
            return Ok((self.skip(at, 2)?, Noted::UNKNOWN));
        }
        if self.buf.get(at) != Some(&b'{') {
            return Ok((self.skip(at, 2)?, Noted::MISSING));
        }
        let mut noted = Noted::MISSING;
        let end = skip::container_strict_named(
            self.kernels,
            self.buf,
            at,
            2,
            self.max_depth,
            &mut noted,
        )?;
        Ok((end, noted))
    }

    #[inline(always)]
    fn next_member(&mut self, end: usize) -> Result<(bool, usize), JsonError> {
        next_member(self.buf, end)
    }
}

/// Walks the top-level object whose `{` is at `open`, writing its facts to `f`, which must
/// be fresh ([`Facts::default`] with the caller's inputs, or [`Facts::reset`] after a walk
/// that gave up). Returns the offset after the closing `}`.
#[inline(always)]
pub(crate) fn object<'a, S: Source<'a>>(
    s: &mut S,
    open: usize,
    f: &mut Facts,
) -> Result<usize, S::Error> {
    if s.max_depth() < 1 {
        return Err(s.too_deep(open));
    }
    let buf = s.buf();
    let mut i = match s.enter(open)? {
        Ok(first) => first,
        Err(end) => return Ok(end),
    };
    if let Some(second) = s.version_first(open) {
        f.seen = Key::Jsonrpc as u8;
        f.version_ok = true;
        i = second;
    }
    loop {
        let (key, v) = match s.known_key(i)? {
            Some(known) => known,
            None => {
                let (raw, escaped, v) = s.key(i)?;
                (with_key(raw, escaped, Key::from_name), v)
            }
        };
        if key != Key::Other {
            let bit = key as u8;
            f.duplicate |= f.seen & bit != 0;
            f.seen |= bit;
        }
        let end = match key {
            Key::Jsonrpc => {
                let (end, ok) = version(s, v)?;
                f.version_ok = ok;
                end
            }
            Key::Id => {
                let (end, kind) = id(s, v)?;
                f.id = Some((span(v, end), kind));
                f.id_count = f.id_count.saturating_add(1);
                end
            }
            Key::Method => {
                if buf.get(v) == Some(&b'"') {
                    let (end, escaped) = s.string(v)?;
                    f.method = Some(Some((span(v + 1, end - 1), escaped)));
                    end
                } else {
                    f.method = Some(None);
                    s.skip(v, 2)?
                }
            }
            Key::Params => {
                let (end, noted) =
                    if f.note_params_name { s.params(v)? } else { (s.skip(v, 2)?, Noted::UNKNOWN) };
                f.params_name = noted.name;
                f.params_meta = noted.meta;
                f.params = Some(span(v, end));
                f.params_ok = matches!(buf.get(v), Some(b'{' | b'['));
                end
            }
            Key::Result => {
                let end = s.skip(v, 2)?;
                f.result = Some(span(v, end));
                end
            }
            Key::Error => {
                let end = error_object(s, v, f)?;
                f.error = Some(span(v, end));
                end
            }
            Key::Other => s.skip(v, 2)?,
        };
        let (more, next) = s.next_member(end)?;
        if !more {
            return Ok(next);
        }
        i = next;
    }
}

/// `jsonrpc`: the string `"2.0"` after unescaping.
#[inline(always)]
fn version<'a, S: Source<'a>>(s: &mut S, v: usize) -> Result<(usize, bool), S::Error> {
    let buf = s.buf();
    // Nearly always written plainly: no string scan, no unescaping.
    if let Some(b"\"2.0\"") = buf.get(v..v + 5) {
        return Ok((s.plain_string(v + 5)?, true));
    }
    if buf.get(v) != Some(&b'"') {
        return Ok((s.skip(v, 2)?, false));
    }
    let (end, escaped) = s.string(v)?;
    let raw = buf.get(v + 1..end - 1).unwrap_or_default();
    Ok((end, Str::new(raw, escaped).decoded_eq(b"2.0")))
}

/// `id`: string, integer literal, `null`, or something else (`None`).
#[inline(always)]
fn id<'a, S: Source<'a>>(s: &mut S, v: usize) -> Result<(usize, Option<IdKind>), S::Error> {
    match s.buf().get(v) {
        Some(b'"') => {
            let (end, escaped) = s.string(v)?;
            Ok((end, Some(IdKind::String { escaped })))
        }
        Some(b'-' | b'0'..=b'9') => {
            let (end, integer) = s.number(v)?;
            Ok((end, integer.then_some(IdKind::Integer)))
        }
        Some(b'n') => Ok((s.null(v)?, Some(IdKind::Null))),
        _ => Ok((s.skip(v, 2)?, None)),
    }
}

/// `error`: an object with exactly one integer `code` and one string `message`.
#[inline(always)]
fn error_object<'a, S: Source<'a>>(s: &mut S, v: usize, f: &mut Facts) -> Result<usize, S::Error> {
    let buf = s.buf();
    f.error_ok = false;
    f.error_code = None;
    f.error_message = None;
    f.error_data = None;
    if buf.get(v) != Some(&b'{') {
        return s.skip(v, 2);
    }
    if s.max_depth() < 2 {
        return Err(s.too_deep(v));
    }
    let (mut codes, mut messages) = (0u8, 0u8);
    let mut i = match s.enter(v)? {
        Ok(first) => first,
        Err(end) => return Ok(end),
    };
    loop {
        let (raw, escaped, at) = s.key(i)?;
        let end = match with_key(raw, escaped, ErrorKey::from_name) {
            ErrorKey::Code => {
                codes = codes.saturating_add(1);
                if let Some(b'-' | b'0'..=b'9') = buf.get(at) {
                    let (end, integer) = s.number(at)?;
                    if integer {
                        f.error_code = Some(span(at, end));
                    }
                    end
                } else {
                    s.skip(at, 3)?
                }
            }
            ErrorKey::Message => {
                messages = messages.saturating_add(1);
                if buf.get(at) == Some(&b'"') {
                    let (end, escaped) = s.string(at)?;
                    f.error_message = Some((span(at + 1, end - 1), escaped));
                    end
                } else {
                    s.skip(at, 3)?
                }
            }
            ErrorKey::Data => {
                let end = s.skip(at, 3)?;
                // With several `data` members (allowed), the first one is exposed.
                f.error_data.get_or_insert(span(at, end));
                end
            }
            ErrorKey::Other => s.skip(at, 3)?,
        };
        let (more, next) = s.next_member(end)?;
        if !more {
            f.error_ok =
                codes == 1 && messages == 1 && f.error_code.is_some() && f.error_message.is_some();
            return Ok(next);
        }
        i = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 8-byte key shortcut answers only when the long way (string scan, then name
    /// match) gives the same key and end, and it does answer for the six names written
    /// plainly with 8 bytes to read.
    #[test]
    fn known_keys_agree_with_the_long_way() {
        let names: [&[u8]; 22] = [
            b"jsonrpc",
            b"id",
            b"method",
            b"params",
            b"result",
            b"error",
            b"i",
            b"",
            b"idx",
            b"ids",
            b"Id",
            b"jsonrpcx",
            b"jsonrp",
            b"methods",
            b"param",
            b"results",
            b"errors",
            b"\\u0069d",
            b"i\\\"",
            b"id\\",
            b"m\x01",
            b"r\xc3\xa9",
        ];
        for name in names {
            for tail in [&b":1}"[..], b" : 1 , \"x\":2}", b"", b":", b"::::::::::"] {
                let mut buf = b"\"".to_vec();
                buf.extend_from_slice(name);
                buf.push(b'"');
                buf.extend_from_slice(tail);
                let long = string::scan_strict(crate::simd::kernels::Scalar, &buf, 0).ok().map(
                    |(end, escaped)| {
                        let raw = &buf[1..end - 1];
                        (with_key(raw, escaped, Key::from_name), end, escaped)
                    },
                );
                match known_key(&buf, 0) {
                    Some((key, end)) => {
                        assert_eq!(long, Some((key, end, false)), "{buf:?}");
                        assert!(key != Key::Other);
                    }
                    None => {
                        let plain = ["jsonrpc", "id", "method", "params", "result", "error"]
                            .iter()
                            .any(|n| n.as_bytes() == name);
                        assert!(!plain || buf.len() < 9, "{buf:?}");
                    }
                }
                // Not at a quote: never.
                assert_eq!(known_key(&buf, 1), None);
            }
        }
    }
}
