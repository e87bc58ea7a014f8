//! `rpcscan pair`: matches every response to the request it answers (`rpcscan::pair`) and
//! reports pairs, orphans, duplicate in-flight ids, unanswered and cancelled requests.
//!
//! Classification stays parallel: each NDJSON block's workers only read the facts the
//! matcher needs (kind, raw id, method, tool, cancel and progress keys, position) into a
//! small per-block arena; the blocks are merged in input order on the writer thread, which
//! feeds the facts to the one sequential [`Pairing`]. Framed streams (Content-Length, SSE,
//! json-seq) are already decoded in order on that thread, and feed it directly.
//!
//! Timestamps and directions come from log lines (`--line-format` groups `ts` and `dir`,
//! `--ts-field` and `--dir-field`, proxy logs): the workers parse each timestamp, the
//! matcher maps the direction labels in input order ([`Directions`]: the first label seen
//! is one way, the second the other). Bare NDJSON carries neither: no latencies, no
//! `--timeout` expiries, and one id space shared by both sides. Several files are one log,
//! in order.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::{self, Write as _};
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::Duration;

use clap::Args;
use rpcscan::pair::{
    Directions, Ending, Event, Fact, Latency, Outcome, Pairing, Position, Seen, Stat, Summary,
    DEFAULT_MAX_IN_FLIGHT,
};
use rpcscan::Kind;

use crate::input::{self, Command, Item, Output, Source, Stop};
use crate::json::{write_str, write_u64};

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
    /// Expire requests unanswered this long (`500ms`, `30s`, `5m`, `1h`; a bare number is
    /// seconds). Needs timestamps: from log lines (--line-format, --ts-field, proxy logs).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    timeout: Option<Duration>,
    #[command(flatten)]
    common: crate::Common,
}

/// `30s`, `500ms`, `2m`, `1h`, `1.5` (seconds) → a duration.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let bad = || format!("{s:?} is not a duration (examples: 500ms, 30s, 5m, 1h)");
    let n: f64 = number.parse().map_err(|_| bad())?;
    let seconds = match unit.trim() {
        "" | "s" => n,
        "ms" => n / 1000.0,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(bad()),
    };
    Duration::try_from_secs_f64(seconds).map_err(|_| bad())
}

/// Runs the subcommand.
pub fn main(args: PairArgs, out: &mut Output) -> ExitCode {
    let settings = match args.common.checked_settings(true) {
        Ok(settings) => settings,
        Err(code) => return code,
    };
    args.common.setup_threads();
    // `tail -f server.log | rpcscan pair`: Ctrl-C ends the input, the report follows.
    if let Err(e) = input::interrupt::end_input_on_ctrl_c() {
        input::warn(format_args!("cannot catch Ctrl-C: {e}"));
    }
    let cmd = Pair {
        json: args.json,
        only_unanswered: args.unanswered,
        max_in_flight: args.max_in_flight,
        timeout: args.timeout,
        spare: Mutex::new(Vec::new()),
    };
    let run = input::run(&cmd, &settings, &args.common.inputs(), out);
    let mut unanswered = 0;
    let run = run.and_then(|mut run| {
        let mut state = run.tally.state.take().unwrap_or_else(|| cmd.state());
        if let Some(e) = state.error.take() {
            return Err(Stop::from(e));
        }
        // Facts recorded but never merged: only if framed streams ever came with line
        // numbers (see `item`). Fed here so that nothing is lost.
        let leftover = std::mem::take(&mut run.tally.facts);
        let mut pending = std::mem::take(&mut state.out);
        for record in &leftover {
            let (fact, label) = record.fact(&run.tally.arena);
            cmd.feed(&mut state, fact, label, &mut pending);
        }
        let State { pairing, summary, directions, undirected, .. } = &mut *state;
        let pending = &mut pending;
        pairing.finish(|event| {
            summary.add(&event);
            cmd.write(&event, pending);
        });
        out.write(pending)?;
        unanswered = summary.unanswered_count();
        let seen = DirectionsSeen { labels: directions.labels(), undirected: *undirected };
        if cmd.json && !cmd.only_unanswered {
            out.write(&summary_json(summary, &seen))?;
        } else if !cmd.only_unanswered {
            out.write(summary_table(summary, &seen).as_bytes())?;
        }
        out.flush()?;
        Ok(run)
    });
    // Interrupted: the report is printed, and the status says the input did not end.
    let interrupted = input::interrupt::interrupted();
    crate::exit(run, |_| match interrupted {
        true => 130,
        false => u8::from(cmd.only_unanswered && unanswered == 0),
    })
}

