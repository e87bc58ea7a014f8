//! Nasty, mostly near-valid JSON-RPC messages and byte mutations, for differential property
//! tests and structure-aware fuzzing (the idea of sonic-rs `fuzz/src/gen.rs`).
//!
//! [`message`] always returns grammatical JSON (only the depth limit may be exceeded, on
//! purpose), aimed at every rule's edge: escaped and duplicated keys, odd ids, escaped
//! versions, `params` of every type, error objects with duplicated or mistyped members,
//! lone surrogate escapes, raw multi-byte UTF-8, whitespace between all tokens, nesting just
//! under and just over 1024, nested `method` members. [`mutate`] then breaks the bytes the
//! way a fuzzer would. Both are pure functions of their seed.
//!
//! ```
//! use rpcscan_oracle::{gen, json};
//!
//! let msg = gen::message(7);
//! assert!(json::depth(&msg) > json::MAX_DEPTH || rpcscan_oracle::validate_json(&msg));
//! assert_eq!(gen::mutate(3, &msg), gen::mutate(3, &msg));
//! ```

use std::fmt::Write as _;

use crate::json::MAX_DEPTH;
use crate::rng::Rng;

/// A JSON-RPC-ish message for `seed`: valid JSON (up to depth), often not a valid message.
pub fn message(seed: u64) -> Vec<u8> {
    let mut gen = Gen { rng: Rng::new(seed), ws_percent: 0 };
    gen.ws_percent = match gen.rng.below(4) {
        0 | 1 => 0,
        2 => 10,
        _ => 50,
    };
    let mut out = gen.ws();
    out.push_str(&gen.top_level());
    out.push_str(&gen.ws());
    out.into_bytes()
}

/// `msg` with one to three random byte-level mutations.
pub fn mutate(seed: u64, msg: &[u8]) -> Vec<u8> {
    let mut rng = Rng::new(seed ^ 0x6d75_7461_7465);
    let mut out = msg.to_vec();
    for _ in 0..rng.range(1, 3) {
        let at = rng.below(out.len() + 1);
        match rng.below(11) {
            0 => out.truncate(at),
            1 => out.insert(at, rng.next_u64() as u8),
            2 => {
                if at < out.len() {
                    out.remove(at);
                }
            }
            3 => {
                if at < out.len() {
                    out[at] ^= 1 << rng.below(8);
                }
            }
            4 => out.insert(at, rng.pick(b"\"\\[]{},:")),
            5 => {
                let at = if rng.percent(50) { 0 } else { at };
                splice(&mut out, at, b"\xEF\xBB\xBF");
            }
            6 => {
                let bad: &[&[u8]] = &[
                    b"\xFF",
                    b"\xC0\xAF",
                    b"\xED\xA0\x80",
                    b"\x80",
                    b"\xE2\x82",
                    b"\xF4\x90\x80\x80",
                ];
                splice(&mut out, at, rng.pick(bad));
            }
            7 => out.insert(at, rng.pick(b"\x00\x01\x0B\x0C\x1F\x7F")),
            8 => {
                let from = rng.below(out.len() + 1);
                let to = (from + rng.range(1, 16)).min(out.len());
                let slice = out[from..to].to_vec();
                let at = rng.below(out.len() + 1);
                splice(&mut out, at, &slice);
            }
            9 => {
                let junk: &[&[u8]] = &[
                    b" ",
                    b"\n",
                    b"\xC2\xA0",
                    b"\xE2\x80\xA8",
                    b"{}",
                    b",",
                    b"-",
                    b"0",
                    b"e",
                    b".",
                ];
                splice(&mut out, at, rng.pick(junk));
            }
            _ => {
                if let Some(digit) = out.iter().position(|b| b.is_ascii_digit()) {
                    out[digit] = rng.pick(b"0123456789.e-+");
                }
            }
        }
    }
    out
}

fn splice(out: &mut Vec<u8>, at: usize, bytes: &[u8]) {
    out.splice(at..at, bytes.iter().copied());
}

/// Generator state for one message.
struct Gen {
    rng: Rng,
    /// Chance, per gap between tokens, of inserting whitespace.
    ws_percent: u32,
}

impl Gen {
    /// Whitespace (space, tab, CR, LF) or nothing.
    fn ws(&mut self) -> String {
        let mut out = String::new();
        while self.ws_percent > 0 && self.rng.percent(self.ws_percent) && out.len() < 4 {
            out.push(self.rng.pick(&[' ', '\t', '\r', '\n']));
        }
        out
    }

