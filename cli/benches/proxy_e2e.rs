//! `rpcscan proxy` end to end: a generated MCP stream pushed through the built binary to a
//! trivial echo server over pipes, against a serde_json `Value` relay doing the same checks
//! (valid JSON-RPC, a denied tool answered by the relay, ids rewritten to integers and
//! restored). Reports throughput of both and the latency the proxy adds per request (p50,
//! p99), from ping-pong requests through the proxy against the echo server alone.
//!
//! `cargo bench -p rpcscan-cli --bench proxy_e2e` runs the full sizes; without `--bench`
//! (`cargo test --benches`) it runs a small stream once, checking every count and id.
//!
//! This one executable plays three roles, chosen by `RPCSCAN_BENCH_ROLE`: the benchmark
//! (unset), the echo server (`echo`), and the serde_json relay (`relay`).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

const ROLE: &str = "RPCSCAN_BENCH_ROLE";
const DENIED_TOOL: &str = "exec";

fn main() {
    match std::env::var(ROLE).as_deref() {
        Ok("echo") => return echo_server(),
        Ok("relay") => return serde_relay(),
        _ => {}
    }
    let full = std::env::args().any(|a| a == "--bench");
    let (messages, pings) = if full { (200_000, 20_000) } else { (2_000, 200) };
    let (stream, expected) = generate(messages);
    println!(
        "stream: {messages} messages, {:.1} MiB, {} requests",
        stream.len() as f64 / (1 << 20) as f64,
        expected.count
    );

    let mut results = Vec::new();
    for relay in [Relay::Rpcscan, Relay::Serde] {
        let mut child = relay.spawn();
        let started = Instant::now();
        let got = pump(&mut child, &stream);
        let elapsed = started.elapsed();
        assert_eq!(got, expected, "{relay:?}: every request answered once, ids restored");
        let mib_s = stream.len() as f64 / (1 << 20) as f64 / elapsed.as_secs_f64();
        println!("{:>24}: {elapsed:>10.2?}  {mib_s:>8.1} MiB/s", relay.name());
        results.push(mib_s);
    }
    println!("rpcscan proxy / serde_json relay: {:.2}x", results[0] / results[1]);

    let direct = latencies(&mut Relay::Echo.spawn(), pings);
    let proxied = latencies(&mut Relay::Rpcscan.spawn(), pings);
    for (name, p) in [("p50", 0.50), ("p99", 0.99)] {
        let (d, x) = (percentile(&direct, p), percentile(&proxied, p));
        println!(
            "{name}: echo server alone {d:>9.2?}, through rpcscan proxy {x:>9.2?}, added {:>9.2?}",
            x.saturating_sub(d)
        );
    }
}

#[derive(Clone, Copy, Debug)]
enum Relay {
    Rpcscan,
    Serde,
    Echo,
}

impl Relay {
    fn name(self) -> &'static str {
        match self {
            Relay::Rpcscan => "rpcscan proxy",
            Relay::Serde => "serde_json Value relay",
            Relay::Echo => "echo server alone",
        }
    }

    fn spawn(self) -> Child {
        let me = std::env::current_exe().expect("this executable");
        let mut cmd = match self {
            Relay::Rpcscan => {
                let mut cmd = Command::new(env!("CARGO_BIN_EXE_rpcscan"));
                cmd.args(["proxy", "--deny-tool", DENIED_TOOL, "--"]).arg(&me);
                cmd.env(ROLE, "echo");
                cmd
            }
            Relay::Serde => {
                let mut cmd = Command::new(&me);
                cmd.env(ROLE, "relay");
                cmd
            }
            Relay::Echo => {
                let mut cmd = Command::new(&me);
                cmd.env(ROLE, "echo");
                cmd
            }
        };
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the relay")
    }
}

/// What comes back: how many responses, and a sum of hashes of their raw ids.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Answers {
    count: usize,
    ids: u64,
}

fn fnv(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
}

/// MCP-like traffic: `tools/call` requests with integer, string and large ids and a text
/// argument, one in 50 calling the denied tool, one message in 10 a progress notification.
fn generate(n: usize) -> (Vec<u8>, Answers) {
    let mut out = Vec::with_capacity(n * 200);
    let mut expected = Answers::default();
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for i in 0..n {
        let r = next();
        if r % 10 == 0 {
            let line = format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":"t{i}","progress":{}}}}}"#,
                r % 100
            );
            out.extend_from_slice(line.as_bytes());
            out.push(b'\n');
            continue;
        }
        let id = match r % 3 {
            0 => i.to_string(),
            1 => format!("\"req-{i}\""),
            _ => (u64::MAX - i as u64).to_string(),
        };
        let tool = if r % 50 == 1 { DENIED_TOOL } else { "search" };
        let words = 4 + (r >> 8) % 40;
        let query: Vec<String> =
            (0..words).map(|w| format!("w{}", (r >> (w % 48)) % 997)).collect();
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{"query":"{}","limit":{}}}}}}}"#,
            query.join(" "),
            r % 20
        );
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
        expected.count += 1;
        expected.ids = expected.ids.wrapping_add(fnv(id.as_bytes()));
    }
    (out, expected)
}

