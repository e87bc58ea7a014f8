//! An `arbitrary`-driven generator of valid-but-nasty JSON-RPC messages (the idea of
//! sonic-rs `fuzz/src/gen.rs`): always grammatical JSON (only the depth limit may be
//! crossed, on purpose), aimed at every rule's edge.
//!
//! The fuzzer's bytes are the generator's choices, so libFuzzer's mutations move through
//! message *shapes*: escaped and duplicated keys, odd ids (`-0`, 2^64+1, 400 digits, lone
//! surrogates), escaped versions, numbers at every corner of the grammar, strings mixing
//! escapes, surrogate pairs and raw UTF-8, whitespace between all tokens, nesting just under
//! and over 1024, nested objects full of envelope keys, batches.
//!
//! ```
//! use arbitrary::{Arbitrary, Unstructured};
//! let m = rpcscan_fuzz::model::Generated::arbitrary(&mut Unstructured::new(b"\x03\x01\x07")).unwrap();
//! assert!(rpcscan_oracle::validate_json(&m.bytes) || rpcscan_oracle::json::depth(&m.bytes) > 1024);
//! ```

use std::fmt::{self, Write as _};

use arbitrary::{Arbitrary, Result, Unstructured};

/// Nesting of the top-level object; the generator's own recursion stops below this, and
/// only [`Gen::deep`] goes further.
const BUDGET: u32 = 6;

/// One generated message and what the generator knows about it.
pub struct Generated {
    /// The message text.
    pub bytes: Vec<u8>,
    /// The literal of the top-level `id` member when the message has exactly one (the
    /// bytes `Message::id` or `Invalid::id` must return, if they return an id).
    pub id: Option<Vec<u8>>,
}

impl fmt::Debug for Generated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Generated")
            .field("bytes", &String::from_utf8_lossy(&self.bytes))
            .field("id", &self.id.as_deref().map(String::from_utf8_lossy))
            .finish()
    }
}

impl<'a> Arbitrary<'a> for Generated {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let mut gen = Gen { u, ws_percent: 0, ids: Vec::new() };
        gen.ws_percent = *gen.u.choose(&[0, 0, 10, 50])?;
        let mut out = gen.ws()?;
        match gen.u.int_in_range(0..=19u8)? {
            0 => out.extend(gen.value(2)?),
            1 => {
                // A batch: its elements' ids are not the top-level id.
                let mut items = Vec::new();
                while items.len() < 4 && (items.is_empty() || gen.u.arbitrary::<bool>()?) {
                    items.push(gen.envelope()?);
                }
                gen.ids.clear();
                out.extend(gen.array(items)?);
            }
            _ => out.extend(gen.envelope()?),
        }
        out.extend(gen.ws()?);
        let id = match gen.ids.as_slice() {
            [one] => Some(one.clone()),
            _ => None,
        };
        Ok(Generated { bytes: out, id })
    }
}

/// The six envelope keys (docs/spec.md §3).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Key {
    Jsonrpc,
    Id,
    Method,
    Params,
    Result,
    Error,
}

impl Key {
    const ALL: [Key; 6] =
        [Key::Jsonrpc, Key::Id, Key::Method, Key::Params, Key::Result, Key::Error];

    fn name(self) -> &'static str {
        match self {
            Key::Jsonrpc => "jsonrpc",
            Key::Id => "id",
            Key::Method => "method",
            Key::Params => "params",
            Key::Result => "result",
            Key::Error => "error",
        }
    }
}

/// Generator state for one message.
struct Gen<'u, 'a> {
    u: &'u mut Unstructured<'a>,
    /// Chance, per gap between tokens, of whitespace there.
    ws_percent: u8,
    /// Literals of the top-level `id` members written so far.
    ids: Vec<Vec<u8>>,
}

impl Gen<'_, '_> {
    fn percent(&mut self, p: u8) -> Result<bool> {
        Ok(self.u.int_in_range(0..=99u8)? < p)
    }

    /// Space, tab, CR, LF or nothing.
    fn ws(&mut self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        while self.ws_percent > 0 && out.len() < 4 && self.percent(self.ws_percent)? {
            out.push(*self.u.choose(b" \t\r\n")?);
        }
        Ok(out)
    }