/// The subcommand's settings.
struct Pair {
    json: bool,
    only_unanswered: bool,
    max_in_flight: usize,
    timeout: Option<Duration>,
    /// Record and arena buffers of merged blocks, for the next blocks to fill (a block's
    /// thousands of records would otherwise regrow, and be copied, every time).
    spare: Mutex<Vec<(Vec<Record>, Arena)>>,
}

/// Spare buffers kept at most (a window of blocks is in flight at once).
const MAX_SPARE: usize = 64;

/// A block's facts (in an arena: one allocation per block, not per message), and in the
/// run's own tally the matcher.
#[derive(Default)]
struct Tally {
    facts: Vec<Record>,
    arena: Arena,
    state: Option<Box<State>>,
}

/// A block's strings: raw bytes (ids, tokens, codes, labels), and text (methods and tool
/// names, valid UTF-8 already: read back without a second validation).
#[derive(Default)]
struct Arena {
    bytes: Vec<u8>,
    text: String,
}

impl Arena {
    fn clear(&mut self) {
        self.bytes.clear();
        self.text.clear();
    }
}

/// A span of the arena, relative to its record's first byte there: start and length
/// (`u32::MAX` long: none). Compact, so that a block's records stay small on their way to
/// the matcher's thread.
#[derive(Clone, Copy)]
struct Span {
    start: u32,
    len: u32,
}

impl Span {
    const NONE: Span = Span { start: 0, len: u32::MAX };
}

/// One message's facts, with its strings in the block's arena from `base` on (text from
/// `text_base`).
struct Record {
    at: Position,
    time: Option<Duration>,
    /// Where this record's strings begin in the arena.
    base: usize,
    text_base: usize,
    kind: Kind,
    id: Span,
    method: Span,
    tool: Span,
    /// A request's or progress notification's progress token, or a cancel's request id.
    token: Span,
    /// `token` is the `requestId` of a `notifications/cancelled`.
    cancels: bool,
    error_code: Span,
    /// The log line's direction label, mapped to a direction in input order.
    label: Span,
}

impl Record {
    fn new(fact: &Fact<'_>, label: Option<&[u8]>, arena: &mut Arena) -> Record {
        let (base, text_base) = (arena.bytes.len(), arena.text.len());
        // A field longer than 4 GiB (a message that size, with --max-message-size raised
        // that far) is not kept.
        let span = |start: usize, len: usize| match (u32::try_from(start), u32::try_from(len)) {
            (Ok(start), Ok(len)) if len != u32::MAX => Some(Span { start, len }),
            _ => None,
        };
        let bytes = &mut arena.bytes;
        let mut stash = |b: Option<&[u8]>| {
            let Some(b) = b else { return Span::NONE };
            let Some(span) = span(bytes.len() - base, b.len()) else { return Span::NONE };
            bytes.extend_from_slice(b);
            span
        };
        let id = stash(fact.id);
        let token = stash(fact.cancels.or(fact.progress_token));
        let error_code = stash(fact.error_code);
        let label = stash(label);
        let text = &mut arena.text;
        let mut stash_text = |t: Option<&str>| {
            let Some(t) = t else { return Span::NONE };
            let Some(span) = span(text.len() - text_base, t.len()) else { return Span::NONE };
            text.push_str(t);
            span
        };
        let method = stash_text(fact.method.as_deref());
        let tool = stash_text(fact.tool.as_deref());
        Record {
            at: fact.at,
            time: fact.time,
            base,
            text_base,
            kind: fact.kind,
            id,
            method,
            tool,
            token,
            cancels: fact.cancels.is_some(),
            error_code,
            label,
        }
    }

