//! Borrowed JSON strings: the raw escaped bytes, compared and decoded without a tree.
//!
//! Everything here works on the bytes between the quotes of a string the scanner has
//! already validated. Decoding is still total: malformed input (which the scanner never
//! hands out) decodes to U+FFFD instead of panicking.

use core::fmt;
use core::hash::{Hash, Hasher};
use std::borrow::Cow;

/// A JSON string as it appears in the message: raw bytes between the quotes, escapes kept.
///
/// ```
/// let msg = rpcscan::parse(br#"{"jsonrpc":"2.0","method":"tools\/call","id":1}"#).unwrap();
/// let method = msg.method().unwrap();
/// assert_eq!(method.raw(), br"tools\/call");
/// assert!(method == "tools/call"); // compares decoded, allocates nothing
/// assert_eq!(method.decode().unwrap(), "tools/call");
/// ```
#[derive(Clone, Copy)]
pub struct Str<'a> {
    raw: &'a [u8],
    escaped: bool,
}

/// Why a [`Str`] could not become a Rust `str`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// A `\uXXXX` escape of a lone surrogate (grammatical JSON, not a Unicode scalar value).
    LoneSurrogate {
        /// Byte offset of the escape inside the raw string.
        offset: usize,
    },
    /// The raw bytes are not UTF-8 (only possible for strings the scanner did not check).
    InvalidUtf8,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::LoneSurrogate { offset } => {
                write!(f, "lone surrogate escape at byte {offset} of the string")
            }
            DecodeError::InvalidUtf8 => f.write_str("string is not valid UTF-8"),
        }
    }
}

impl std::error::Error for DecodeError {}

impl<'a> Str<'a> {
    /// Wraps the bytes between the quotes; `escaped` says whether they contain a `\`.
    pub(crate) const fn new(raw: &'a [u8], escaped: bool) -> Self {
        Str { raw, escaped }
    }

    /// Wraps raw string content, finding out whether it has escapes (for bytes that did not
    /// come from the scanner, which knows already).
    pub(crate) fn from_raw(raw: &'a [u8]) -> Self {
        Str::new(raw, memchr::memchr(b'\\', raw).is_some())
    }

