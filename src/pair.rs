//! Pairing responses with the requests they answer, over a whole log, in bounded memory.
//!
//! A [`Pairing`] is fed the facts of one message at a time ([`Fact`]: kind, raw id,
//! method, tool, position, and when the log has them a direction and a timestamp) and hands
//! back what each one settles as [`Event`]s: a request answered ([`Event::Paired`]), a
//! response that answers nothing ([`Event::Orphan`]), a second request with an id still in
//! flight ([`Event::Duplicate`]), an error response with a `null` id
//! ([`Event::NullIdError`]), and at the end (or when the in-flight table is full, or a
//! request times out) the requests never answered ([`Event::Unanswered`],
//! [`Event::Cancelled`]). A [`Summary`] adds the events up per method and per tool.
//!
//! ```
//! use rpcscan::pair::{Event, Fact, Pairing, Position, Summary};
//!
//! let log = [
//!     br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#.as_slice(),
//!     br#"{"jsonrpc":"2.0","id":"1","method":"ping"}"#,
//!     br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}"#,
//!     br#"{"jsonrpc":"2.0","id":2,"result":{}}"#,
//! ];
//! let mut pairing = Pairing::new();
//! let mut summary = Summary::new();
//! for (n, bytes) in log.iter().enumerate() {
//!     let msg = rpcscan::parse(bytes)?;
//!     let fact = Fact::of(&msg, Position { line: n as u64 + 1, offset: 0 });
//!     pairing.feed(&fact, |event| {
//!         if let Event::Paired { request, .. } = &event {
//!             assert_eq!((&*request.method, request.tool.as_deref()), ("tools/call", Some("echo")));
//!         }
//!         summary.add(&event);
//!     });
//! }
//! pairing.finish(|event| summary.add(&event));
//! assert_eq!(summary.pairs, 1);
//! assert_eq!(summary.orphans, 1); // id 2 was never asked for
//! assert_eq!(summary.unanswered["ping"].count, 1); // `"1"` is not `1`
//! assert_eq!(summary.tools["echo"].errors[&b"-32602"[..]], 1);
//! # Ok::<(), rpcscan::Invalid<'static>>(())
//! ```
//!
//! ## The rules
//!
//! * **Id equality** is [`crate::Id`]'s: the decoded value. `1` never equals `"1"`,
//!   `"a\u0062"` equals `"ab"`, integers of any size compare by their exact digits, and
//!   `-0` equals `0` (JSON-RPC says ids should not have fractional parts, and `-0` is the
//!   same number as `0`; [`crate::Id`] makes the same choice, so a gateway and this log
//!   view agree).
//! * **Directions.** Give every fact a [`Direction`], or none. With directions, a response
//!   answers a request that travelled the other way, so a client's id 0 and a server's
//!   sampling request id 0 are two different requests; without, there is one id space.
//!   `notifications/cancelled` travels with its request, `notifications/progress` against it.
//!   [`Directions`] turns a log's two labels, whatever they are, into directions.
//! * **Duplicates.** A request whose id is still in flight (same direction) is reported as
//!   [`Event::Duplicate`] and still waits: responses answer the waiting requests of an id
//!   first-in first-out. An id reused after its response is an ordinary new request.
//! * **`"id": null`** (or no id) on an error response answers no one: [`Event::NullIdError`].
//! * **Cancellation** (`notifications/cancelled` with `params.requestId`) marks the oldest
//!   waiting request with that id. A response may still come (then it is paired, with
//!   [`Request::cancelled`] set); if none does, the request ends as [`Event::Cancelled`],
//!   not [`Event::Unanswered`].
//! * **Progress** (`notifications/progress` with `params.progressToken`) counts towards the
//!   oldest waiting request whose `params._meta.progressToken` is equal (id rules).
//! * **Memory** holds only the requests in flight, each as its id key, raw id, method, tool,
//!   position and timestamp (no copy of the message). At [`Pairing::max_in_flight`] the
//!   oldest request is evicted as unanswered. With [`Pairing::timeout`] and timestamps, each
//!   fact that carries a time first expires the oldest waiting requests (in arrival order)
//!   older than the timeout; a request without a timestamp never expires and stops the
//!   check at its place in the line.

use std::borrow::{Borrow, Cow};
use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::Arc;
use std::time::Duration;

use hashbrown::HashTable;

use crate::kind::Kind;
use crate::message::Message;

/// The default of [`Pairing::max_in_flight`].
pub const DEFAULT_MAX_IN_FLIGHT: usize = 1_000_000;

/// Where a message is in its log: a 1-based line (0 when the framing has none) and a byte
/// offset.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Position {
    /// 1-based line number, 0 when unknown.
    pub line: u64,
    /// Byte offset of the message's first byte.
    pub offset: u64,
}

/// Which way a message travelled. Which side is called which does not matter (a log may
/// say `c2s`/`s2c`, `in`/`out`, `STDIN`/`STDOUT`); only that a response travels the other
/// way from its request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// One way (say, client to server).
    There,
    /// The other way.
    Back,
}

