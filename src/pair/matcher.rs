//! The matcher, [`Pairing`]: facts in, in log order; events out, as each one settles.

use std::hash::BuildHasher;
use std::time::Duration;

use super::names::Names;
use super::summary::NameRef;
use super::table::{
    key_of, side, spelled, spells, Cold, Hot, Index, Key, Link, Rare, Seeded, Table, Which, NONE,
};
use super::{Direction, Ending, Event, Fact, Name, Outcome, RawId, Request, Response, Summary};
use crate::kind::Kind;

/// The default of [`Pairing::max_in_flight`].
pub const DEFAULT_MAX_IN_FLIGHT: usize = 1_000_000;

/// The matcher: see the [module docs](crate::pair).
#[derive(Debug)]
pub struct Pairing {
    /// The requests in flight, oldest first.
    in_flight: Table,
    /// Id key → the requests waiting with it.
    by_id: Index,
    /// Progress token key → the requests that carry it.
    by_token: Index,
    /// Methods and tool names, numbered; requests in flight hold the numbers.
    names: Names,
    seed: Seeded,
    max_in_flight: usize,
    timeout: Option<Duration>,
    /// Reused space for building the keys that need it (escaped strings, scopes).
    scratch: Vec<u8>,
}

impl Default for Pairing {
    fn default() -> Self {
        Pairing::new()
    }
}

impl Pairing {
    /// An empty matcher holding at most [`DEFAULT_MAX_IN_FLIGHT`] requests, no timeout.
    pub fn new() -> Pairing {
        Pairing {
            in_flight: Table::new(),
            by_id: Index::default(),
            by_token: Index::default(),
            names: Names::default(),
            seed: Seeded::default(),
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            timeout: None,
            scratch: Vec::new(),
        }
    }

    /// Holds at most `n` requests (at least 1, at most `u32::MAX - 1`): one more evicts
    /// the oldest as [`Event::Unanswered`] with [`Ending::Evicted`].
    pub fn max_in_flight(mut self, n: usize) -> Pairing {
        self.max_in_flight = n.clamp(1, (NONE - 1) as usize);
        self
    }

    /// Expires requests that waited longer than `timeout` (only facts with a time can tell).
    pub fn timeout(mut self, timeout: Option<Duration>) -> Pairing {
        self.timeout = timeout;
        self
    }