    /// The bytes between the quotes, escapes as written.
    pub const fn raw(&self) -> &'a [u8] {
        self.raw
    }

    /// `true` when the raw bytes contain a backslash escape.
    pub const fn has_escapes(&self) -> bool {
        self.escaped
    }

    /// The decoded text, borrowed from the message when there are no escapes.
    pub fn decode(&self) -> Result<Cow<'a, str>, DecodeError> {
        if !self.escaped {
            return core::str::from_utf8(self.raw)
                .map(Cow::Borrowed)
                .map_err(|_| DecodeError::InvalidUtf8);
        }
        let mut out = String::with_capacity(self.raw.len());
        let mut points = CodePoints::new(self.raw);
        loop {
            let at = points.pos;
            let Some(cp) = points.next() else { break };
            match char::from_u32(cp) {
                Some(c) => out.push(c),
                None => return Err(DecodeError::LoneSurrogate { offset: at }),
            }
        }
        Ok(Cow::Owned(out))
    }

    /// [`Str::decode_into`] (in `json/unescape.rs`, a layer that may call the kernels),
    /// with `bulk` decoding a first part in bulk (returning the raw bytes read and the
    /// bytes written); the byte loop here decodes the rest, and is its twin.
    pub(crate) fn decode_into_with(
        &self,
        out: &mut Vec<u8>,
        bulk: impl FnOnce(&[u8], &mut [u8]) -> (usize, usize),
    ) {
        let raw = self.raw;
        if !self.escaped {
            out.extend_from_slice(raw);
            return;
        }
        // Decoded text is never longer than its raw form: decode in place in `raw.len()`
        // bytes (and eight more, so that every word stored below fits), then cut.
        let start = out.len();
        out.resize(start + raw.len() + 8, 0);
        let Some(dst) = out.get_mut(start..) else { return };
        let (mut r, mut w) = bulk(raw, dst);
        loop {
            // Eight bytes at a time, stored whole (what follows a backslash is written
            // over): runs between escapes are short in an escaped message, a call to
            // memcpy or memchr per run costs more than the run.
            if let Some(word) = raw.get(r..r + 8) {
                let mut bytes = [0; 8];
                bytes.copy_from_slice(word);
                if let Some(slot) = dst.get_mut(w..w + 8) {
                    slot.copy_from_slice(&bytes);
                }
                let x = u64::from_le_bytes(bytes) ^ BACKSLASHES;
                // A zero byte of `x` (a backslash) sets its high bit here; bytes above the
                // first zero may be set falsely, those below never are.
                let zeros = x.wrapping_sub(ONES) & !x & HIGHS;
                if zeros == 0 {
                    r += 8;
                    w += 8;
                    continue;
                }
                let k = (zeros.trailing_zeros() / 8) as usize;
                r += k;
                w += k;
            } else {
                match raw.get(r) {
                    None => break,
                    Some(b'\\') => {}
                    Some(&b) => {
                        if let Some(slot) = dst.get_mut(w) {
                            *slot = b;
                        }
                        r += 1;
                        w += 1;
                        continue;
                    }
                }
            }
            // An escape at `r` (a surrogate pair is one), by `decode`'s rules.
            let simple = match raw.get(r + 1) {
                Some(b'"') => Some(b'"'),
                Some(b'\\') => Some(b'\\'),
                Some(b'/') => Some(b'/'),
                Some(b'n') => Some(b'\n'),
                Some(b't') => Some(b'\t'),
                Some(b'r') => Some(b'\r'),
                Some(b'b') => Some(0x08),
                Some(b'f') => Some(0x0C),
                _ => None,
            };
            if let Some(b) = simple {
                if let Some(slot) = dst.get_mut(w) {
                    *slot = b;
                }
                r += 2;
                w += 1;
                continue;
            }
            if raw.get(r + 1).is_some_and(|&b| b >= 0x80) {
                // Not an escape, and a character cut in two: the code points' own rules
                // (U+FFFD for each piece, longer than the raw bytes) for the rest.
                out.truncate(start + w);
                out.extend(Str::new(raw.get(r..).unwrap_or_default(), true).decoded_bytes());
                return;
            }
            let mut points = CodePoints { raw, pos: r };
            let mut buf = [0; 4];
            let len = usize::from(encode_wtf8(points.escape(), &mut buf));
            if let (Some(slot), Some(bytes)) = (dst.get_mut(w..w + len), buf.get(..len)) {
                slot.copy_from_slice(bytes);
            }
            r = points.pos;
            w += len;
        }
        out.truncate(start + w);
    }

    /// The decoded code points; lone surrogate escapes come out as their surrogate value.
    pub(crate) fn code_points(&self) -> CodePoints<'a> {
        CodePoints::new(self.raw)
    }

    /// Decoded bytes (UTF-8, with lone surrogates in the generalized WTF-8 form), without
    /// allocating. Equal strings give equal byte streams however they were escaped.
    pub(crate) fn decoded_bytes(&self) -> DecodedBytes<'a> {
        DecodedBytes { points: self.code_points(), buf: [0; 4], at: 0, len: 0 }
    }

    /// Compares the decoded text with `bytes` without allocating.
    pub(crate) fn decoded_eq(&self, bytes: &[u8]) -> bool {
        if !self.escaped {
            return self.raw == bytes;
        }
        // A decoded string is never longer than its raw form.
        bytes.len() <= self.raw.len() && self.decoded_bytes().eq(bytes.iter().copied())
    }

    /// Feeds the decoded bytes to `state` in fixed 32-byte blocks, so that a string hashes
    /// the same whether or not it was escaped.
    pub(crate) fn hash_decoded<H: Hasher>(&self, state: &mut H) {
        let mut block = [0u8; 32];
        let mut n = 0;
        let mut total = 0usize;
        let mut push = |b: u8, state: &mut H| {
            if let Some(slot) = block.get_mut(n) {
                *slot = b;
            }
            n += 1;
            total += 1;
            if n == block.len() {
                state.write(&block);
                n = 0;
            }
        };
        if self.escaped {
            for b in self.decoded_bytes() {
                push(b, state);
            }
        } else {
            for &b in self.raw {
                push(b, state);
            }
        }
        state.write(block.get(..n).unwrap_or_default());
        state.write_usize(total);
    }
}

impl PartialEq<str> for Str<'_> {
    fn eq(&self, other: &str) -> bool {
        self.decoded_eq(other.as_bytes())
    }
}

impl PartialEq<&str> for Str<'_> {
    fn eq(&self, other: &&str) -> bool {
        self.decoded_eq(other.as_bytes())
    }
}

impl PartialEq for Str<'_> {
    /// Equal when the decoded strings are equal (`"a"` equals `"\u0061"`).
    fn eq(&self, other: &Str<'_>) -> bool {
        if !self.escaped && !other.escaped {
            return self.raw == other.raw;
        }
        self.decoded_bytes().eq(other.decoded_bytes())
    }
}

impl Eq for Str<'_> {}