impl Direction {
    /// The other direction.
    pub const fn reverse(self) -> Direction {
        match self {
            Direction::There => Direction::Back,
            Direction::Back => Direction::There,
        }
    }
}

/// Turns the two direction labels of a log (`c2s`/`s2c`, `in`/`out`, `STDIN`/`STDOUT`,
/// anything) into [`Direction`]s: the first label seen is [`Direction::There`], the second
/// [`Direction::Back`]. A third distinct label has no direction.
///
/// ```
/// use rpcscan::pair::{Direction, Directions};
///
/// let mut directions = Directions::new();
/// assert_eq!(directions.direction(b"STDIN"), Some(Direction::There));
/// assert_eq!(directions.direction(b"STDOUT"), Some(Direction::Back));
/// assert_eq!(directions.direction(b"STDIN"), Some(Direction::There));
/// assert_eq!(directions.direction(b"STDERR"), None);
/// assert_eq!(directions.labels(), [Some(&b"STDIN"[..]), Some(&b"STDOUT"[..])]);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Directions {
    labels: [Option<Box<[u8]>>; 2],
}

impl Directions {
    /// No label seen yet.
    pub fn new() -> Directions {
        Directions::default()
    }

    /// The direction of `label`; the first two distinct labels take the two directions.
    pub fn direction(&mut self, label: &[u8]) -> Option<Direction> {
        for (slot, direction) in self.labels.iter_mut().zip([Direction::There, Direction::Back]) {
            match slot {
                Some(seen) if **seen == *label => return Some(direction),
                Some(_) => {}
                None => {
                    *slot = Some(label.into());
                    return Some(direction);
                }
            }
        }
        None
    }

    /// The labels seen, [`Direction::There`]'s first (what a report says it saw).
    pub fn labels(&self) -> [Option<&[u8]>; 2] {
        [self.labels[0].as_deref(), self.labels[1].as_deref()]
    }
}

/// What the matcher needs to know about one message. [`Fact::of`] reads it from a parsed
/// message; a caller with its own storage can fill the fields in directly.
///
/// Ids, tokens and codes are raw JSON literals, exactly as [`crate::Id::raw`] gives them: a
/// string with its quotes and escapes, an integer's digits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fact<'a> {
    /// The message's kind; [`Kind::Invalid`] facts are ignored.
    pub kind: Kind,
    /// Where the message is.
    pub at: Position,
    /// The raw `id` (`null` included), if the message has one.
    pub id: Option<&'a [u8]>,
    /// The decoded `method` of a request or notification.
    pub method: Option<Cow<'a, str>>,
    /// `params.name` of a `tools/call` request.
    pub tool: Option<Cow<'a, str>>,
    /// A request's `params._meta.progressToken`, or a `notifications/progress`'s
    /// `params.progressToken` (raw; only strings and integers count).
    pub progress_token: Option<&'a [u8]>,
    /// A `notifications/cancelled`'s `params.requestId` (raw).
    pub cancels: Option<&'a [u8]>,
    /// An error response's raw `error.code`.
    pub error_code: Option<&'a [u8]>,
    /// Which way the message travelled, when the log says.
    pub direction: Option<Direction>,
    /// When the message was seen, as time since the Unix epoch, when the log says.
    pub time: Option<Duration>,
}

impl<'a> Fact<'a> {
    /// A fact with only a kind and a position.
    pub fn new(kind: Kind, at: Position) -> Fact<'a> {
        Fact {
            kind,
            at,
            id: None,
            method: None,
            tool: None,
            progress_token: None,
            cancels: None,
            error_code: None,
            direction: None,
            time: None,
        }
    }

    /// Reads the facts of a valid message: one pass over `params` (two for a request with
    /// `_meta`), nothing decoded but an escaped method or tool name.
    pub fn of(msg: &Message<'a>, at: Position) -> Fact<'a> {
        let mut fact = Fact::new(msg.kind(), at);
        fact.id = msg.id().map(|id| id.raw());
        fact.error_code = msg.error_code().map(|code| code.raw());
        let Some(method) = msg.method() else {
            return fact;
        };
        let params = msg.params();
        let token_of = |key: &str| {
            params.and_then(|p| p.get(key).unique()).and_then(|v| v.as_id()).map(|id| id.raw())
        };
        match msg.kind() {
            Kind::Request => {
                let mcp = msg.mcp();
                fact.tool = mcp.tool_name().map(|s| lossy(s.decode(), s.raw()));
                fact.progress_token =
                    mcp.progress_token().unique().and_then(|v| v.as_id()).map(|id| id.raw());
            }
            Kind::Notification if method == "notifications/cancelled" => {
                fact.cancels = token_of("requestId");
            }
            Kind::Notification if method == "notifications/progress" => {
                fact.progress_token = token_of("progressToken");
            }
            _ => {}
        }
        fact.method = Some(lossy(method.decode(), method.raw()));
        fact
    }

    /// The same fact, travelling in `direction`.
    pub fn with_direction(mut self, direction: Option<Direction>) -> Fact<'a> {
        self.direction = direction;
        self
    }

    /// The same fact, seen at `time` (since the Unix epoch).
    pub fn with_time(mut self, time: Option<Duration>) -> Fact<'a> {
        self.time = time;
        self
    }
}

