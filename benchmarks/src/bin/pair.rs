//! `rpcscan pair` against `rpcscan stats` on the same generated log (1 GB by default), with
//! pairs spread out: every response comes 10 000 messages after its request, so the
//! matcher always holds that many requests in flight. Both runs go through the real
//! binary; each run's counts are checked before its time is printed.
//!
//! ```text
//! cargo build --profile bench -p rpcscan-cli -p rpcscan-benchmarks --bin pair
//! target/release/pair [SIZE_MB [ROUNDS [RPCSCAN]]]   # default 1024 3, rpcscan beside this program
//! target/release/pair --test                         # 4 MB, one round: counts only
//! ```

use std::io::Write;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

/// How far behind its request each response comes, in requests.
const SPREAD: u64 = 10_000;

/// The log: (bytes, requests, messages). All requests are answered, one in seven with an
/// error; a progress notification for one in five.
fn generate(size: usize) -> (Vec<u8>, u64, u64) {
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

/// Runs `rpcscan ARGS`, returns stdout and the wall time.
fn time(rpcscan: &PathBuf, args: &[&str]) -> (String, Duration) {
    let start = Instant::now();
    let out = Command::new(rpcscan)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", rpcscan.display()));
    let elapsed = start.elapsed();
    assert!(out.status.success(), "rpcscan {args:?}: {out:?}");
    (String::from_utf8_lossy(&out.stdout).into_owned(), elapsed)
}

/// The number after `name` on the line that starts with it.
fn count(report: &str, name: &str) -> u64 {
    report
        .lines()
        .find_map(|l| l.strip_prefix(name))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no {name:?} in {report}"))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let test = args.first().map(String::as_str) == Some("--test");
    let size_mb: usize =
        if test { 4 } else { args.first().and_then(|s| s.parse().ok()).unwrap_or(1024) };
    let rounds: usize =
        if test { 1 } else { args.get(1).and_then(|s| s.parse().ok()).unwrap_or(3) };
    let rpcscan = args.get(if test { 1 } else { 2 }).map(PathBuf::from).unwrap_or_else(|| {
        let me = std::env::current_exe().expect("own path");
        me.with_file_name(format!("rpcscan{}", std::env::consts::EXE_SUFFIX))
    });
    let (log, requests, messages) = generate(size_mb << 20);
    let path =
        std::env::temp_dir().join(format!("rpcscan-pair-bench-{}.ndjson", std::process::id()));
    std::fs::write(&path, &log).expect("write the log");
    let bytes = log.len() as f64;
    drop(log);
    let file = path.to_str().expect("a UTF-8 temp path");
    println!("{:.0} MB, {messages} messages, {requests} requests, {SPREAD} in flight", bytes / 1e6);
    for round in 0..rounds {
        let (stats, stats_time) = time(&rpcscan, &["stats", file]);
        assert_eq!(count(&stats, "messages"), messages, "{stats}");
        let (pair, pair_time) = time(&rpcscan, &["pair", file]);
        assert_eq!(count(&pair, "pairs"), requests, "{pair}");
        assert_eq!(count(&pair, "unanswered"), 0, "{pair}");
        assert_eq!(count(&pair, "stray notes"), 0, "{pair}");
        let gbs = |t: Duration| bytes / t.as_secs_f64() / 1e9;
        println!(
            "round {round}: stats {:.2} GB/s, pair {:.2} GB/s ({:.2}x)",
            gbs(stats_time),
            gbs(pair_time),
            stats_time.as_secs_f64() / pair_time.as_secs_f64()
        );
    }
    let _ = std::fs::remove_file(&path);
}
