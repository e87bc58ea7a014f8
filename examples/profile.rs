//! Profiling driver (not a benchmark): classifies a generated corpus in a loop so `perf` or
//! `valgrind --tool=callgrind` can attribute the time.
//!
//! ```text
//! cargo build --release --example profile
//! perf record -g target/release/examples/profile small strict 200
//! ```

use rpcscan::{Parser, Validation};
use rpcscan_oracle::corpus::{generate, Mix};

fn main() {
    let mut args = std::env::args().skip(1);
    let mix = match args.next().as_deref() {
        Some("mixed") => Mix::Mixed,
        _ => Mix::Small,
    };
    let parser = match args.next().as_deref() {
        Some("envelope") => Parser::new().validation(Validation::Envelope),
        _ => Parser::new(),
    };
    let rounds: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(100);
    let corpus = generate(mix, 4 << 20, 1);
    let lines: Vec<&[u8]> = corpus
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    let mut counts = [0usize; 5];
    let start = std::time::Instant::now();
    for _ in 0..rounds {
        for line in &lines {
            counts[parser.classify(line) as usize] += 1;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let mb = (corpus.len() * rounds) as f64 / 1e6;
    eprintln!("{counts:?} {:.0} MB/s", mb / secs);
}