/// A string that holds a lone surrogate escape is shown with U+FFFD in its place.
fn lossy<'a, E>(decoded: Result<Cow<'a, str>, E>, raw: &'a [u8]) -> Cow<'a, str> {
    decoded.unwrap_or_else(|_| String::from_utf8_lossy(raw))
}

/// A request the matcher remembered: what [`Event::Paired`], [`Event::Unanswered`] and
/// [`Event::Cancelled`] report about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// The raw id, exactly as sent.
    pub id: RawId,
    /// The decoded method (shared among the requests of a method).
    pub method: Arc<str>,
    /// The tool of a `tools/call` (shared likewise).
    pub tool: Option<Arc<str>>,
    /// Where the request is.
    pub at: Position,
    /// When it was sent, if known.
    pub time: Option<Duration>,
    /// Which way it travelled, if known.
    pub direction: Option<Direction>,
    /// `notifications/progress` received for it.
    pub progress: u64,
    /// A `notifications/cancelled` named it.
    pub cancelled: bool,
}

/// How a response ended its request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome<'f> {
    /// A success response.
    Result,
    /// An error response, with its raw `error.code`.
    Error(Option<&'f [u8]>),
}

/// A response, as the events report it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Response<'f> {
    /// The raw id, exactly as sent (`None` when the error response has no id member).
    pub id: Option<&'f [u8]>,
    /// Where the response is.
    pub at: Position,
    /// Success or error.
    pub outcome: Outcome<'f>,
    /// When it was seen, if known.
    pub time: Option<Duration>,
}

/// Why a request left the table without a response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// The log ended ([`Pairing::finish`]).
    Finished,
    /// The table held [`Pairing::max_in_flight`] requests and this was the oldest.
    Evicted,
    /// It waited longer than [`Pairing::timeout`].
    TimedOut,
}

/// What a message (or the end of the log) settled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event<'f> {
    /// A response answered a request.
    Paired {
        /// The request, with its progress count.
        request: Request,
        /// The response.
        response: Response<'f>,
        /// Response time minus request time, when both are known (zero when the clocks
        /// disagree the wrong way).
        latency: Option<Duration>,
    },
    /// A response with an id no waiting request has (answered already, never sent, or
    /// sent after it).
    Orphan(Response<'f>),
    /// A request whose id is still in flight; it waits behind the earlier one.
    Duplicate {
        /// The raw id.
        id: &'f [u8],
        /// The decoded method.
        method: &'f str,
        /// Where this request is.
        at: Position,
        /// Where the oldest waiting request with the same id is.
        earlier: Position,
    },
    /// An error response with a `null` id (or none): it answers no one.
    NullIdError(Response<'f>),
    /// A request that got no response.
    Unanswered {
        /// The request.
        request: Request,
        /// Why it left the table.
        ending: Ending,
    },
    /// A cancelled request that got no response.
    Cancelled {
        /// The request.
        request: Request,
        /// Why it left the table.
        ending: Ending,
    },
    /// A `notifications/progress` whose token no waiting request carries.
    StrayProgress(Position),
    /// A `notifications/cancelled` whose `requestId` no waiting request has.
    StrayCancel(Position),
}

/// Bytes kept inline up to [`INLINE`] long, on the heap beyond: ids and keys are mostly
/// short, so a request in flight costs no allocation of its own.
#[derive(Clone)]
enum Small {
    Inline { len: u8, bytes: [u8; INLINE] },
    Heap(Box<[u8]>),
}

/// The longest bytes [`Small`] keeps inline (24 bytes in all, with the length and the
/// variant): any `u64` id's key (side, tag, 20 digits) fits.
const INLINE: usize = 22;

impl Small {
    fn new(from: &[u8]) -> Small {
        let mut bytes = [0; INLINE];
        match (bytes.get_mut(..from.len()), u8::try_from(from.len())) {
            (Some(inline), Ok(len)) => {
                inline.copy_from_slice(from);
                Small::Inline { len, bytes }
            }
            _ => Small::Heap(from.into()),
        }
    }

    fn as_slice(&self) -> &[u8] {
        match self {
            Small::Inline { len, bytes } => bytes.get(..usize::from(*len)).unwrap_or_default(),
            Small::Heap(bytes) => bytes,
        }
    }
}

impl PartialEq for Small {
    fn eq(&self, other: &Small) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for Small {}

impl Hash for Small {
    fn hash<H: Hasher>(&self, state: &mut H) {
        // As `[u8]` hashes: lookups borrow a plain slice.
        self.as_slice().hash(state);
    }
}

impl Borrow<[u8]> for Small {
    fn borrow(&self) -> &[u8] {
        self.as_slice()
    }
}

/// A request's raw id, exactly as sent (quotes and escapes included): a byte slice
/// ([`Deref`](std::ops::Deref)), kept inline when short.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct RawId(Small);

impl RawId {
    /// A copy of `raw`.
    pub fn new(raw: &[u8]) -> RawId {
        RawId(Small::new(raw))
    }
}

impl std::ops::Deref for RawId {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.0.as_slice()
    }
}

impl AsRef<[u8]> for RawId {
    fn as_ref(&self) -> &[u8] {
        self.0.as_slice()
    }
}

impl From<&[u8]> for RawId {
    fn from(raw: &[u8]) -> RawId {
        RawId::new(raw)
    }
}

impl fmt::Debug for RawId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("RawId").field(&String::from_utf8_lossy(self)).finish()
    }
}

