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
use std::collections::HashMap;

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
    let bytes = msg.as_bytes();
    let Some((span, _)) = msg.fields().id else {
        buf.put_slice(bytes);
        return false;
    };
    match (bytes.get(..span.start()), bytes.get(span.end()..)) {
        (Some(before), Some(after)) => {
            buf.put_slice(before);
            buf.put_slice(id);
            buf.put_slice(after);
            true
        }
        _ => {
            buf.put_slice(bytes);
            false
        }
    }
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
pub struct Correlation<C> {
    /// By the keyed hash of the downstream id (which the map uses as its own hash).
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
}

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
            entries: HashMap::default(),
            collided: Vec::new(),
            hasher: foldhash::fast::RandomState::default(),
            len: 0,
            next: 1,
            #[cfg(test)]
            collide: false,
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
        self.entries.values().chain(self.collided.iter().map(|(_, p)| p))
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
        let (assigned, raw, hash) = loop {
            let n = self.next;
            self.next = self.next.checked_add(1).unwrap_or(1);
            let raw = format_u64(n, &mut digits);
            let id = Id::new(raw, IdKind::Integer);
            let hash = self.key(&id);
            if self.get_hashed(hash, &id).is_none() {
                break (n, raw, hash);
            }
        };
        self.put_hashed(hash, Id::new(raw, IdKind::Integer), client, original);
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
        self.put_hashed(self.key(&downstream), downstream, client, original);
    }

    /// [`put`](Self::put) with the id's hash already computed.
    fn put_hashed(&mut self, hash: u64, downstream: Id<'_>, client: C, original: &[u8]) {
        let kind = id_kind(&downstream);
        let raw = downstream.raw();
        let pending = Pending { client, kind, ids: IdBytes::new(raw, original), split: raw.len() };
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
        self.get_hashed(self.key(downstream), downstream)
    }

    /// [`get`](Self::get) with the id's hash already computed.
    fn get_hashed(&self, hash: u64, downstream: &Id<'_>) -> Option<&Pending<C>> {
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
        let Correlation { entries, collided, .. } = self;
        entries.drain().map(|(_, p)| p).chain(collided.drain(..).map(|(_, p)| p))
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
