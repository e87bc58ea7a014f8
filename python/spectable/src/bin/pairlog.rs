//! Writes a generated log with known pairs (`rpcscan_oracle::pairlog`) for the Python
//! tests of `rpcscan.pair`, and prints, as JSON, the `rpcscan` options that read it and the
//! pairing reference's events (`rpcscan_oracle::pair`) with their line numbers.
//!
//! ```text
//! pairlog SEED WRAPPER OUT [MAX_IN_FLIGHT [TIMEOUT_MS]]
//! ```
//!
//! `WRAPPER`: `ndjson` (bare messages: no directions, no times), `prefix`, `record`,
//! `payload` or `proxy-log` (`pairlog::Wrapper`). Six logs of 4,000 messages from seeds
//! `SEED * 100 + 0..6`, as the CLI's own test builds them: several parallel blocks.
//! Each event: `{"event", "line", "response_line", "progress", "latency_ms", "ending"}`,
//! `line` being the request's (the response's for orphans and null-id errors).

use std::io::Write;
use std::process::ExitCode;

use rpcscan_oracle::pair::{pair, Entry, PairEvent};
use rpcscan_oracle::pairlog::{self, Wrapper};
use serde_json::{json, Value};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = || {
        eprintln!("usage: pairlog SEED WRAPPER OUT [MAX_IN_FLIGHT [TIMEOUT_MS]]");
        ExitCode::from(2)
    };
    let (Some(seed), Some(wrapper), Some(out)) = (args.first(), args.get(1), args.get(2)) else {
        return usage();
    };
    let Ok(seed) = seed.parse::<u64>() else { return usage() };
    let max_in_flight = match args.get(3).map(|n| n.parse::<usize>()) {
        None => 1000,
        Some(Ok(n)) => n,
        Some(Err(_)) => return usage(),
    };
    let timeout_ms = match args.get(4).map(|n| n.parse::<u64>()) {
        None => None,
        Some(Ok(n)) => Some(n),
        Some(Err(_)) => return usage(),
    };
    let wrapper = match wrapper.as_str() {
        "ndjson" => None,
        "prefix" => Some(Wrapper::Prefix),
        "record" => Some(Wrapper::Record),
        "payload" => Some(Wrapper::Payload),
        "proxy-log" => Some(Wrapper::ProxyLog),
        _ => return usage(),
    };
    let mut log: Vec<Entry> = (0..6).flat_map(|s| pairlog::log(seed * 100 + s, 4000)).collect();
    let (bytes, lines, options): (Vec<u8>, Vec<u64>, &[&str]) = match wrapper {
        None => {
            let mut bytes = Vec::new();
            for entry in &mut log {
                // NDJSON says neither which way nor when.
                entry.direction = None;
                entry.time_ms = None;
                bytes.extend_from_slice(&entry.bytes);
                bytes.push(b'\n');
            }
            (bytes, (1..=log.len() as u64).collect(), &[])
        }
        Some(wrapper) => {
            if wrapper == Wrapper::ProxyLog {
                // Proxy logs say which way and when for every message.
                let mut now = 1_764_410_400_000;
                for (i, entry) in log.iter_mut().enumerate() {
                    entry.direction = Some(entry.direction.unwrap_or(i % 3 != 0));
                    now = entry.time_ms.unwrap_or(now);
                    entry.time_ms = Some(now);
                }
            }
            let wrapped = pairlog::wrap(&log, wrapper, seed);
            (wrapped.bytes, wrapped.lines, wrapped.args)
        }
    };
    if let Err(e) = std::fs::write(out, &bytes) {
        eprintln!("{out}: {e}");
        return ExitCode::FAILURE;
    }
    let line = |i: &usize| lines[*i];
    let event = |name: &str, at: u64| -> Value {
        json!({"event": name, "line": at, "response_line": null, "progress": 0,
               "latency_ms": null, "ending": null})
    };
    let events: Vec<Value> = pair(&log, max_in_flight, timeout_ms)
        .iter()
        .map(|e| match e {
            PairEvent::Paired { request, response, progress, latency_ms, .. } => json!({
                "event": "pair", "line": line(request), "response_line": line(response),
                "progress": progress, "latency_ms": latency_ms, "ending": null,
            }),
            PairEvent::Orphan(at) => event("orphan", line(at)),
            PairEvent::Duplicate { at, .. } => event("duplicate", line(at)),
            PairEvent::NullIdError(at) => event("null_id_error", line(at)),
            PairEvent::Unanswered { at, ending } => {
                let mut e = event("unanswered", line(at));
                e["ending"] = json!(ending);
                e
            }
            PairEvent::Cancelled { at, ending } => {
                let mut e = event("cancelled", line(at));
                e["ending"] = json!(ending);
                e
            }
            PairEvent::StrayProgress(at) => event("stray_progress", line(at)),
            PairEvent::StrayCancel(at) => event("stray_cancel", line(at)),
        })
        .collect();
    let text = json!({"args": options, "events": events}).to_string();
    match writeln!(std::io::stdout().lock(), "{text}") {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::FAILURE,
    }
}
