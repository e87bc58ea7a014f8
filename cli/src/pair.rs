//! `rpcscan pair`: matches every response to the request it answers and reports pairs,
//! orphans, duplicate in-flight ids, unanswered and cancelled requests.
//!
//! The pairing itself is the engine's (`rpcscan_traffic::pair::Pairs`: parallel fact
//! extraction, the library's matcher in input order, direction labels); this file is the
//! command's arguments and its output: a line per event (`--json`, `--unanswered`) as the
//! events settle, and the summary at the end.
//!
//! Timestamps and directions come from log lines (`--line-format` groups `ts` and `dir`,
//! `--ts-field` and `--dir-field`, proxy and gateway logs). Bare NDJSON carries neither: no
//! latencies, no `--timeout` expiries, and one id space shared by both sides. The files of one
//! rotated log are one log, in time order; different logs are id spaces of their own
//! (docs/input.md).

use std::fmt::Write as _;
use std::io::{self, Write as _};
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use rpcscan::pair::{
    Directions, Ending, Event, Latency, Named, Outcome, Position, Seen, Stat, Summary,
    DEFAULT_MAX_IN_FLIGHT,
};
use rpcscan_traffic::duration::parse_duration;
use rpcscan_traffic::input::readable::Readable;
use rpcscan_traffic::input::{self, Output, Skip, Stop};
use rpcscan_traffic::json::{write_str, write_u64};
use rpcscan_traffic::pair::{Finished, Pairs, Report};

/// `rpcscan pair`'s options.
#[derive(Args, Debug)]
pub struct PairArgs {
    /// One JSON object per pair and per anomaly, then one summary object.
    #[arg(long)]
    json: bool,
    /// Print only the requests never answered (exit 1 if there are none).
    #[arg(long)]
    unanswered: bool,
    /// Requests remembered at once; one more evicts the oldest as unanswered.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_IN_FLIGHT)]
    max_in_flight: usize,
    /// Expire requests unanswered this long (a DURATION: `500ms`, `30s`, `5m`, `1h30m`).
    /// Needs timestamps: from log lines (--line-format, --ts-field, proxy logs).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    timeout: Option<Duration>,
    /// Print the report so far this often while the input is read (a DURATION: `10s`), as
    /// well as at its end or Ctrl-C: for a live log (`--follow`) or a pipe.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    every: Option<Duration>,
    #[command(flatten)]
    common: crate::Common,
}

/// Runs the subcommand.
pub fn main(args: PairArgs, out: &mut Output) -> ExitCode {
    let settings = match args.common.checked_settings(true) {
        Ok(settings) => rpcscan_traffic::pair::settings(settings),
        Err(code) => return code,
    };
    args.common.setup_threads();
    // `tail -f server.log | rpcscan pair`: Ctrl-C ends the input, the report follows.
    if let Err(e) = crate::ctrl_c::end_input_on_ctrl_c() {
        input::warn(format_args!("cannot catch Ctrl-C: {e}"));
    }
    let inputs = args.common.inputs();
    // Several files (a folder, a rotated log): each event names its file.
    let files = match inputs.len() {
        0 | 1 => Vec::new(),
        _ => inputs.iter().map(input::Input::name).collect(),
    };
    let printer = Printer { json: args.json, only_unanswered: args.unanswered, files };
    let cmd = Pairs::new(printer.clone())
        .max_in_flight(args.max_in_flight)
        .timeout(args.timeout)
        .every(args.every);
    let run = input::run(&cmd, &settings, &inputs, out);
    let mut unanswered = 0;
    let run = run.and_then(|mut run| {
        let tally = std::mem::take(&mut run.tally);
        let Finished { summary, directions, out: pending, readable } =
            cmd.finish(tally).map_err(Stop::from)?;
        out.write(&pending)?;
        unanswered = summary.unanswered_count();
        for input in readable.mostly_unreadable() {
            input::warn(format_args!("{}", input.warning()));
        }
        let seen = DirectionsSeen {
            labels: directions.labels(),
            undirected: directions.undirected(),
            readable: Some(&readable),
        };
        if printer.json && !printer.only_unanswered {
            out.write(&summary_json(&summary, &seen))?;
        } else if !printer.only_unanswered {
            out.write(summary_table(&summary, &seen).as_bytes())?;
        }
        out.flush()?;
        Ok(run)
    });
    // Interrupted: the report is printed, and the status says the input did not end.
    let interrupted = input::interrupt::interrupted();
    crate::exit(run, |_| match interrupted {
        true => 130,
        false => u8::from(printer.only_unanswered && unanswered == 0),
    })
}

