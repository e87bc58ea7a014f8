//! Pairing over the engine's inputs: every response matched to the request it answers by
//! the library's matcher (`rpcscan::pair::Pairing`: the rules live there), in input order,
//! while the scan stays parallel. `rpcscan pair` and the Python package's `pair` both run
//! [`Pairs`]; each supplies only its output, as a [`Report`].
//!
//! The engine's workers read each message's facts (kind, raw id, method, tool, cancel and
//! progress keys, position, parsed timestamp, direction label) into a per-block arena (one
//! allocation per block, not per message); the blocks are merged in input order on the
//! writer's thread, which feeds the facts to the one sequential matcher and hands each
//! event it settles to the [`Report`] (a report that does nothing with pairs, as
//! [`Report::wants_pairs`] says, gets the other events only: the matcher counts each pair
//! into the summary without building it). Framed streams (Content-Length, SSE, json-seq) are
//! decoded in order on that thread already, and feed it directly.
//!
//! The run's logs (`Source::stream`: the files of one rotated log are one; other files and
//! standard input each their own) are id spaces of their own, like a gateway's sessions: a
//! request in one server's log is never answered from another's.
//!
//! A record's `request_id` (proxy and gateway logs) names the request a response answers:
//! the response is matched by it instead of by its own id. A record's `session` (gateway
//! logs) is an id space of its own: two sessions' requests with the same id are no
//! duplicates, and an answer pairs only within its session.
//!
//! Direction labels (`--line-format` group `dir`, `--dir-field`, proxy and gateway logs) are
//! mapped in input order by [`Directions::direction_of`]: the first label seen is one way,
//! the second the other, and only the messages whose direction the matcher reads (requests,
//! responses, cancels, progress) name them. An invalid line or another notification, fed
//! for its time alone with a timeout, takes no side: the labels reported do not depend on
//! the timeout, and a line the log writer mangled cannot push a real direction out.

use std::borrow::Cow;
use std::io;
use std::sync::Mutex;
use std::time::Duration;

use rpcscan::pair::{Directions, Event, Fact, Pairing, Position, Summary};
use rpcscan::Kind;

use crate::input::readable::Readable;
use crate::input::{extract, Command, Item, Settings, Skip, Source, Verdict};

/// The settings of a pairing run: `settings` with a parser that notes `params.name` and
/// `params._meta` on its way (`rpcscan::Parser::note_params_name`), so that a request's
/// tool and progress token take no second walk of `params` (verdicts are the same), and
/// with the log lines' labels read (a recognised format's times and directions).
pub fn settings(settings: Settings) -> Settings {
    Settings { parser: settings.parser.note_params_name(true), labels: true, ..settings }
}

/// What a product does with the events the matcher settles: its output, and nothing else.
pub trait Report: Sync {
    /// Where events go between blocks: a byte buffer, Arrow columns...
    type Out: Default + Send + 'static;

