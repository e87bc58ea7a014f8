//! `rpcscan proxy` end to end: a generated MCP stream pushed through the built binary to a
//! trivial echo server over pipes, against a serde_json `Value` relay doing the same checks,
//! and against the two ceilings of this harness: the echo server alone (no relay at all)
//! and a byte relay that copies both directions without looking at them (what any relay
//! costs here at the least: two more pipes and a copy through user space). Reports the
//! throughput of each (median of several interleaved rounds, and the proxy / serde ratio of
//! each round), the CPU time each run cost (the relay and the echo server together, from
//! `getrusage(RUSAGE_CHILDREN)`: unlike wall-clock time it hardly depends on what else the
//! machine runs; less the echo server alone's of the same round, each relay's own, as a
//! median and per round), the relay process's own CPU time read from its CPU clock
//! (`clock_getcpuclockid`) when the last answer arrives (all its threads, none of its echo
//! server's: the figure the proxy's target is judged by, with no subtraction whose noise is
//! the echo server's) and the round-trip latency of one request at a time through each
//! (p50, p99), so the latency the proxy adds shows against the echo server alone and the
//! byte relay.
//!
//! `cargo bench -p rpcscan-cli --bench proxy_e2e` runs the full sizes; without `--bench`
//! (`cargo test --benches`) it runs a small stream once, checking every count and id and
//! parsing every answer.
//!
//! This one executable plays four roles, chosen by `RPCSCAN_BENCH_ROLE`: the benchmark
//! (unset), the echo server (`echo`), the serde_json relay (`relay`) and the byte relay
//! (`cat`).
//!
//! **The harness** is kept cheap so that it measures the relays, not itself: the pump
//! writes the stream from one thread and reads the answers in 256 KiB reads; the echo
//! server reads 256 KiB at a time, finds each request's id with `memmem` (the generated
//! stream puts no `"id":` anywhere but the top level, and the relays send integer ids) and
//! writes all the answers to one read in one write. The byte relay reads and writes in
//! 256 KiB chunks, one thread per direction (plain `read`/`write`, not `splice`: a relay
//! that checks messages must see their bytes).
//!
//! **The serde_json relay** is what a careful relay without rpcscan looks like: one thread
//! per direction, a 64 KiB `BufReader` and `BufWriter` on each pipe, every line parsed into
//! a `serde_json::Value`; client lines must be objects with `"jsonrpc": "2.0"` and a string
//! `method` (else -32700 / -32600), a `tools/call` of the denied tool is answered -32602 by
//! the relay, request ids are replaced by integers counting up (the original kept in a
//! `HashMap`) and the message re-serialized; server responses are parsed, their id looked
//! up and the original put back, and re-serialized. Each writer is flushed when its
//! reader's buffer is empty (once per read batch), as the proxy does.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, ErrorKind, Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, Instant};

use memchr::memmem;
use serde_json::Value;

const ROLE: &str = "RPCSCAN_BENCH_ROLE";
/// `ok` or `text`: see [`AnswerShape`].
const ANSWERS: &str = "RPCSCAN_BENCH_ANSWERS";
const DENIED_TOOL: &str = "exec";
/// Read size of the harness's own processes (pump, echo server, byte relay).
const CHUNK: usize = 1 << 18;

fn main() {
    match std::env::var(ROLE).as_deref() {
        Ok("echo") => return echo_server(),
        Ok("relay") => return serde_relay(),
        Ok("cat") => return byte_relay(),
        _ => {}
    }
    let full = std::env::args().any(|a| a == "--bench");
    for shape in [AnswerShape::Ok, AnswerShape::ToolText] {
        let (messages, pings, rounds) = match (full, shape) {
            (false, _) => (2_000, 200, 1),
            (true, AnswerShape::Ok) => (200_000, 20_000, 9),
            // ~7 KB per answer on average: 20,000 requests bring ~125 MiB back.
            (true, AnswerShape::ToolText) => (20_000, 5_000, 9),
        };
        println!("\n## answers: {}", shape.describe());
        run(shape, messages, pings, rounds, !full);
    }
}

/// What the echo server answers each request with; every relay and echo server of a run
/// learns it from the environment ([`ANSWERS`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AnswerShape {
    /// `{"ok": true}`: the relays' cost is the requests and the envelope of the answers.
    Ok,
    /// An MCP tool result carrying text (source code with escapes, some raw non-ASCII) of
    /// 0.2–64 KB: what `tools/call` answers mostly are, and where a relay that builds a
    /// tree pays for every byte.
    ToolText,
}