/// The command's output: which events print, and how.
#[derive(Clone)]
struct Printer {
    json: bool,
    only_unanswered: bool,
    /// The inputs' names, when there are several (events then name their file).
    files: Vec<String>,
}

impl Report for Printer {
    type Out = Vec<u8>;

    /// Pairs are printed only as JSON lines (`--json` without `--unanswered`); the text
    /// report counts them.
    fn wants_pairs(&self) -> bool {
        self.json && !self.only_unanswered
    }

    /// Appends an event's line, if this run prints it.
    fn event(&self, event: &Event<'_>, out: &mut Vec<u8>) {
        let unanswered = matches!(event, Event::Unanswered { .. });
        if self.only_unanswered && !unanswered {
            return;
        }
        if self.json {
            event_json(event, &self.files, out);
        } else if let (true, Event::Unanswered { request, .. }) = (self.only_unanswered, event) {
            // LINE, OFFSET, ID, METHOD, TOOL, tab-separated; then FILE with several.
            let _ = write!(
                Text(out),
                "{}\t{}\t{}\t{}\t{}",
                request.at.line,
                request.at.offset,
                String::from_utf8_lossy(&request.id),
                printable(&request.method),
                request.tool.as_deref().map(printable).unwrap_or_default()
            );
            if let Some(file) = self.files.get(request.at.input as usize) {
                let _ = write!(Text(out), "\t{}", printable(file));
            }
            out.push(b'\n');
        }
    }

    /// `--every`: the summary so far, as at the end (`--json`: an `interim` object).
    fn interim(
        &self,
        summary: &Summary,
        directions: &Directions,
        in_flight: usize,
        out: &mut Vec<u8>,
    ) {
        if self.only_unanswered {
            return;
        }
        // The counts of what could not be read come at the end, when every block is merged.
        let seen = DirectionsSeen {
            labels: directions.labels(),
            undirected: directions.undirected(),
            readable: None,
        };
        if self.json {
            let mut line = summary_json(summary, &seen);
            // {"event":"interim",...,"in_flight":N}
            line.truncate(line.len().saturating_sub(2));
            let line = line.strip_prefix(&b"{\"event\":\"summary\""[..]).unwrap_or(&line);
            out.extend_from_slice(b"{\"event\":\"interim\"");
            out.extend_from_slice(line);
            let _ = writeln!(Text(out), ",\"in_flight\":{in_flight}}}");
        } else {
            let _ = writeln!(Text(out), "--- so far ({in_flight} requests in flight) ---");
            out.extend_from_slice(summary_table(summary, &seen).as_bytes());
            out.push(b'\n');
        }
    }

    /// Once per block, so that a live pipe (`tail -f`) shows its events as they settle.
    /// The writer's thread holds stdout's (reentrant) lock and `Output` has nothing
    /// buffered (this command prints nothing per item from NDJSON blocks): this lands in
    /// order.
    fn settled(&self, out: &mut Vec<u8>) -> io::Result<()> {
        if out.is_empty() {
            return Ok(());
        }
        let mut stdout = io::stdout().lock();
        let written = stdout.write_all(out).and_then(|()| stdout.flush());
        out.clear();
        written
    }

    fn write_in_order(&self, out: &mut Vec<u8>, to: &mut Vec<u8>) {
        to.append(out);
    }

    fn prints_as_it_goes(&self) -> bool {
        self.json || self.only_unanswered
    }
}

/// The direction labels a run saw, and what it could not read (at the end of the run).
struct DirectionsSeen<'a> {
    labels: [Option<&'a [u8]>; 2],
    undirected: u64,
    readable: Option<&'a Readable>,
}

/// `fmt::Write` over a byte buffer.
struct Text<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for Text<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

/// A name for a terminal: control characters shown as escapes.
fn printable(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() })
        .collect()
}

fn write_line(out: &mut Vec<u8>, at: Option<Position>) {
    match at {
        Some(at) if at.line > 0 => write_u64(out, at.line),
        _ => out.extend_from_slice(b"null"),
    }
}