impl Hash for Str<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.hash_decoded(state);
    }
}

impl fmt::Debug for Str<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{}\"", String::from_utf8_lossy(self.raw))
    }
}

impl fmt::Display for Str<'_> {
    /// The decoded text; lone surrogates show as U+FFFD.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use fmt::Write;
        for cp in self.code_points() {
            f.write_char(char::from_u32(cp).unwrap_or(char::REPLACEMENT_CHARACTER))?;
        }
        Ok(())
    }
}

/// Iterates the code points of raw JSON string content: escapes decoded, surrogate pairs
/// joined, lone surrogates yielded as their value, malformed bytes as U+FFFD.
#[derive(Clone)]
pub(crate) struct CodePoints<'a> {
    raw: &'a [u8],
    pos: usize,
}

impl<'a> CodePoints<'a> {
    pub(crate) fn new(raw: &'a [u8]) -> Self {
        CodePoints { raw, pos: 0 }
    }

    fn hex4(&self, at: usize) -> Option<u32> {
        let digits = self.raw.get(at..at.checked_add(4)?)?;
        let mut v = 0u32;
        for &d in digits {
            v = v * 16 + (d as char).to_digit(16)?;
        }
        Some(v)
    }

    fn escape(&mut self) -> u32 {
        let at = self.pos;
        let Some(&e) = self.raw.get(at + 1) else {
            self.pos += 1;
            return 0xFFFD;
        };
        self.pos += 2;
        match e {
            b'"' => '"' as u32,
            b'\\' => '\\' as u32,
            b'/' => '/' as u32,
            b'b' => 0x08,
            b'f' => 0x0C,
            b'n' => '\n' as u32,
            b'r' => '\r' as u32,
            b't' => '\t' as u32,
            b'u' => {
                let Some(hi) = self.hex4(at + 2) else {
                    return 0xFFFD;
                };
                self.pos = at + 6;
                if (0xD800..0xDC00).contains(&hi)
                    && self.raw.get(at + 6) == Some(&b'\\')
                    && self.raw.get(at + 7) == Some(&b'u')
                {
                    if let Some(lo) = self.hex4(at + 8) {
                        if (0xDC00..0xE000).contains(&lo) {
                            self.pos = at + 12;
                            return 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                        }
                    }
                }
                hi
            }
            _ => 0xFFFD,
        }
    }

    fn utf8(&mut self, lead: u8) -> u32 {
        let len = match lead {
            0xC2..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF4 => 4,
            _ => 0,
        };
        let bytes = self.raw.get(self.pos..self.pos + len.max(1));
        match bytes.and_then(|b| core::str::from_utf8(b).ok()) {
            Some(s) if len > 0 => {
                self.pos += len;
                s.chars().next().map_or(0xFFFD, u32::from)
            }
            _ => {
                self.pos += 1;
                0xFFFD
            }
        }
    }
}

impl Iterator for CodePoints<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        let b = *self.raw.get(self.pos)?;
        Some(match b {
            b'\\' => self.escape(),
            0..=0x7F => {
                self.pos += 1;
                u32::from(b)
            }
            _ => self.utf8(b),
        })
    }
}

/// Bytes of a word all `0x01`, all `0x80`, all backslashes: the word-at-a-time search.
const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;
const BACKSLASHES: u64 = ONES * b'\\' as u64;

/// The UTF-8 (generalized for lone surrogates) bytes of decoded code points.
pub(crate) struct DecodedBytes<'a> {
    points: CodePoints<'a>,
    buf: [u8; 4],
    at: u8,
    len: u8,
}

impl Iterator for DecodedBytes<'_> {
    type Item = u8;

    fn next(&mut self) -> Option<u8> {
        if self.at == self.len {
            let cp = self.points.next()?;
            self.len = encode_wtf8(cp, &mut self.buf);
            self.at = 0;
        }
        let b = self.buf.get(usize::from(self.at)).copied();
        self.at += 1;
        b
    }
}