impl AnswerShape {
    fn describe(self) -> &'static str {
        match self {
            AnswerShape::Ok => "`{\"ok\": true}` (small messages both ways)",
            AnswerShape::ToolText => {
                "tool results of 0.2-64 KB of escaped source text (half under 1 KB, 1 in 8 over 16 KB)"
            }
        }
    }

    fn name(self) -> &'static str {
        match self {
            AnswerShape::Ok => "ok",
            AnswerShape::ToolText => "text",
        }
    }

    fn from_env() -> AnswerShape {
        match std::env::var(ANSWERS).as_deref() {
            Ok("text") => AnswerShape::ToolText,
            _ => AnswerShape::Ok,
        }
    }
}

fn run(shape: AnswerShape, messages: usize, pings: usize, rounds: usize, check: bool) {
    let (stream, expected) = generate(messages);
    let mut answer_bytes = 0;

    let all = [Relay::Echo, Relay::Bytes, Relay::Rpcscan, Relay::Serde];
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); all.len()];
    let mut cpu: Vec<Vec<Duration>> = vec![Vec::new(); all.len()];
    let mut alone: Vec<Vec<Duration>> = vec![Vec::new(); all.len()];
    for _ in 0..rounds {
        for (i, relay) in all.iter().enumerate() {
            let before = children_cpu();
            let mut child = relay.spawn(shape);
            let started = Instant::now();
            let (got, bytes, own_cpu) = pump(&mut child, &stream, check, expected.count);
            let at = |v: &mut Vec<Vec<Duration>>, d| v.get_mut(i).map(|v| v.push(d));
            at(&mut times, started.elapsed());
            at(&mut cpu, children_cpu().saturating_sub(before));
            at(&mut alone, own_cpu);
            assert_eq!(got, expected, "{relay:?}: every request answered once, ids restored");
            answer_bytes = answer_bytes.max(bytes);
        }
    }
    // Throughput counts both directions: the requests in and the answers out.
    let mib = (stream.len() + answer_bytes) as f64 / (1 << 20) as f64;
    println!(
        "stream: {messages} messages, {} requests; {:.1} MiB in, {:.1} MiB of answers out",
        expected.count,
        stream.len() as f64 / (1 << 20) as f64,
        answer_bytes as f64 / (1 << 20) as f64
    );
    let mut speeds = Vec::new();
    let mut cpus = Vec::new();
    for (((relay, times), cpu), own) in all.iter().zip(&times).zip(&cpu).zip(&alone) {
        let median_time = median(times);
        let speed = mib / median_time.as_secs_f64();
        let runs: Vec<String> =
            times.iter().map(|t| format!("{:.0}", mib / t.as_secs_f64())).collect();
        let (cpu, own) = (median(cpu), median(own));
        println!(
            "{:>26}: {median_time:>10.2?} {speed:>8.1} MiB/s, CPU {cpu:>9.2?}, own {own:>9.2?}   (rounds: {} MiB/s)",
            relay.name(),
            runs.join(", ")
        );
        speeds.push(speed);
        cpus.push(cpu);
    }
    let speed = |r: Relay| speeds.get(r as usize).copied().unwrap_or_default();
    let serde_by_rpcscan = |of: &[Vec<Duration>]| {
        let at = |r: Relay| of.get(r as usize).map(Vec::as_slice).unwrap_or_default();
        let ratios = at(Relay::Serde).iter().zip(at(Relay::Rpcscan));
        let ratios: Vec<String> =
            ratios.map(|(s, r)| format!("{:.2}", s.as_secs_f64() / r.as_secs_f64())).collect();
        ratios.join(", ")
    };
    println!(
        "rpcscan proxy / serde_json relay: {:.2}x (medians; per round: {})",
        speed(Relay::Rpcscan) / speed(Relay::Serde),
        serde_by_rpcscan(&times)
    );
    let cpu_of = |r: Relay| cpus.get(r as usize).copied().unwrap_or_default();
    let echo = cpu_of(Relay::Echo);
    let own = |r: Relay| cpu_of(r).saturating_sub(echo);
    println!(
        "CPU per run (relay + echo server): serde_json relay / rpcscan proxy {:.2}x; less the echo server alone ({echo:.2?}): serde {:.2?}, rpcscan {:.2?} ({:.2}x), byte relay {:.2?}",
        cpu_of(Relay::Serde).as_secs_f64() / cpu_of(Relay::Rpcscan).as_secs_f64(),
        own(Relay::Serde),
        own(Relay::Rpcscan),
        own(Relay::Serde).as_secs_f64() / own(Relay::Rpcscan).as_secs_f64(),
        own(Relay::Bytes)
    );
    // Each round's own CPU: the run less the echo server alone's in the same round.
    let own_rounds: Vec<String> = (0..rounds)
        .filter_map(|i| {
            let at = |r: Relay| cpu.get(r as usize).and_then(|c| c.get(i)).copied();
            let echo = at(Relay::Echo)?;
            let serde = at(Relay::Serde)?.saturating_sub(echo);
            let rpcscan = at(Relay::Rpcscan)?.saturating_sub(echo);
            Some(format!("{:.2}", serde.as_secs_f64() / rpcscan.as_secs_f64()))
        })
        .collect();
    println!("own CPU serde / rpcscan per round: {}", own_rounds.join(", "));
    // The relay process's own clock: no echo server to subtract.
    let own_of = |r: Relay| alone.get(r as usize).map(|o| median(o)).unwrap_or_default();
    println!(
        "relay process alone (its CPU clock when the last answer came): serde {:.2?}, rpcscan {:.2?}: {:.2}x (medians; per round: {}), byte relay {:.2?}",
        own_of(Relay::Serde),
        own_of(Relay::Rpcscan),
        own_of(Relay::Serde).as_secs_f64() / own_of(Relay::Rpcscan).as_secs_f64(),
        serde_by_rpcscan(&alone),
        own_of(Relay::Bytes)
    );
    println!(
        "ceilings / serde_json relay: byte relay {:.2}x, echo server alone {:.2}x; rpcscan proxy reaches {:.0}% of the byte relay",
        speed(Relay::Bytes) / speed(Relay::Serde),
        speed(Relay::Echo) / speed(Relay::Serde),
        100.0 * speed(Relay::Rpcscan) / speed(Relay::Bytes)
    );

    let mut p = Vec::new();
    for relay in all {
        let l = latencies(&mut relay.spawn(shape), pings);
        p.push((relay, percentile(&l, 0.50), percentile(&l, 0.99)));
    }
    let (_, echo50, echo99) = p[0];
    for (relay, p50, p99) in p {
        println!(
            "{:>26}: round trip p50 {p50:>9.2?} p99 {p99:>9.2?}; added to the echo server alone: p50 {:>9.2?} p99 {:>9.2?}",
            relay.name(),
            p50.saturating_sub(echo50),
            p99.saturating_sub(echo99)
        );
    }
}