fn write_offset(out: &mut Vec<u8>, at: Option<Position>) {
    match at {
        Some(at) => write_u64(out, at.offset),
        None => out.extend_from_slice(b"null"),
    }
}

/// `,"NAME":"FILE"` (null where there is no position) when the run has several files.
fn write_file(out: &mut Vec<u8>, name: &str, files: &[String], at: Option<Position>) {
    if files.is_empty() {
        return;
    }
    out.extend_from_slice(b",\"");
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\":");
    match at.and_then(|at| files.get(at.input as usize)) {
        Some(file) => write_str(out, file),
        None => out.extend_from_slice(b"null"),
    }
}

fn write_opt_str(out: &mut Vec<u8>, s: Option<&str>) {
    match s {
        Some(s) => write_str(out, s),
        None => out.extend_from_slice(b"null"),
    }
}

fn write_raw(out: &mut Vec<u8>, raw: Option<&[u8]>) {
    out.extend_from_slice(raw.unwrap_or(b"null"));
}

/// One object per event, all with the same members (null where they do not apply):
/// event, request_line, request_offset, response_line, response_offset, id, method, tool,
/// outcome, error_code, latency_ms, progress, cancelled; and `ending` for unanswered and
/// cancelled requests, `earlier_line` for duplicates.
fn event_json(event: &Event<'_>, files: &[String], out: &mut Vec<u8>) {
    let mut request = None;
    let mut response = None;
    let mut id: Option<&[u8]> = None;
    let mut method = None;
    let mut latency = None;
    let mut extra = String::new();
    let name = match event {
        Event::Paired { request: r, response: s, latency: l } => {
            request = Some(r);
            response = Some(s);
            latency = *l;
            "pair"
        }
        Event::Orphan(s) => {
            response = Some(s);
            "orphan"
        }
        Event::NullIdError(s) => {
            response = Some(s);
            "null_id_error"
        }
        Event::Duplicate { id: i, method: m, at, earlier, .. } => {
            id = Some(i);
            method = Some(*m);
            let _ = write!(extra, ",\"earlier_line\":{}", earlier.line);
            let _ = write!(extra, ",\"earlier_offset\":{}", earlier.offset);
            if let Some(file) = files.get(earlier.input as usize) {
                extra.push_str(",\"earlier_file\":");
                let mut name = Vec::new();
                write_str(&mut name, file);
                extra.push_str(&String::from_utf8_lossy(&name));
            }
            out.extend_from_slice(b"{\"event\":\"duplicate\",\"request_line\":");
            write_line(out, Some(*at));
            out.extend_from_slice(b",\"request_offset\":");
            write_offset(out, Some(*at));
            write_file(out, "request_file", files, Some(*at));
            "duplicate"
        }
        Event::Unanswered { request: r, ending } | Event::Cancelled { request: r, ending } => {
            request = Some(r);
            let ending = match ending {
                Ending::Finished => "finished",
                Ending::Evicted => "evicted",
                Ending::TimedOut => "timed_out",
            };
            let _ = write!(extra, ",\"ending\":\"{ending}\"");
            if matches!(event, Event::Cancelled { .. }) {
                "cancelled"
            } else {
                "unanswered"
            }
        }
        Event::StrayProgress(_) => "stray_progress",
        Event::StrayCancel(_) => "stray_cancel",
    };
    if name != "duplicate" {
        let at = match event {
            Event::StrayProgress(at) | Event::StrayCancel(at) => Some(*at),
            _ => request.map(|r| r.at),
        };
        out.extend_from_slice(b"{\"event\":");
        write_str(out, name);
        out.extend_from_slice(b",\"request_line\":");
        write_line(out, at);
        out.extend_from_slice(b",\"request_offset\":");
        write_offset(out, at);
        write_file(out, "request_file", files, at);
    }
    let response_at = response.map(|s| s.at);
    out.extend_from_slice(b",\"response_line\":");
    write_line(out, response_at);
    out.extend_from_slice(b",\"response_offset\":");
    write_offset(out, response_at);
    write_file(out, "response_file", files, response_at);
    out.extend_from_slice(b",\"id\":");
    let id = id.or(request.map(|r| &r.id[..])).or(response.and_then(|s| s.id));
    write_raw(out, id);
    out.extend_from_slice(b",\"method\":");
    write_opt_str(out, method.or(request.map(|r| &*r.method)));
    out.extend_from_slice(b",\"tool\":");
    write_opt_str(out, event.tool());
    out.extend_from_slice(b",\"outcome\":");
    let code = match response.map(|s| s.outcome) {
        Some(Outcome::Result) => {
            out.extend_from_slice(b"\"result\"");
            None
        }
        Some(Outcome::Error(code)) => {
            out.extend_from_slice(b"\"error\"");
            Some(code.unwrap_or(b"null"))
        }
        None => {
            out.extend_from_slice(b"null");
            None
        }
    };
    out.extend_from_slice(b",\"error_code\":");
    write_raw(out, code);
    out.extend_from_slice(b",\"latency_ms\":");
    match latency {
        Some(l) => {
            let _ = write!(Text(out), "{:.3}", l.as_secs_f64() * 1000.0);
        }
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b",\"progress\":");
    write_u64(out, request.map_or(0, |r| r.progress));
    out.extend_from_slice(b",\"cancelled\":");
    out.extend_from_slice(if request.is_some_and(|r| r.cancelled) { b"true" } else { b"false" });
    out.extend_from_slice(extra.as_bytes());
    out.extend_from_slice(b"}\n");
}