/// The hash of the matcher's tables: foldhash, seeded at random once per process (from
/// address-space layout and the clock), so a log cannot be written to collide in a run
/// it cannot observe; several times faster than the standard SipHash on short ids.
type Seeded = foldhash::fast::RandomState;

/// A decoded id or progress token with its side: see [`key`].
type Key = Small;

/// Which of its two keys a request is indexed by.
#[derive(Clone, Copy, Debug)]
enum Which {
    Id,
    Token,
}

/// A request's place among the requests waiting with the same key: the key, its hash,
/// the next younger one with it, and (at the oldest, which the index points at) the
/// youngest.
#[derive(Debug)]
struct Link {
    key: Key,
    hash: u64,
    next: u32,
    last: u32,
}

impl Link {
    fn new(key: &[u8], hash: u64) -> Link {
        Link { key: Small::new(key), hash, next: NONE, last: NONE }
    }
}

/// One remembered request and the links that index it.
#[derive(Debug)]
struct InFlight {
    request: Request,
    id: Link,
    token: Option<Link>,
}

impl InFlight {
    fn link(&self, which: Which) -> Option<&Link> {
        match which {
            Which::Id => Some(&self.id),
            Which::Token => self.token.as_ref(),
        }
    }

    fn link_mut(&mut self, which: Which) -> Option<&mut Link> {
        match which {
            Which::Id => Some(&mut self.id),
            Which::Token => self.token.as_mut(),
        }
    }
}

impl fmt::Debug for Small {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(self.as_slice()))
    }
}

/// No slot.
const NONE: u32 = u32::MAX;

/// A place in the in-flight table, linked in arrival order.
#[derive(Debug)]
struct Slot {
    entry: Option<InFlight>,
    older: u32,
    newer: u32,
}

/// The requests in flight: a slab (freed slots are reused, so it never grows past the
/// most requests ever in flight at once) threaded by a list in arrival order, oldest
/// first. Every operation is O(1).
#[derive(Debug, Default)]
struct Table {
    slots: Vec<Slot>,
    free: Vec<u32>,
    oldest: u32,
    newest: u32,
    len: usize,
}

impl Table {
    fn new() -> Table {
        Table { oldest: NONE, newest: NONE, ..Table::default() }
    }

    fn get(&self, at: u32) -> Option<&InFlight> {
        self.slots.get(at as usize)?.entry.as_ref()
    }

    fn get_mut(&mut self, at: u32) -> Option<&mut InFlight> {
        self.slots.get_mut(at as usize)?.entry.as_mut()
    }

    fn link(&self, at: u32, which: Which) -> Option<&Link> {
        self.get(at)?.link(which)
    }

    fn link_mut(&mut self, at: u32, which: Which) -> Option<&mut Link> {
        self.get_mut(at)?.link_mut(which)
    }

    /// The oldest request's slot.
    fn oldest(&self) -> Option<u32> {
        (self.oldest != NONE).then_some(self.oldest)
    }

    /// Adds the newest request; `None` only when the table cannot index more (never with
    /// [`Pairing::max_in_flight`] below `u32::MAX`).
    fn push(&mut self, entry: InFlight) -> Option<u32> {
        let slot = Slot { entry: Some(entry), older: self.newest, newer: NONE };
        let at = match self.free.pop() {
            Some(at) => {
                *self.slots.get_mut(at as usize)? = slot;
                at
            }
            None => {
                let at = u32::try_from(self.slots.len()).ok().filter(|&at| at != NONE)?;
                self.slots.push(slot);
                at
            }
        };
        match self.slots.get_mut(self.newest as usize) {
            Some(newest) => newest.newer = at,
            None => self.oldest = at,
        }
        self.newest = at;
        self.len += 1;
        Some(at)
    }

    /// Takes a request out, and frees its slot.
    fn take(&mut self, at: u32) -> Option<InFlight> {
        let slot = self.slots.get_mut(at as usize)?;
        let entry = slot.entry.take()?;
        let (older, newer) = (slot.older, slot.newer);
        match self.slots.get_mut(older as usize) {
            Some(o) => o.newer = newer,
            None => self.oldest = newer,
        }
        match self.slots.get_mut(newer as usize) {
            Some(n) => n.older = older,
            None => self.newest = older,
        }
        self.free.push(at);
        self.len -= 1;
        Some(entry)
    }
}