    /// Requests waiting for a response.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len
    }

    /// Takes in one message's facts, in log order; `sink` gets what they settle.
    pub fn feed<'f>(&mut self, fact: &'f Fact<'_>, sink: impl FnMut(Event<'f>)) {
        self.settle(fact, &mut Events(sink));
    }

    /// Takes in one message's facts like [`Pairing::feed`], and adds what they settle to
    /// `summary` ([`Summary::add`]). An answered request is counted there without being
    /// built (its [`Request`], with its names and raw id, is most of what a pair costs when
    /// only the counts are read); every other event is added to `summary`, then handed to
    /// `sink`. The summary ends the same as one fed every event of [`Pairing::feed`].
    ///
    /// ```
    /// use rpcscan::pair::{Fact, Pairing, Position, Summary};
    ///
    /// let log = [
    ///     r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#,
    ///     r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
    ///     r#"{"jsonrpc":"2.0","id":2,"result":{}}"#,
    /// ];
    /// let (mut pairing, mut summary, mut others) = (Pairing::new(), Summary::new(), 0);
    /// for (line, text) in log.iter().enumerate() {
    ///     let msg = rpcscan::parse(text.as_bytes()).unwrap();
    ///     let at = Position { line: line as u64 + 1, ..Position::default() };
    ///     pairing.feed_counting(&Fact::of(&msg, at), &mut summary, |_event| others += 1);
    /// }
    /// assert_eq!((summary.pairs, summary.tools["echo"].count), (1, 1));
    /// assert_eq!((summary.orphans.count, others), (1, 1));
    /// ```
    pub fn feed_counting<'f>(
        &mut self,
        fact: &'f Fact<'_>,
        summary: &mut Summary,
        sink: impl FnMut(&Event<'f>),
    ) {
        self.settle(fact, &mut Counting { summary, sink });
    }

    fn settle<'f>(&mut self, fact: &'f Fact<'_>, sink: &mut impl Settle<'f>) {
        if let (Some(timeout), Some(now)) = (self.timeout, fact.time) {
            self.expire(now, timeout, sink);
        }
        match fact.kind {
            Kind::Request => self.request(fact, sink),
            Kind::Result | Kind::Error => self.response(fact, sink),
            Kind::Notification => {
                let method = fact.method.as_deref();
                if method == Some("notifications/cancelled") {
                    self.cancel(fact, sink);
                } else if method == Some("notifications/progress") {
                    self.progress(fact, sink);
                }
            }
            Kind::Invalid => {}
        }
    }

    /// Ends the log: every request still waiting comes out, oldest first, as
    /// [`Event::Unanswered`] or [`Event::Cancelled`]. The matcher is empty afterwards.
    pub fn finish(&mut self, mut sink: impl FnMut(Event<'static>)) {
        while let Some(request) = self.in_flight.oldest().and_then(|at| self.take(at)) {
            sink(ended(request, Ending::Finished));
        }
        self.in_flight = Table::new();
        self.by_id.clear();
        self.by_token.clear();
    }

    /// `key` with its hash.
    fn hashed(&self, key: Key) -> (u64, Key) {
        (self.seed.hash_one(key.as_slice()), key)
    }

    /// The oldest request waiting with the id `key` (progress tokens:
    /// [`Pairing::find_token`]).
    fn find_id(&self, key: Key) -> Option<u32> {
        let (hash, key) = self.hashed(key);
        self.by_id.find(&self.in_flight, Which::Id, hash, &key)
    }

    /// The oldest request waiting whose progress token has `key`: in the token index, or
    /// (a token that is the request's id) in the id index.
    fn find_token(&self, key: Key) -> Option<u32> {
        let (hash, key) = self.hashed(key);
        let by_token = self.by_token.find(&self.in_flight, Which::Token, hash, &key);
        let own_id = |hot: &Hot| hot.token_is_id;
        let by_id = self.by_id.find_first(&self.in_flight, Which::Id, hash, &key, own_id);
        match (by_token, by_id) {
            (Some(a), Some(b)) => {
                let seq = |at| self.in_flight.hot(at).map(|h| h.seq);
                Some(if seq(a) <= seq(b) { a } else { b })
            }
            (found, None) | (None, found) => found,
        }
    }

    fn request<'f>(&mut self, fact: &'f Fact<'_>, sink: &mut impl Settle<'f>) {
        let Some(raw) = fact.id else { return };
        let side = side(fact.direction);
        let Some(id_key) = key_of(raw, side, fact.scope, &mut self.scratch) else {
            return;
        };
        if self.in_flight.len >= self.max_in_flight {
            if let Some(request) = self.in_flight.oldest().and_then(|at| self.remove(at)) {
                sink.event(ended(request, Ending::Evicted));
            }
        }
        let method = fact.method.as_deref().unwrap_or("");
        let (hash, id_key) = self.hashed(id_key);
        let id = Link::new(id_key, hash);
        // Progress arrives against the request's direction: key it the way it will be looked
        // up. A token that is the id itself (the SDKs' habit) is found through the id index.
        let mut token_is_id = false;
        let mut rare: Option<Box<Rare>> = None;
        match fact.progress_token {
            Some(raw_token) if raw_token == raw => token_is_id = true,
            Some(raw_token) => match key_of(raw_token, side, fact.scope, &mut self.scratch) {
                Some(key) if id.same_key(&key) => token_is_id = true,
                Some(key) => {
                    let (hash, key) = self.hashed(key);
                    rare.get_or_insert_with(Box::default).token = Some(Link::new(key, hash));
                }
                None => {}
            },
            None => {}
        }
        let has_token = rare.is_some();
        let spell = spells(id.key(), raw).unwrap_or(NONE);
        if spell == NONE {
            rare.get_or_insert_with(Box::default).raw = Some(RawId::new(raw));
        }
        let method_number = self.names.intern(method).unwrap_or_else(|| {
            rare.get_or_insert_with(Box::default).method = Some(Name::new(method));
            NONE
        });
        let tool_number = match fact.tool.as_deref() {
            Some(tool) => self.names.intern(tool).unwrap_or_else(|| {
                rare.get_or_insert_with(Box::default).tool = Some(Name::new(tool));
                NONE
            }),
            None => NONE,
        };
        let cold = Cold {
            line: fact.at.line,
            offset: fact.at.offset,
            input: fact.at.input,
            time: fact.time,
            progress: 0,
            method: method_number,
            tool: tool_number,
            direction: fact.direction,
            cancelled: false,
            rare,
        };
        let Some(at) = self.in_flight.push(id, spell, token_is_id, cold) else {
            return;
        };
        let earlier = self.by_id.insert(&mut self.in_flight, Which::Id, at);
        if let Some(earlier) = earlier.and_then(|e| self.in_flight.cold(e)) {
            let tool = fact.tool.as_deref();
            sink.event(Event::Duplicate {
                id: raw,
                method,
                tool,
                at: fact.at,
                earlier: earlier.at(),
            });
        }
        if has_token {
            self.by_token.insert(&mut self.in_flight, Which::Token, at);
        }
    }

    fn response<'f>(&mut self, fact: &'f Fact<'_>, sink: &mut impl Settle<'f>) {
        let response = Response {
            id: fact.id,
            at: fact.at,
            outcome: match fact.kind {
                Kind::Error => Outcome::Error(fact.error_code),
                _ => Outcome::Result,
            },
            time: fact.time,
        };
        let answered = side(fact.direction.map(Direction::reverse));
        let Some(id_key) =
            fact.id.and_then(|raw| key_of(raw, answered, fact.scope, &mut self.scratch))
        else {
            sink.event(Event::NullIdError(response));
            return;
        };
        let mut found = self.pop_by_id(id_key);
        // A request sent before its scope existed (an `initialize` has no session yet; its
        // answer opens one) is answered from within that scope.
        if found.is_none() && fact.scope.is_some() {
            let unscoped = fact.id.and_then(|raw| key_of(raw, answered, None, &mut self.scratch));
            found = unscoped.and_then(|key| self.pop_by_id(key));
        }
        if let (Some(at), Some(summary)) = (found, sink.counts()) {
            if self.count_popped(at, &response, summary).is_some() {
                return;
            }
        }
        match found.and_then(|at| self.remove_popped(at)) {
            Some(request) => {
                let latency = latency(request.time, fact.time);
                sink.event(Event::Paired { request, response, latency });
            }
            None => sink.event(Event::Orphan(response)),
        }
    }

    fn cancel<'f>(&mut self, fact: &'f Fact<'_>, sink: &mut impl Settle<'f>) {
        let Some(raw) = fact.cancels else { return };
        let found = key_of(raw, side(fact.direction), fact.scope, &mut self.scratch)
            .and_then(|key| self.find_id(key))
            .and_then(|at| self.in_flight.cold_mut(at));
        match found {
            Some(request) => request.cancelled = true,
            None => sink.event(Event::StrayCancel(fact.at)),
        }
    }

    fn progress<'f>(&mut self, fact: &'f Fact<'_>, sink: &mut impl Settle<'f>) {
        let Some(raw) = fact.progress_token else {
            return;
        };
        let requester = side(fact.direction.map(Direction::reverse));
        let found = key_of(raw, requester, fact.scope, &mut self.scratch)
            .and_then(|key| self.find_token(key))
            .and_then(|at| self.in_flight.cold_mut(at));
        match found {
            Some(request) => request.progress += 1,
            None => sink.event(Event::StrayProgress(fact.at)),
        }
    }

    fn expire<'f>(&mut self, now: Duration, timeout: Duration, sink: &mut impl Settle<'f>) {
        while let Some(at) = self.in_flight.oldest() {
            let expired = self.in_flight.cold(at).is_some_and(|request| {
                request.time.is_some_and(|sent| now.saturating_sub(sent) > timeout)
            });
            if !expired {
                return;
            }
            match self.remove(at) {
                Some(request) => sink.event(ended(request, Ending::TimedOut)),
                None => return,
            }
        }
    }

    /// The oldest request waiting with the id `key`, taken out of the id index (not yet out
    /// of the others: [`Pairing::remove_popped`]).
    fn pop_by_id(&mut self, key: Key) -> Option<u32> {
        let (hash, key) = self.hashed(key);
        self.by_id.pop(&mut self.in_flight, Which::Id, hash, &key)
    }

    /// Takes a request already out of the id index ([`Pairing::pop_by_id`]) out of the
    /// other tables.
    fn remove_popped(&mut self, at: u32) -> Option<Request> {
        self.by_token.remove(&mut self.in_flight, Which::Token, at);
        self.take(at)
    }

    /// [`Pairing::remove_popped`] for a request answered by `response` that is only
    /// counted: its names are read where they are, nothing is built.
    fn count_popped(
        &mut self,
        at: u32,
        response: &Response<'_>,
        summary: &mut Summary,
    ) -> Option<()> {
        self.by_token.remove(&mut self.in_flight, Which::Token, at);
        let names = &self.names;
        self.in_flight.take(at, |_, cold| {
            let rare = cold.rare.as_deref();
            let method = name_ref(names, cold.method, rare.and_then(|r| r.method.as_ref()));
            let tool = name_ref(names, cold.tool, rare.and_then(|r| r.tool.as_ref()));
            let latency = latency(cold.time, response.time);
            summary.add_paired(method, tool, response.outcome, latency);
        })
    }

    /// Takes a request out of every table.
    fn remove(&mut self, at: u32) -> Option<Request> {
        self.by_id.remove(&mut self.in_flight, Which::Id, at);
        self.by_token.remove(&mut self.in_flight, Which::Token, at);
        self.take(at)
    }

    /// Takes a request (out of the indexes already) out of the table, as it is reported.
    fn take(&mut self, at: u32) -> Option<Request> {
        let names = &self.names;
        self.in_flight.take(at, |hot, cold| {
            let rare = cold.rare.take().map(|rare| *rare).unwrap_or_default();
            let method = names.name(cold.method).or(rare.method).unwrap_or_else(|| Name::new(""));
            let tool = names.name(cold.tool).or(rare.tool);
            let id = rare
                .raw
                .or_else(|| spelled(hot.key(), hot.spell))
                .unwrap_or_else(|| RawId::new(b""));
            Request {
                id,
                method,
                tool,
                at: cold.at(),
                time: cold.time,
                direction: cold.direction,
                progress: cold.progress,
                cancelled: cold.cancelled,
            }
        })
    }
}

