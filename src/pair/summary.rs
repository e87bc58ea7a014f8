//! The events of a log added up ([`Summary`]): per method and tool, answered requests with
//! their errors and latencies; per method, the unanswered; the anomalies with their first
//! lines. Every table is bounded ([`MAX_KEYS`], [`FIRST_LINES`]).

use std::collections::BTreeMap;
use std::time::Duration;

use super::{Ending, Event, Latency, Outcome, Position};

/// Distinct methods, tools and error codes a [`Summary`] names; the rest are counted under
/// [`OTHER`], so a hostile log cannot grow the tables without bound.
pub const MAX_KEYS: usize = 10_000;

/// The name under which a [`Summary`] counts what did not fit in [`MAX_KEYS`].
pub const OTHER: &str = "(other)";

/// How many first line numbers a [`Summary`] keeps per unanswered method and per anomaly.
pub const FIRST_LINES: usize = 5;

/// The events of a log added up: see [`Summary::add`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Requests answered.
    pub pairs: u64,
    /// Answered requests per method.
    pub methods: BTreeMap<String, Stat>,
    /// Answered `tools/call` requests per tool.
    pub tools: BTreeMap<String, Stat>,
    /// Requests never answered (not cancelled), per method.
    pub unanswered: BTreeMap<String, Seen>,
    /// Of those, how many were evicted ([`Ending::Evicted`]).
    pub evicted: u64,
    /// Of those, how many timed out ([`Ending::TimedOut`]).
    pub timed_out: u64,
    /// Responses that answer nothing.
    pub orphans: Seen,
    /// Requests with an id still in flight.
    pub duplicates: Seen,
    /// Cancelled requests that got no response.
    pub cancelled: Seen,
    /// Error responses with a `null` id.
    pub null_id_errors: Seen,
    /// Progress and cancel notifications that name no waiting request.
    pub stray_notifications: Seen,
}

/// How often something happened, and its first lines.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Seen {
    /// How many.
    pub count: u64,
    /// The first [`FIRST_LINES`] line numbers (0 where the framing has no lines).
    pub first_lines: Vec<u64>,
}

impl Seen {
    fn add(&mut self, at: Position) {
        self.count += 1;
        if self.first_lines.len() < FIRST_LINES {
            self.first_lines.push(at.line);
        }
    }
}

impl PartialEq<u64> for Seen {
    fn eq(&self, count: &u64) -> bool {
        self.count == *count
    }
}

/// Answered requests of one method or tool.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stat {
    /// Requests answered.
    pub count: u64,
    /// Error responses per raw `error.code` (`null` when the error object had none).
    pub errors: BTreeMap<Box<[u8]>, u64>,
    /// Latencies, when both timestamps were known.
    pub latency: Latency,
}

impl Stat {
    fn add(&mut self, outcome: Outcome<'_>, latency: Option<Duration>) {
        self.count += 1;
        if let Outcome::Error(code) = outcome {
            let code = code.unwrap_or(b"null");
            let code = if self.errors.contains_key(code) || self.errors.len() < MAX_KEYS {
                code
            } else {
                OTHER.as_bytes()
            };
            match self.errors.get_mut(code) {
                Some(n) => *n += 1,
                None => {
                    self.errors.insert(code.into(), 1);
                }
            }
        }
        if let Some(latency) = latency {
            self.latency.add(latency);
        }
    }

    /// Error responses among them.
    pub fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }
}

impl Summary {
    /// An empty summary.
    pub fn new() -> Summary {
        Summary::default()
    }

    /// Counts one event.
    pub fn add(&mut self, event: &Event<'_>) {
        match event {
            Event::Paired { request, response, latency } => {
                self.pairs += 1;
                let add = |stat: &mut Stat| stat.add(response.outcome, *latency);
                with_stat(&mut self.methods, &request.method, add);
                if let Some(tool) = request.tool.as_deref() {
                    with_stat(&mut self.tools, tool, add);
                }
            }
            Event::Orphan(response) => self.orphans.add(response.at),
            Event::Duplicate { at, .. } => self.duplicates.add(*at),
            Event::NullIdError(response) => self.null_id_errors.add(response.at),
            Event::Unanswered { request, ending } => {
                match ending {
                    Ending::Evicted => self.evicted += 1,
                    Ending::TimedOut => self.timed_out += 1,
                    Ending::Finished => {}
                }
                with_stat(&mut self.unanswered, &request.method, |seen| seen.add(request.at));
            }
            Event::Cancelled { request, .. } => self.cancelled.add(request.at),
            Event::StrayProgress(at) | Event::StrayCancel(at) => {
                self.stray_notifications.add(*at);
            }
        }
    }

    /// Requests never answered (not cancelled), all methods together.
    pub fn unanswered_count(&self) -> u64 {
        self.unanswered.values().map(|s| s.count).sum()
    }
}

/// Runs `f` on the entry for `name`, or on the [`OTHER`] entry once the table is full. A
/// known name (the common case) costs one lookup.
fn with_stat<T: Default>(map: &mut BTreeMap<String, T>, name: &str, f: impl FnOnce(&mut T)) {
    match map.get_mut(name) {
        Some(entry) => f(entry),
        None => {
            let name = if map.len() < MAX_KEYS { name } else { OTHER };
            f(map.entry(name.to_owned()).or_default());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pair::{Fact, Pairing};

    #[test]
    fn summary_counts() {
        let mut pairing = Pairing::new();
        let mut summary = Summary::new();
        let log = [
            (0, r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}"#),
            (100, r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a"}}"#),
            (200, r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"x"}}"#),
            (300, r#"{"jsonrpc":"2.0","id":2,"result":{}}"#),
            (300, r#"{"jsonrpc":"2.0","id":2,"result":{}}"#),
            (400, r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#),
        ];
        for (n, (ms, json)) in log.iter().enumerate() {
            let msg = crate::parse(json.as_bytes()).unwrap();
            let at = Position { line: n as u64 + 1, offset: 0, input: 0 };
            let fact = Fact::of(&msg, at).with_time(Some(Duration::from_millis(*ms)));
            pairing.feed(&fact, |e| summary.add(&e));
        }
        pairing.finish(|e| summary.add(&e));
        assert_eq!(summary.pairs, 2);
        let a = &summary.tools["a"];
        assert_eq!((a.count, a.error_count()), (2, 1));
        assert_eq!(a.latency.max(), Duration::from_millis(200));
        assert_eq!(a.latency.percentile(50.0), Some(Duration::from_millis(200)));
        assert!(a.latency.percentile(100.0) <= Some(Duration::from_millis(200)));
        assert_eq!(summary.methods["tools/call"].count, 2);
        assert_eq!(summary.orphans.first_lines, [5]);
        assert_eq!(summary.unanswered["ping"].first_lines, [6]);
        assert_eq!(summary.unanswered_count(), 1);
    }
}