/// Encodes a code point (surrogates included) as UTF-8 bytes; returns the length.
fn encode_wtf8(cp: u32, out: &mut [u8; 4]) -> u8 {
    // The `as u8` casts below keep the low bits on purpose: each is masked first.
    if cp < 0x80 {
        out[0] = cp as u8;
        1
    } else if cp < 0x800 {
        out[0] = 0xC0 | (cp >> 6) as u8;
        out[1] = 0x80 | (cp & 0x3F) as u8;
        2
    } else if cp < 0x10000 {
        out[0] = 0xE0 | (cp >> 12) as u8;
        out[1] = 0x80 | ((cp >> 6) & 0x3F) as u8;
        out[2] = 0x80 | (cp & 0x3F) as u8;
        3
    } else {
        out[0] = 0xF0 | ((cp >> 18) & 0x07) as u8;
        out[1] = 0x80 | ((cp >> 12) & 0x3F) as u8;
        out[2] = 0x80 | ((cp >> 6) & 0x3F) as u8;
        out[3] = 0x80 | (cp & 0x3F) as u8;
        4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(raw: &str) -> Str<'_> {
        Str::from_raw(raw.as_bytes())
    }

    #[test]
    fn decodes_escapes_and_pairs() {
        assert_eq!(s(r"a\u0062c").decode().unwrap(), "abc");
        assert_eq!(s(r"\ud83d\ude00").decode().unwrap(), "😀");
        assert_eq!(s(r#"\"\\\/\b\f\n\r\t"#).decode().unwrap(), "\"\\/\u{8}\u{c}\n\r\t");
        assert!(matches!(s("plain").decode().unwrap(), Cow::Borrowed("plain")));
        assert_eq!(s(r"x\ud800").decode(), Err(DecodeError::LoneSurrogate { offset: 1 }));
        assert_eq!(s(r"\udc00\ud800").decode(), Err(DecodeError::LoneSurrogate { offset: 0 }));
    }

    #[test]
    fn decodes_into_a_buffer_as_the_code_points_say() {
        #[rustfmt::skip]
        let cases = [
            r"plain", r"a\u0062c", r"\ud83d\ude00x", r#"\"\\\/\b\f\n\r\t"#, r"x\ud800", r"\udc00\ud800y",
            r"\ud800\u0041", r"\u12", r"\u12zz", r"end\", r"\q", "é\\n😀", r#"{\"id\":1,\"m\":\"\u00e9\"}"#,
            r"0123456\n0123456789abcdef\t01234567\u00e9x0123456\\", r"01234567\ud83d\ude0001234567", r"0123456\",
        ];
        for raw in cases {
            let mut out = b"kept".to_vec();
            s(raw).decode_into(&mut out);
            let expected: Vec<u8> = b"kept".iter().copied().chain(s(raw).decoded_bytes()).collect();
            assert_eq!(out, expected, "{raw}");
        }
        // Every short string over an alphabet of escape pieces (a small LCG picks them).
        let alphabet = ["a", "\\", "\"", "u", "0", "d", "8", "D", "c", "n", "é"];
        let mut seed = 1u64;
        for _ in 0..if cfg!(miri) { 50 } else { 5000 } {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let len = (seed >> 59) as usize + (seed >> 33) as usize % 24;
            let mut raw = String::new();
            for n in 0..len {
                let pick = seed.rotate_left(n as u32 * 5) as usize % alphabet.len();
                raw.push_str(alphabet[pick]);
            }
            let mut out = Vec::new();
            s(&raw).decode_into(&mut out);
            assert_eq!(out, s(&raw).decoded_bytes().collect::<Vec<_>>(), "{raw}");
        }
        // Bytes that are not UTF-8 are copied, escapes or not.
        for raw in [&b"a\xff\\n"[..], b"a\xff"] {
            let mut out = Vec::new();
            Str::from_raw(raw).decode_into(&mut out);
            assert_eq!(out.first(), Some(&b'a'));
            assert_eq!(out.get(1), Some(&0xFF), "{raw:?}");
        }
    }

    #[test]
    fn compares_decoded() {
        assert!(s(r"m\u0065thod") == "method");
        assert_eq!(s(r"m\u00e9thode"), s("méthode"));
        assert_eq!(s(r"\ud800"), s(r"\uD800"));
        assert_ne!(s("a"), s("b"));
        assert!(s(r"\u0061") != "aa");
    }

    #[test]
    fn hashes_decoded() {
        use std::collections::hash_map::DefaultHasher;
        let h = |x: Str<'_>| {
            let mut st = DefaultHasher::new();
            x.hash(&mut st);
            st.finish()
        };
        let long = "x".repeat(70);
        let long_escaped = long.replacen('x', r"\u0078", 40);
        assert_eq!(h(s(&long)), h(s(&long_escaped)));
        assert_eq!(h(s(r"\u00e9")), h(s("é")));
        assert_ne!(h(s("ab")), h(s("ba")));
    }

    #[test]
    fn malformed_input_never_panics() {
        for raw in [&b"\\"[..], b"\\u12", b"\\x", b"\xff", b"\xe2\x82", b"\\ud800\\u"] {
            let _ = Str::from_raw(raw).decode();
            let _ = Str::from_raw(raw).decoded_bytes().count();
        }
    }
}