    fn top_level(&mut self) -> String {
        match self.rng.below(100) {
            0 => self.value(2),
            1 => "[]".into(),
            2 => {
                let items: Vec<String> =
                    (0..self.rng.range(1, 3)).map(|_| self.envelope()).collect();
                self.array(&items)
            }
            _ => self.envelope(),
        }
    }

    /// A top-level object aimed at one of the verdicts.
    fn envelope(&mut self) -> String {
        // 0 request, 1 notification, 2 result, 3 error, 4 any of them minus one member;
        // every shape also gets stray members now and then.
        let shape = self.rng.below(5);
        let mut members: Vec<(&'static str, String)> = Vec::new();
        if self.rng.percent(97) {
            let version = self.version();
            members.push(("jsonrpc", version));
        }
        let want_method = shape <= 1 || self.rng.percent(5);
        let want_id = shape != 1 || self.rng.percent(10);
        if want_id {
            let id = self.id();
            members.push(("id", id));
        }
        if want_method {
            let method = self.method();
            members.push(("method", method));
        }
        if shape <= 1 && self.rng.percent(80) || self.rng.percent(5) {
            let params = self.params();
            members.push(("params", params));
        }
        let result = shape == 2 || self.rng.percent(4);
        let error = shape == 3 || self.rng.percent(4);
        if result {
            let value = if self.rng.percent(3) { self.deep() } else { self.value(3) };
            members.push(("result", value));
        }
        if error {
            let value = self.error_object();
            members.push(("error", value));
        }
        if shape == 4 {
            // Anything goes: drop a random member.
            if !members.is_empty() {
                let at = self.rng.below(members.len());
                members.remove(at);
            }
        }

        let mut rendered: Vec<(String, String)> =
            members.into_iter().map(|(key, value)| (self.key(key), value)).collect();
        for _ in 0..self.rng.below(3) {
            let member = self.unknown_member();
            rendered.push(member);
        }
        if self.rng.percent(8) && !rendered.is_empty() {
            // A duplicated member, envelope or not, spelled alike or not.
            let (key, value) = rendered[self.rng.below(rendered.len())].clone();
            let key = match decode_plain(&key) {
                Some(name) if self.rng.percent(50) => self.key(&name),
                _ => key,
            };
            let value = if self.rng.percent(50) { value } else { self.value(1) };
            rendered.push((key, value));
        }
        if self.rng.percent(40) {
            for i in (1..rendered.len()).rev() {
                let j = self.rng.below(i + 1);
                rendered.swap(i, j);
            }
        }
        self.object(&rendered)
    }

    fn version(&mut self) -> String {
        match self.rng.below(20) {
            0 => r#""2\u002e0""#.into(),
            1 => r#""\u0032.0""#.into(),
            2 => r#""\u0032\u002E\u0030""#.into(),
            3 => (self.rng.pick(&[
                r#""1.0""#,
                "2.0",
                "2",
                r#""2.0 ""#,
                r#""2.00""#,
                "null",
                r#""""#,
                r#""2\u0000""#,
            ]))
            .into(),
            _ => r#""2.0""#.into(),
        }
    }

    fn id(&mut self) -> String {
        if self.rng.percent(75) {
            return match self.rng.below(12) {
                0..=3 => self.rng.below(1000).to_string(),
                4 => format!("-{}", self.rng.range(1, 99)),
                5 => "-0".into(),
                6 => "9007199254740993".into(),
                7 => "18446744073709551617".into(),
                8 => {
                    let mut digits = String::from("1");
                    for _ in 0..399 {
                        digits.push(char::from(b'0' + self.rng.below(10) as u8));
                    }
                    digits
                }
                9 => r#""""#.into(),
                _ => self.string(),
            };
        }
        (self.rng.pick(&[
            "null",
            "1.0",
            "1e2",
            "-0.0",
            "0E0",
            "true",
            "false",
            "{}",
            "[]",
            r#"{"id":1}"#,
            "[1]",
        ]))
        .into()
    }

    fn method(&mut self) -> String {
        match self.rng.below(20) {
            0 => self.string(),
            1 => (self.rng.pick(&["1", "null", "true", "[\"ping\"]", "{}"])).into(),
            2 => r#""tools\/call""#.into(),
            3 => r#""\ud800ping""#.into(),
            4 => r#""notifications/\u0070rogress""#.into(),
            5 => "\"outils/appel 🚀\"".into(),
            _ => format!(
                "\"{}\"",
                self.rng.pick(&[
                    "initialize",
                    "notifications/initialized",
                    "tools/list",
                    "tools/call",
                    "resources/read",
                    "prompts/get",
                    "ping",
                    "notifications/progress",
                    "",
                ])
            ),
        }
    }

    fn params(&mut self) -> String {
        match self.rng.below(20) {
            0 => "null".into(),
            1 => self.scalar(),
            2 => self.deep(),
            3 => {
                // Nested envelope keys that must not count.
                let inner = vec![
                    (self.key("method"), r#""tools/call""#.to_owned()),
                    (self.key("id"), "null".to_owned()),
                    (self.key("jsonrpc"), "1".to_owned()),
                ];
                let nested = self.object(&inner);
                self.object(&[(r#""request""#.to_owned(), nested)])
            }
            4..=10 => self.array_value(2),
            _ => self.object_value(2),
        }
    }

    fn error_object(&mut self) -> String {
        if self.rng.percent(6) {
            return (self.rng.pick(&["null", r#""oops""#, "[]", "-32600", "true"])).into();
        }
        let mut members = Vec::new();
        if self.rng.percent(95) {
            let code = if self.rng.percent(85) {
                (self.rng.pick(&[
                    "-32601",
                    "-32602",
                    "-32603",
                    "-32700",
                    "-32600",
                    "0",
                    "-0",
                    "42",
                    "-99999999999999999999999",
                ]))
                .to_owned()
            } else {
                (self.rng.pick(&[
                    "1.5",
                    "-32601.0",
                    "-3.2601e4",
                    "\"-32601\"",
                    "null",
                    "true",
                    "[]",
                ]))
                .to_owned()
            };
            members.push((self.key("code"), code));
        }
        if self.rng.percent(95) {
            let message = if self.rng.percent(90) { self.string() } else { self.scalar() };
            members.push((self.key("message"), message));
        }
        if self.rng.percent(50) {
            let data = self.value(3);
            members.push((self.key("data"), data));
        }
        if self.rng.percent(10) {
            let name = if self.rng.percent(50) { "code" } else { "message" };
            let value = if name == "code" { "1".to_owned() } else { r#""again""#.to_owned() };
            members.push((self.key(name), value));
        }
        if self.rng.percent(30) {
            for i in (1..members.len()).rev() {
                let j = self.rng.below(i + 1);
                members.swap(i, j);
            }
        }
        self.object(&members)
    }

    fn unknown_member(&mut self) -> (String, String) {
        let key = match self.rng.below(8) {
            0 => r#""Method""#.to_owned(),
            1 => r#""ID""#.to_owned(),
            2 => r#""\ud800""#.to_owned(),
            3 => r#""_meta""#.to_owned(),
            4 => r#""""#.to_owned(),
            _ => self.string(),
        };
        let value = self.value(2);
        (key, value)
    }

    /// `name` as a key literal, now and then with `\u` escapes.
    fn key(&mut self, name: &str) -> String {
        if !self.rng.percent(12) {
            return format!("\"{name}\"");
        }
        let mut out = String::from("\"");
        for c in name.chars() {
            if self.rng.percent(40) {
                let hex = format!("{:04x}", c as u32);
                let hex = if self.rng.percent(50) { hex.to_uppercase() } else { hex };
                let _ = write!(out, "\\u{hex}");
            } else {
                out.push(c);
            }
        }
        out.push('"');
        out
    }

    fn value(&mut self, budget: usize) -> String {
        if budget == 0 {
            return self.scalar();
        }
        match self.rng.below(10) {
            0..=4 => self.scalar(),
            5..=7 => self.object_value(budget - 1),
            _ => self.array_value(budget - 1),
        }
    }

    fn object_value(&mut self, budget: usize) -> String {
        let members: Vec<(String, String)> = (0..self.rng.below(4))
            .map(|_| {
                let key = if self.rng.percent(20) {
                    let name =
                        self.rng.pick(&["method", "id", "jsonrpc", "params", "result", "error"]);
                    self.key(name)
                } else {
                    self.string()
                };
                (key, self.value(budget))
            })
            .collect();
        self.object(&members)
    }

    fn array_value(&mut self, budget: usize) -> String {
        let items: Vec<String> = (0..self.rng.below(4)).map(|_| self.value(budget)).collect();
        self.array(&items)
    }

    /// A value whose nesting puts the message just under, at, or just over the depth limit
    /// (the value sits at depth 2 of its message).
    fn deep(&mut self) -> String {
        let levels = MAX_DEPTH - 2 + self.rng.below(3);
        let mut open = String::new();
        let mut close = Vec::new();
        for _ in 0..levels {
            if self.rng.percent(70) {
                open.push('[');
                close.push(']');
            } else {
                open.push_str(r#"{"k":"#);
                close.push('}');
            }
        }
        open.push('0');
        open.extend(close.into_iter().rev());
        open
    }

    fn scalar(&mut self) -> String {
        match self.rng.below(6) {
            0 => (self.rng.pick(&["null", "true", "false"])).into(),
            1 | 2 => self.number(),
            _ => self.string(),
        }
    }

    fn number(&mut self) -> String {
        match self.rng.below(4) {
            0 => self.rng.below(100_000).to_string(),
            1 => (self.rng.pick(&[
                "-0",
                "0",
                "-0.0",
                "1.5",
                "-1e-7",
                "1E+2",
                "1e400",
                "-1e400",
                "0.0000000000000000000001",
                "18446744073709551616",
                "-9223372036854775809",
                "123456789012345678901234567890",
                "1e-400",
            ]))
            .into(),
            2 => format!("-{}.{}", self.rng.below(1000), self.rng.below(1000)),
            _ => format!("{}e{}", self.rng.range(1, 9), self.rng.below(600)),
        }
    }

    /// A string literal with escapes, raw UTF-8 and lone surrogates mixed in.
    fn string(&mut self) -> String {
        let mut out = String::from("\"");
        for _ in 0..self.rng.below(8) {
            match self.rng.below(12) {
                0 => out.push_str(
                    self.rng.pick(&[r#"\""#, r"\\", r"\/", r"\b", r"\f", r"\n", r"\r", r"\t"]),
                ),
                1 => {
                    let unit = loop {
                        let unit = self.rng.next_u64() as u16;
                        if !(0xD800..=0xDFFF).contains(&unit) {
                            break unit;
                        }
                    };
                    let _ = write!(out, "\\u{unit:04X}");
                }
                2 => out.push_str(self.rng.pick(&[
                    r"\ud83d\ude00",
                    r"\uD834\uDD1E",
                    r"\udbff\udfff",
                ])),
                3 => out.push_str(self.rng.pick(&[
                    r"\ud800",
                    r"\udc00",
                    r"\uDBFF\u0041",
                    r"\ud800\ud800",
                ])),
                4 => out.push_str(self.rng.pick(&[
                    "é",
                    "中",
                    "😀",
                    "\u{2028}",
                    "\u{feff}",
                    "\u{ffff}",
                    "\u{10ffff}",
                    "\u{80}",
                ])),
                5 => out.push_str(
                    self.rng.pick(&["method", "id", "2.0", "jsonrpc", "{", "]", ":", ","]),
                ),
                _ => out.push_str(self.rng.pick(&["a", "tools", " ", "x1", "Z", "-", "'"])),
            }
        }
        out.push('"');
        out
    }

    fn object(&mut self, members: &[(String, String)]) -> String {
        let mut out = String::from("{");
        for (i, (key, value)) in members.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&self.ws());
            out.push_str(key);
            out.push_str(&self.ws());
            out.push(':');
            out.push_str(&self.ws());
            out.push_str(value);
            out.push_str(&self.ws());
        }
        if members.is_empty() {
            out.push_str(&self.ws());
        }
        out.push('}');
        out
    }

    fn array(&mut self, items: &[String]) -> String {
        let mut out = String::from("[");
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&self.ws());
            out.push_str(item);
            out.push_str(&self.ws());
        }
        if items.is_empty() {
            out.push_str(&self.ws());
        }
        out.push(']');
        out
    }
}

/// The name inside a key literal without escapes (`"id"` → `id`), to respell it.
fn decode_plain(key: &str) -> Option<String> {
    let inner = key.strip_prefix('"')?.strip_suffix('"')?;
    (!inner.contains('\\')).then(|| inner.to_owned())
}