/// Key → the oldest request waiting with it (the others follow its [`Link`]s). Only slot
/// numbers live in the hash table, keys stay in the slots: the tables stay small enough
/// for the cache with a million requests in flight... or at least ten thousand.
#[derive(Debug, Default)]
struct Index {
    heads: HashTable<u32>,
}

impl Index {
    /// The oldest request waiting with `key`.
    fn find(&self, table: &Table, which: Which, hash: u64, key: &[u8]) -> Option<u32> {
        let same = |&at: &u32| table.link(at, which).is_some_and(|l| l.key.as_slice() == key);
        self.heads.find(hash, same).copied()
    }

    /// Indexes the (newest) request at `at` by its link; the oldest request already
    /// waiting with the same key, if there is one.
    fn insert(&mut self, table: &mut Table, which: Which, at: u32) -> Option<u32> {
        let link = table.link(at, which)?;
        let hash = link.hash;
        let key = link.key.clone();
        match self.find(table, which, hash, key.as_slice()) {
            Some(head) => {
                let last = table.link(head, which).map_or(head, |l| l.last);
                if let Some(l) = table.link_mut(last, which) {
                    l.next = at;
                }
                if let Some(l) = table.link_mut(head, which) {
                    l.last = at;
                }
                Some(head)
            }
            None => {
                if let Some(l) = table.link_mut(at, which) {
                    l.last = at;
                }
                let rehash = |&s: &u32| table.link(s, which).map_or(0, |l| l.hash);
                self.heads.insert_unique(hash, at, rehash);
                None
            }
        }
    }

    /// Drops the request at `at` (still in the table) from its key's chain.
    fn remove(&mut self, table: &mut Table, which: Which, at: u32) {
        let Some(link) = table.link(at, which) else { return };
        let (hash, next, last) = (link.hash, link.next, link.last);
        let key = link.key.clone();
        let same = |&s: &u32| table.link(s, which).is_some_and(|l| l.key == key);
        let Ok(entry) = self.heads.find_entry(hash, same) else { return };
        let head = *entry.get();
        if head == at {
            // The common case: responses, evictions and timeouts take the oldest.
            if next == NONE {
                entry.remove();
            } else {
                let mut entry = entry;
                *entry.get_mut() = next;
                if let Some(l) = table.link_mut(next, which) {
                    l.last = last;
                }
            }
            return;
        }
        // Further down the chain (a progress token shared by several requests): find the
        // one before it.
        let mut before = head;
        while let Some(l) = table.link(before, which) {
            if l.next == at {
                break;
            }
            before = l.next;
        }
        if let Some(l) = table.link_mut(before, which) {
            l.next = next;
        }
        if let Some(l) = table.link_mut(head, which) {
            if l.last == at {
                l.last = before;
            }
        }
    }
}

/// Names longer than this are not shared (a hostile log could make them huge).
const MAX_SHARED_NAME: usize = 128;

