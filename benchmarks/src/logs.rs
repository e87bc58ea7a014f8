//! Generated logs of requests and their responses, with pairs spread out: what `pair`
//! and `extract` (the programs timing `rpcscan pair` and log-line extraction) read.

use std::io::Write;

/// How far behind its request each response comes, in requests.
pub const SPREAD: u64 = 10_000;

/// A log of tiny `tools/call` messages (~130 B: per-message costs at their worst), at least
/// `size` bytes: (bytes, requests, messages). All requests are answered, one in seven with
/// an error; a progress notification for one in five.
pub fn tiny_pairs(size: usize) -> (Vec<u8>, u64, u64) {
    let mut log = Vec::with_capacity(size + 4096);
    let (mut requests, mut messages) = (0u64, 0u64);
    let tools = ["get_weather", "search", "echo", "read_file"];
    let answer = |log: &mut Vec<u8>, id: u64| {
        if id % 7 == 3 {
            let _ = writeln!(
                log,
                r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32602,"message":"Invalid params: city"}}}}"#
            );
        } else {
            let _ = writeln!(
                log,
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"Oslo: 4°C, light rain"}}],"isError":false}}}}"#
            );
        }
    };
    while log.len() < size {
        let id = requests;
        let tool = tools[(id % 4) as usize];
        let _ = writeln!(
            log,
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{"city":"Oslo","units":"metric"}},"_meta":{{"progressToken":{id}}}}}}}"#
        );
        requests += 1;
        messages += 1;
        if id % 5 == 0 {
            let _ = writeln!(
                log,
                r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{id},"progress":1,"total":2}}}}"#
            );
            messages += 1;
        }
        if let Some(old) = id.checked_sub(SPREAD) {
            answer(&mut log, old);
            messages += 1;
        }
    }
    for old in requests.saturating_sub(SPREAD)..requests {
        answer(&mut log, old);
        messages += 1;
    }
    (log, requests, messages)
}

/// A log of MCP traffic of mixed shapes, at least `size` bytes: (bytes, requests,
/// messages). Requests of several methods (`tools/call` with arguments, `resources/read`,
/// `prompts/get`, `tools/list`), one `tools/call` in five with a progress token and one
/// progress notification; results carrying text of 0.1-48 KB (three in four under 1 KB,
/// one in thirty over 16 KB: about 2 KB on average, escaped source-like text); one answer
/// in seven an error; ~1 KB per message in all. Deterministic (xorshift).
pub fn mcp_pairs(size: usize) -> (Vec<u8>, u64, u64) {
    const LINES: [&str; 6] = [
        "fn main() {",
        "    let x = parse(\\\"a.json\\\")?;",
        "    println!(\\\"{x:?}\\\");",
        "    // a comment with a tab\\there",
        "}",
        "use std::collections::HashMap;",
    ];
    let mut log = Vec::with_capacity(size + (64 << 10));
    let (mut requests, mut messages) = (0u64, 0u64);
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let tools = ["search_files", "read_file", "run_sql", "get_weather", "create_issue"];
    // Escaped source-like text of at least `len` bytes, as a JSON string's contents.
    let text = |log: &mut Vec<u8>, len: usize, r: u64| {
        let mut written = 0;
        let mut k = r as usize;
        while written < len {
            let line = LINES[k % LINES.len()];
            log.extend_from_slice(line.as_bytes());
            log.extend_from_slice(b"\\n");
            written += line.len() + 2;
            k = k.wrapping_mul(31).wrapping_add(7);
        }
    };
    let answer = |log: &mut Vec<u8>, id: u64, r: u64| {
        if r % 7 == 3 {
            let _ = writeln!(
                log,
                r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32602,"message":"Invalid params: no such path","data":{{"path":"/srv/{id}"}}}}}}"#
            );
            return;
        }
        let len = match r % 100 {
            0..=74 => 100 + (r >> 8) % 900,
            75..=96 => 1_000 + (r >> 8) % 5_000,
            _ => 16_000 + (r >> 8) % 32_000,
        } as usize;
        if r % 5 == 1 {
            let _ = write!(
                log,
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"contents":[{{"uri":"file:///srv/{id}.rs","mimeType":"text/x-rust","text":""#
            );
            text(log, len, r);
            log.extend_from_slice(b"\"}]}}\n");
        } else {
            let _ = write!(
                log,
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":""#
            );
            text(log, len, r);
            log.extend_from_slice(b"\"}],\"isError\":false}}\n");
        }
    };
    let mut pending = std::collections::VecDeque::new();
    while log.len() < size {
        let id = requests;
        let r = next();
        match r % 20 {
            0..=11 => {
                let tool = tools[(r >> 8) as usize % tools.len()];
                let _ = write!(
                    log,
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{"query":""#
                );
                for w in 0..2 + (r >> 16) % 24 {
                    let _ = write!(log, "w{} ", (r >> (w % 48)) % 997);
                }
                if r % 5 == 0 {
                    let _ = writeln!(
                        log,
                        r#"","limit":{}}},"_meta":{{"progressToken":"p{id}"}}}}}}"#,
                        r % 50
                    );
                    let _ = writeln!(
                        log,
                        r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":"p{id}","progress":1,"total":2,"message":"working"}}}}"#
                    );
                    messages += 1;
                } else {
                    let _ = writeln!(log, r#"","limit":{}}}}}}}"#, r % 50);
                }
            }
            12..=15 => {
                let _ = writeln!(
                    log,
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"resources/read","params":{{"uri":"file:///srv/{id}.rs"}}}}"#
                );
            }
            16..=17 => {
                let _ = writeln!(
                    log,
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"prompts/get","params":{{"name":"review","arguments":{{"path":"src/{id}.rs"}}}}}}"#
                );
            }
            _ => {
                let _ = writeln!(log, r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#);
            }
        }
        requests += 1;
        messages += 1;
        pending.push_back((id, next()));
        if pending.len() > SPREAD as usize {
            if let Some((old, r)) = pending.pop_front() {
                answer(&mut log, old, r);
                messages += 1;
            }
        }
    }
    while let Some((old, r)) = pending.pop_front() {
        answer(&mut log, old, r);
        messages += 1;
    }
    (log, requests, messages)
}