    /// The fact, and its direction label.
    fn fact<'a>(&self, arena: &'a Arena) -> (Fact<'a>, Option<&'a [u8]>) {
        let bytes = |span: Span| {
            if span.len == u32::MAX {
                return None;
            }
            let start = self.base + span.start as usize;
            arena.bytes.get(start..start + span.len as usize)
        };
        let text = |span: Span| {
            if span.len == u32::MAX {
                return None;
            }
            let start = self.text_base + span.start as usize;
            arena.text.get(start..start + span.len as usize).map(Cow::Borrowed)
        };
        let mut fact = Fact::new(self.kind, self.at);
        fact.id = bytes(self.id);
        fact.method = text(self.method);
        fact.tool = text(self.tool);
        if self.cancels {
            fact.cancels = bytes(self.token);
        } else {
            fact.progress_token = bytes(self.token);
        }
        fact.error_code = bytes(self.error_code);
        fact.time = self.time;
        (fact, bytes(self.label))
    }
}

/// The sequential end: the matcher, the counts, output not yet written.
struct State {
    pairing: Pairing,
    summary: Summary,
    /// The log's two direction labels, as they come.
    directions: Directions,
    /// Messages with a label beyond the first two (no direction).
    undirected: u64,
    out: Vec<u8>,
    /// Writing stdout failed: nothing more is written, the run ends with it.
    error: Option<io::Error>,
}

impl Pair {
    fn state(&self) -> Box<State> {
        Box::new(State {
            pairing: Pairing::new().max_in_flight(self.max_in_flight).timeout(self.timeout),
            summary: Summary::new(),
            directions: Directions::new(),
            undirected: 0,
            out: Vec::new(),
            error: None,
        })
    }

    /// Feeds one fact, travelling the way its `label` says, in input order.
    fn feed(&self, state: &mut State, fact: Fact<'_>, label: Option<&[u8]>, out: &mut Vec<u8>) {
        let State { pairing, summary, directions, undirected, .. } = state;
        let direction = label.and_then(|l| directions.direction(l));
        *undirected += u64::from(label.is_some() && direction.is_none());
        let fact = fact.with_direction(direction);
        pairing.feed(&fact, |event| {
            summary.add(&event);
            self.write(&event, out);
        });
    }

    /// Appends an event's line, if this run prints it.
    fn write(&self, event: &Event<'_>, out: &mut Vec<u8>) {
        let unanswered = matches!(event, Event::Unanswered { .. });
        if self.only_unanswered && !unanswered {
            return;
        }
        if self.json {
            event_json(event, out);
        } else if let (true, Event::Unanswered { request, .. }) = (self.only_unanswered, event) {
            // LINE, OFFSET, ID, METHOD, TOOL, tab-separated.
            let _ = writeln!(
                Text(out),
                "{}\t{}\t{}\t{}\t{}",
                request.at.line,
                request.at.offset,
                String::from_utf8_lossy(&request.id),
                printable(&request.method),
                request.tool.as_deref().map(printable).unwrap_or_default()
            );
        }
    }
}

impl Command for Pair {
    type Tally = Tally;

    /// An NDJSON block's message, in a worker: its facts (timestamp parsed here, in
    /// parallel) go into the block's tally, to be fed in input order by [`Command::merge`].
    fn item(&self, _source: &Source, item: &Item<'_>, _out: &mut Vec<u8>, tally: &mut Tally) {
        if let Some(fact) = item.pair_fact(self.timeout.is_some()) {
            if tally.facts.capacity() == 0 {
                if let Some((facts, arena)) = self.spare.lock().ok().and_then(|mut s| s.pop()) {
                    (tally.facts, tally.arena) = (facts, arena);
                }
            }
            tally.facts.push(Record::new(&fact, item.dir, &mut tally.arena));
        }
    }

    /// A framed stream's message: already in order, on the writer's thread, with the run's
    /// own tally: fed straight to the matcher.
    fn item_in_order(
        &self,
        _source: &Source,
        item: &Item<'_>,
        out: &mut Vec<u8>,
        tally: &mut Tally,
    ) {
        if let Some(fact) = item.pair_fact(self.timeout.is_some()) {
            let state = tally.state.get_or_insert_with(|| self.state());
            self.feed(state, fact, item.dir, out);
        }
    }

    fn merge(&self, into: &mut Tally, from: Tally) {
        self.merge_lines(into, from, 1);
    }

    /// A mapped block's facts come with lines counted from 1 at its first byte: the
    /// producer then does not read the whole file once more to number the blocks (that
    /// count was ~7% of `pair`'s CPU time).
    fn numbers_lines_at_merge(&self) -> bool {
        true
    }

