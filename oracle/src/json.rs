//! Strict JSON validity (docs/spec.md §2) built on serde_json's raw-value parser, plus the few
//! literal-level helpers the classifier needs: members of an object in source order, string
//! decoding that tolerates lone surrogates, and the integer-literal test.
//!
//! serde_json does the grammar. What it does not do the way docs/spec.md §2 wants is checked here,
//! before the bytes reach it (each point has a test in `tests/serde_json_quirks.rs`):
//!
//! - UTF-8 is checked on the whole input with `std::str::from_utf8` (rejects overlong forms,
//!   encoded surrogates, code points above U+10FFFF). serde_json only checks UTF-8 where it
//!   builds a `str`; its skipping paths (`IgnoredAny`) accept `"\xff"`.
//! - Depth is checked with a byte scan: a `&RawValue` is skipped iteratively and has *no*
//!   depth limit at all (so 100 000 nested arrays would be accepted), while `Value` stops at
//!   128.
//! - A leading BOM is rejected explicitly (serde_json rejects it too, as a syntax error).

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

/// Deepest nesting a message may have; the top-level object or array is depth 1.
pub const MAX_DEPTH: usize = 1024;

/// Why bytes are not one JSON text (the `-32700` family). The oracle does not try to name
/// the exact reason of the scanner (`syntax`, `trailing_bytes`, ...): when several apply,
/// which one is "first" depends on scan order, and only the family is normative here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotJson {
    /// No bytes but whitespace.
    Empty,
    /// Anything else: UTF-8, BOM, syntax, trailing bytes, depth.
    Parse,
}

impl NotJson {
    /// The reason name reported in [`crate::Verdict::reason`].
    pub fn as_str(self) -> &'static str {
        match self {
            NotJson::Empty => "empty",
            NotJson::Parse => "parse",
        }
    }
}

/// JSON whitespace per RFC 8259: space, tab, LF, CR. Nothing else.
pub fn is_whitespace(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
}

/// True when `bytes` is one strict JSON text (docs/spec.md §2) of any type, scalars included.
pub fn validate_json(bytes: &[u8]) -> bool {
    parse(bytes).is_ok()
}

/// Parses `bytes` as one strict JSON text and returns it as a raw value (its text without
/// the surrounding whitespace).
pub fn parse(bytes: &[u8]) -> Result<&RawValue, NotJson> {
    if bytes.iter().all(|&b| is_whitespace(b)) {
        return Err(NotJson::Empty);
    }
    let text = std::str::from_utf8(bytes).map_err(|_| NotJson::Parse)?;
    if text.starts_with('\u{feff}') || depth(bytes) > MAX_DEPTH {
        return Err(NotJson::Parse);
    }
    // `from_str` ends with `Deserializer::end`, which allows only space/tab/CR/LF after
    // the value.
    serde_json::from_str::<&RawValue>(text).map_err(|_| NotJson::Parse)
}

/// Deepest bracket nesting of `bytes`, counting brackets outside strings (0 for scalars;
/// the top-level object or array is depth 1).
///
/// Exact on valid JSON (strings are well formed there, so the scan knows where they end).
/// On invalid JSON its answer does not matter: the bytes are rejected either way. It runs
/// before serde_json so that nothing deep ever reaches a recursive parser.
pub fn depth(bytes: &[u8]) -> usize {
    let mut depth = 0usize;
    let mut deepest = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &b in bytes {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// One member of an object, in source order.
#[derive(Debug, Clone, Copy)]
pub struct Member<'a> {
    /// The key's raw text, quotes included (`"m\u0065thod"`).
    pub raw_key: &'a str,
    /// The value's raw text, without surrounding whitespace.
    pub value: &'a str,
}

impl Member<'_> {
    /// The key after unescaping; `None` when it holds a lone surrogate escape (such a key
    /// can equal no envelope key: they are all ASCII).
    pub fn key(&self) -> Option<String> {
        decode_string(self.raw_key)
    }
}

/// The members of a raw JSON object, duplicates kept, in source order. `None` when `object`
/// is not an object.
pub fn members(object: &str) -> Option<Vec<Member<'_>>> {
    serde_json::from_str::<Members<'_>>(object).ok().map(|m| m.0)
}

/// serde target for [`members`]: keys and values both read as `&RawValue`, so nothing is
/// decoded, merged or depth-limited behind our back.
struct Members<'a>(Vec<Member<'a>>);

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(MembersVisitor)
    }
}

struct MembersVisitor;

impl<'de> Visitor<'de> for MembersVisitor {
    type Value = Members<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut members = Vec::new();
        // serde_json reads a map key as `&RawValue` through the same iterative skipper as
        // values: escapes stay visible, lone surrogates are accepted, control bytes are not.
        while let Some(key) = map.next_key::<&'de RawValue>()? {
            let value = map.next_value::<&'de RawValue>()?;
            members.push(Member { raw_key: key.get(), value: value.get() });
        }
        Ok(Members(members))
    }
}