    /// One settled event, in input order.
    fn event(&self, event: &Event<'_>, out: &mut Self::Out);

    /// After each merged block of a mapped or piped NDJSON input, with the events it
    /// settled: a live report writes them out here (`tail -f log | rpcscan pair --json`).
    /// An error ends the output: nothing more is written, and [`Pairs::finish`] returns it.
    fn settled(&self, out: &mut Self::Out) -> io::Result<()> {
        let _ = out;
        Ok(())
    }

    /// After each message of a framed stream (Content-Length, SSE, json-seq), decoded in
    /// order on the writer's thread: a report that prints moves what settled into `to`, the
    /// engine's output buffer, which is written in order with the stream.
    fn write_in_order(&self, out: &mut Self::Out, to: &mut Vec<u8>) {
        let _ = (out, to);
    }

    /// An interim report, every [`Pairs::every`] while the input is read (`rpcscan pair
    /// --every 10s` on a followed log): the summary so far (requests still in flight, as
    /// many as `in_flight`, are not counted as unanswered yet) and the direction labels seen.
    /// Written out by [`Report::settled`] right after.
    fn interim(
        &self,
        summary: &Summary,
        directions: &Directions,
        in_flight: usize,
        out: &mut Self::Out,
    ) {
        let _ = (summary, directions, in_flight, out);
    }

    /// `true` when events are printed as they settle (not only at the end): a progress bar
    /// would be torn up by them on a terminal, and is not drawn.
    fn prints_as_it_goes(&self) -> bool {
        false
    }

    /// `false` when [`Report::event`] does nothing with [`Event::Paired`]: the matcher then
    /// counts each answered request into the summary where it keeps it
    /// ([`Pairing::feed_counting`]) instead of building it as an event, most of what a pair
    /// costs. The summary is the same either way.
    fn wants_pairs(&self) -> bool {
        true
    }
}

/// The pairing command, for [`crate::input::run`]: the matcher's settings and the product's
/// [`Report`].
pub struct Pairs<R> {
    report: R,
    max_in_flight: usize,
    timeout: Option<Duration>,
    every: Option<Duration>,
    /// Record and arena buffers of merged blocks, for the next blocks to fill (a block's
    /// thousands of records would otherwise regrow, and be copied, every time).
    spare: Mutex<Vec<(Vec<Record>, Arena)>>,
}

/// Spare buffers kept at most (a window of blocks is in flight at once).
const MAX_SPARE: usize = 64;

/// What a run adds up to: a block's facts (in an arena), and in the run's own tally the
/// matcher and the report's output.
pub struct PairTally<O> {
    facts: Vec<Record>,
    arena: Arena,
    state: Option<Box<State<O>>>,
    /// Messages, invalid ones and lines without one, per input.
    readable: Readable,
}

impl<O> Default for PairTally<O> {
    fn default() -> Self {
        PairTally {
            facts: Vec::new(),
            arena: Arena::default(),
            state: None,
            readable: Readable::default(),
        }
    }
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
    /// The fact's id space (a gateway log's session).
    scope: Span,
}

impl Record {
    /// `stream`: the fact's log among the run's (its id space, with the fact's own scope).
    fn new(fact: &Fact<'_>, label: Option<&[u8]>, stream: u32, arena: &mut Arena) -> Record {
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
        let scope = match stream {
            0 => stash(fact.scope),
            _ => {
                let start = bytes.len() - base;
                bytes.extend_from_slice(&stream_scope(stream));
                bytes.extend_from_slice(fact.scope.unwrap_or_default());
                span(start, bytes.len() - base - start).unwrap_or(Span::NONE)
            }
        };
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
            scope,
        }
    }

    /// The fact, its line moved by `by` (framings without lines say 0, and keep it). Built
    /// in one expression, in the caller's place (not filled in field by field and then
    /// copied out: a `memcpy` call per message).
    #[inline]
    fn fact<'a>(&self, arena: &'a Arena, by: u64) -> Fact<'a> {
        let bytes = |span: Span| self.bytes(arena, span);
        let text = |span: Span| arena.text.get(range(self.text_base, span)?).map(Cow::Borrowed);
        let token = bytes(self.token);
        let mut at = self.at;
        if at.line > 0 {
            at.line += by;
        }
        Fact {
            kind: self.kind,
            at,
            id: bytes(self.id),
            method: text(self.method),
            tool: text(self.tool),
            progress_token: if self.cancels { None } else { token },
            cancels: if self.cancels { token } else { None },
            error_code: bytes(self.error_code),
            direction: None,
            time: self.time,
            scope: bytes(self.scope),
        }
    }

    /// The log line's direction label.
    #[inline]
    fn label<'a>(&self, arena: &'a Arena) -> Option<&'a [u8]> {
        self.bytes(arena, self.label)
    }

    /// The bytes of `span` in the arena.
    #[inline]
    fn bytes<'a>(&self, arena: &'a Arena, span: Span) -> Option<&'a [u8]> {
        arena.bytes.get(range(self.base, span)?)
    }
}

/// Where `span` lies in an arena part whose record starts at `base`; `None`: no such member.
#[inline]
fn range(base: usize, span: Span) -> Option<std::ops::Range<usize>> {
    if span.len == u32::MAX {
        return None;
    }
    let start = base + span.start as usize;
    Some(start..start + span.len as usize)
}

/// The id space of the run's log number `stream` (> 0: the run reads several logs), before
/// the fact's own scope: a NUL and the number, which no scope a log names begins with (a
/// session id is JSON text). One limit: in a run of several logs, a gateway log's answer that
/// opens a session no longer finds the request sent before it (its `initialize`), which a
/// single log's run pairs through the unscoped space.
fn stream_scope(stream: u32) -> [u8; 5] {
    let n = stream.to_be_bytes();
    [0, n[0], n[1], n[2], n[3]]
}

/// The sequential end: the matcher, the counts, the report's output.
struct State<O> {
    pairing: Pairing,
    summary: Summary,
    /// The log's two direction labels, as they come.
    directions: Directions,
    out: O,
    /// The report's output failed: nothing more is reported, the run ends with it.
    error: Option<io::Error>,
}

