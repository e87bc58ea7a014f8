//! `rpcscan stats`: counts per kind, method, error code and invalid reason, with volume and
//! speed, as a table or as one JSON object.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::time::Duration;

use rpcscan::{Kind, Reason};

use crate::input::readable::Readable;
use crate::input::{Command, Item, Skip, Source, Verdict};
use crate::json::{write_str, write_u64};

/// Distinct methods (and error codes) counted by name; the rest are lumped together, so a
/// hostile log cannot grow the tables without bound.
pub const MAX_KEYS: usize = 10_000;

/// The subcommand's settings.
pub struct Stats {
    /// How many methods to list (0: all).
    pub top: usize,
    /// One JSON object instead of the table.
    pub json: bool,
}

/// The counts.
#[derive(Default, Debug)]
pub struct Tally {
    messages: u64,
    kinds: [u64; Kind::ALL.len()],
    reasons: [u64; Reason::ALL.len()],
    /// Decoded method name → requests and notifications.
    methods: HashMap<Box<[u8]>, u64>,
    /// Messages whose method did not fit in [`MAX_KEYS`].
    other_methods: u64,
    /// Raw `error.code` literal → error responses.
    codes: HashMap<Box<[u8]>, u64>,
    other_codes: u64,
    /// SSE events of another type than `message` (not messages, docs/spec.md §7).
    non_message_events: u64,
    /// Log lines without a message (extraction only), by [`Skip::ALL`]: no match, no
    /// message field, proxy records, host lines.
    skipped: [u64; 4],
    /// Per input: what could not be read, and the first such line.
    readable: Readable,
    /// Decoding space for escaped method names (reused, never per message).
    scratch: String,
}

fn count(map: &mut HashMap<Box<[u8]>, u64>, other: &mut u64, key: &[u8], n: u64) {
    if let Some(c) = map.get_mut(key) {
        *c += n;
    } else if map.len() < MAX_KEYS {
        map.insert(key.into(), n);
    } else {
        *other += n;
    }
}

impl Command for Stats {
    type Tally = Tally;

    fn item(&self, source: &Source, item: &Item<'_>, out: &mut Vec<u8>, t: &mut Tally) {
        t.readable.item(source, item);
        self.count(item, out, t);
    }

    /// A framed stream's message, in the run's own tally: the same counts.
    fn item_in_order(&self, source: &Source, item: &Item<'_>, out: &mut Vec<u8>, t: &mut Tally) {
        t.readable.item_in_order(source, item);
        self.count(item, out, t);
    }

    fn skipped(&self, _source: &Source, why: Skip, t: &mut Tally) {
        t.skipped[skip_index(why)] += 1;
    }

    fn skipped_line(&self, source: &Source, why: Skip, offset: u64, line: &[u8], t: &mut Tally) {
        t.skipped[skip_index(why)] += 1;
        t.readable.skipped(source, why, offset, line);
    }

    fn prints_as_it_goes(&self) -> bool {
        false
    }

    fn non_message_event(&self, _offset: u64, _event: &str, t: &mut Tally) {
        t.non_message_events += 1;
    }

    fn merge(&self, into: &mut Tally, from: Tally) {
        into.messages += from.messages;
        into.readable.merge(from.readable);
        into.non_message_events += from.non_message_events;
        for (a, b) in into.skipped.iter_mut().zip(from.skipped) {
            *a += b;
        }
        for (a, b) in into.kinds.iter_mut().zip(from.kinds) {
            *a += b;
        }
        for (a, b) in into.reasons.iter_mut().zip(from.reasons) {
            *a += b;
        }
        into.other_methods += from.other_methods;
        for (k, n) in from.methods {
            count(&mut into.methods, &mut into.other_methods, &k, n);
        }
        into.other_codes += from.other_codes;
        for (k, n) in from.codes {
            count(&mut into.codes, &mut into.other_codes, &k, n);
        }
    }
}

/// Where a skipped line is counted, and its name in the reports.
fn skip_index(why: Skip) -> usize {
    Skip::ALL.iter().position(|&s| s == why).unwrap_or(0)
}