    /// A top-level object aimed at one verdict, or at none.
    fn envelope(&mut self) -> Result<Vec<u8>> {
        let mut members: Vec<(Vec<u8>, Vec<u8>, Option<Key>)> = Vec::new();
        let shape = self.u.int_in_range(0..=4u8)?;
        let wanted: &[Key] = match shape {
            0 => &[Key::Jsonrpc, Key::Id, Key::Method, Key::Params],
            1 => &[Key::Jsonrpc, Key::Method, Key::Params],
            2 => &[Key::Jsonrpc, Key::Id, Key::Result],
            3 => &[Key::Jsonrpc, Key::Id, Key::Error],
            _ => &[Key::Jsonrpc],
        };
        for &key in wanted {
            // Each member of the shape is left out now and then (`params` often).
            let keep = match key {
                Key::Params => 75,
                Key::Id if shape == 3 => 85,
                _ => 97,
            };
            if self.percent(keep)? {
                let value = self.member_value(key)?;
                members.push((self.key(key.name())?, value, Some(key)));
            }
        }
        // Extra members: envelope keys (duplicates and conflicts) and unknown ones.
        while members.len() < 10 && self.percent(if shape == 4 { 50 } else { 25 })? {
            if self.percent(35)? {
                let key = *self.u.choose(&Key::ALL)?;
                let value = if self.percent(50)? {
                    // The same value again, maybe differently spelled key.
                    match members.iter().find(|m| m.2 == Some(key)) {
                        Some(m) => m.1.clone(),
                        None => self.member_value(key)?,
                    }
                } else {
                    self.member_value(key)?
                };
                members.push((self.key(key.name())?, value, Some(key)));
            } else {
                let key = self.unknown_key()?;
                let value = self.value(2)?;
                members.push((key, value, None));
            }
        }
        // Shuffle.
        for i in (1..members.len()).rev() {
            let j = self.u.int_in_range(0..=i)?;
            members.swap(i, j);
        }
        for (_, value, key) in &members {
            if *key == Some(Key::Id) {
                self.ids.push(value.clone());
            }
        }
        let members = members.into_iter().map(|(k, v, _)| (k, v)).collect();
        self.object(members)
    }

    fn member_value(&mut self, key: Key) -> Result<Vec<u8>> {
        match key {
            Key::Jsonrpc => self.version(),
            Key::Id => self.id(),
            Key::Method => self.method(),
            Key::Params => self.params(),
            Key::Result => {
                if self.percent(3)? {
                    self.deep()
                } else {
                    self.value(3)
                }
            }
            Key::Error => self.error_object(),
        }
    }

    /// `name` as a key literal, now and then with `\u` escapes in it.
    fn key(&mut self, name: &str) -> Result<Vec<u8>> {
        if !self.percent(15)? {
            return Ok(format!("\"{name}\"").into_bytes());
        }
        let mut out = String::from("\"");
        for c in name.chars() {
            if self.u.arbitrary()? {
                let hex = format!("{:04x}", c as u32);
                let hex = if self.u.arbitrary()? { hex.to_uppercase() } else { hex };
                out.push_str("\\u");
                out.push_str(&hex);
            } else {
                out.push(c);
            }
        }
        out.push('"');
        Ok(out.into_bytes())
    }

    fn unknown_key(&mut self) -> Result<Vec<u8>> {
        Ok(match self.u.int_in_range(0..=9u8)? {
            0 => br#""Method""#.to_vec(),
            1 => br#""ID""#.to_vec(),
            2 => br#""\ud800""#.to_vec(),
            3 => br#""_meta""#.to_vec(),
            4 => br#""""#.to_vec(),
            5 => br#""id ""#.to_vec(),
            6 => br#""jsonrpc\u0000""#.to_vec(),
            _ => self.string()?,
        })
    }

    fn version(&mut self) -> Result<Vec<u8>> {
        Ok(match self.u.int_in_range(0..=19u8)? {
            0 | 1 => {
                let mut out = b"\"".to_vec();
                for c in "2.0".chars() {
                    if self.u.arbitrary()? {
                        out.extend(format!("\\u{:04X}", c as u32).into_bytes());
                    } else {
                        out.push(c as u8);
                    }
                }
                out.push(b'"');
                out
            }
            2 => self
                .u
                .choose(&[
                    &br#""1.0""#[..],
                    b"2.0",
                    b"2",
                    br#""2.0 ""#,
                    br#""2.00""#,
                    b"null",
                    br#""""#,
                    br#""2\u0000""#,
                    br#"["2.0"]"#,
                    br#"" 2.0""#,
                ])?
                .to_vec(),
            3 => self.value(1)?,
            _ => br#""2.0""#.to_vec(),
        })
    }