/// The matcher: see the [module docs](self).
#[derive(Debug)]
pub struct Pairing {
    /// The requests in flight, oldest first.
    in_flight: Table,
    /// Id key → the requests waiting with it.
    by_id: Index,
    /// Progress token key → the requests that carry it.
    by_token: Index,
    /// Methods and tool names, shared by the requests that carry them (at most
    /// [`MAX_KEYS`], each at most [`MAX_SHARED_NAME`] bytes).
    names: HashSet<Arc<str>, Seeded>,
    seed: Seeded,
    max_in_flight: usize,
    timeout: Option<Duration>,
    /// Reused space for building keys.
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
            names: HashSet::default(),
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
    pub fn feed<'f>(&mut self, fact: &'f Fact<'_>, mut sink: impl FnMut(Event<'f>)) {
        if let (Some(timeout), Some(now)) = (self.timeout, fact.time) {
            self.expire(now, timeout, &mut sink);
        }
        match fact.kind {
            Kind::Request => self.request(fact, &mut sink),
            Kind::Result | Kind::Error => self.response(fact, &mut sink),
            Kind::Notification => {
                let method = fact.method.as_deref();
                if method == Some("notifications/cancelled") {
                    self.cancel(fact, &mut sink);
                } else if method == Some("notifications/progress") {
                    self.progress(fact, &mut sink);
                }
            }
            Kind::Invalid => {}
        }
    }

    /// Ends the log: every request still waiting comes out, oldest first, as
    /// [`Event::Unanswered`] or [`Event::Cancelled`]. The matcher is empty afterwards.
    pub fn finish(&mut self, mut sink: impl FnMut(Event<'static>)) {
        while let Some(entry) = self.in_flight.oldest().and_then(|at| self.in_flight.take(at)) {
            sink(ended(entry.request, Ending::Finished));
        }
        self.in_flight = Table::new();
        self.by_id.heads.clear();
        self.by_token.heads.clear();
    }

    /// The oldest request waiting with the key in the scratch space.
    fn find(&self, which: Which) -> Option<u32> {
        let key = self.scratch.as_slice();
        let index = match which {
            Which::Id => &self.by_id,
            Which::Token => &self.by_token,
        };
        index.find(&self.in_flight, which, self.seed.hash_one(key), key)
    }

    fn request<'f>(&mut self, fact: &'f Fact<'_>, sink: &mut impl FnMut(Event<'f>)) {
        let Some(raw) = fact.id else { return };
        let side = side(fact.direction);
        if !key(raw, side, &mut self.scratch) {
            return;
        }
        if self.in_flight.len >= self.max_in_flight {
            if let Some(request) = self.in_flight.oldest().and_then(|at| self.remove(at)) {
                sink(ended(request, Ending::Evicted));
            }
            // `remove` used the scratch space: build the key again.
            key(raw, side, &mut self.scratch);
        }
        let method = fact.method.as_deref().unwrap_or("");
        let id = Link::new(&self.scratch, self.seed.hash_one(self.scratch.as_slice()));
        // Progress arrives against the request's direction: key it the way it will be looked up.
        let token = match fact.progress_token {
            Some(raw_token) if key(raw_token, side, &mut self.scratch) => {
                Some(Link::new(&self.scratch, self.seed.hash_one(self.scratch.as_slice())))
            }
            _ => None,
        };
        let has_token = token.is_some();
        let request = Request {
            id: RawId::new(raw),
            method: self.share(method),
            tool: fact.tool.as_deref().map(|tool| self.share(tool)),
            at: fact.at,
            time: fact.time,
            direction: fact.direction,
            progress: 0,
            cancelled: false,
        };
        let Some(at) = self.in_flight.push(InFlight { request, id, token }) else { return };
        let earlier = self.by_id.insert(&mut self.in_flight, Which::Id, at);
        if let Some(earlier) = earlier.and_then(|e| self.in_flight.get(e)) {
            sink(Event::Duplicate { id: raw, method, at: fact.at, earlier: earlier.request.at });
        }
        if has_token {
            self.by_token.insert(&mut self.in_flight, Which::Token, at);
        }
    }

    /// The shared copy of a method or tool name.
    fn share(&mut self, name: &str) -> Arc<str> {
        if let Some(shared) = self.names.get(name) {
            return shared.clone();
        }
        let shared: Arc<str> = name.into();
        if name.len() <= MAX_SHARED_NAME && self.names.len() < MAX_KEYS {
            self.names.insert(shared.clone());
        }
        shared
    }

    fn response<'f>(&mut self, fact: &'f Fact<'_>, sink: &mut impl FnMut(Event<'f>)) {
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
        if !fact.id.is_some_and(|raw| key(raw, answered, &mut self.scratch)) {
            sink(Event::NullIdError(response));
            return;
        }
        match self.find(Which::Id).and_then(|at| self.remove(at)) {
            Some(request) => {
                let latency = match (request.time, fact.time) {
                    (Some(sent), Some(seen)) => Some(seen.saturating_sub(sent)),
                    _ => None,
                };
                sink(Event::Paired { request, response, latency });
            }
            None => sink(Event::Orphan(response)),
        }
    }

    fn cancel<'f>(&mut self, fact: &'f Fact<'_>, sink: &mut impl FnMut(Event<'f>)) {
        let Some(raw) = fact.cancels else { return };
        let found = key(raw, side(fact.direction), &mut self.scratch)
            .then(|| self.find(Which::Id))
            .flatten()
            .and_then(|at| self.in_flight.get_mut(at));
        match found {
            Some(entry) => entry.request.cancelled = true,
            None => sink(Event::StrayCancel(fact.at)),
        }
    }

    fn progress<'f>(&mut self, fact: &'f Fact<'_>, sink: &mut impl FnMut(Event<'f>)) {
        let Some(raw) = fact.progress_token else {
            return;
        };
        let requester = side(fact.direction.map(Direction::reverse));
        let found = key(raw, requester, &mut self.scratch)
            .then(|| self.find(Which::Token))
            .flatten()
            .and_then(|at| self.in_flight.get_mut(at));
        match found {
            Some(entry) => entry.request.progress += 1,
            None => sink(Event::StrayProgress(fact.at)),
        }
    }

    fn expire<'f>(&mut self, now: Duration, timeout: Duration, sink: &mut impl FnMut(Event<'f>)) {
        while let Some(at) = self.in_flight.oldest() {
            let expired = self.in_flight.get(at).is_some_and(|entry| {
                entry.request.time.is_some_and(|sent| now.saturating_sub(sent) > timeout)
            });
            if !expired {
                return;
            }
            match self.remove(at) {
                Some(request) => sink(ended(request, Ending::TimedOut)),
                None => return,
            }
        }
    }

    /// Takes a request out of every table.
    fn remove(&mut self, at: u32) -> Option<Request> {
        self.by_id.remove(&mut self.in_flight, Which::Id, at);
        self.by_token.remove(&mut self.in_flight, Which::Token, at);
        Some(self.in_flight.take(at)?.request)
    }
}

