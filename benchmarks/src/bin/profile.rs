//! Profiling driver (not a benchmark): classifies a generated corpus in a loop so `perf` or
//! `valgrind --tool=callgrind` can attribute the time.
//!
//! ```text
//! cargo build --profile bench -p rpcscan-benchmarks --bin profile
//! perf record -g target/release/profile small strict 200   # SHAPE MODE ROUNDS [SEED [REPEAT]]
//! # SHAPE: tiny small mixed code cjk image; PROFILE_BYTES sets the corpus size (4 MiB)
//! # modes: strict envelope serde_value serde_raw simd_json sonic, and on the valid-JSON
//! # subset only: sonic_unchecked envelope_valid_json
//! ```
//!
//! REPEAT (default 1) classifies each message that many times in a row before the next
//! one. The work is the same, but the branch predictor learns each message: comparing
//! `... 20 1 16` with `... 20 1 1` shows what the variety of real traffic costs in
//! mispredicted branches, also where no hardware counters count them directly.

use rpcscan::{Kind, Parser, Validation};
use rpcscan_benchmarks::baselines;
use rpcscan_benchmarks::shapes;

fn main() {
    let mut args = std::env::args().skip(1);
    let shape = args.next().unwrap_or_else(|| "small".into());
    let mode = args.next().unwrap_or_else(|| "strict".into());
    let strict = Parser::new();
    let envelope = Parser::new().validation(Validation::Envelope);
    let mut scratch = Vec::new();
    let mut classify = |line: &[u8]| -> Kind {
        match mode.as_str() {
            "envelope" => envelope.classify(line),
            "serde_value" => baselines::serde_value(line),
            "serde_raw" => baselines::serde_raw(line),
            "simd_json" => baselines::simd_json_borrowed(line, &mut scratch),
            "sonic" => baselines::sonic_checked(line),
            "sonic_unchecked" => baselines::sonic_unchecked(line),
            "envelope_valid_json" => envelope.classify(line),
            _ => strict.classify(line),
        }
    };
    let rounds: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(100);
    let seed: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(1);
    let repeat: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(1).max(1);
    let size = std::env::var("PROFILE_BYTES").ok().and_then(|s| s.parse().ok()).unwrap_or(4 << 20);
    let corpus =
        shapes::corpus(&shape, size, seed).expect("a shape: tiny small mixed code cjk image");
    let mut lines: Vec<&[u8]> = corpus.split(|&b| b == b'\n').filter(|l| !l.is_empty()).collect();
    if mode == "sonic_unchecked" || mode == "envelope_valid_json" {
        // Unchecked parsers are only defined on valid JSON: both get the same subset.
        lines.retain(|l| rpcscan_oracle::validate_json(l));
    }
    let mut counts = [0usize; 5];
    let start = std::time::Instant::now();
    for _ in 0..rounds.div_ceil(repeat) {
        for line in &lines {
            for _ in 0..repeat {
                counts[classify(line) as usize] += 1;
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let bytes: usize = lines.iter().map(|l| l.len() + 1).sum();
    let mb = (bytes * rounds.div_ceil(repeat) * repeat) as f64 / 1e6;
    eprintln!(
        "{counts:?} {:.0} MB/s (kernel level {}), {bytes} bytes per round",
        mb / secs,
        rpcscan::kernel_level()
    );
}