/// True for a raw value that is a string.
pub fn is_string(raw: &str) -> bool {
    raw.starts_with('"')
}

/// True for an integer literal: `-?(0|[1-9][0-9]*)`, any number of digits.
pub fn is_integer(raw: &str) -> bool {
    let digits = raw.strip_prefix('-').unwrap_or(raw).as_bytes();
    match digits {
        [b'0'] => true,
        [b'1'..=b'9', rest @ ..] => rest.iter().all(u8::is_ascii_digit),
        _ => false,
    }
}

/// True for a raw value that is an object.
pub fn is_object(raw: &str) -> bool {
    raw.starts_with('{')
}

/// True for a raw value that is an array.
pub fn is_array(raw: &str) -> bool {
    raw.starts_with('[')
}

/// Decodes a raw JSON string literal (quotes included). `None` when it is not a well-formed
/// string literal or holds a lone surrogate escape (which is valid JSON but no `str`).
pub fn decode_string(raw: &str) -> Option<String> {
    let inner = raw.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let decoded = match chars.next()? {
            '"' => '"',
            '\\' => '\\',
            '/' => '/',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'u' => {
                let unit = hex4(&mut chars)?;
                match unit {
                    0xD800..=0xDBFF => {
                        // A high surrogate must be followed by `\u` and a low surrogate.
                        if chars.next()? != '\\' || chars.next()? != 'u' {
                            return None;
                        }
                        let low = hex4(&mut chars)?;
                        if !(0xDC00..=0xDFFF).contains(&low) {
                            return None;
                        }
                        let scalar = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                        char::from_u32(scalar)?
                    }
                    _ => char::from_u32(unit)?, // `None` for a lone low surrogate
                }
            }
            _ => return None,
        };
        out.push(decoded);
    }
    Some(out)
}

/// Reads four hex digits of a `\u` escape.
fn hex4(chars: &mut std::str::Chars<'_>) -> Option<u32> {
    let mut value = 0;
    for _ in 0..4 {
        value = value * 16 + chars.next()?.to_digit(16)?;
    }
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_literals() {
        for yes in ["0", "-0", "1", "-1", "10", "18446744073709551617", &"9".repeat(400)] {
            assert!(is_integer(yes), "{yes}");
        }
        for no in ["", "-", "01", "-01", "1.0", "1e2", "1E2", "+1", "\"1\"", "true", "- 1"] {
            assert!(!is_integer(no), "{no}");
        }
    }

    #[test]
    fn string_decoding() {
        let cases: &[(&str, Option<&str>)] = &[
            (r#""m\u0065thod""#, Some("method")),
            (r#""2\u002e0""#, Some("2.0")),
            (r#""\"\\\/\b\f\n\r\t""#, Some("\"\\/\u{8}\u{c}\n\r\t")),
            (r#""\ud83d\ude00""#, Some("\u{1f600}")),
            (r#""\uD83D\uDE00""#, Some("\u{1f600}")),
            (r#""é中""#, Some("é中")),
            (r#""\ud800""#, None),
            (r#""\udc00""#, None),
            (r#""\ud800\u0041""#, None),
            (r#""\ud800\n""#, None),
            (r#""\ud800""#, None),
            (r#""\x""#, None),
            (r#""\u12""#, None),
            ("\"abc", None),
            ("abc", None),
            ("", None),
        ];
        for (raw, want) in cases {
            assert_eq!(decode_string(raw).as_deref(), *want, "{raw}");
        }
    }

    #[test]
    fn depth_scan() {
        assert_eq!(depth(b"1"), 0);
        assert_eq!(depth(b"{}"), 1);
        assert_eq!(depth(br#"{"a":[[{}]]}"#), 4);
        assert_eq!(depth(br#"{"a":"[[[[\"[["}"#), 1);
        assert_eq!(depth(br#"["\\"]"#), 1);
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(validate_json(deep(MAX_DEPTH).as_bytes()));
        assert!(!validate_json(deep(MAX_DEPTH + 1).as_bytes()));
        assert!(!validate_json(deep(200_000).as_bytes()));
    }

    #[test]
    fn members_keep_duplicates_and_order() {
        let m = members(r#"{"b":1, "a" : [2] ,"b":{"c":3},"\u0061":"x"}"#).unwrap();
        let got: Vec<(&str, &str)> = m.iter().map(|m| (m.raw_key, m.value)).collect();
        assert_eq!(
            got,
            [
                (r#""b""#, "1"),
                (r#""a""#, "[2]"),
                (r#""b""#, r#"{"c":3}"#),
                (r#""\u0061""#, r#""x""#)
            ]
        );
        assert_eq!(m[3].key().as_deref(), Some("a"));
        assert!(members("[1]").is_none());
        assert!(members("1").is_none());
    }
}