/// Entries by count (descending), then name.
fn ranked(map: &HashMap<Box<[u8]>, u64>) -> Vec<(&[u8], u64)> {
    let mut v: Vec<(&[u8], u64)> = map.iter().map(|(k, &n)| (&k[..], n)).collect();
    v.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    v
}

/// A method name for a terminal: control characters shown as escapes.
fn printable(key: &[u8]) -> String {
    String::from_utf8_lossy(key)
        .chars()
        .map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() })
        .collect()
}

fn rate(n: u64, elapsed: Duration) -> f64 {
    let secs = elapsed.as_secs_f64();
    if secs > 0.0 {
        n as f64 / secs
    } else {
        0.0
    }
}

/// `1234567` → `1.23 MB` (decimal units, as throughput is quoted).
fn human_bytes(n: f64) -> String {
    const UNITS: [&str; 5] = ["B", "kB", "MB", "GB", "TB"];
    let mut v = n;
    let mut unit = 0;
    while v >= 1000.0 && unit + 1 < UNITS.len() {
        v /= 1000.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{v:.0} {}", UNITS[unit])
    } else {
        format!("{v:.2} {}", UNITS[unit])
    }
}

impl Stats {
    /// The report for `tally` over `bytes` input bytes scanned in `elapsed`.
    pub fn report(&self, tally: &Tally, bytes: u64, elapsed: Duration) -> Vec<u8> {
        if self.json {
            self.report_json(tally, bytes, elapsed)
        } else {
            self.report_table(tally, bytes, elapsed).into_bytes()
        }
    }

