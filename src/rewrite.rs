//! Id rewriting for multiplexing: give a request a fresh id on its way to a server, and
//! give the response its original id back, by splicing bytes.
//!
//! Everything but the id is forwarded byte for byte; the per-message work is three
//! `put_slice` calls into the caller's buffer (no allocation, no re-serialization, ids
//! above 2^53, `-0` and escaped strings restored exactly). The [`Correlation`] table
//! remembers, per id in flight downstream, which client sent it and its original raw id
//! (no allocation per entry for ids up to [`INLINE_IDS`] bytes together).
//!
//! ```
//! use rpcscan::rewrite::Correlation;
//!
//! let mut table = Correlation::new();
//! let mut to_server = Vec::new();
//! let request = rpcscan::parse(br#"{"jsonrpc":"2.0","id":"a\u0062","method":"ping"}"#)?;
//! let assigned = table.forward("client-1", &request, &mut to_server);
//! assert_eq!(assigned, Some(1));
//! assert_eq!(to_server, br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
//!
//! let mut to_client = Vec::new();
//! let response = rpcscan::parse(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#)?;
//! assert_eq!(table.restore(&response, &mut to_client), Some("client-1"));
//! assert_eq!(to_client, br#"{"jsonrpc":"2.0","id":"a\u0062","result":{}}"#);
//! assert!(table.is_empty());
//! # Ok::<(), rpcscan::Invalid<'static>>(())
//! ```

use core::fmt;
use core::hash::{BuildHasher, BuildHasherDefault, Hasher};
use std::collections::hash_map::Entry;
use std::collections::{HashMap, VecDeque};

use bytes::BufMut;

use crate::id::{Id, IdKind};
use crate::kind::Kind;
use crate::message::{Message, Raw};

/// Writes `msg` with its id replaced by `id` (raw JSON: an integer literal or a string
/// with its quotes; the caller vouches for it). A message without an id (a notification,
/// an error response that omits it) is written untouched. Returns whether an id was
/// replaced.
///
/// ```
/// let msg = rpcscan::parse(br#"{"jsonrpc": "2.0", "id" : -0 , "method":"m"}"#).unwrap();
/// let mut out = Vec::new();
/// assert!(rpcscan::rewrite::write_with_id(&msg, b"\"x-7\"", &mut out));
/// assert_eq!(out, br#"{"jsonrpc": "2.0", "id" : "x-7" , "method":"m"}"#);
/// ```
pub fn write_with_id<B: BufMut>(msg: &Message<'_>, id: &[u8], buf: &mut B) -> bool {
    match around_id(msg) {
        Some((before, after)) => {
            buf.put_slice(before);
            buf.put_slice(id);
            buf.put_slice(after);
            true
        }
        None => {
            buf.put_slice(msg.as_bytes());
            false
        }
    }
}

/// The bytes of `msg` before its id's value and after it (`None` without an id): what
/// [`write_with_id`] writes around the new id, for a caller that writes the three parts
/// itself (e.g. with one `writev` from the buffer the message was read into).
///
/// ```
/// let msg = rpcscan::parse(br#"{"jsonrpc":"2.0","id":7,"result":{}}"#).unwrap();
/// let (before, after) = rpcscan::rewrite::around_id(&msg).unwrap();
/// assert_eq!(before, br#"{"jsonrpc":"2.0","id":"#);
/// assert_eq!(after, br#","result":{}}"#);
/// ```
pub fn around_id<'m>(msg: &Message<'m>) -> Option<(&'m [u8], &'m [u8])> {
    let bytes = msg.as_bytes();
    let (span, _) = msg.fields().id?;
    Some((bytes.get(..span.start())?, bytes.get(span.end()..)?))
}

/// Writes `message` with the value `at` (found in that same message, e.g. through
/// [`Raw::get`]) replaced by `with` (raw JSON, vouched for by the caller). When `at` is
/// not a part of `message`, writes `message` untouched and returns `false`.
///
/// ```
/// let msg = rpcscan::parse(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a-1"}}"#).unwrap();
/// let request_id = msg.params().unwrap().get("requestId").unique().unwrap();
/// let mut out = Vec::new();
/// assert!(rpcscan::rewrite::write_replacing(msg.as_bytes(), request_id, b"17", &mut out));
/// assert_eq!(out, br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":17}}"#);
/// ```
pub fn write_replacing<B: BufMut>(message: &[u8], at: Raw<'_>, with: &[u8], buf: &mut B) -> bool {
    let start = at.offset();
    let end = start.saturating_add(at.len());
    let inside = message.get(start..end).is_some_and(|part| core::ptr::eq(part, at.as_bytes()));
    match (inside, message.get(..start), message.get(end..)) {
        (true, Some(before), Some(after)) => {
            buf.put_slice(before);
            buf.put_slice(with);
            buf.put_slice(after);
            true
        }
        _ => {
            buf.put_slice(message);
            false
        }
    }
}

