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

use std::time::Duration;

use rpcscan_benchmarks::cli_run::{count, Args};

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

fn main() {
    let run = Args::from_env();
    let (size_mb, rounds) = (run.size_mb, run.rounds);
    let (log, requests, messages) = generate(size_mb << 20);
    let path =
        std::env::temp_dir().join(format!("rpcscan-pair-bench-{}.ndjson", std::process::id()));
    std::fs::write(&path, &log).expect("write the log");
    let bytes = log.len() as f64;
    drop(log);
    let file = path.to_str().expect("a UTF-8 temp path");
    println!("{:.0} MB, {messages} messages, {requests} requests, {SPREAD} in flight", bytes / 1e6);
    for round in 0..rounds {
        let (stats, stats_time) = run.time(&["stats", file]);
        assert_eq!(count(&stats, "messages"), messages, "{stats}");
        let (pair, pair_time) = run.time(&["pair", file]);
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
