//! Classifies every message of an NDJSON file (or stdin): one kind per line, then a count
//! summary on stderr.
//!
//! ```text
//! cargo run --release --example classify -- examples/mcp-traffic.ndjson
//! ```

use std::io::{self, BufWriter, Read, Write};

use rpcscan::Kind;

fn main() -> io::Result<()> {
    let input = match std::env::args_os().nth(1) {
        Some(path) if path != "-" => std::fs::read(path)?,
        _ => {
            let mut buf = Vec::new();
            io::stdin().read_to_end(&mut buf)?;
            buf
        }
    };
    let mut out = BufWriter::new(io::stdout().lock());
    let mut counts = [0usize; Kind::ALL.len()];
    for line in input.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
            continue; // blank lines are not messages (docs/spec.md §7)
        }
        let kind = rpcscan::classify(line);
        counts[kind as usize] += 1;
        writeln!(out, "{kind}")?;
    }
    out.flush()?;
    let total: usize = counts.iter().sum();
    eprintln!("{total} messages");
    for kind in Kind::ALL {
        eprintln!("{:>12} {}", kind.as_str(), counts[kind as usize]);
    }
    Ok(())
}