/// How many bytes of ids (the downstream id's and the original's, raw) a [`Correlation`]
/// entry keeps without an allocation of its own.
pub const INLINE_IDS: usize = 46;

/// One request in flight downstream: who sent it, and its original id.
pub struct Pending<C> {
    client: C,
    kind: IdKind,
    /// The downstream id's raw bytes, then the original id's raw bytes.
    ids: IdBytes,
    split: usize,
}

/// The ids of an entry: inline when short (the usual case), else on the heap.
enum IdBytes {
    Inline { len: u8, bytes: [u8; INLINE_IDS] },
    Heap(Box<[u8]>),
}

impl IdBytes {
    fn new(first: &[u8], second: &[u8]) -> Self {
        let len = first.len() + second.len();
        let mut bytes = [0u8; INLINE_IDS];
        let halves = bytes.get_mut(..len).and_then(|dst| dst.split_at_mut_checked(first.len()));
        match (halves, u8::try_from(len)) {
            (Some((a, b)), Ok(len)) if b.len() == second.len() => {
                a.copy_from_slice(first);
                b.copy_from_slice(second);
                IdBytes::Inline { len, bytes }
            }
            _ => IdBytes::Heap([first, second].concat().into_boxed_slice()),
        }
    }

    fn as_slice(&self) -> &[u8] {
        match self {
            IdBytes::Inline { len, bytes } => bytes.get(..usize::from(*len)).unwrap_or_default(),
            IdBytes::Heap(bytes) => bytes,
        }
    }
}

impl<C> Pending<C> {
    fn new(client: C, downstream: Id<'_>, original: &[u8]) -> Self {
        let raw = downstream.raw();
        Pending {
            client,
            kind: id_kind(&downstream),
            ids: IdBytes::new(raw, original),
            split: raw.len(),
        }
    }

    /// The client the response goes back to.
    pub fn client(&self) -> &C {
        &self.client
    }

    /// The client, giving up the rest.
    pub fn into_client(self) -> C {
        self.client
    }

    /// The request's original raw id (exact bytes, to splice back or to answer with).
    pub fn original_id(&self) -> &[u8] {
        self.ids.as_slice().get(self.split..).unwrap_or_default()
    }

    /// The id the request carries downstream.
    pub fn downstream_id(&self) -> Id<'_> {
        Id::new(self.ids.as_slice().get(..self.split).unwrap_or_default(), self.kind)
    }
}

impl<C: fmt::Debug> fmt::Debug for Pending<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pending")
            .field("client", &self.client)
            .field("downstream_id", &self.downstream_id())
            .field("original_id", &String::from_utf8_lossy(self.original_id()))
            .finish()
    }
}