fn ended(request: Request, ending: Ending) -> Event<'static> {
    if request.cancelled {
        Event::Cancelled { request, ending }
    } else {
        Event::Unanswered { request, ending }
    }
}

/// The id space a request of this direction lives in.
fn side(direction: Option<Direction>) -> u8 {
    match direction {
        None => 0,
        Some(Direction::There) => 1,
        Some(Direction::Back) => 2,
    }
}

/// Builds the key of a raw id in `out`: the side, then `i` and the integer's digits (`-0`
/// folded into `0`) or `s` and the string's decoded bytes (lone surrogates as generalized
/// UTF-8, so every distinct string keeps a distinct key). `false` for `null` and anything
/// that is neither a string nor an integer literal.
fn key(raw: &[u8], side: u8, out: &mut Vec<u8>) -> bool {
    out.clear();
    out.push(side);
    match raw.first() {
        Some(b'"') => {
            let Some(inner) = raw.get(1..raw.len() - 1).filter(|_| raw.len() >= 2) else {
                return false;
            };
            out.push(b's');
            unescape(inner, out);
            true
        }
        Some(b'-' | b'0'..=b'9') => {
            let digits = raw.strip_prefix(b"-").unwrap_or(raw);
            if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
                return false;
            }
            out.push(b'i');
            out.extend_from_slice(if raw == b"-0" { b"0" } else { raw });
            true
        }
        _ => false,
    }
}

/// Appends the decoded bytes of a JSON string's content. Total on any bytes: a malformed
/// escape is copied as written.
fn unescape(raw: &[u8], out: &mut Vec<u8>) {
    let mut i = 0;
    while let Some(&b) = raw.get(i) {
        if b != b'\\' {
            out.push(b);
            i += 1;
            continue;
        }
        match raw.get(i + 1) {
            Some(b'u') => {
                let Some(mut point) = hex4(raw.get(i + 2..i + 6)) else {
                    out.push(b);
                    i += 1;
                    continue;
                };
                i += 6;
                if (0xD800..0xDC00).contains(&point) && raw.get(i..i + 2) == Some(b"\\u") {
                    if let Some(low) = hex4(raw.get(i + 2..i + 6)) {
                        if (0xDC00..0xE000).contains(&low) {
                            point = 0x10000 + ((point - 0xD800) << 10) + (low - 0xDC00);
                            i += 6;
                        }
                    }
                }
                push_code_point(point, out);
            }
            Some(&c) => {
                out.push(match c {
                    b'n' => b'\n',
                    b't' => b'\t',
                    b'r' => b'\r',
                    b'b' => 0x08,
                    b'f' => 0x0C,
                    other => other,
                });
                i += 2;
            }
            None => {
                out.push(b);
                i += 1;
            }
        }
    }
}

fn hex4(digits: Option<&[u8]>) -> Option<u32> {
    let digits = digits?;
    if digits.len() != 4 {
        return None;
    }
    digits.iter().try_fold(0u32, |v, &d| Some(v * 16 + char::from(d).to_digit(16)?))
}

/// UTF-8 encoding of any code point below 0x110000, surrogates included.
fn push_code_point(point: u32, out: &mut Vec<u8>) {
    // Each `as u8` keeps the low bits on purpose, after the masks and shifts.
    match point {
        0..=0x7F => out.push(point as u8),
        0x80..=0x7FF => {
            out.extend_from_slice(&[0xC0 | (point >> 6) as u8, 0x80 | (point & 0x3F) as u8])
        }
        0x800..=0xFFFF => out.extend_from_slice(&[
            0xE0 | (point >> 12) as u8,
            0x80 | ((point >> 6) & 0x3F) as u8,
            0x80 | (point & 0x3F) as u8,
        ]),
        _ => out.extend_from_slice(&[
            0xF0 | ((point >> 18) & 0x07) as u8,
            0x80 | ((point >> 12) & 0x3F) as u8,
            0x80 | ((point >> 6) & 0x3F) as u8,
            0x80 | (point & 0x3F) as u8,
        ]),
    }
}

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

/// A latency histogram in bounded memory: microseconds in log-linear buckets (16 per power
/// of two), so percentiles are exact below 16 µs and within 1/16 above; the maximum is exact.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Latency {
    buckets: Vec<u64>,
    count: u64,
    max: Duration,
}

/// Sub-buckets per power of two.
const SUB: u64 = 16;

impl Latency {
    fn add(&mut self, latency: Duration) {
        let micros = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
        let index = bucket(micros);
        if self.buckets.len() <= index {
            self.buckets.resize(index + 1, 0);
        }
        if let Some(slot) = self.buckets.get_mut(index) {
            *slot += 1;
        }
        self.count += 1;
        self.max = self.max.max(latency);
    }

    /// Latencies recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The largest latency (zero when none).
    pub fn max(&self) -> Duration {
        self.max
    }