    fn top<'t>(&self, tally: &'t Tally) -> (Vec<(&'t [u8], u64)>, usize) {
        let mut methods = ranked(&tally.methods);
        let distinct = methods.len();
        if self.top > 0 {
            methods.truncate(self.top);
        }
        (methods, distinct)
    }

    fn report_json(&self, t: &Tally, bytes: u64, elapsed: Duration) -> Vec<u8> {
        let mut o = Vec::with_capacity(4096);
        o.extend_from_slice(b"{\"messages\":");
        write_u64(&mut o, t.messages);
        o.extend_from_slice(b",\"bytes\":");
        write_u64(&mut o, bytes);
        let _ = write!(
            Utf8(&mut o),
            ",\"elapsed_seconds\":{:.6},\"bytes_per_second\":{:.0},\"messages_per_second\":{:.0}",
            elapsed.as_secs_f64(),
            rate(bytes, elapsed),
            rate(t.messages, elapsed)
        );
        o.extend_from_slice(b",\"skipped_lines\":{");
        for (i, (why, n)) in Skip::ALL.iter().zip(t.skipped).enumerate() {
            if i > 0 {
                o.push(b',');
            }
            write_str(&mut o, why.as_str());
            o.push(b':');
            write_u64(&mut o, n);
        }
        o.extend_from_slice(b"},\"kinds\":{");
        for (i, kind) in Kind::ALL.iter().enumerate() {
            if i > 0 {
                o.push(b',');
            }
            write_str(&mut o, kind.as_str());
            o.push(b':');
            write_u64(&mut o, t.kinds[*kind as usize]);
        }
        let (methods, distinct) = self.top(t);
        o.extend_from_slice(b"},\"methods\":[");
        for (i, (name, n)) in methods.iter().enumerate() {
            if i > 0 {
                o.push(b',');
            }
            o.extend_from_slice(b"{\"method\":");
            write_str(&mut o, &String::from_utf8_lossy(name));
            o.extend_from_slice(b",\"count\":");
            write_u64(&mut o, *n);
            o.push(b'}');
        }
        o.extend_from_slice(b"],\"distinct_methods\":");
        write_u64(&mut o, distinct as u64);
        o.extend_from_slice(b",\"other_methods\":");
        write_u64(&mut o, t.other_methods);
        o.extend_from_slice(b",\"error_codes\":[");
        for (i, (code, n)) in ranked(&t.codes).iter().enumerate() {
            if i > 0 {
                o.push(b',');
            }
            // The raw literal is a JSON integer (any size).
            o.extend_from_slice(b"{\"code\":");
            o.extend_from_slice(code);
            o.extend_from_slice(b",\"count\":");
            write_u64(&mut o, *n);
            o.push(b'}');
        }
        o.extend_from_slice(b"],\"other_error_codes\":");
        write_u64(&mut o, t.other_codes);
        o.extend_from_slice(b",\"invalid_reasons\":{");
        let mut first = true;
        for reason in Reason::ALL {
            let n = t.reasons[reason as usize];
            if n == 0 {
                continue;
            }
            if !first {
                o.push(b',');
            }
            first = false;
            write_str(&mut o, reason.as_str());
            o.push(b':');
            write_u64(&mut o, n);
        }
        o.extend_from_slice(b"},\"sse_non_message_events\":");
        write_u64(&mut o, t.non_message_events);
        unreadable_json(&mut o, &t.readable);
        o.extend_from_slice(b"}\n");
        o
    }

    fn report_table(&self, t: &Tally, bytes: u64, elapsed: Duration) -> String {
        let mut s = String::with_capacity(4096);
        let secs = elapsed.as_secs_f64();
        let _ = writeln!(s, "{:<16}{}", "messages", t.messages);
        let skipped: u64 = t.skipped.iter().sum();
        if skipped > 0 {
            let [no_match, missing, proxy, host] = t.skipped;
            let _ = write!(
                s,
                "{:<16}{skipped} (no match {no_match}, no message field {missing}, \
                 proxy records {proxy}",
                "skipped lines"
            );
            if host > 0 {
                let _ = write!(s, ", host lines {host}");
            }
            s.push_str(")\n");
        }
        for input in t.readable.mostly_unreadable() {
            let _ = writeln!(s, "{:<16}{}", "unreadable", input.warning());
        }
        let _ = writeln!(s, "{:<16}{} ({bytes} bytes)", "bytes", human_bytes(bytes as f64));
        let _ = writeln!(s, "{:<16}{secs:.3} s", "elapsed");
        if t.non_message_events > 0 {
            // Not messages (docs/spec.md §7): outside the kind table and its shares.
            let _ = writeln!(
                s,
                "{:<16}{} (SSE events of another type than message)",
                "non-message", t.non_message_events
            );
        }
        let _ = writeln!(
            s,
            "{:<16}{}/s, {:.0} messages/s",
            "throughput",
            human_bytes(rate(bytes, elapsed)),
            rate(t.messages, elapsed)
        );

        let _ = writeln!(s, "\n{:<24}{:>12}{:>9}", "kind", "count", "share");
        for kind in Kind::ALL {
            let n = t.kinds[kind as usize];
            let share = if t.messages > 0 { 100.0 * n as f64 / t.messages as f64 } else { 0.0 };
            let _ = writeln!(s, "{:<24}{n:>12}{share:>8.1}%", kind.as_str());
        }

        let (methods, distinct) = self.top(t);
        if !methods.is_empty() || t.other_methods > 0 {
            let names: Vec<String> = methods.iter().map(|(k, _)| printable(k)).collect();
            let title = format!("method (top {} of {distinct})", methods.len());
            let width = names
                .iter()
                .map(|n| n.chars().count())
                .chain([title.len(), 24])
                .max()
                .unwrap_or(24)
                .min(64);
            let _ = writeln!(s, "\n{title:<width$}{:>12}", "count");
            for (name, (_, n)) in names.iter().zip(&methods) {
                let _ = writeln!(s, "{name:<width$}{n:>12}");
            }
            if t.other_methods > 0 {
                let _ =
                    writeln!(s, "{:<width$}{:>12}", "(beyond the method table)", t.other_methods);
            }
        }

        let codes = ranked(&t.codes);
        if !codes.is_empty() || t.other_codes > 0 {
            let _ = writeln!(s, "\n{:<24}{:>12}", "error code", "count");
            for (code, n) in &codes {
                let _ = writeln!(s, "{:<24}{n:>12}", String::from_utf8_lossy(code));
            }
            if t.other_codes > 0 {
                let _ = writeln!(s, "{:<24}{:>12}", "(beyond the code table)", t.other_codes);
            }
        }

        if t.kinds[Kind::Invalid as usize] > 0 {
            let mut reasons: Vec<(Reason, u64)> = Reason::ALL
                .into_iter()
                .map(|r| (r, t.reasons[r as usize]))
                .filter(|&(_, n)| n > 0)
                .collect();
            reasons.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.as_str().cmp(b.0.as_str())));
            let _ = writeln!(s, "\n{:<24}{:>12}{:>9}", "invalid reason", "count", "code");
            for (reason, n) in reasons {
                let _ = writeln!(s, "{:<24}{n:>12}{:>9}", reason.as_str(), reason.code());
            }
        }
        s
    }
}