/// Requests in flight downstream, keyed by their downstream [`Id`]'s decoded value (so a
/// server that echoes `1` as `1` or a string id with other escapes still matches), each
/// mapped to its client and original raw id.
///
/// Lookups borrow the id from the response and allocate nothing; an entry allocates only
/// when its two ids together are longer than [`INLINE_IDS`] bytes (the table itself grows
/// like a `HashMap`). Downstream ids handed out by [`Correlation::forward`] are integers
/// counting up from 1, skipping any still in flight.
///
/// The ids `forward` hands out are kept in a deque indexed by the id, not in the hash map:
/// responses come back in about the order their requests went out, so both ends of the
/// deque are where the work is, and a gateway whose two directions run on two threads reads
/// entries the other core wrote in order (the hash map's scattered slots cost a cache miss
/// from the other core per response). An entry left behind by many answered ones (a slow
/// request) moves to the hash map: when a request is forwarded, the deque holds no more
/// than twice the requests in it plus 1,024 slots.
pub struct Correlation<C> {
    /// Entries for ids `forward` handed out: `ring[i]` is the entry of id `base + i`
    /// (`None` once answered); the front is always an entry.
    ring: VecDeque<Option<Pending<C>>>,
    base: u64,
    /// Entries in `ring`.
    ring_len: usize,
    /// Every other entry (ids given to [`insert`](Self::insert), entries moved out of the
    /// ring), by the keyed hash of the downstream id (which the map uses as its own hash).
    entries: HashMap<u64, Pending<C>, BuildHasherDefault<Prehashed>>,
    /// Entries whose hash another entry already has (two distinct ids with one 64-bit
    /// keyed hash: practically never), searched one by one.
    collided: Vec<(u64, Pending<C>)>,
    /// Keyed per process: a peer cannot choose ids that collide without seeing the seed
    /// (and a collision only costs a linear search of `collided`).
    hasher: foldhash::fast::RandomState,
    len: usize,
    next: u64,
    /// Tests: every id gets the same hash.
    #[cfg(test)]
    collide: bool,
    /// Tests: entries moved from the ring to the hash map.
    #[cfg(test)]
    moved: usize,
}

/// Free slots the ring may hold beyond the entries in it, before its oldest entries move to
/// the hash map (see [`Correlation`]).
const RING_SLACK: usize = 1024;

/// The map's hasher: its keys are already keyed hash values, so they are used as is.
#[derive(Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

impl<C> Default for Correlation<C> {
    fn default() -> Self {
        Correlation::new()
    }
}

impl<C: fmt::Debug> fmt::Debug for Correlation<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.pending()).finish()
    }
}

impl<C> Correlation<C> {
    /// An empty table.
    pub fn new() -> Self {
        Correlation {
            ring: VecDeque::new(),
            base: 0,
            ring_len: 0,
            entries: HashMap::default(),
            collided: Vec::new(),
            hasher: foldhash::fast::RandomState::default(),
            len: 0,
            next: 1,
            #[cfg(test)]
            collide: false,
            #[cfg(test)]
            moved: 0,
        }
    }

    fn key(&self, id: &Id<'_>) -> u64 {
        #[cfg(test)]
        if self.collide {
            return 7;
        }
        self.hasher.hash_one(id)
    }

    fn pending(&self) -> impl Iterator<Item = &Pending<C>> {
        let ring = self.ring.iter().flatten();
        ring.chain(self.entries.values()).chain(self.collided.iter().map(|(_, p)| p))
    }

    /// Where the entry for `id` would be in the ring.
    fn ring_slot(&self, id: &Id<'_>) -> Option<usize> {
        let n = id.as_u64()?.checked_sub(self.base)?;
        usize::try_from(n).ok().filter(|&i| i < self.ring.len())
    }

    /// Files the entry of a counter id: at the ring's end when it follows (the usual case,
    /// or a few ids on, the ones skipped left free), else in the hash map. Then moves the
    /// oldest entries to the hash map while the ring holds too many free slots.
    fn put_counted(&mut self, n: u64, pending: Pending<C>) {
        if self.ring.is_empty() {
            self.base = n;
        }
        let gap = n.checked_sub(self.base).and_then(|at| usize::try_from(at).ok());
        match gap.and_then(|at| at.checked_sub(self.ring.len())) {
            Some(free) if free <= RING_SLACK => {
                self.ring.extend((0..free).map(|_| None));
                self.ring.push_back(Some(pending));
                self.ring_len += 1;
                self.len += 1;
            }
            _ => {
                let hash = self.key(&pending.downstream_id());
                self.put_pending(hash, pending);
            }
        }
        while self.ring.len() > 2 * self.ring_len + RING_SLACK {
            if let Some(Some(old)) = self.ring.pop_front() {
                self.ring_len -= 1;
                self.len -= 1;
                let hash = self.key(&old.downstream_id());
                self.put_pending(hash, old);
                #[cfg(test)]
                {
                    self.moved += 1;
                }
            }
            self.base = self.base.wrapping_add(1);
            self.settle();
        }
    }

    /// Drops the ring's free slots at the front.
    fn settle(&mut self) {
        while let Some(None) = self.ring.front() {
            self.ring.pop_front();
            self.base = self.base.wrapping_add(1);
        }
    }

    /// Requests in flight.
    pub fn len(&self) -> usize {
        self.len
    }

