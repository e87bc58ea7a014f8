//! The events of a log added up ([`Summary`]): per method and tool, answered requests with
//! their errors and latencies; per method, the unanswered; the anomalies with their first
//! lines. Every table is bounded ([`MAX_KEYS`], [`FIRST_LINES`]).

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::{Ending, Event, Latency, Name, Outcome, Position};

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
    pub methods: Named<Stat>,
    /// Answered `tools/call` requests per tool.
    pub tools: Named<Stat>,
    /// Requests never answered (not cancelled), per method.
    pub unanswered: Named<Seen>,
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
    #[inline]
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
                let tool = request.tool.as_ref().map(NameRef::of);
                self.add_paired(
                    Some(NameRef::of(&request.method)),
                    tool,
                    response.outcome,
                    *latency,
                );
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
                self.unanswered.with(NameRef::of(&request.method), |seen| seen.add(request.at));
            }
            Event::Cancelled { request, .. } => self.cancelled.add(request.at),
            Event::StrayProgress(at) | Event::StrayCancel(at) => {
                self.stray_notifications.add(*at);
            }
        }
    }

    /// An answered request: counted under its method (the empty name when it has none) and
    /// its tool. [`Summary::add`] of an [`Event::Paired`], and the matcher's count of a
    /// pair it does not build ([`Pairing::feed_counting`](super::Pairing::feed_counting)).
    #[inline]
    pub(super) fn add_paired(
        &mut self,
        method: Option<NameRef<'_>>,
        tool: Option<NameRef<'_>>,
        outcome: Outcome<'_>,
        latency: Option<Duration>,
    ) {
        self.pairs += 1;
        let add = |stat: &mut Stat| stat.add(outcome, latency);
        match method {
            Some(method) => self.methods.with(method, add),
            None => self.methods.with(NameRef::of(&Name::new("")), add),
        }
        if let Some(tool) = tool {
            self.tools.with(tool, add);
        }
    }

    /// Requests never answered (not cancelled), all methods together.
    pub fn unanswered_count(&self) -> u64 {
        self.unanswered.values().map(|s| s.count).sum()
    }
}

/// Counts per method or tool name: [`Summary::methods`], [`Summary::tools`],
/// [`Summary::unanswered`]. At most [`MAX_KEYS`] names, and [`OTHER`] for the rest.
///
/// Read it as a map from name to counts, in name order ([`Named::iter`]), or one name at a
/// time ([`Named::get`], or `named["name"]`). Counting finds a name the matcher numbered
/// ([`Name`]) at its number, without comparing any text; the order by name is only
/// established when the names are read in order.
#[derive(Clone)]
pub struct Named<T> {
    /// Names and counts, in the order first counted.
    entries: Vec<(Arc<str>, T)>,
    /// Text → index in `entries`.
    by_text: HashMap<Arc<str>, u32>,
    /// A matcher's name number → index in `entries` (`u32::MAX`: not yet seen). An entry
    /// found this way is checked to hold the name's own shared text, so that names numbered
    /// by another matcher can never be mistaken for each other.
    by_number: Vec<u32>,
}

impl<T> Default for Named<T> {
    fn default() -> Self {
        Named { entries: Vec::new(), by_text: HashMap::new(), by_number: Vec::new() }
    }
}

/// A name as [`Named`] looks it up: its shared text, and the number a matcher gave it.
/// Borrowed, so that a matcher can count a name where it keeps it, with no [`Name`] built.
#[derive(Clone, Copy)]
pub(super) struct NameRef<'a> {
    text: &'a Arc<str>,
    number: Option<usize>,
}

