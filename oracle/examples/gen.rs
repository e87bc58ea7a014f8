//! Writes deterministic MCP NDJSON traffic to stdout.
//!
//! ```text
//! cargo run -p rpcscan-oracle --example gen -- small|mixed BYTES [SEED]
//! ```

use std::io::Write;
use std::process::ExitCode;

use rpcscan_oracle::corpus::{generate, Mix};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mix = match args.first().map(String::as_str) {
        Some("small") => Mix::Small,
        Some("mixed") => Mix::Mixed,
        _ => return usage(),
    };
    let Some(Ok(bytes)) = args.get(1).map(|b| b.parse::<usize>()) else {
        return usage();
    };
    let seed = match args.get(2).map(|s| s.parse::<u64>()) {
        None => 0,
        Some(Ok(seed)) => seed,
        Some(Err(_)) => return usage(),
    };
    if args.len() > 3 {
        return usage();
    }
    let ndjson = generate(mix, bytes, seed);
    match std::io::stdout().lock().write_all(&ndjson) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gen: {e}");
            ExitCode::FAILURE
        }
    }
}

fn usage() -> ExitCode {
    eprintln!("usage: gen small|mixed BYTES [SEED]");
    ExitCode::from(2)
}
