//! `rpcscan pair` against `rpcscan stats` on the same generated log (1 GB by default), with
//! pairs spread out: every response comes 10 000 requests after its request, so the
//! matcher always holds that many requests in flight. Two logs, one after the other: tiny
//! `tools/call` messages (~130 B: per-message costs at their worst) and MCP traffic of
//! mixed shapes (several methods, results carrying 0.1-48 KB of text, ~1 KB per message).
//! Both runs go through the real binary; each run's counts are checked before its time and
//! CPU time (user + system, all threads) are printed.
//!
//! ```text
//! cargo build --profile bench -p rpcscan-cli -p rpcscan-benchmarks --bin pair
//! target/release/pair [SIZE_MB [ROUNDS [RPCSCAN]]]   # default 1024 3, rpcscan beside this program
//! target/release/pair --test                         # 4 MB, one round: counts only
//! target/release/pair --write DIR [SIZE_MB]          # only write the two logs, for profiling
//! ```

use std::time::Duration;

use rpcscan_benchmarks::cli_run::{count, Args};
use rpcscan_benchmarks::logs::{self, SPREAD};

/// Makes a log of at least `size` bytes: (bytes, requests, messages).
type Generate = fn(usize) -> (Vec<u8>, u64, u64);

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    if argv.get(1).map(String::as_str) == Some("--write") {
        let dir = std::path::PathBuf::from(argv.get(2).expect("--write DIR [SIZE_MB]"));
        let size_mb: usize = argv.get(3).and_then(|s| s.parse().ok()).unwrap_or(1024);
        for (name, make) in [("tiny", logs::tiny_pairs as Generate), ("mcp", logs::mcp_pairs)] {
            let (log, requests, messages) = make(size_mb << 20);
            let path = dir.join(format!("pair-{name}.ndjson"));
            std::fs::write(&path, &log).expect("write the log");
            println!("{}: {messages} messages, {requests} requests", path.display());
        }
        return;
    }
    let run = Args::from_env();
    let (size_mb, rounds) = (run.size_mb, run.rounds);
    let logs: [(&str, Generate); 2] = [
        ("tiny tools/call messages (~130 B)", logs::tiny_pairs),
        ("MCP traffic of mixed shapes (~1 KB per message)", logs::mcp_pairs),
    ];
    for (name, make) in logs {
        let (log, requests, messages) = make(size_mb << 20);
        let path =
            std::env::temp_dir().join(format!("rpcscan-pair-bench-{}.ndjson", std::process::id()));
        std::fs::write(&path, &log).expect("write the log");
        let bytes = log.len() as f64;
        drop(log);
        let file = path.to_str().expect("a UTF-8 temp path");
        println!(
            "{name}: {:.0} MB, {messages} messages, {requests} requests, {SPREAD} in flight",
            bytes / 1e6
        );
        for round in 0..rounds {
            let (stats, stats_time, stats_cpu) = run.time_cpu(&["stats", file]);
            assert_eq!(count(&stats, "messages"), messages, "{stats}");
            assert_eq!(count(&stats, "invalid"), 0, "{stats}");
            let (pair, pair_time, pair_cpu) = run.time_cpu(&["pair", file]);
            assert_eq!(count(&pair, "pairs"), requests, "{pair}");
            assert_eq!(count(&pair, "unanswered"), 0, "{pair}");
            assert_eq!(count(&pair, "stray notes"), 0, "{pair}");
            let gbs = |t: Duration| bytes / t.as_secs_f64() / 1e9;
            let cpu = match (stats_cpu, pair_cpu) {
                (Some(s), Some(p)) => format!(
                    "; CPU s {:.2} / {:.2} ({:.2}x)",
                    s.as_secs_f64(),
                    p.as_secs_f64(),
                    s.as_secs_f64() / p.as_secs_f64().max(1e-9)
                ),
                _ => String::new(),
            };
            println!(
                "  round {round}: stats {:.2} GB/s, pair {:.2} GB/s ({:.2}x){cpu}",
                gbs(stats_time),
                gbs(pair_time),
                stats_time.as_secs_f64() / pair_time.as_secs_f64()
            );
        }
        let _ = std::fs::remove_file(&path);
    }
}