    fn id(&mut self) -> Result<Vec<u8>> {
        Ok(match self.u.int_in_range(0..=19u8)? {
            0..=4 => self.u.int_in_range(0..=1000u32)?.to_string().into_bytes(),
            5 => self.u.arbitrary::<i64>()?.to_string().into_bytes(),
            6 => self.u.arbitrary::<u64>()?.to_string().into_bytes(),
            7 => self
                .u
                .choose(&[
                    "-0",
                    "9007199254740993",
                    "18446744073709551615",
                    "18446744073709551616",
                    "18446744073709551617",
                    "9223372036854775807",
                    "9223372036854775808",
                    "-9223372036854775808",
                    "-9223372036854775809",
                ])?
                .as_bytes()
                .to_vec(),
            8 => {
                // A long integer, far beyond u64.
                let len = self.u.int_in_range(19..=400usize)?;
                let mut digits = vec![b'1' + self.u.int_in_range(0..=8u8)?];
                for _ in 1..len {
                    digits.push(b'0' + self.u.int_in_range(0..=9u8)?);
                }
                if self.u.arbitrary()? {
                    digits.insert(0, b'-');
                }
                digits
            }
            9..=13 => self.string()?,
            14 => br#""""#.to_vec(),
            15 => self.number()?,
            _ => self
                .u
                .choose(&[
                    &b"null"[..],
                    b"1.0",
                    b"1e2",
                    b"-0.0",
                    b"0E0",
                    b"true",
                    b"false",
                    b"{}",
                    b"[]",
                    br#"{"id":1}"#,
                    b"[1]",
                ])?
                .to_vec(),
        })
    }

    fn method(&mut self) -> Result<Vec<u8>> {
        Ok(match self.u.int_in_range(0..=19u8)? {
            0..=3 => self.string()?,
            4 => self.value(1)?,
            5 => br#""tools\/call""#.to_vec(),
            6 => br#""\ud800ping""#.to_vec(),
            7 => br#""notifications/\u0070rogress""#.to_vec(),
            8 => "\"outils/appel 🚀\"".as_bytes().to_vec(),
            _ => {
                let name = self.u.choose(&[
                    "initialize",
                    "notifications/initialized",
                    "tools/list",
                    "tools/call",
                    "resources/read",
                    "prompts/get",
                    "ping",
                    "notifications/progress",
                    "",
                ])?;
                format!("\"{name}\"").into_bytes()
            }
        })
    }