    /// The `p`-th percentile (`p` in 0..=100, nearest rank), `None` when nothing was
    /// recorded: the upper bound of the bucket holding it, never above [`Latency::max`].
    pub fn percentile(&self, p: f64) -> Option<Duration> {
        if self.count == 0 {
            return None;
        }
        let p = p.clamp(0.0, 100.0);
        // The rank of the percentile, 1-based: nearest-rank method.
        let rank = ((p / 100.0 * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (index, &n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                let upper = lower_bound(index + 1).saturating_sub(1);
                return Some(Duration::from_micros(upper).min(self.max));
            }
        }
        Some(self.max)
    }
}

fn bucket(micros: u64) -> usize {
    if micros < SUB {
        return micros as usize;
    }
    let exponent = u64::from(63 - micros.leading_zeros()); // at least 4
    let sub = (micros >> (exponent - 4)) & (SUB - 1);
    ((exponent - 3) * SUB + sub) as usize
}

fn lower_bound(index: usize) -> u64 {
    let index = index as u64;
    if index < SUB {
        return index;
    }
    let exponent = index / SUB + 3;
    let sub = index % SUB;
    // Past the last bucket (the upper bound of the last one) the value no longer fits.
    u64::try_from(u128::from(SUB + sub) << (exponent - 4)).unwrap_or(u64::MAX)
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

    /// Runs a log, one message per entry: an optional direction (`>` there, `<` back), an
    /// optional time in ms (`@120`), then the JSON. Line numbers are 1-based entry numbers.
    /// The events come back as one short line each, joined by `; `.
    fn run(log: &[&str], max_in_flight: usize, timeout_ms: Option<u64>) -> String {
        let mut pairing = Pairing::new()
            .max_in_flight(max_in_flight)
            .timeout(timeout_ms.map(Duration::from_millis));
        let mut events = Vec::new();
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
            let at = Position { line: n as u64 + 1, offset: 0 };
            let fact = Fact::of(&msg, at).with_direction(direction).with_time(time);
            pairing.feed(&fact, |e| events.push(show(&e)));
        }
        pairing.finish(|e| events.push(show(&e)));
        assert_eq!(pairing.in_flight(), 0);
        events.join("; ")
    }

    fn show(event: &Event<'_>) -> String {
        match event {
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
            ("cancelled, not unanswered", &[REQ1, r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#], "cancelled 1 Finished"),
            ("cancelled then answered anyway", &[REQ1, r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#, RES1], "pair 1>3 ping cancelled"),
            ("cancel of nothing", &[r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"1"}}"#], "stray-cancel 1"),
            ("progress counted", &[r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"progressToken":"p"}}}"#, r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}"#, r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"\u0070","progress":2}}"#, RES1], "pair 1>4 tools/call t +2"),
            ("progress token is an id: 1 is not \"1\"", &[r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"progressToken":1}}}"#, r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"1","progress":1}}"#, RES1], "stray-progress 2; pair 1>3 m"),
            ("a token shared, the younger answered first", &[r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"progressToken":"p"}}}"#, r#"{"jsonrpc":"2.0","id":2,"method":"m","params":{"_meta":{"progressToken":"p"}}}"#, r#"{"jsonrpc":"2.0","id":2,"result":{}}"#, r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}"#, RES1], "pair 2>3 m; pair 1>5 m +1"),
            ("a token shared, the older answered first", &[r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"progressToken":"p"}}}"#, r#"{"jsonrpc":"2.0","id":2,"method":"m","params":{"_meta":{"progressToken":"p"}}}"#, r#"{"jsonrpc":"2.0","id":3,"method":"m","params":{"_meta":{"progressToken":"p"}}}"#, r#"{"jsonrpc":"2.0","id":2,"result":{}}"#, RES1, r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}"#], "pair 2>4 m; pair 1>5 m; unanswered 3 Finished"),
            ("three in flight with one id, FIFO", &[REQ1, REQ1, REQ1, RES1, RES1, RES1, RES1], "dup 2<1; dup 3<1; pair 1>4 ping; pair 2>5 ping; pair 3>6 ping; orphan 7"),
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
            let at = Position { line: n as u64 + 1, offset: 0 };
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

    #[test]
    fn latency_buckets() {
        #[rustfmt::skip]
        let cases: &[(u64, u64)] = &[(0, 0), (15, 15), (16, 16), (17, 17), (31, 31), (32, 32), (33, 32), (1000, 992), (u64::MAX, 17870283321406128128)];
        assert_eq!(lower_bound(bucket(u64::MAX) + 1), u64::MAX);
        for &(micros, lower) in cases {
            assert_eq!(lower_bound(bucket(micros)), lower, "{micros}");
            assert!(lower_bound(bucket(micros)) <= micros);
        }
    }

    #[test]
    fn keys_are_total() {
        let mut out = Vec::new();
        #[rustfmt::skip]
        let cases: &[(&[u8], bool)] = &[(b"1", true), (b"-", false), (b"\"", false), (b"\"\\", true), (b"\"\\u12\"", true), (b"null", false), (b"1.5", false), (b"", false)];
        for &(raw, ok) in cases {
            assert_eq!(key(raw, 0, &mut out), ok, "{raw:?}");
        }
    }
}