/// A pair's latency, when both times are known (a response logged before its request, by
/// a clock that stepped back, gets zero).
#[inline]
fn latency(sent: Option<Duration>, seen: Option<Duration>) -> Option<Duration> {
    Some(seen?.saturating_sub(sent?))
}

/// A request's name: numbered `number`, else kept apart (`kept`), as [`Pairing::take`]
/// reads it.
fn name_ref<'a>(names: &'a Names, number: u32, kept: Option<&'a Name>) -> Option<NameRef<'a>> {
    match names.text(number) {
        Some(text) => Some(NameRef::numbered(text, number)),
        None => kept.map(NameRef::of),
    }
}

/// Where the matcher's internals send what a fact settles.
trait Settle<'f> {
    /// One event.
    fn event(&mut self, event: Event<'f>);

    /// Where an answered request is only counted; `None`: it is built and sent as an
    /// [`Event::Paired`].
    fn counts(&mut self) -> Option<&mut Summary>;
}

/// Every event to a closure ([`Pairing::feed`]).
struct Events<F>(F);

impl<'f, F: FnMut(Event<'f>)> Settle<'f> for Events<F> {
    #[inline]
    fn event(&mut self, event: Event<'f>) {
        (self.0)(event);
    }

    #[inline]
    fn counts(&mut self) -> Option<&mut Summary> {
        None
    }
}