impl<'a> NameRef<'a> {
    /// A name the matcher numbered `number`, its text as the matcher keeps it.
    #[inline]
    pub(super) fn numbered(text: &'a Arc<str>, number: u32) -> NameRef<'a> {
        NameRef { text, number: Some(number as usize) }
    }

    /// A [`Name`].
    #[inline]
    pub(super) fn of(name: &'a Name) -> NameRef<'a> {
        NameRef { text: name.text(), number: name.number() }
    }
}

impl<T: Default> Named<T> {
    /// Runs `f` on the counts of `name`, or on those of [`OTHER`] once the table is full.
    /// Inlined: a name the matcher numbered is found by its number in a few instructions
    /// (an answered request counts twice, by method and by tool); the rest is out of line.
    #[inline(always)]
    fn with(&mut self, name: NameRef<'_>, f: impl FnOnce(&mut T)) {
        let numbered = name.number.and_then(|n| self.by_number.get(n));
        if let Some((text, counts)) = numbered.and_then(|&at| self.entries.get_mut(at as usize)) {
            if Arc::ptr_eq(name.text, text) {
                return f(counts);
            }
        }
        self.with_by_text(name, f);
    }

    /// [`Named::with`] for a name not yet found by its number: by its text, and numbered
    /// from then on.
    #[cold]
    #[inline(never)]
    fn with_by_text(&mut self, name: NameRef<'_>, f: impl FnOnce(&mut T)) {
        let number = name.number;
        let at = self.entry(name);
        if let (Some(number), Some((text, _))) = (number, self.entries.get_mut(at as usize)) {
            // From now on, found by its number.
            if **text == **name.text {
                *text = name.text.clone();
                if self.by_number.len() <= number {
                    self.by_number.resize(number + 1, u32::MAX);
                }
                if let Some(slot) = self.by_number.get_mut(number) {
                    *slot = at;
                }
            }
        }
        if let Some((_, counts)) = self.entries.get_mut(at as usize) {
            f(counts);
        }
    }

    /// The entry of `name` (or of [`OTHER`], once full), found by its text or added.
    fn entry(&mut self, name: NameRef<'_>) -> u32 {
        if let Some(&at) = self.by_text.get(&**name.text) {
            return at;
        }
        let text = if self.entries.len() < MAX_KEYS { name.text.clone() } else { OTHER.into() };
        if let Some(&at) = self.by_text.get(&text) {
            return at;
        }
        // At most `MAX_KEYS + 1` entries: the count fits.
        let at = self.entries.len() as u32;
        self.by_text.insert(text.clone(), at);
        self.entries.push((text, T::default()));
        at
    }
}

impl<T> Named<T> {
    /// The counts of `name`.
    pub fn get(&self, name: &str) -> Option<&T> {
        let &at = self.by_text.get(name)?;
        self.entries.get(at as usize).map(|(_, counts)| counts)
    }

    /// Whether `name` was counted.
    pub fn contains_key(&self, name: &str) -> bool {
        self.by_text.contains_key(name)
    }

    /// Names counted.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no name was counted.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Every name and its counts, in name order (byte order of the text, as a
    /// `BTreeMap<String, _>` would give them).
    pub fn iter(&self) -> std::vec::IntoIter<(&str, &T)> {
        let mut all: Vec<(&str, &T)> = self.entries.iter().map(|(n, c)| (&**n, c)).collect();
        all.sort_unstable_by(|a, b| a.0.cmp(b.0));
        all.into_iter()
    }

    /// Every name's counts, in no particular order (for sums).
    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.entries.iter().map(|(_, counts)| counts)
    }
}

impl<'a, T> IntoIterator for &'a Named<T> {
    type Item = (&'a str, &'a T);
    type IntoIter = std::vec::IntoIter<(&'a str, &'a T)>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<T> std::ops::Index<&str> for Named<T> {
    type Output = T;

    /// The counts of `name`; panics if it was never counted (as a map's index does).
    fn index(&self, name: &str) -> &T {
        match self.get(name) {
            Some(counts) => counts,
            None => panic!("no counts for {name:?}"),
        }
    }
}

impl<T: PartialEq> PartialEq for Named<T> {
    /// The same names with the same counts (in whatever order they came).
    fn eq(&self, other: &Named<T>) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<T: Eq> Eq for Named<T> {}

impl<T: fmt::Debug> fmt::Debug for Named<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
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