    /// `true` when no request is in flight.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Sends `msg` downstream: a request gets a fresh integer id (written into `buf` by
    /// [`write_with_id`]) and an entry remembering `client` and its original id; the new id
    /// is returned. Anything else (notifications, responses to server-initiated requests)
    /// is written untouched and gets `None`.
    ///
    /// Two clients (or one) may use the same id for requests in flight at once: each gets
    /// its own downstream id.
    pub fn forward<B: BufMut>(&mut self, client: C, msg: &Message<'_>, buf: &mut B) -> Option<u64> {
        let original = match msg.id() {
            Some(id) if msg.kind() == Kind::Request => id.raw(),
            _ => {
                buf.put_slice(msg.as_bytes());
                return None;
            }
        };
        let mut digits = [0u8; 20];
        let (assigned, raw) = loop {
            let n = self.next;
            self.next = self.next.checked_add(1).unwrap_or(1);
            let raw = format_u64(n, &mut digits);
            // Past the ring's end (the usual case) only the hash map can hold it.
            let in_ring = n.checked_sub(self.base).and_then(|at| usize::try_from(at).ok());
            let free = match in_ring.and_then(|at| self.ring.get(at)) {
                Some(slot) => slot.is_none(),
                None => {
                    self.entries.is_empty() || self.get(&Id::new(raw, IdKind::Integer)).is_none()
                }
            };
            if free {
                break (n, raw);
            }
        };
        let pending = Pending::new(client, Id::new(raw, IdKind::Integer), original);
        self.put_counted(assigned, pending);
        write_with_id(msg, raw, buf);
        Some(assigned)
    }

    /// Brings a response back: when its id is in flight, writes it into `buf` with the
    /// original id spliced in, forgets the entry and returns the client. Otherwise (a
    /// request, a notification, an unknown or `null` id) writes nothing and returns `None`.
    pub fn restore<B: BufMut>(&mut self, msg: &Message<'_>, buf: &mut B) -> Option<C> {
        if !matches!(msg.kind(), Kind::Result | Kind::Error) {
            return None;
        }
        let pending = self.remove(&msg.id()?)?;
        write_with_id(msg, pending.original_id(), buf);
        Some(pending.client)
    }

    /// Records a request in flight under `downstream` (any id, e.g. one the caller
    /// rewrote itself). When `downstream` is already in flight (or is `null`, which no
    /// response can be matched by), nothing changes and `client` is handed back.
    pub fn insert(&mut self, downstream: Id<'_>, client: C, original: &[u8]) -> Result<(), C> {
        if downstream.is_null() || self.get(&downstream).is_some() {
            return Err(client);
        }
        self.put(downstream, client, original);
        Ok(())
    }

    fn put(&mut self, downstream: Id<'_>, client: C, original: &[u8]) {
        let hash = self.key(&downstream);
        self.put_pending(hash, Pending::new(client, downstream, original));
    }

    /// Files an entry in the hash map under its id's hash.
    fn put_pending(&mut self, hash: u64, pending: Pending<C>) {
        match self.entries.entry(hash) {
            Entry::Vacant(slot) => {
                slot.insert(pending);
            }
            Entry::Occupied(_) => self.collided.push((hash, pending)),
        }
        self.len += 1;
    }

    /// The entry for a downstream id in flight.
    pub fn get(&self, downstream: &Id<'_>) -> Option<&Pending<C>> {
        let slot = self.ring_slot(downstream).and_then(|i| self.ring.get(i));
        if let Some(p) = slot.and_then(Option::as_ref).filter(|p| p.downstream_id() == *downstream)
        {
            return Some(p);
        }
        if self.entries.is_empty() {
            return None;
        }
        let hash = self.key(downstream);
        match self.entries.get(&hash) {
            Some(p) if p.downstream_id() == *downstream => Some(p),
            Some(_) => self
                .collided
                .iter()
                .find(|(h, p)| *h == hash && p.downstream_id() == *downstream)
                .map(|(_, p)| p),
            None => None,
        }
    }