/// The closing `--json` line: the counts.
fn summary_json(s: &Summary, seen: &DirectionsSeen<'_>) -> Vec<u8> {
    let mut o = Vec::with_capacity(256);
    let _ = writeln!(
        Text(&mut o),
        "{{\"event\":\"summary\",\"pairs\":{},\"unanswered\":{},\"evicted\":{},\"timed_out\":{},\
         \"orphans\":{},\"duplicates\":{},\"cancelled\":{},\"null_id_errors\":{},\
         \"stray_notifications\":{}}}",
        s.pairs,
        s.unanswered_count(),
        s.evicted,
        s.timed_out,
        s.orphans.count,
        s.duplicates.count,
        s.cancelled.count,
        s.null_id_errors.count,
        s.stray_notifications.count
    );
    // `"directions":["c2s","s2c"]` (the first label seen first), null without labels.
    o.pop();
    o.pop();
    o.extend_from_slice(b",\"directions\":");
    if seen.labels[0].is_none() {
        o.extend_from_slice(b"null");
    } else {
        o.push(b'[');
        for (i, label) in seen.labels.iter().flatten().enumerate() {
            if i > 0 {
                o.push(b',');
            }
            write_str(&mut o, &String::from_utf8_lossy(label));
        }
        o.push(b']');
    }
    o.extend_from_slice(b",\"undirected\":");
    write_u64(&mut o, seen.undirected);
    // What `stats` counts too: invalid messages, lines without one.
    if let Some(readable) = seen.readable {
        readable_json(&mut o, readable);
    }
    o.extend_from_slice(b"}\n");
    o
}

/// `,"invalid":N,"skipped_lines":{...}` and, when most of an input could not be read,
/// `,"unreadable":[...]`.
fn readable_json(o: &mut Vec<u8>, readable: &Readable) {
    let (_, invalid, skipped) = readable.totals();
    o.extend_from_slice(b",\"invalid\":");
    write_u64(o, invalid);
    o.extend_from_slice(b",\"skipped_lines\":{");
    for (i, (why, n)) in Skip::ALL.iter().zip(skipped).enumerate() {
        if i > 0 {
            o.push(b',');
        }
        write_str(o, why.as_str());
        o.push(b':');
        write_u64(o, n);
    }
    o.push(b'}');
    crate::stats::unreadable_json(o, readable);
}

fn first_lines(seen: &Seen) -> String {
    if seen.count == 0 {
        return String::new();
    }
    let lines: Vec<String> = seen.first_lines.iter().map(u64::to_string).collect();
    let more = if seen.count > seen.first_lines.len() as u64 { ", ..." } else { "" };
    format!("  first lines {}{more}", lines.join(", "))
}

fn millis(d: Option<Duration>) -> String {
    d.map_or_else(|| "-".to_owned(), |d| format!("{:.1}ms", d.as_secs_f64() * 1000.0))
}