#[derive(Clone, Copy, Debug)]
enum Relay {
    Echo,
    Bytes,
    Rpcscan,
    Serde,
}

impl Relay {
    fn name(self) -> &'static str {
        match self {
            Relay::Echo => "echo server alone",
            Relay::Bytes => "byte relay (no checks)",
            Relay::Rpcscan => "rpcscan proxy",
            Relay::Serde => "serde_json Value relay",
        }
    }

    fn spawn(self, shape: AnswerShape) -> Child {
        let me = std::env::current_exe().expect("this executable");
        let mut cmd = match self {
            Relay::Rpcscan => {
                let mut cmd = Command::new(env!("CARGO_BIN_EXE_rpcscan"));
                cmd.args(["proxy", "--deny-tool", DENIED_TOOL, "--"]).arg(&me);
                cmd.env(ROLE, "echo");
                cmd
            }
            Relay::Serde | Relay::Bytes | Relay::Echo => {
                let mut cmd = Command::new(&me);
                cmd.env(
                    ROLE,
                    match self {
                        Relay::Serde => "relay",
                        Relay::Bytes => "cat",
                        _ => "echo",
                    },
                );
                cmd
            }
        };
        cmd.env(ANSWERS, shape.name())
            .stdin(Stdio::piped())
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

/// Writes the stream (from a thread), closes stdin, reads every answer until EOF; returns
/// what came back and its size in bytes. With `check`, every answer is also parsed by rpcscan.
fn pump(
    child: &mut Child,
    stream: &[u8],
    check: bool,
    requests: usize,
) -> (Answers, usize, Duration) {
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    let clock = nix::time::clock_getcpuclockid(nix::unistd::Pid::from_raw(child.id() as i32))
        .expect("the relay's CPU clock");
    let mut own = Duration::ZERO;
    let answers = std::thread::scope(|s| {
        s.spawn(move || {
            stdin.write_all(stream).expect("write the stream");
        });
        let mut answers = Answers::default();
        let mut bytes = 0;
        lines(stdout, |line| {
            let Some(line) = line else { return true };
            bytes += line.len() + 1;
            let id = top_id(line).expect("an answer with an id");
            if check {
                let msg = rpcscan::parse(line).expect("a valid answer");
                assert!(matches!(msg.kind(), rpcscan::Kind::Result | rpcscan::Kind::Error));
                assert_eq!(msg.id().map(|id| id.raw()), Some(id));
            }
            answers.count += 1;
            answers.ids = answers.ids.wrapping_add(fnv(id));
            if answers.count == requests {
                // Every message relayed: what the relay process has spent, all its threads
                // (an ended one's too), and not its server's.
                if let Ok(t) = clock.now() {
                    own = Duration::new(t.tv_sec().max(0) as u64, t.tv_nsec().max(0) as u32);
                }
            }
            true
        });
        (answers, bytes)
    });
    let _ = child.wait();
    (answers.0, answers.1, own)
}

/// Reads `input` to its end in [`CHUNK`] reads, calling `each` with every complete line
/// (without its `\n`), then with `None` once the lines of a read are done; stops when
/// `each` returns `false`.
fn lines(mut input: impl Read, mut each: impl FnMut(Option<&[u8]>) -> bool) {
    let mut buf = vec![0u8; CHUNK];
    let mut filled = 0;
    loop {
        if filled == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        let n = match input.read(buf.get_mut(filled..).unwrap_or_default()) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        filled += n;
        let data = buf.get(..filled).unwrap_or_default();
        let mut start = 0;
        for end in memchr::memchr_iter(b'\n', data) {
            if !each(data.get(start..end)) {
                return;
            }
            start = end + 1;
        }
        buf.copy_within(start..filled, 0);
        filled -= start;
        if !each(None) {
            return;
        }
    }
    if filled > 0 {
        each(buf.get(..filled));
    }
    each(None);
}

/// The top-level id of a line of the generated stream or of an answer to one: the value
/// after the first `"id":` (nothing else in these lines has that key).
fn top_id(line: &[u8]) -> Option<&[u8]> {
    static FINDER: LazyLock<memmem::Finder<'static>> =
        LazyLock::new(|| memmem::Finder::new(b"\"id\":"));
    let rest = line.get(FINDER.find(line)? + 5..)?;
    let end = memchr::memchr2(b',', b'}', rest)?;
    Some(rest.get(..end)?.trim_ascii())
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
        assert_eq!(top_id(&line), Some(i.to_string().as_bytes()), "the answer to {i}");
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

fn median(times: &[Duration]) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    sorted.get(sorted.len() / 2).copied().unwrap_or_default()
}

/// User and system time of every child process waited for so far (and of the children
/// they waited for).
fn children_cpu() -> Duration {
    use nix::sys::resource::{getrusage, UsageWho};
    let usage = getrusage(UsageWho::RUSAGE_CHILDREN).expect("getrusage");
    let time = |t: nix::sys::time::TimeVal| {
        Duration::from_secs(t.tv_sec().max(0) as u64)
            + Duration::from_micros(t.tv_usec().max(0) as u64)
    };
    time(usage.user_time()) + time(usage.system_time())
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(at).copied().unwrap_or_default()
}

/// A `File` on a duplicate of `fd` (plain `read`/`write` calls, no std buffering or locks).
fn file(fd: BorrowedFd<'_>) -> File {
    File::from(fd.try_clone_to_owned().expect("duplicate a standard descriptor"))
}

/// 32 MCP tool results (`{"content":[{"type":"text","text":...}],"isError":false}`) whose
/// text is source code as JSON carries it: a `\n` every ~40 bytes, `\"` and `\\` common, a
/// comment with raw UTF-8 (é, 中文) now and then. Sizes: 16 of 0.2–1 KB, 12 of 1–8 KB, 4 of
/// 16–64 KB, so an answer picked by its id's hash averages ~7 KB.
fn tool_results() -> Vec<Vec<u8>> {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let sizes = (0..32).map(|k| match k {
        0..16 => 200 + 50 * k,
        16..28 => 1_000 + 600 * (k - 16),
        _ => 16_000 + 16_000 * (k - 28),
    });
    sizes
        .map(|size| {
            let mut text = String::new();
            while text.len() < size {
                let r = next();
                let line = match r % 4 {
                    0 => format!("fn f{}(x: &str) -> String {{\\n", r % 1000),
                    1 => format!("    let s = \\\"quoted {} \\\\ path\\\";\\n", r % 97),
                    2 => format!("    // café 中文 note {}\\n", r % 31),
                    _ => "}\\n".to_string(),
                };
                text.push_str(&line);
            }
            format!(r#"{{"content":[{{"type":"text","text":"{text}"}}],"isError":false}}"#)
                .into_bytes()
        })
        .collect()
}

/// Answers each request (a line with an id) with its id and the result [`AnswerShape::from_env`]
/// picks (`{"ok": true}`, or one of [`tool_results`] by the id's hash); everything a
/// read brought is answered in one write.
fn echo_server() {
    let mut output = file(std::io::stdout().as_fd());
    let mut out = Vec::with_capacity(CHUNK);
    let bodies = match AnswerShape::from_env() {
        AnswerShape::Ok => vec![b"{\"ok\":true}".to_vec()],
        AnswerShape::ToolText => tool_results(),
    };
    lines(file(std::io::stdin().as_fd()), |line| match line {
        Some(line) => {
            if let Some(id) = top_id(line) {
                let body = &bodies[(fnv(id) % bodies.len() as u64) as usize];
                out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
                out.extend_from_slice(id);
                out.extend_from_slice(b",\"result\":");
                out.extend_from_slice(body);
                out.extend_from_slice(b"}\n");
            }
            true
        }
        None => {
            let ok = out.is_empty() || output.write_all(&out).is_ok();
            out.clear();
            ok
        }
    });
}

/// Copies both directions between the client and an echo server, looking at nothing.
fn byte_relay() {
    let mut server = Command::new(std::env::current_exe().expect("this executable"))
        .env(ROLE, "echo")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the echo server");
    let mut to_server = server.stdin.take().expect("stdin");
    let mut from_server = server.stdout.take().expect("stdout");
    let mut to_client = file(std::io::stdout().as_fd());
    let back = std::thread::spawn(move || copy(&mut from_server, &mut to_client));
    copy(&mut file(std::io::stdin().as_fd()), &mut to_server);
    drop(to_server);
    let _ = back.join();
    let _ = server.wait();
}

/// `read` and `write` in [`CHUNK`]s until the end of `from` (not `std::io::copy`, which
/// would `splice` pipes without the bytes ever reaching the relay).
fn copy(from: &mut impl Read, to: &mut impl Write) {
    let mut buf = vec![0u8; CHUNK];
    loop {
        match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                if to.write_all(buf.get(..n).unwrap_or_default()).is_err() {
                    break;
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
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
    let client =
        Arc::new(Mutex::new(BufWriter::with_capacity(1 << 16, file(std::io::stdout().as_fd()))));

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
                if let Some(original) = original {
                    msg["id"] = original;
                    let mut out = client.lock().unwrap();
                    let _ = serde_json::to_writer(&mut *out, &msg);
                    let _ = out.write_all(b"\n");
                }
                if input.buffer().is_empty() {
                    let _ = client.lock().unwrap().flush();
                }
            }
            let _ = client.lock().unwrap().flush();
        })
    };

    let mut input = BufReader::with_capacity(1 << 16, file(std::io::stdin().as_fd()));
    let mut line = Vec::new();
    let mut next = 0u64;
    let mut answered = false;
    let answer = |id: &Value, code: i64, message: &str| {
        let response = serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
        let mut out = client.lock().unwrap();
        let _ = serde_json::to_writer(&mut *out, &response);
        let _ = out.write_all(b"\n");
    };
    loop {
        line.clear();
        if !matches!(input.read_until(b'\n', &mut line), Ok(n) if n > 0) {
            break;
        }
        match serde_json::from_slice::<Value>(&line) {
            Err(_) => {
                answer(&Value::Null, -32700, "Parse error");
                answered = true;
            }
            Ok(msg)
                if msg.get("jsonrpc").and_then(Value::as_str) != Some("2.0")
                    || !msg.get("method").is_some_and(Value::is_string) =>
            {
                answer(&Value::Null, -32600, "Invalid Request");
                answered = true;
            }
            Ok(mut msg) => match msg.get("id").cloned() {
                Some(id)
                    if msg.pointer("/params/name").and_then(Value::as_str) == Some(DENIED_TOOL) =>
                {
                    answer(&id, -32602, "Unknown tool");
                    answered = true;
                }
                id => {
                    if let Some(id) = id {
                        next += 1;
                        table.lock().unwrap().insert(next, id);
                        msg["id"] = Value::from(next);
                    }
                    let _ = serde_json::to_writer(&mut to_server, &msg);
                    let _ = to_server.write_all(b"\n");
                }
            },
        }
        if input.buffer().is_empty() {
            let _ = to_server.flush();
            if answered {
                let _ = client.lock().unwrap().flush();
                answered = false;
            }
        }
    }
    drop(to_server);
    let _ = back.join();
    let _ = server.wait();
}