    /// Forgets the entry for a downstream id and returns it.
    pub fn remove(&mut self, downstream: &Id<'_>) -> Option<Pending<C>> {
        if let Some(slot) = self.ring_slot(downstream).and_then(|i| self.ring.get_mut(i)) {
            if slot.as_ref().is_some_and(|p| p.downstream_id() == *downstream) {
                let pending = slot.take();
                self.ring_len -= 1;
                self.len -= 1;
                self.settle();
                return pending;
            }
        }
        if self.entries.is_empty() {
            return None;
        }
        let hash = self.key(downstream);
        let Entry::Occupied(slot) = self.entries.entry(hash) else {
            return None;
        };
        let pending = if slot.get().downstream_id() == *downstream {
            // An entry that collided with this one takes its place.
            match self.collided.iter().position(|(h, _)| *h == hash) {
                Some(at) => {
                    let (_, next) = self.collided.swap_remove(at);
                    core::mem::replace(slot.into_mut(), next)
                }
                None => slot.remove(),
            }
        } else {
            let at = self
                .collided
                .iter()
                .position(|(h, p)| *h == hash && p.downstream_id() == *downstream)?;
            self.collided.swap_remove(at).1
        };
        self.len -= 1;
        Some(pending)
    }

    /// The entry of the request `client` sent with id `original`, if in flight (a linear
    /// search: for the rare `notifications/cancelled`, whose `requestId` must be rewritten
    /// to the downstream id too).
    ///
    /// ```
    /// use rpcscan::rewrite::Correlation;
    /// let mut table = Correlation::new();
    /// let request = rpcscan::parse(br#"{"jsonrpc":"2.0","id":"a","method":"tools/call"}"#).unwrap();
    /// table.forward(7u32, &request, &mut Vec::new());
    /// let cancel = rpcscan::parse(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"\u0061"}}"#).unwrap();
    /// let asked = cancel.params().unwrap().get("requestId").unique().and_then(|v| v.as_id()).unwrap();
    /// let pending = table.find(&7, &asked).unwrap();
    /// assert_eq!(pending.downstream_id().raw(), b"1");
    /// ```
    pub fn find(&self, client: &C, original: &Id<'_>) -> Option<&Pending<C>>
    where
        C: PartialEq,
    {
        self.pending()
            .find(|p| p.client == *client && original_id(p).is_some_and(|id| id == *original))
    }

    /// Empties the table, yielding every request still in flight (e.g. to answer each
    /// with an error when the server goes away).
    pub fn drain(&mut self) -> impl Iterator<Item = Pending<C>> + '_ {
        self.len = 0;
        self.ring_len = 0;
        let Correlation { ring, entries, collided, .. } = self;
        let ring = ring.drain(..).flatten();
        ring.chain(entries.drain().map(|(_, p)| p)).chain(collided.drain(..).map(|(_, p)| p))
    }
}

/// The original id of an entry as an [`Id`], re-read from its raw bytes.
fn original_id<C>(pending: &Pending<C>) -> Option<Id<'_>> {
    Raw::detached(pending.original_id()).as_id()
}

fn id_kind(id: &Id<'_>) -> IdKind {
    if id.is_integer() {
        IdKind::Integer
    } else if id.is_null() {
        IdKind::Null
    } else {
        IdKind::String { escaped: id.as_str().is_some_and(|s| s.has_escapes()) }
    }
}