    fn merge_lines(&self, into: &mut Tally, from: Tally, first_line: u64) {
        let by = first_line.saturating_sub(1);
        let state = into.state.get_or_insert_with(|| self.state());
        let mut pending = std::mem::take(&mut state.out);
        for record in &from.facts {
            let (mut fact, label) = record.fact(&from.arena);
            // Framings without lines say 0, and keep it.
            if fact.at.line > 0 {
                fact.at.line += by;
            }
            self.feed(state, fact, label, &mut pending);
        }
        state.out = pending;
        let Tally { mut facts, mut arena, .. } = from;
        if facts.capacity() > 0 {
            facts.clear();
            arena.clear();
            if let Ok(mut spare) = self.spare.lock() {
                if spare.len() < MAX_SPARE {
                    spare.push((facts, arena));
                }
            }
        }
        if !state.out.is_empty() && state.error.is_none() {
            // Once per block, so that a live pipe (`tail -f`) shows its events as they
            // settle. The writer's thread holds stdout's (reentrant) lock and `Output` has
            // nothing buffered (this command prints nothing per item from NDJSON blocks):
            // this lands in order.
            let mut stdout = io::stdout().lock();
            if let Err(e) = stdout.write_all(&state.out).and_then(|()| stdout.flush()) {
                state.error = Some(e);
            }
        }
        state.out.clear();
    }

    fn wants_lines(&self) -> bool {
        true
    }

    fn prints_as_it_goes(&self) -> bool {
        self.json || self.only_unanswered
    }
}

/// The direction labels a run saw.
struct DirectionsSeen<'a> {
    labels: [Option<&'a [u8]>; 2],
    undirected: u64,
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
fn event_json(event: &Event<'_>, out: &mut Vec<u8>) {
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
        Event::Duplicate { id: i, method: m, at, earlier } => {
            id = Some(i);
            method = Some(*m);
            let _ = write!(extra, ",\"earlier_line\":{}", earlier.line);
            let _ = write!(extra, ",\"earlier_offset\":{}", earlier.offset);
            out.extend_from_slice(b"{\"event\":\"duplicate\",\"request_line\":");
            write_line(out, Some(*at));
            out.extend_from_slice(b",\"request_offset\":");
            write_offset(out, Some(*at));
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
    }
    let response_at = response.map(|s| s.at);
    out.extend_from_slice(b",\"response_line\":");
    write_line(out, response_at);
    out.extend_from_slice(b",\"response_offset\":");
    write_offset(out, response_at);
    out.extend_from_slice(b",\"id\":");
    let id = id.or(request.map(|r| &r.id[..])).or(response.and_then(|s| s.id));
    write_raw(out, id);
    out.extend_from_slice(b",\"method\":");
    write_opt_str(out, method.or(request.map(|r| &*r.method)));
    out.extend_from_slice(b",\"tool\":");
    write_opt_str(out, request.and_then(|r| r.tool.as_deref()));
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
    o.extend_from_slice(b"}\n");
    o
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

fn table(t: &mut String, title: &str, rows: &std::collections::BTreeMap<String, Stat>) {
    if rows.is_empty() {
        return;
    }
    let timed = rows.values().any(|s| s.latency.count() > 0);
    let _ = write!(t, "\n{title:<28} {:>10} {:>8}", "count", "errors");
    if timed {
        let _ = write!(t, " {:>10} {:>10} {:>10} {:>10}", "p50", "p90", "p99", "max");
    }
    t.push_str("  error codes\n");
    let mut ranked: Vec<(&String, &Stat)> = rows.iter().collect();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        #[rustfmt::skip]
        let cases: &[(&str, Option<Duration>)] = &[
            ("30s", Some(Duration::from_secs(30))),
            ("500ms", Some(Duration::from_millis(500))),
            ("2m", Some(Duration::from_secs(120))),
            ("1h", Some(Duration::from_secs(3600))),
            ("1.5", Some(Duration::from_millis(1500))),
            ("", None),
            ("5 parsecs", None),
            ("-1s", None),
        ];
        for &(arg, want) in cases {
            assert_eq!(parse_duration(arg).ok(), want, "{arg}");
        }
    }
}