/// Pairs counted, other events counted and sent ([`Pairing::feed_counting`]).
struct Counting<'s, F> {
    summary: &'s mut Summary,
    sink: F,
}

impl<'f, F: FnMut(&Event<'f>)> Settle<'f> for Counting<'_, F> {
    #[inline]
    fn event(&mut self, event: Event<'f>) {
        self.summary.add(&event);
        (self.sink)(&event);
    }

    #[inline]
    fn counts(&mut self) -> Option<&mut Summary> {
        Some(self.summary)
    }
}

fn ended(request: Request, ending: Ending) -> Event<'static> {
    if request.cancelled {
        Event::Cancelled { request, ending }
    } else {
        Event::Unanswered { request, ending }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pair::Position;

    /// Runs a log, one message per entry: an optional direction (`>` there, `<` back), an
    /// optional time in ms (`@120`), then the JSON. Line numbers are 1-based entry numbers.
    /// The events come back as one short line each, joined by `; `.
    fn run(log: &[&str], max_in_flight: usize, timeout_ms: Option<u64>) -> String {
        let mut pairing = Pairing::new()
            .max_in_flight(max_in_flight)
            .timeout(timeout_ms.map(Duration::from_millis));
        let mut events = Vec::new();
        let mut counting = Pairing::new()
            .max_in_flight(max_in_flight)
            .timeout(timeout_ms.map(Duration::from_millis));
        let (mut summed, mut counted, mut others) = (Summary::new(), Summary::new(), Vec::new());
        for (n, entry) in log.iter().enumerate() {
            let mut rest = entry.trim_start();
            let direction = match rest.as_bytes().first() {
                Some(b'>') => Some(Direction::There),
                Some(b'<') => Some(Direction::Back),
                _ => None,
            };
            if direction.is_some() {
                rest = rest[1..].trim_start();
            }
            let mut time = None;
            if let Some(after) = rest.strip_prefix('@') {
                let (ms, json) = after.split_once(' ').unwrap();
                time = Some(Duration::from_millis(ms.parse().unwrap()));
                rest = json;
            }
            let msg = crate::parse(rest.as_bytes()).unwrap();
            let at = Position { line: n as u64 + 1, offset: 0, input: 0 };
            let fact = Fact::of(&msg, at).with_direction(direction).with_time(time);
            pairing.feed(&fact, |e| {
                summed.add(&e);
                events.push(show(&e));
            });
            counting.feed_counting(&fact, &mut counted, |e| others.push(show(e)));
        }
        pairing.finish(|e| {
            summed.add(&e);
            events.push(show(&e));
        });
        counting.finish(|e| {
            counted.add(&e);
            others.push(show(&e));
        });
        assert_eq!(pairing.in_flight(), 0);
        // Counting pairs where they are gives the summary of every event, and every event
        // but the pairs.
        assert_eq!(counted, summed, "{log:?}");
        let unpaired: Vec<&String> = events.iter().filter(|e| !e.starts_with("pair ")).collect();
        assert_eq!(others.iter().collect::<Vec<_>>(), unpaired, "{log:?}");
        events.join("; ")
    }

    /// One event as a short line; an event about a `tools/call` ends with the tool.
    fn show(event: &Event<'_>) -> String {
        let line = match event {
            Event::Paired { request, response, latency } => {
                let mut s =
                    format!("pair {}>{} {}", request.at.line, response.at.line, request.method);
                if let Some(tool) = &request.tool {
                    s += &format!(" {tool}");
                }
                if let Outcome::Error(code) = response.outcome {
                    s += &format!(" err {}", String::from_utf8_lossy(code.unwrap_or(b"-")));
                }
                if request.progress > 0 {
                    s += &format!(" +{}", request.progress);
                }
                if request.cancelled {
                    s += " cancelled";
                }
                if let Some(latency) = latency {
                    s += &format!(" {}ms", latency.as_millis());
                }
                s
            }
            Event::Orphan(r) => format!("orphan {}", r.at.line),
            Event::Duplicate { at, earlier, .. } => format!("dup {}<{}", at.line, earlier.line),
            Event::NullIdError(r) => format!("null {}", r.at.line),
            Event::Unanswered { request, ending } => {
                format!("unanswered {} {ending:?}", request.at.line)
            }
            Event::Cancelled { request, ending } => {
                format!("cancelled {} {ending:?}", request.at.line)
            }
            Event::StrayProgress(at) => format!("stray-progress {}", at.line),
            Event::StrayCancel(at) => format!("stray-cancel {}", at.line),
        };
        match event.tool() {
            Some(tool) if !matches!(event, Event::Paired { .. }) => format!("{line} {tool}"),
            _ => line,
        }
    }

    const REQ1: &str = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    const RES1: &str = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;

    #[test]
    fn pairing_table() {
        #[rustfmt::skip]
        let cases: &[(&str, &[&str], &str)] = &[
            ("simple pair", &[REQ1, RES1], "pair 1>2 ping"),
            ("interleaved sessions", &[REQ1, r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#, r#"{"jsonrpc":"2.0","id":2,"result":{}}"#, RES1], "pair 2>3 tools/list; pair 1>4 ping"),
            ("reuse after completion is fine", &[REQ1, RES1, REQ1, RES1], "pair 1>2 ping; pair 3>4 ping"),
            ("reuse in flight is reported, FIFO", &[REQ1, REQ1, RES1, RES1], "dup 2<1; pair 1>3 ping; pair 2>4 ping"),
            ("duplicate never answered twice", &[REQ1, REQ1, RES1], "dup 2<1; pair 1>3 ping; unanswered 2 Finished"),
            ("numeric is not string", &[REQ1, r#"{"jsonrpc":"2.0","id":"1","result":{}}"#], "orphan 2; unanswered 1 Finished"),
            ("string is not numeric", &[r#"{"jsonrpc":"2.0","id":"1","method":"ping"}"#, RES1], "orphan 2; unanswered 1 Finished"),
            ("escaped string ids", &[r#"{"jsonrpc":"2.0","id":"a\u0062","method":"ping"}"#, r#"{"jsonrpc":"2.0","id":"ab","result":{}}"#], "pair 1>2 ping"),
            ("escaped surrogate pair", &[r#"{"jsonrpc":"2.0","id":"\ud83d\ude00","method":"ping"}"#, "{\"jsonrpc\":\"2.0\",\"id\":\"\u{1F600}\",\"result\":{}}"], "pair 1>2 ping"),
            ("lone surrogates stay distinct", &[r#"{"jsonrpc":"2.0","id":"\ud800","method":"ping"}"#, r#"{"jsonrpc":"2.0","id":"\udc00","result":{}}"#, r#"{"jsonrpc":"2.0","id":"\uD800","result":{}}"#], "orphan 2; pair 1>3 ping"),
            ("big ids exactly", &[r#"{"jsonrpc":"2.0","id":18446744073709551617,"method":"ping"}"#, r#"{"jsonrpc":"2.0","id":18446744073709551616,"result":{}}"#, r#"{"jsonrpc":"2.0","id":18446744073709551617,"result":{}}"#], "orphan 2; pair 1>3 ping"),
            ("-0 is 0", &[r#"{"jsonrpc":"2.0","id":-0,"method":"ping"}"#, r#"{"jsonrpc":"2.0","id":0,"result":{}}"#], "pair 1>2 ping"),
            ("response before its request", &[RES1, REQ1], "orphan 1; unanswered 2 Finished"),
            ("null-id error answers no one", &[REQ1, r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#, r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"x"}}"#], "null 2; null 3; unanswered 1 Finished"),
            ("error outcome and code", &[REQ1, r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"x"}}"#], "pair 1>2 ping err -32601"),
            ("tool name", &[r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo"}}"#, r#"{"jsonrpc":"2.0","id":5,"result":{}}"#], "pair 1>2 tools/call echo"),
            ("a duplicate names its own tool", &[r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"a"}}"#, r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"b"}}"#, r#"{"jsonrpc":"2.0","id":5,"result":{}}"#], "dup 2<1 b; pair 1>3 tools/call a; unanswered 2 Finished b"),
            ("a cancelled call names its tool", &[r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"a"}}"#, r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}"#], "cancelled 1 Finished a"),
            ("cancelled, not unanswered", &[REQ1, r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#], "cancelled 1 Finished"),
            ("cancelled then answered anyway", &[REQ1, r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#, RES1], "pair 1>3 ping cancelled"),
            ("cancel of nothing", &[r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"1"}}"#], "stray-cancel 1"),
            ("progress counted", &[r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"progressToken":"p"}}}"#, r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}"#, r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"\u0070","progress":2}}"#, RES1], "pair 1>4 tools/call t +2"),
            ("progress token is an id: 1 is not \"1\"", &[r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"progressToken":1}}}"#, r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"1","progress":1}}"#, RES1], "stray-progress 2; pair 1>3 m"),
            ("a token shared, the younger answered first", &[r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"progressToken":"p"}}}"#, r#"{"jsonrpc":"2.0","id":2,"method":"m","params":{"_meta":{"progressToken":"p"}}}"#, r#"{"jsonrpc":"2.0","id":2,"result":{}}"#, r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}"#, RES1], "pair 2>3 m; pair 1>5 m +1"),
            ("a token shared, the older answered first", &[r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"progressToken":"p"}}}"#, r#"{"jsonrpc":"2.0","id":2,"method":"m","params":{"_meta":{"progressToken":"p"}}}"#, r#"{"jsonrpc":"2.0","id":3,"method":"m","params":{"_meta":{"progressToken":"p"}}}"#, r#"{"jsonrpc":"2.0","id":2,"result":{}}"#, RES1, r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}"#], "pair 2>4 m; pair 1>5 m; unanswered 3 Finished"),
            ("three in flight with one id, FIFO", &[REQ1, REQ1, REQ1, RES1, RES1, RES1, RES1], "dup 2<1; dup 3<1; pair 1>4 ping; pair 2>5 ping; pair 3>6 ping; orphan 7"),
            ("token is the id, counted through the id", &[r#"{"jsonrpc":"2.0","id":7,"method":"m","params":{"_meta":{"progressToken":7}}}"#, r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1}}"#, r#"{"jsonrpc":"2.0","id":7,"result":{}}"#], "pair 1>3 m +1"),
            ("token equal to the id after decoding", &[r#"{"jsonrpc":"2.0","id":"ab","method":"m","params":{"_meta":{"progressToken":"a\u0062"}}}"#, r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"ab","progress":1}}"#, r#"{"jsonrpc":"2.0","id":"ab","result":{}}"#], "pair 1>3 m +1"),
            ("an id is no token: another token, stray", &[r#"{"jsonrpc":"2.0","id":7,"method":"m","params":{"_meta":{"progressToken":9}}}"#, r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1}}"#, RES1], "stray-progress 2; orphan 3; unanswered 1 Finished"),
            ("oldest holder of a token: the other token first", &[r#"{"jsonrpc":"2.0","id":5,"method":"a","params":{"_meta":{"progressToken":7}}}"#, r#"{"jsonrpc":"2.0","id":7,"method":"b","params":{"_meta":{"progressToken":7}}}"#, r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1}}"#, r#"{"jsonrpc":"2.0","id":5,"result":{}}"#, r#"{"jsonrpc":"2.0","id":7,"result":{}}"#], "pair 1>4 a +1; pair 2>5 b"),
            ("oldest holder of a token: the id first", &[r#"{"jsonrpc":"2.0","id":7,"method":"b","params":{"_meta":{"progressToken":7}}}"#, r#"{"jsonrpc":"2.0","id":5,"method":"a","params":{"_meta":{"progressToken":7}}}"#, r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1}}"#, r#"{"jsonrpc":"2.0","id":5,"result":{}}"#, r#"{"jsonrpc":"2.0","id":7,"result":{}}"#], "pair 2>4 a; pair 1>5 b +1"),
            ("token is the id of a later duplicate", &[r#"{"jsonrpc":"2.0","id":1,"method":"a","params":{"_meta":{"progressToken":2}}}"#, r#"{"jsonrpc":"2.0","id":1,"method":"b","params":{"_meta":{"progressToken":1}}}"#, r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#, RES1, RES1], "dup 2<1; pair 1>4 a; pair 2>5 b +1"),
            ("token is the id, other direction's id is not", &[r#"> {"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"progressToken":1}}}"#, r#"< {"jsonrpc":"2.0","id":1,"method":"s"}"#, r#"< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#, r#"> {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#, r#"< {"jsonrpc":"2.0","id":1,"result":{}}"#], "stray-progress 4; pair 1>5 m +1; unanswered 2 Finished"),
            ("progress after the response is stray", &[r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"progressToken":7}}}"#, RES1, r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1}}"#], "pair 1>2 m; stray-progress 3"),
            ("directions: both sides use id 0", &[r#"> {"jsonrpc":"2.0","id":0,"method":"initialize"}"#, r#"< {"jsonrpc":"2.0","id":0,"method":"sampling/createMessage"}"#, r#"> {"jsonrpc":"2.0","id":0,"result":{}}"#, r#"< {"jsonrpc":"2.0","id":0,"result":{}}"#], "pair 2>3 sampling/createMessage; pair 1>4 initialize"),
            ("directions: a response the same way answers nothing", &[r#"> {"jsonrpc":"2.0","id":0,"method":"ping"}"#, r#"> {"jsonrpc":"2.0","id":0,"result":{}}"#], "orphan 2; unanswered 1 Finished"),
            ("directions: not a duplicate across sides", &[r#"> {"jsonrpc":"2.0","id":3,"method":"a"}"#, r#"< {"jsonrpc":"2.0","id":3,"method":"b"}"#], "unanswered 1 Finished; unanswered 2 Finished"),
            ("directions: cancel goes with the request", &[r#"< {"jsonrpc":"2.0","id":1,"method":"sampling/createMessage"}"#, r#"> {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#, r#"< {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#], "stray-cancel 2; cancelled 1 Finished"),
            ("directions: progress goes against it", &[r#"> {"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"progressToken":1}}}"#, r#"> {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#, r#"< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#, r#"< {"jsonrpc":"2.0","id":1,"result":{}}"#], "stray-progress 2; pair 1>4 m +1"),
            ("latency", &[r#"@1000 {"jsonrpc":"2.0","id":1,"method":"ping"}"#, r#"@1250 {"jsonrpc":"2.0","id":1,"result":{}}"#], "pair 1>2 ping 250ms"),
            ("notifications and invalid kinds are ignored", &[r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#], ""),
        ];
        for (name, log, expected) in cases {
            assert_eq!(run(log, DEFAULT_MAX_IN_FLIGHT, None), *expected, "{name}");
        }
    }

    /// Pairs counted where they are add up as the events do, names the matcher keeps out of
    /// its table (long ones, past its bound) included.
    #[test]
    fn counted_pairs_sum_as_events() {
        // Few in flight: evictions too.
        let mut fed = Pairing::new().max_in_flight(50);
        let mut counting = Pairing::new().max_in_flight(50);
        let (mut summed, mut counted) = (Summary::new(), Summary::new());
        let names = if cfg!(miri) { 40 } else { crate::pair::MAX_KEYS + 20 };
        let mut seed = 7u64;
        let mut next = move |n: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        let long = "m".repeat(200);
        for line in 0..names as u64 * 3 {
            let at = Position { line: line + 1, offset: 0, input: 0 };
            let id = next(80).to_string();
            let json = match next(4) {
                0 | 1 => {
                    let method = match next(3) {
                        0 => format!("m{}", next(names as u64)),
                        1 => long.clone(),
                        _ => "tools/call".into(),
                    };
                    format!(
                        r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{"name":"t{}"}}}}"#,
                        next(names as u64)
                    )
                }
                2 => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#),
                _ => format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":{},"message":"x"}}}}"#,
                    -32000 - next(3) as i64
                ),
            };
            let msg = crate::parse(json.as_bytes()).unwrap();
            let time = Some(Duration::from_millis(line * 3));
            let fact = Fact::of(&msg, at).with_time(time);
            fed.feed(&fact, |e| summed.add(&e));
            counting.feed_counting(&fact, &mut counted, |_| {});
        }
        fed.finish(|e| summed.add(&e));
        counting.finish(|e| counted.add(&e));
        // The log had pairs, and many tools.
        let lines = names as u64 * 3;
        assert!(summed.pairs > lines / 10 && summed.tools.len() > names / 8, "{summed:?}");
        assert_eq!(counted, summed);
    }

    #[test]
    fn limits_table() {
        let req = |id: u32, ms: u32| format!(r#"@{ms} {{"jsonrpc":"2.0","id":{id},"method":"m"}}"#);
        let res =
            |id: u32, ms: u32| format!(r#"@{ms} {{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#);
        let untimed = r#"{"jsonrpc":"2.0","id":9,"method":"m"}"#.to_owned();
        /// Name, log, max in flight, timeout in ms, events.
        type Case = (&'static str, Vec<String>, usize, Option<u64>, &'static str);
        #[rustfmt::skip]
        let cases: Vec<Case> = vec![
            ("eviction of the oldest", vec![req(1, 0), req(2, 0), req(3, 0), res(1, 0)], 2, None, "unanswered 1 Evicted; orphan 4; unanswered 2 Finished; unanswered 3 Finished"),
            ("eviction of a duplicated id's oldest", vec![req(1, 0), req(1, 0), req(2, 0), res(1, 0), res(1, 0)], 2, None, "dup 2<1; unanswered 1 Evicted; pair 2>4 m 0ms; orphan 5; unanswered 3 Finished"),
            ("max 0 counts as 1", vec![req(1, 0), req(2, 0), res(2, 0)], 0, None, "unanswered 1 Evicted; pair 2>3 m 0ms"),
            ("timeout expires stragglers", vec![req(1, 0), req(2, 900), res(2, 1500)], 1_000_000, Some(1000), "unanswered 1 TimedOut; pair 2>3 m 600ms"),
            ("exactly the timeout is not expired", vec![req(1, 0), res(1, 1000)], 1_000_000, Some(1000), "pair 1>2 m 1000ms"),
            ("untimed request blocks the check", vec![untimed, req(1, 0), res(3, 5000)], 1_000_000, Some(1000), "orphan 3; unanswered 1 Finished; unanswered 2 Finished"),
            ("no time, no expiry", vec![req(1, 0), r#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_owned()], 1_000_000, Some(1), "pair 1>2 m"),
        ];
        for (name, log, max, timeout, expected) in cases {
            let log: Vec<&str> = log.iter().map(String::as_str).collect();
            assert_eq!(run(&log, max, timeout), expected, "{name}");
        }
    }

    /// A request's raw id comes back exactly as sent, whether the matcher keeps it or spells
    /// it back from the id's key (integers without a sign, strings without escapes), in a
    /// pair and unanswered alike.
    #[test]
    fn request_ids_come_back_as_sent() {
        let long = format!("\"{}\"", "x".repeat(40));
        let ids = [
            "0",
            "7",
            "-0",
            "-12",
            "18446744073709551617",
            r#""""#,
            r#""a""#,
            r#""a\u0062""#,
            r#""\"""#,
            r#""é""#,
            &long,
        ];
        for id in ids {
            let request = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
            let response = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#);
            for log in [vec![request.clone(), response], vec![request]] {
                fn id_of(e: Event<'_>) -> Vec<u8> {
                    match e {
                        Event::Paired { request, .. } | Event::Unanswered { request, .. } => {
                            request.id.to_vec()
                        }
                        other => panic!("{other:?}"),
                    }
                }
                let mut pairing = Pairing::new();
                let mut seen = Vec::new();
                for (n, line) in log.iter().enumerate() {
                    let msg = crate::parse(line.as_bytes()).unwrap();
                    let at = Position { line: n as u64 + 1, offset: 0, input: 0 };
                    pairing.feed(&Fact::of(&msg, at), |e| seen.push(id_of(e)));
                }
                pairing.finish(|e| seen.push(id_of(e)));
                assert_eq!(seen, [id.as_bytes()], "{log:?}");
            }
        }
    }
}