    fn params(&mut self) -> Result<Vec<u8>> {
        Ok(match self.u.int_in_range(0..=19u8)? {
            0 => b"null".to_vec(),
            1 => self.scalar()?,
            2 => self.deep()?,
            3 => {
                // Nested envelope keys that must not count.
                let inner = vec![
                    (self.key("method")?, br#""tools/call""#.to_vec()),
                    (self.key("id")?, b"null".to_vec()),
                    (self.key("jsonrpc")?, b"1".to_vec()),
                    (self.key("result")?, b"{}".to_vec()),
                ];
                let nested = self.object(inner)?;
                self.object(vec![(br#""request""#.to_vec(), nested)])?
            }
            4..=10 => self.array_value(2)?,
            _ => self.object_value(2)?,
        })
    }

    fn error_object(&mut self) -> Result<Vec<u8>> {
        if self.percent(6)? {
            return self.value(1);
        }
        let mut members = Vec::new();
        if self.percent(95)? {
            let code = if self.percent(85)? {
                match self.u.int_in_range(0..=3u8)? {
                    0 => self.u.arbitrary::<i64>()?.to_string().into_bytes(),
                    1 => b"-99999999999999999999999".to_vec(),
                    2 => b"-0".to_vec(),
                    _ => self
                        .u
                        .choose(&["-32601", "-32602", "-32603", "-32700", "-32600", "0"])?
                        .as_bytes()
                        .to_vec(),
                }
            } else {
                self.value(1)?
            };
            members.push((self.key("code")?, code));
        }
        if self.percent(95)? {
            let message = if self.percent(90)? { self.string()? } else { self.value(1)? };
            members.push((self.key("message")?, message));
        }
        while members.len() < 6 && self.percent(40)? {
            let name = *self.u.choose(&["data", "data", "code", "message", "Code", "x"])?;
            let value = match name {
                "code" => b"1".to_vec(),
                "message" => br#""again""#.to_vec(),
                _ => self.value(3)?,
            };
            members.push((self.key(name)?, value));
        }
        for i in (1..members.len()).rev() {
            let j = self.u.int_in_range(0..=i)?;
            members.swap(i, j);
        }
        self.object(members)
    }

    fn value(&mut self, budget: u32) -> Result<Vec<u8>> {
        if budget == 0 {
            return self.scalar();
        }
        match self.u.int_in_range(0..=9u8)? {
            0..=4 => self.scalar(),
            5..=7 => self.object_value(budget - 1),
            _ => self.array_value(budget - 1),
        }
    }

    fn object_value(&mut self, budget: u32) -> Result<Vec<u8>> {
        let mut members = Vec::new();
        while members.len() < 5 && self.u.arbitrary::<bool>()? {
            let key = if self.percent(25)? {
                let name = self.u.choose(&Key::ALL)?.name();
                self.key(name)?
            } else {
                self.string()?
            };
            let value = self.value(budget.min(BUDGET))?;
            members.push((key, value));
        }
        self.object(members)
    }

    fn array_value(&mut self, budget: u32) -> Result<Vec<u8>> {
        let mut items = Vec::new();
        while items.len() < 5 && self.u.arbitrary::<bool>()? {
            items.push(self.value(budget.min(BUDGET))?);
        }
        self.array(items)
    }

    /// A value that puts its message just under, at, or just over the depth limit (the
    /// value sits at depth 2).
    fn deep(&mut self) -> Result<Vec<u8>> {
        let levels = self.u.int_in_range(1018..=1026usize)?;
        let objects: u8 = self.u.arbitrary()?;
        let mut out = Vec::with_capacity(levels * 6);
        let mut close = Vec::with_capacity(levels);
        for level in 0..levels {
            if (objects >> (level % 8)) & 1 == 1 {
                out.extend_from_slice(br#"{"k":"#);
                close.push(b'}');
            } else {
                out.push(b'[');
                close.push(b']');
            }
        }
        out.extend(self.scalar()?);
        out.extend(close.into_iter().rev());
        Ok(out)
    }

    fn scalar(&mut self) -> Result<Vec<u8>> {
        Ok(match self.u.int_in_range(0..=5u8)? {
            0 => self.u.choose(&["null", "true", "false"])?.as_bytes().to_vec(),
            1 | 2 => self.number()?,
            _ => self.string()?,
        })
    }

    /// A number literal anywhere in the RFC 8259 grammar.
    fn number(&mut self) -> Result<Vec<u8>> {
        if self.percent(20)? {
            return Ok(self
                .u
                .choose(&[
                    "-0",
                    "0",
                    "-0.0",
                    "1e400",
                    "-1e400",
                    "1e-400",
                    "0.0000000000000000000001",
                    "18446744073709551616",
                    "-9223372036854775809",
                    "123456789012345678901234567890",
                    "1E+2",
                    "0e0",
                    "2.2250738585072011e-308",
                ])?
                .as_bytes()
                .to_vec());
        }
        let mut out = Vec::new();
        if self.u.arbitrary()? {
            out.push(b'-');
        }
        let int_len = self.u.int_in_range(0..=24u8)?;
        if int_len == 0 {
            out.push(b'0');
        } else {
            out.push(b'1' + self.u.int_in_range(0..=8u8)?);
            for _ in 1..int_len {
                out.push(b'0' + self.u.int_in_range(0..=9u8)?);
            }
        }
        if self.u.arbitrary()? {
            out.push(b'.');
            for _ in 0..self.u.int_in_range(1..=20u8)? {
                out.push(b'0' + self.u.int_in_range(0..=9u8)?);
            }
        }
        if self.u.arbitrary()? {
            out.push(*self.u.choose(b"eE")?);
            match self.u.int_in_range(0..=2u8)? {
                0 => out.push(b'+'),
                1 => out.push(b'-'),
                _ => {}
            }
            for _ in 0..self.u.int_in_range(1..=4u8)? {
                out.push(b'0' + self.u.int_in_range(0..=9u8)?);
            }
        }
        Ok(out)
    }

    /// A string literal with escapes, surrogates and raw UTF-8 mixed in.
    fn string(&mut self) -> Result<Vec<u8>> {
        let mut out = String::from("\"");
        let pieces = self.u.int_in_range(0..=10u8)?;
        for _ in 0..pieces {
            match self.u.int_in_range(0..=11u8)? {
                0 => out.push_str(
                    self.u.choose(&[r#"\""#, r"\\", r"\/", r"\b", r"\f", r"\n", r"\r", r"\t"])?,
                ),
                1 => {
                    let unit: u16 = self.u.arbitrary()?;
                    if self.u.arbitrary()? {
                        let _ = write!(out, "\\u{unit:04X}");
                    } else {
                        let _ = write!(out, "\\u{unit:04x}");
                    }
                }
                2 => {
                    // A proper surrogate pair.
                    let c = self.u.int_in_range(0x10000..=0x10FFFFu32)? - 0x10000;
                    let (hi, lo) = (0xD800 + (c >> 10), 0xDC00 + (c & 0x3FF));
                    let _ = write!(out, "\\u{hi:04x}\\u{lo:04X}");
                }
                3 => out.push_str(self.u.choose(&[
                    r"\ud800",
                    r"\udc00",
                    r"\uDBFF\u0041",
                    r"\ud800\ud800",
                    r"\udfff\ud800",
                    r"\u0000",
                ])?),
                4 => {
                    // Any char, raw; control characters must be escaped.
                    let c: char = self.u.arbitrary()?;
                    match c {
                        '"' => out.push_str(r#"\""#),
                        '\\' => out.push_str(r"\\"),
                        '\0'..='\u{1f}' => {
                            let _ = write!(out, "\\u{:04x}", c as u32);
                        }
                        _ => out.push(c),
                    }
                }
                5 => out.push_str(self.u.choose(&[
                    "é",
                    "中",
                    "😀",
                    "\u{2028}",
                    "\u{feff}",
                    "\u{ffff}",
                    "\u{10ffff}",
                    "\u{80}",
                    "\u{7f}",
                ])?),
                6 => out.push_str(
                    self.u
                        .choose(&["method", "id", "2.0", "jsonrpc", "{", "]", ":", ",", "\\\""])?,
                ),
                _ => out.push_str(self.u.choose(&["a", "tools", " ", "x1", "Z", "-", "'"])?),
            }
        }
        out.push('"');
        Ok(out.into_bytes())
    }

    fn object(&mut self, members: Vec<(Vec<u8>, Vec<u8>)>) -> Result<Vec<u8>> {
        let mut out = vec![b'{'];
        for (i, (key, value)) in members.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend(self.ws()?);
            out.extend_from_slice(key);
            out.extend(self.ws()?);
            out.push(b':');
            out.extend(self.ws()?);
            out.extend_from_slice(value);
            out.extend(self.ws()?);
        }
        if members.is_empty() {
            out.extend(self.ws()?);
        }
        out.push(b'}');
        Ok(out)
    }

    fn array(&mut self, items: Vec<Vec<u8>>) -> Result<Vec<u8>> {
        let mut out = vec![b'['];
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend(self.ws()?);
            out.extend_from_slice(item);
            out.extend(self.ws()?);
        }
        if items.is_empty() {
            out.extend(self.ws()?);
        }
        out.push(b']');
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The model must reach every verdict from random choices, or the agreement the
    /// `structured` target checks means little.
    #[test]
    fn reaches_every_verdict() {
        let mut rng = rpcscan_oracle::rng::Rng::new(5);
        let mut kinds = std::collections::BTreeMap::new();
        let mut reasons = std::collections::BTreeMap::new();
        let mut known_ids = 0;
        for _ in 0..20_000 {
            let data: Vec<u8> = (0..rng.range(16, 600)).map(|_| rng.next_u64() as u8).collect();
            let m = Generated::arbitrary(&mut Unstructured::new(&data)).unwrap();
            let v = rpcscan_testkit::check::differential(&m.bytes);
            rpcscan_testkit::check::accessors(&m.bytes, m.id.as_deref());
            *kinds.entry(v.kind.as_str()).or_insert(0) += 1;
            *reasons.entry(v.reason.unwrap_or("-")).or_insert(0) += 1;
            known_ids += usize::from(m.id.is_some());
        }
        println!("{kinds:?}\n{reasons:?}\nknown ids: {known_ids}");
        assert_eq!(kinds.len(), 5, "{kinds:?}");
        for r in [
            "parse",
            "not_an_object",
            "batch",
            "duplicate_key",
            "bad_version",
            "bad_method",
            "bad_params",
            "bad_id",
            "result_and_error",
            "no_result_or_error",
            "method_with_response",
            "bad_error_object",
        ] {
            assert!(reasons.contains_key(r), "never produced {r}: {reasons:?}");
        }
    }
}
