//! The message shapes the comparison programs measure, as NDJSON corpora. `small` and
//! `mixed` are `rpcscan-oracle`'s generator; the others are built here, deterministically
//! from a seed, to stand for the traffic that dominates MCP byte counts or message counts:
//!
//! - `tiny`: pings, progress notifications, empty results and short requests (40–200 B);
//! - `image`: tool results carrying one 20–120 KB base64 string (an image);
//! - `code`: tool results whose `text` is source code (2–30 KB): a `\n` every ~40 bytes,
//!   `\"` and `\\` common;
//! - `cjk`: tool results whose `text` is raw UTF-8 CJK and accented text (2–30 KB).
//!
//! Every generated line is valid JSON; the programs still check every contender's kind
//! counts against the oracle before timing anything.

use rpcscan_oracle::corpus::{generate, Mix};

/// The shapes, in the order the programs print them.
pub const SHAPES: [&str; 6] = ["tiny", "small", "mixed", "code", "cjk", "image"];

/// About `target_bytes` of NDJSON of the named shape (`None` for an unknown name).
pub fn corpus(shape: &str, target_bytes: usize, seed: u64) -> Option<Vec<u8>> {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let message: fn(&mut Rng, u64) -> String = match shape {
        "small" => return Some(generate(Mix::Small, target_bytes, seed)),
        "mixed" => return Some(generate(Mix::Mixed, target_bytes, seed)),
        "tiny" => tiny,
        "image" => image,
        "code" => code,
        "cjk" => cjk,
        _ => return None,
    };
    let mut out = Vec::with_capacity(target_bytes + (1 << 17));
    let mut id = 1;
    while out.len() < target_bytes {
        out.extend_from_slice(message(&mut rng, id).as_bytes());
        out.push(b'\n');
        id += 1;
    }
    Some(out)
}

/// xorshift64: deterministic and good enough for picking shapes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() % (hi - lo) as u64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.range(0, items.len())]
    }
}

fn tiny(rng: &mut Rng, id: u64) -> String {
    match rng.range(0, 5) {
        0 => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#),
        1 => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#),
        2 => format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":"op-{}","progress":{},"total":100}}}}"#,
            rng.range(1, 9999),
            rng.range(0, 100)
        ),
        3 => format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"level":"info","logger":"{}","data":"step {} done"}}}}"#,
            rng.pick(&["db", "http", "fs", "auth"]),
            rng.range(1, 500)
        ),
        _ => format!(
            r#"{{"jsonrpc":"2.0","id":"req-{id}","method":"tools/call","params":{{"name":"{}","arguments":{{"q":"{}"}}}}}}"#,
            rng.pick(&["search", "read_file", "get_weather", "list"]),
            rng.pick(&["rust", "a.txt", "Paris", "/tmp"])
        ),
    }
}

fn text_result(id: u64, text: &str) -> String {
    let text = serde_json::to_string(text).expect("a string serializes");
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":{text}}}],"isError":false}}}}"#
    )
}

fn image(rng: &mut Rng, id: u64) -> String {
    const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let len = rng.range(20_000, 120_000) / 4 * 4;
    let mut data = String::with_capacity(len);
    while data.len() < len {
        let r = rng.next();
        for k in 0..8 {
            data.push(B64[((r >> (8 * k)) & 63) as usize] as char);
        }
    }
    data.truncate(len - 4);
    data.push_str("AA==");
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"image","data":"{data}","mimeType":"image/png"}}],"isError":false}}}}"#
    )
}

fn code(rng: &mut Rng, id: u64) -> String {
    const LINES: [&str; 12] = [
        "fn main() {",
        "    let path = \"C:\\\\Users\\\\dev\\\\config.toml\";",
        "    println!(\"loaded {} entries\", map.len());",
        "    if line.ends_with('\\\\') { continue; }",
        "    let re = Regex::new(r\"\\d+\\.\\d+\").unwrap();",
        "    // TODO: handle the \"empty\" case",
        "    for (k, v) in map.iter() {",
        "        out.push_str(&format!(\"{k}={v}\\n\"));",
        "    }",
        "    return Err(Error::new(\"bad \\\"quote\\\"\"));",
        "}",
        "",
    ];
    let len = rng.range(2_000, 30_000);
    let mut text = String::with_capacity(len + 100);
    while text.len() < len {
        text.push_str(LINES[rng.range(0, LINES.len())]);
        text.push('\n');
    }
    text_result(id, &text)
}

fn cjk(rng: &mut Rng, id: u64) -> String {
    const WORDS: [&str; 14] = [
        "日本語の",
        "テキスト",
        "中文文本",
        "数据库",
        "한국어",
        "문장입니다",
        "café",
        "naïve",
        "Größe",
        "élève",
        "Ελληνικά",
        "Русский",
        "。",
        "、",
    ];
    let len = rng.range(2_000, 30_000);
    let mut text = String::with_capacity(len + 100);
    while text.len() < len {
        text.push_str(WORDS[rng.range(0, WORDS.len())]);
        if rng.range(0, 4) == 0 {
            text.push(' ');
        }
    }
    text_result(id, &text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shape_is_valid_json_of_its_size() {
        for shape in SHAPES {
            let c = corpus(shape, 400_000, 1).unwrap();
            let lines: Vec<&[u8]> = c.split(|&b| b == b'\n').filter(|l| !l.is_empty()).collect();
            for l in &lines {
                if !matches!(shape, "small" | "mixed") {
                    assert!(rpcscan_oracle::validate_json(l), "{shape}");
                }
            }
            let avg = c.len() / lines.len();
            match shape {
                "tiny" => assert!((40..=200).contains(&avg), "{avg}"),
                "image" => assert!(avg >= 20_000, "{avg}"),
                "code" | "cjk" => assert!(avg >= 2_000, "{avg}"),
                _ => {}
            }
        }
        assert!(corpus("nope", 10, 1).is_none());
    }
}
