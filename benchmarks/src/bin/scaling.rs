//! Throughput against input size, measured interleaved (not a criterion benchmark), and with
//! the two effects that a plain 1 MB / 200 MB comparison mixes up kept apart:
//!
//! - **memory**: 1 MB of traffic stays in the L2 cache, 200 MB streams from DRAM;
//! - **branch history**: timing 1 MB means classifying the same ~2,800 messages over and
//!   over, and the branch predictor learns part of them; 200 MB of fresh traffic never
//!   repeats.
//!
//! So three inputs are timed, round after round: the 1 MB corpus (repeated in place), the
//! same 1 MB copied 200 times (200 MB from memory, same messages), and 200 MB of fresh
//! traffic; memchr over the same bytes shows what the memory system itself does.
//!
//! ```text
//! cargo run --profile bench -p rpcscan-benchmarks --bin scaling   # needs ~500 MB of memory
//! ```

use rpcscan::{Parser, Validation};
use rpcscan_oracle::corpus::{generate, Mix};
use std::hint::black_box;
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let strict = Parser::new();
    let envelope = Parser::new().validation(Validation::Envelope);
    let small = generate(Mix::Small, 1 << 20, 5);
    let repeated = small.repeat(200);
    let fresh = generate(Mix::Small, 200 << 20, 5);
    let inputs: [(&str, &[u8]); 3] =
        [("1 MB", &small), ("1 MB x 200", &repeated), ("200 MB fresh", &fresh)];
    let lines: Vec<Vec<&[u8]>> = inputs
        .iter()
        .map(|(_, bytes)| bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()).collect())
        .collect();
    let parsers = [("strict", &strict), ("envelope", &envelope)];
    // MiB/s per (parser or memchr, input), one entry per round.
    let mut rates = vec![vec![Vec::new(); inputs.len()]; parsers.len() + 1];
    for _ in 0..7 {
        for (k, (_, bytes)) in inputs.iter().enumerate() {
            // Enough repetitions of the small input to time ~200 MB as well.
            let reps = ((200 << 20) / bytes.len()).max(1);
            for (p, (_, parser)) in parsers.iter().enumerate() {
                let start = Instant::now();
                for _ in 0..reps {
                    for line in &lines[k] {
                        black_box(parser.classify(black_box(line)));
                    }
                }
                let secs = start.elapsed().as_secs_f64();
                rates[p][k].push((bytes.len() * reps) as f64 / secs / (1 << 20) as f64);
            }
            let start = Instant::now();
            for _ in 0..reps {
                black_box(memchr::memchr_iter(b'\n', black_box(bytes)).count());
            }
            let secs = start.elapsed().as_secs_f64();
            rates[parsers.len()][k].push((bytes.len() * reps) as f64 / secs / (1 << 20) as f64);
        }
    }
    println!("median of 7 rounds, MiB/s (kernel level {})", rpcscan::kernel_level());
    let names = parsers.iter().map(|(name, _)| *name).chain(["memchr"]);
    for (name, per_input) in names.zip(rates) {
        let m: Vec<f64> = per_input.into_iter().map(median).collect();
        print!("  {name:<9}");
        for ((input, _), rate) in inputs.iter().zip(&m) {
            print!("  {input}: {rate:>6.0} ({:>3.0}%)", 100.0 * rate / m[0]);
        }
        println!();
    }
}