/// Writes the stream (from a thread), closes stdin, reads every answer until EOF.
fn pump(child: &mut Child, stream: &[u8]) -> Answers {
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    let answers = std::thread::scope(|s| {
        s.spawn(move || {
            stdin.write_all(stream).expect("write the stream");
        });
        let mut answers = Answers::default();
        for line in BufReader::with_capacity(1 << 16, stdout).split(b'\n') {
            let line = line.expect("read");
            let msg = rpcscan::parse(&line).expect("a valid answer");
            let id = msg.id().expect("a response with an id");
            answers.count += 1;
            answers.ids = answers.ids.wrapping_add(fnv(id.raw()));
        }
        answers
    });
    let _ = child.wait();
    answers
}

/// Round trips of one request at a time.
fn latencies(child: &mut Child, n: usize) -> Vec<Duration> {
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = Vec::new();
    let mut times = Vec::with_capacity(n);
    for i in 0..n + n / 10 {
        let request = format!(
            r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"search","arguments":{{"query":"ping"}}}}}}"#
        );
        let started = Instant::now();
        stdin.write_all(request.as_bytes()).expect("write");
        stdin.write_all(b"\n").expect("write");
        stdin.flush().expect("flush");
        line.clear();
        stdout.read_until(b'\n', &mut line).expect("read");
        let elapsed = started.elapsed();
        // The first tenth warms up.
        if i >= n / 10 {
            times.push(elapsed);
        }
    }
    drop(stdin);
    let _ = child.wait();
    times.sort();
    times
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(at).copied().unwrap_or_default()
}

/// Answers each request with `{"ok": true}` and its id; flushes when its input runs dry.
fn echo_server() {
    let stdin = std::io::stdin();
    let mut input = BufReader::with_capacity(1 << 16, stdin.lock());
    let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let mut line = Vec::new();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let body = line.strip_suffix(b"\n").unwrap_or(&line);
        if let Ok(msg) = rpcscan::parse(body) {
            if let (rpcscan::Kind::Request, Some(id)) = (msg.kind(), msg.id()) {
                let _ = out.write_all(br#"{"jsonrpc":"2.0","id":"#);
                let _ = out.write_all(id.raw());
                let _ = out.write_all(b",\"result\":{\"ok\":true}}\n");
            }
        }
        if input.buffer().is_empty() && out.flush().is_err() {
            break;
        }
    }
    let _ = out.flush();
}

/// The same job on serde_json `Value`s: parse every line, check the envelope, answer the
/// denied tool and invalid lines, rewrite request ids to integers, restore them.
fn serde_relay() {
    let me = std::env::current_exe().expect("this executable");
    let mut server = Command::new(me)
        .env(ROLE, "echo")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the echo server");
    let mut to_server = BufWriter::with_capacity(1 << 16, server.stdin.take().expect("stdin"));
    let from_server = server.stdout.take().expect("stdout");
    let table: Arc<Mutex<HashMap<u64, Value>>> = Arc::default();
    let client = Arc::new(Mutex::new(BufWriter::with_capacity(1 << 16, std::io::stdout())));

    let back = {
        let (table, client) = (table.clone(), client.clone());
        std::thread::spawn(move || {
            let mut input = BufReader::with_capacity(1 << 16, from_server);
            let mut line = Vec::new();
            loop {
                line.clear();
                if !matches!(input.read_until(b'\n', &mut line), Ok(n) if n > 0) {
                    break;
                }
                let Ok(mut msg) = serde_json::from_slice::<Value>(&line) else {
                    continue;
                };
                let original = msg
                    .get("id")
                    .and_then(Value::as_u64)
                    .and_then(|n| table.lock().unwrap().remove(&n));
                let Some(original) = original else { continue };
                msg["id"] = original;
                let mut out = client.lock().unwrap();
                let _ = serde_json::to_writer(&mut *out, &msg);
                let _ = out.write_all(b"\n");
                if input.buffer().is_empty() {
                    let _ = out.flush();
                }
            }
            let _ = client.lock().unwrap().flush();
        })
    };

    let stdin = std::io::stdin();
    let mut input = BufReader::with_capacity(1 << 16, stdin.lock());
    let mut line = Vec::new();
    let mut next = 0u64;
    let answer = |id: &Value, code: i64, message: &str| {
        let response = serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
        let mut out = client.lock().unwrap();
        let _ = serde_json::to_writer(&mut *out, &response);
        let _ = out.write_all(b"\n");
        let _ = out.flush();
    };
    loop {
        line.clear();
        if !matches!(input.read_until(b'\n', &mut line), Ok(n) if n > 0) {
            break;
        }
        let Ok(mut msg) = serde_json::from_slice::<Value>(&line) else {
            answer(&Value::Null, -32700, "Parse error");
            continue;
        };
        let valid = msg.get("jsonrpc").and_then(Value::as_str) == Some("2.0")
            && msg.get("method").is_some_and(Value::is_string);
        if !valid {
            answer(&Value::Null, -32600, "Invalid Request");
            continue;
        }
        if let Some(id) = msg.get("id").cloned() {
            if msg.pointer("/params/name").and_then(Value::as_str) == Some(DENIED_TOOL) {
                answer(&id, -32602, "Unknown tool");
                continue;
            }
            next += 1;
            table.lock().unwrap().insert(next, id);
            msg["id"] = Value::from(next);
        }
        let _ = serde_json::to_writer(&mut to_server, &msg);
        let _ = to_server.write_all(b"\n");
        if input.buffer().is_empty() {
            let _ = to_server.flush();
        }
    }
    drop(to_server);
    let _ = back.join();
    let _ = server.wait();
}