impl Stats {
    /// Counts one message's kind, method, error code or reason.
    #[inline]
    fn count(&self, item: &Item<'_>, _out: &mut Vec<u8>, t: &mut Tally) {
        t.messages += 1;
        t.kinds[item.verdict.kind() as usize] += 1;
        match &item.verdict {
            Verdict::Message(m) => {
                if let Some(method) = m.method() {
                    let key = if method.has_escapes() {
                        t.scratch.clear();
                        let _ = write!(t.scratch, "{method}");
                        t.scratch.as_bytes()
                    } else {
                        method.raw()
                    };
                    count(&mut t.methods, &mut t.other_methods, key, 1);
                }
                if let Some(code) = m.error_code() {
                    count(&mut t.codes, &mut t.other_codes, code.raw(), 1);
                }
            }
            Verdict::Invalid(inv) => t.reasons[inv.reason() as usize] += 1,
            Verdict::Skipped { reason, .. } => t.reasons[*reason as usize] += 1,
        }
    }

    /// The inputs most of whose lines held no message or an invalid one, for stderr.
    pub fn warnings(&self, tally: &Tally) -> Vec<String> {
        tally.readable.mostly_unreadable().map(|input| input.warning()).collect()
    }
}

/// `,"unreadable":[...]`: the inputs most of whose lines held no message or an invalid
/// one, when there are any (the report is otherwise as it always was).
pub fn unreadable_json(o: &mut Vec<u8>, readable: &Readable) {
    let mut inputs = readable.mostly_unreadable().peekable();
    if inputs.peek().is_none() {
        return;
    }
    o.extend_from_slice(b",\"unreadable\":[");
    for (i, input) in inputs.enumerate() {
        if i > 0 {
            o.push(b',');
        }
        o.extend_from_slice(b"{\"file\":");
        write_str(o, &input.name);
        o.extend_from_slice(b",\"format\":");
        write_str(o, input.format);
        o.extend_from_slice(b",\"lines\":");
        write_u64(o, input.lines());
        o.extend_from_slice(b",\"unreadable\":");
        write_u64(o, input.unreadable());
        o.extend_from_slice(b",\"first\":");
        match &input.first {
            Some(first) => {
                o.extend_from_slice(b"{\"offset\":");
                write_u64(o, first.offset);
                o.extend_from_slice(b",\"line\":");
                if first.line > 0 {
                    write_u64(o, first.line);
                } else {
                    o.extend_from_slice(b"null");
                }
                o.extend_from_slice(b",\"why\":");
                write_str(o, first.why);
                o.extend_from_slice(b",\"text\":");
                write_str(o, &first.text);
                o.push(b'}');
            }
            None => o.extend_from_slice(b"null"),
        }
        o.extend_from_slice(b",\"suggested_format\":");
        match input.suggestion() {
            Some(format) => write_str(o, format.name),
            None => o.extend_from_slice(b"null"),
        }
        o.push(b'}');
    }
    o.push(b']');
}

/// `fmt::Write` into a byte vector (for the few floats of the JSON report).
struct Utf8<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for Utf8<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}