fn codes(stat: &Stat) -> String {
    let all: Vec<String> = stat
        .errors
        .iter()
        .map(|(code, n)| format!("{}×{n}", String::from_utf8_lossy(code)))
        .collect();
    all.join(" ")
}

fn table(t: &mut String, title: &str, rows: &Named<Stat>) {
    if rows.is_empty() {
        return;
    }
    let timed = rows.values().any(|s| s.latency.count() > 0);
    let _ = write!(t, "\n{title:<28} {:>10} {:>8}", "count", "errors");
    if timed {
        let _ = write!(t, " {:>10} {:>10} {:>10} {:>10}", "p50", "p90", "p99", "max");
    }
    t.push_str("  error codes\n");
    let mut ranked: Vec<(&str, &Stat)> = rows.iter().collect();
    ranked.sort_by(|a, b| b.1.count.cmp(&a.1.count).then(a.0.cmp(b.0)));
    for (name, stat) in ranked {
        let _ = write!(t, "{:<28} {:>10} {:>8}", printable(name), stat.count, stat.error_count());
        if timed {
            let l: &Latency = &stat.latency;
            let max = (l.count() > 0).then(|| l.max());
            let _ = write!(
                t,
                " {:>10} {:>10} {:>10} {:>10}",
                millis(l.percentile(50.0)),
                millis(l.percentile(90.0)),
                millis(l.percentile(99.0)),
                millis(max)
            );
        }
        let codes = codes(stat);
        if codes.is_empty() {
            t.push('\n');
        } else {
            let _ = writeln!(t, "  {codes}");
        }
    }
}

/// The `invalid` and `skipped lines` rows, and the `unreadable` ones.
fn readable_table(t: &mut String, readable: &Readable) {
    let (_, invalid, skipped) = readable.totals();
    let _ = writeln!(t, "{:<16} {invalid:>12}", "invalid");
    let total: u64 = skipped.iter().sum();
    if total > 0 {
        let [no_match, missing, proxy, host] = skipped;
        let _ = write!(
            t,
            "{:<16} {total:>12}  (no match {no_match}, no message field {missing}, \
             proxy records {proxy}",
            "skipped lines"
        );
        if host > 0 {
            let _ = write!(t, ", host lines {host}");
        }
        t.push_str(")\n");
    }
    for input in readable.mostly_unreadable() {
        let _ = writeln!(t, "{:<16} {}", "unreadable", input.warning());
    }
}

/// The summary for a person.
fn summary_table(s: &Summary, seen: &DirectionsSeen<'_>) -> String {
    let mut t = String::with_capacity(2048);
    if let [Some(there), back] = seen.labels {
        let show = |l: &[u8]| printable(&String::from_utf8_lossy(l));
        let back = back.map_or_else(|| "(none seen)".to_owned(), show);
        let _ = write!(t, "{:<16} {} / {back}", "directions", show(there));
        if seen.undirected > 0 {
            let _ = write!(t, "  ({} with another label: no direction)", seen.undirected);
        }
        t.push('\n');
    }
    let _ = writeln!(t, "{:<16} {:>12}", "pairs", s.pairs);
    let _ = writeln!(
        t,
        "{:<16} {:>12}  (evicted {}, timed out {})",
        "unanswered",
        s.unanswered_count(),
        s.evicted,
        s.timed_out
    );
    for (name, seen) in [
        ("orphans", &s.orphans),
        ("duplicate ids", &s.duplicates),
        ("cancelled", &s.cancelled),
        ("null-id errors", &s.null_id_errors),
        ("stray notes", &s.stray_notifications),
    ] {
        let _ = writeln!(t, "{name:<16} {:>12}{}", seen.count, first_lines(seen));
    }
    // As `stats` counts them: invalid messages always, lines without one when there are.
    if let Some(readable) = seen.readable {
        readable_table(&mut t, readable);
    }
    table(&mut t, "method", &s.methods);
    table(&mut t, "tool", &s.tools);
    if !s.unanswered.is_empty() {
        let _ = writeln!(t, "\n{:<28} {:>10}  first lines", "unanswered method", "count");
        for (method, seen) in &s.unanswered {
            let lines: Vec<String> = seen.first_lines.iter().map(u64::to_string).collect();
            let _ =
                writeln!(t, "{:<28} {:>10}  {}", printable(method), seen.count, lines.join(", "));
        }
    }
    t
}