/// A finished run: the summary, the directions seen, and the report's output.
pub struct Finished<O> {
    /// Counts, latencies, outcomes per method and tool.
    pub summary: Summary,
    /// The log's direction labels, in the order they first came, and how many messages had
    /// a third one ([`Directions::undirected`]).
    pub directions: Directions,
    /// The report's output, every event included.
    pub out: O,
    /// Per input: messages, invalid ones, lines without one, and the first of those.
    pub readable: Readable,
}

impl<R: Report> Pairs<R> {
    /// Pairing with the matcher's defaults (`rpcscan::pair::DEFAULT_MAX_IN_FLIGHT`, no
    /// timeout), reporting to `report`.
    pub fn new(report: R) -> Pairs<R> {
        Pairs {
            report,
            max_in_flight: rpcscan::pair::DEFAULT_MAX_IN_FLIGHT,
            timeout: None,
            every: None,
            spare: Mutex::new(Vec::new()),
        }
    }

    /// Requests remembered at once; one more evicts the oldest as unanswered.
    pub fn max_in_flight(mut self, n: usize) -> Pairs<R> {
        self.max_in_flight = n;
        self
    }

    /// Requests unanswered this long (by the log's timestamps) expire.
    pub fn timeout(mut self, timeout: Option<Duration>) -> Pairs<R> {
        self.timeout = timeout;
        self
    }

    /// An interim report ([`Report::interim`]) this often while the input is read; `None`
    /// (the default): only the final one.
    pub fn every(mut self, every: Option<Duration>) -> Pairs<R> {
        self.every = every;
        self
    }

    /// The product's report.
    pub fn report(&self) -> &R {
        &self.report
    }

    /// Ends the run: leftover facts fed, the matcher emptied, every event reported. An error
    /// of the report's output ([`Report::settled`]) is returned instead.
    pub fn finish(&self, mut tally: PairTally<R::Out>) -> io::Result<Finished<R::Out>> {
        let mut state = tally.state.take().unwrap_or_else(|| self.state());
        if let Some(e) = state.error.take() {
            return Err(e);
        }
        // Facts recorded but never merged (a tally that was never merged into the run's):
        // fed here so that nothing is lost.
        // The run's tally holds every merged block's counts.
        let readable = std::mem::take(&mut tally.readable);
        let leftover = PairTally { state: None, readable: Readable::default(), ..tally };
        self.feed_block(&mut state, &leftover, 0);
        let State { mut pairing, mut summary, directions, mut out, .. } = *state;
        pairing.finish(|event| {
            summary.add(&event);
            self.report.event(&event, &mut out);
        });
        Ok(Finished { summary, directions, out, readable })
    }

    fn state(&self) -> Box<State<R::Out>> {
        Box::new(State {
            pairing: Pairing::new().max_in_flight(self.max_in_flight).timeout(self.timeout),
            summary: Summary::new(),
            directions: Directions::new(),
            out: R::Out::default(),
            error: None,
        })
    }

    /// What the matcher reads of this item, handed to `then`: requests, responses, cancels
    /// and progress, with the log line's timestamp; with a timeout, any other timed message
    /// too (its time alone expires stragglers, as every timed line of the log does).
    /// Nothing, for anything else. (Handed on rather than returned: a fact is large, and
    /// wrapping it in an `Option` would move it.)
    #[inline]
    fn with_fact<'a>(&self, source: &Source, item: &Item<'a>, then: impl FnOnce(&mut Fact<'a>)) {
        let at = Position { line: item.line, offset: item.offset, input: source.index };
        let time = || item.ts.and_then(extract::parse_time);
        let Verdict::Message(msg) = &item.verdict else {
            if let (Some(_), Some(time)) = (self.timeout, time()) {
                then(&mut Fact::new(Kind::Invalid, at).with_time(Some(time)));
            }
            return;
        };
        // Filled in place, for the same reason.
        let mut fact = Fact::of(msg, at);
        // A gateway log's sessions each number their requests on their own.
        fact.scope = item.session;
        if fact.kind == Kind::Notification
            && fact.cancels.is_none()
            && fact.progress_token.is_none()
        {
            if let (Some(_), Some(time)) = (self.timeout, time()) {
                fact.time = Some(time);
                then(&mut fact);
            }
            return;
        }
        if fact.kind.is_response() && item.request_id.is_some() {
            // The log says which request this answers (an HTTP answer is bound to its POST,
            // even when its body says `"id": null`).
            fact.id = item.request_id;
        }
        fact.time = time();
        then(&mut fact);
    }