/// Formats `n` in decimal into the tail of `out`.
fn format_u64(mut n: u64, out: &mut [u8; 20]) -> &[u8] {
    let mut i = out.len();
    loop {
        i -= 1;
        if let Some(slot) = out.get_mut(i) {
            *slot = b'0' + (n % 10) as u8;
        }
        n /= 10;
        if n == 0 || i == 0 {
            break;
        }
    }
    out.get(i..).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_u64() {
        let mut d = [0u8; 20];
        assert_eq!(format_u64(0, &mut d), b"0");
        assert_eq!(format_u64(u64::MAX, &mut d), b"18446744073709551615");
        assert_eq!(format_u64(10, &mut d), b"10");
    }

    #[test]
    fn counter_skips_ids_in_flight_and_wraps() {
        let mut table = Correlation::new();
        let req = crate::parse(br#"{"jsonrpc":"2.0","id":5,"method":"m"}"#).unwrap();
        table.insert(Id::new(b"1", IdKind::Integer), 0u8, b"9").unwrap();
        assert_eq!(table.forward(1, &req, &mut Vec::new()), Some(2));
        table.next = u64::MAX;
        assert_eq!(table.forward(2, &req, &mut Vec::new()), Some(u64::MAX));
        assert_eq!(table.forward(3, &req, &mut Vec::new()), Some(3)); // 1 and 2 in flight
        assert_eq!(table.len(), 4);
        assert_eq!(table.drain().count(), 4);
        assert!(table.is_empty());
    }

    /// An id's identity as the table sees it: integers by their digits (`-0` is `0`),
    /// strings by their decoded text.
    fn identity(raw: &[u8]) -> (bool, String) {
        let id = Raw::detached(raw).as_id().unwrap();
        match id.as_str() {
            Some(s) => (true, s.decode().unwrap().into_owned()),
            None if id.raw() == b"-0" => (false, "0".into()),
            None => (false, String::from_utf8(id.raw().to_vec()).unwrap()),
        }
    }

    /// Random operations against a plain model: requests forwarded and answered out of
    /// order (some never, so the ring moves its oldest entries to the hash map), ids given
    /// to `insert` that clash with counter ids, answers with the id written another way
    /// (`"7"`, `"\u0037"`), the counter wrapping, `drain`; with and without every hash
    /// alike. After each step the table must agree with the model entry for entry.
    #[test]
    fn table_agrees_with_a_model() {
        // Under miri a short run of each hashing (the ring never moves entries out there).
        let (steps, runs) = if cfg!(miri) { (60, 2) } else { (12_000, 4) };
        for (seed, collide) in
            [(1u64, false), (2, true), (3, false), (4, true)].into_iter().take(runs)
        {
            let mut rng = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            let mut next = move |n: u64| {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                rng % n
            };
            let mut table: Correlation<usize> = Correlation::new();
            table.collide = collide;
            // Downstream identity -> (client, original raw id).
            let mut model: HashMap<(bool, String), (usize, Vec<u8>)> = HashMap::new();
            let mut sent: Vec<u64> = Vec::new();
            let mut slow: Vec<u64> = Vec::new();
            for step in 0..steps {
                if step == steps * 3 / 4 {
                    table.next = u64::MAX - next(3);
                }
                let roll = next(100);
                if roll < 40 {
                    let original = match next(3) {
                        0 => format!("{}", next(50)),
                        1 => format!("\"c{}\"", next(50)),
                        _ => "\"\\u0041\"".into(),
                    };
                    let req = format!(r#"{{"jsonrpc":"2.0","id":{original},"method":"m"}}"#);
                    let req = crate::parse(req.as_bytes()).unwrap();
                    let n = table.forward(step, &req, &mut Vec::new()).unwrap();
                    assert!(table.ring.len() <= 2 * table.ring_len + RING_SLACK);
                    let key = (false, n.to_string());
                    assert!(
                        model.insert(key, (step, original.into_bytes())).is_none(),
                        "{n} reused"
                    );
                    // One request in forty is slow: answered only much later, if ever.
                    if next(40) == 0 {
                        slow.push(n)
                    } else {
                        sent.push(n)
                    }
                } else if roll < 85 && !sent.is_empty() {
                    // Answer one of the recent requests, mostly the oldest.
                    let at = if next(4) == 0 { next(sent.len().min(8) as u64) as usize } else { 0 };
                    let n = sent.remove(at);
                    let written = match next(10) {
                        0 => format!("\"{n}\""),
                        1 => format!("\"\\u003{n}\""),
                        _ => n.to_string(),
                    };
                    let response = format!(r#"{{"jsonrpc":"2.0","id":{written},"result":0}}"#);
                    let response = crate::parse(response.as_bytes()).unwrap();
                    let expected = model.remove(&identity(written.as_bytes()));
                    let mut out = Vec::new();
                    let got = table.restore(&response, &mut out);
                    assert_eq!(got, expected.as_ref().map(|(c, _)| *c), "{written}");
                    if let Some((_, original)) = expected {
                        let want = format!(
                            r#"{{"jsonrpc":"2.0","id":{},"result":0}}"#,
                            String::from_utf8(original).unwrap()
                        );
                        assert_eq!(out, want.as_bytes());
                    } else {
                        sent.push(n); // written another way: still in flight
                        assert!(out.is_empty());
                    }
                } else if roll < 86 && next(8) == 0 && !slow.is_empty() {
                    let n = slow.swap_remove(next(slow.len() as u64) as usize);
                    let expected = model.remove(&(false, n.to_string()));
                    let got =
                        table.remove(&Raw::detached(n.to_string().as_bytes()).as_id().unwrap());
                    assert_eq!(got.map(|p| p.into_client()), expected.map(|(c, _)| c));
                } else if roll < 92 {
                    // A caller's own id: an integer near the counter, a string, or -0.
                    let raw = match next(3) {
                        0 => table.next.saturating_sub(next(5)).saturating_add(next(3)).to_string(),
                        1 => format!("\"s{}\"", next(20)),
                        _ => "-0".into(),
                    };
                    let id = Raw::detached(raw.as_bytes()).as_id().unwrap();
                    let key = identity(raw.as_bytes());
                    let taken = model.contains_key(&key);
                    assert_eq!(table.get(&id).is_some(), taken, "{raw}");
                    match table.insert(id, step, b"9") {
                        Ok(()) => {
                            assert!(!taken);
                            model.insert(key, (step, b"9".to_vec()));
                            slow.extend(id.as_u64().filter(|&n| n > 0 && raw != "-0"));
                        }
                        Err(client) => assert!(taken && client == step),
                    }
                } else if roll < 93 && next(100) == 0 {
                    let mut drained: Vec<usize> = table.drain().map(Pending::into_client).collect();
                    let mut want: Vec<usize> = model.drain().map(|(_, (c, _))| c).collect();
                    drained.sort_unstable();
                    want.sort_unstable();
                    assert_eq!(drained, want);
                    sent.clear();
                    slow.clear();
                }
                assert_eq!(table.len(), model.len());
                assert_eq!(table.pending().count(), model.len());
                assert!(!matches!(table.ring.front(), Some(None)));
            }
            assert!(table.moved > 0 || cfg!(miri), "no entry left the ring");
            for (key, (client, original)) in &model {
                let raw = if key.0 { format!("{:?}", key.1) } else { key.1.clone() };
                let id = Raw::detached(raw.as_bytes()).as_id().unwrap();
                let p = table.get(&id).unwrap();
                assert_eq!((*p.client(), p.original_id()), (*client, original.as_slice()));
            }
        }
    }

    /// Every operation, with every id hashing alike (the collision path) and without.
    #[test]
    fn entries_survive_hash_collisions_and_long_ids() {
        let long = format!("\"{}\"", "x".repeat(80));
        for collide in [false, true] {
            let mut table = Correlation::new();
            table.collide = collide;
            let ids: Vec<String> = (0..40)
                .map(|i| match i % 3 {
                    0 => i.to_string(),
                    1 => format!("\"r-{i}\""),
                    _ => format!("{}{i}", &long[..long.len() - 1]) + "\"",
                })
                .collect();
            for (client, id) in ids.iter().enumerate() {
                let req = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"m"}}"#);
                let req = crate::parse(req.as_bytes()).unwrap();
                assert_eq!(table.forward(client, &req, &mut Vec::new()), Some(client as u64 + 1));
            }
            assert_eq!(table.len(), ids.len());
            // Out of order: every third first, then the rest; each comes back exactly.
            let order: Vec<usize> = (0..ids.len())
                .filter(|i| i % 3 == 2)
                .chain((0..ids.len()).filter(|i| i % 3 != 2))
                .collect();
            for (n, &i) in order.iter().enumerate() {
                let request = format!(r#"{{"jsonrpc":"2.0","id":{},"method":"m"}}"#, ids[i]);
                let original = crate::parse(request.as_bytes()).unwrap();
                assert_eq!(
                    table.find(&i, &original.id().unwrap()).map(|p| p.original_id()),
                    Some(ids[i].as_bytes())
                );
                if n == 5 {
                    assert_eq!(table.drain().count(), ids.len() - 5);
                    break;
                }
                let response = format!(r#"{{"jsonrpc":"2.0","id":{},"result":0}}"#, i + 1);
                let response = crate::parse(response.as_bytes()).unwrap();
                let mut out = Vec::new();
                assert_eq!(table.restore(&response, &mut out), Some(i));
                assert_eq!(
                    out,
                    format!(r#"{{"jsonrpc":"2.0","id":{},"result":0}}"#, ids[i]).as_bytes()
                );
                assert_eq!(table.restore(&response, &mut Vec::new()), None, "only once");
            }
            assert!(table.is_empty());
            assert_eq!(table.collided.len(), 0);
        }
    }
}