    /// Feeds one fact, travelling the way its `label` says, in input order.
    #[inline]
    fn feed(&self, state: &mut State<R::Out>, fact: &mut Fact<'_>, label: Option<&[u8]>) {
        let State { pairing, summary, directions, out, .. } = state;
        fact.direction = directions.direction_of(fact, label);
        if self.report.wants_pairs() {
            pairing.feed(fact, |event| {
                summary.add(&event);
                self.report.event(&event, out);
            });
        } else {
            pairing.feed_counting(fact, summary, |event| self.report.event(event, out));
        }
    }

    /// Feeds a block's records in input order; lines of records counted from 1 at the
    /// block's start are moved by `by`.
    fn feed_block(&self, state: &mut State<R::Out>, block: &PairTally<R::Out>, by: u64) {
        for record in &block.facts {
            let mut fact = record.fact(&block.arena, by);
            self.feed(state, &mut fact, record.label(&block.arena));
        }
    }
}

impl<R: Report> Command for Pairs<R> {
    type Tally = PairTally<R::Out>;

    /// An NDJSON block's message, in a worker: its facts (timestamp parsed here, in
    /// parallel) go into the block's tally, to be fed in input order by [`Command::merge`].
    fn item(&self, source: &Source, item: &Item<'_>, _out: &mut Vec<u8>, tally: &mut Self::Tally) {
        tally.readable.item(source, item);
        self.with_fact(source, item, |fact| {
            if tally.facts.capacity() == 0 {
                if let Some((facts, arena)) = self.spare.lock().ok().and_then(|mut s| s.pop()) {
                    (tally.facts, tally.arena) = (facts, arena);
                }
            }
            tally.facts.push(Record::new(fact, item.dir, source.stream, &mut tally.arena));
        });
    }

    /// A framed stream's message: already in order, on the writer's thread, with the run's
    /// own tally: fed straight to the matcher.
    fn item_in_order(
        &self,
        source: &Source,
        item: &Item<'_>,
        out: &mut Vec<u8>,
        tally: &mut Self::Tally,
    ) {
        tally.readable.item_in_order(source, item);
        self.with_fact(source, item, |fact| {
            let state = tally.state.get_or_insert_with(|| self.state());
            if source.stream == 0 {
                self.feed(state, fact, item.dir);
            } else {
                // Another log's ids are apart (see `Record::new`).
                let scoped =
                    [&stream_scope(source.stream)[..], fact.scope.unwrap_or_default()].concat();
                let mut fact = fact.clone();
                fact.scope = Some(&scoped);
                self.feed(state, &mut fact, item.dir);
            }
            self.report.write_in_order(&mut state.out, out);
        });
    }

    fn skipped_line(
        &self,
        source: &Source,
        why: Skip,
        offset: u64,
        line: &[u8],
        tally: &mut Self::Tally,
    ) {
        tally.readable.skipped(source, why, offset, line);
    }

    fn merge(&self, into: &mut Self::Tally, from: Self::Tally) {
        self.merge_lines(into, from, 1);
    }

    /// A mapped block's facts come with lines counted from 1 at its first byte: the
    /// producer then does not read the whole file once more to number the blocks (that
    /// count was ~7% of `pair`'s CPU time).
    fn numbers_lines_at_merge(&self) -> bool {
        true
    }

    fn merge_lines(&self, into: &mut Self::Tally, from: Self::Tally, first_line: u64) {
        let by = first_line.saturating_sub(1);
        let state = into.state.get_or_insert_with(|| self.state());
        self.feed_block(state, &from, by);
        let PairTally { mut facts, mut arena, mut readable, .. } = from;
        readable.shift_lines(by);
        into.readable.merge(readable);
        if facts.capacity() > 0 {
            facts.clear();
            arena.clear();
            if let Ok(mut spare) = self.spare.lock() {
                if spare.len() < MAX_SPARE {
                    spare.push((facts, arena));
                }
            }
        }
        if state.error.is_none() {
            if let Err(e) = self.report.settled(&mut state.out) {
                state.error = Some(e);
            }
        }
    }

    fn wants_lines(&self) -> bool {
        true
    }

    fn every(&self) -> Option<Duration> {
        self.every
    }

    fn tick(&self, tally: &mut Self::Tally) {
        let state = tally.state.get_or_insert_with(|| self.state());
        if state.error.is_some() {
            return;
        }
        let in_flight = state.pairing.in_flight();
        self.report.interim(&state.summary, &state.directions, in_flight, &mut state.out);
        if let Err(e) = self.report.settled(&mut state.out) {
            state.error = Some(e);
        }
    }

    fn prints_as_it_goes(&self) -> bool {
        self.report.prints_as_it_goes()
    }
}
