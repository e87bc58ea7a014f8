//! The matcher's id tables: the requests in flight in arrival order ([`Table`]), indexed by
//! id and by progress token ([`Index`]), and the keys they are indexed by ([`key`]).

use hashbrown::HashTable;

use super::small::Small;
use super::{Direction, Request};
use crate::text::Str;

/// The hash of the matcher's tables: foldhash, seeded at random once per process (from
/// address-space layout and the clock), so a log cannot be written to collide in a run
/// it cannot observe; several times faster than the standard SipHash on short ids.
pub(super) type Seeded = foldhash::fast::RandomState;

/// A decoded id or progress token with its side: see [`key`].
pub(super) type Key = Small;

/// Which of its two keys a request is indexed by.
#[derive(Clone, Copy, Debug)]
pub(super) enum Which {
    Id,
    Token,
}

/// A request's place among the requests waiting with the same key: the key, its hash,
/// the next younger one with it, and (at the oldest, which the index points at) the
/// youngest.
#[derive(Debug)]
pub(super) struct Link {
    key: Key,
    hash: u64,
    next: u32,
    last: u32,
}

impl Link {
    pub(super) fn new(key: &[u8], hash: u64) -> Link {
        Link { key: Small::new(key), hash, next: NONE, last: NONE }
    }

    /// Whether this link's key is `key`.
    pub(super) fn same_key(&self, key: &[u8]) -> bool {
        self.key.as_slice() == key
    }
}

/// One remembered request and the links that index it.
#[derive(Debug)]
pub(super) struct InFlight {
    pub(super) request: Request,
    pub(super) id: Link,
    /// The progress token's link, when the token is not the id itself.
    pub(super) token: Option<Link>,
    /// The progress token's key is the id's (what the MCP SDKs send: a request's progress
    /// token is its id): the request is not in the token index, and progress finds it
    /// through the id index instead ([`Index::find_first`]).
    pub(super) token_is_id: bool,
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

/// No slot.
pub(super) const NONE: u32 = u32::MAX;

/// A place in the in-flight table, linked in arrival order.
#[derive(Debug)]
struct Slot {
    entry: Option<InFlight>,
    older: u32,
    newer: u32,
    /// Arrival number: which of two requests came first.
    seq: u64,
}

/// The requests in flight: a slab (freed slots are reused, so it never grows past the
/// most requests ever in flight at once) threaded by a list in arrival order, oldest
/// first. Every operation is O(1).
#[derive(Debug, Default)]
pub(super) struct Table {
    slots: Vec<Slot>,
    free: Vec<u32>,
    oldest: u32,
    newest: u32,
    pub(super) len: usize,
    /// Requests ever pushed: the next one's arrival number.
    pushed: u64,
}

impl Table {
    pub(super) fn new() -> Table {
        Table { oldest: NONE, newest: NONE, ..Table::default() }
    }

    pub(super) fn get(&self, at: u32) -> Option<&InFlight> {
        self.slots.get(at as usize)?.entry.as_ref()
    }

    pub(super) fn get_mut(&mut self, at: u32) -> Option<&mut InFlight> {
        self.slots.get_mut(at as usize)?.entry.as_mut()
    }

    fn link(&self, at: u32, which: Which) -> Option<&Link> {
        self.get(at)?.link(which)
    }

    fn link_mut(&mut self, at: u32, which: Which) -> Option<&mut Link> {
        self.get_mut(at)?.link_mut(which)
    }

    /// The oldest request's slot.
    pub(super) fn oldest(&self) -> Option<u32> {
        (self.oldest != NONE).then_some(self.oldest)
    }

    /// Adds the newest request; `None` only when the table cannot index more (never with
    /// [`Pairing::max_in_flight`](super::Pairing::max_in_flight) below `u32::MAX`).
    pub(super) fn push(&mut self, entry: InFlight) -> Option<u32> {
        let slot = Slot { entry: Some(entry), older: self.newest, newer: NONE, seq: self.pushed };
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
        self.pushed += 1;
        Some(at)
    }

    /// The arrival number of the request at `at` (smaller: older).
    pub(super) fn seq(&self, at: u32) -> Option<u64> {
        let slot = self.slots.get(at as usize)?;
        slot.entry.as_ref().map(|_| slot.seq)
    }

    /// Takes a request out, and frees its slot.
    pub(super) fn take(&mut self, at: u32) -> Option<InFlight> {
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
pub(super) struct Index {
    heads: HashTable<u32>,
}

impl Index {
    /// Forgets every key.
    pub(super) fn clear(&mut self) {
        self.heads.clear();
    }

    /// The oldest request waiting with `key`.
    pub(super) fn find(&self, table: &Table, which: Which, hash: u64, key: &Key) -> Option<u32> {
        let same = |&at: &u32| table.link(at, which).is_some_and(|l| l.key == *key);
        self.heads.find(hash, same).copied()
    }

    /// The oldest request waiting with `key` for which `pred` holds (a key's requests are
    /// chained oldest first).
    pub(super) fn find_first(
        &self,
        table: &Table,
        which: Which,
        hash: u64,
        key: &Key,
        pred: impl Fn(&InFlight) -> bool,
    ) -> Option<u32> {
        let mut at = self.find(table, which, hash, key)?;
        // A chain never holds more requests than are in flight: the bound only guards a
        // broken chain from looping.
        for _ in 0..=table.len {
            let entry = table.get(at)?;
            if pred(entry) {
                return Some(at);
            }
            at = entry.link(which)?.next;
            if at == NONE {
                return None;
            }
        }
        None
    }

    /// Indexes the (newest) request at `at` by its link; the oldest request already
    /// waiting with the same key, if there is one. One probe of the hash table.
    pub(super) fn insert(&mut self, table: &mut Table, which: Which, at: u32) -> Option<u32> {
        let link = table.link(at, which)?;
        let hash = link.hash;
        let key = link.key.clone();
        let same = |&s: &u32| table.link(s, which).is_some_and(|l| l.key == key);
        let rehash = |&s: &u32| table.link(s, which).map_or(0, |l| l.hash);
        match self.heads.entry(hash, same, rehash) {
            hashbrown::hash_table::Entry::Occupied(entry) => {
                let head = *entry.get();
                let last = table.link(head, which).map_or(head, |l| l.last);
                if let Some(l) = table.link_mut(last, which) {
                    l.next = at;
                }
                if let Some(l) = table.link_mut(head, which) {
                    l.last = at;
                }
                Some(head)
            }
            hashbrown::hash_table::Entry::Vacant(entry) => {
                entry.insert(at);
                if let Some(l) = table.link_mut(at, which) {
                    l.last = at;
                }
                None
            }
        }
    }

    /// Takes the oldest request waiting with `key` out of its key's chain, in the same probe
    /// that finds it (a response's common case: [`Index::find`] and then [`Index::remove`]
    /// would probe twice).
    pub(super) fn pop(
        &mut self,
        table: &mut Table,
        which: Which,
        hash: u64,
        key: &Key,
    ) -> Option<u32> {
        let same = |&at: &u32| table.link(at, which).is_some_and(|l| l.key == *key);
        let Ok(entry) = self.heads.find_entry(hash, same) else { return None };
        let head = *entry.get();
        let (next, last) = table.link(head, which).map_or((NONE, NONE), |l| (l.next, l.last));
        unlink_head(entry, table, which, next, last);
        Some(head)
    }

    /// Drops the request at `at` (still in the table) from its key's chain.
    pub(super) fn remove(&mut self, table: &mut Table, which: Which, at: u32) {
        let Some(link) = table.link(at, which) else { return };
        let (hash, next, last) = (link.hash, link.next, link.last);
        let key = link.key.clone();
        let same = |&s: &u32| table.link(s, which).is_some_and(|l| l.key == key);
        let Ok(entry) = self.heads.find_entry(hash, same) else { return };
        let head = *entry.get();
        if head == at {
            // The common case: responses, evictions and timeouts take the oldest.
            unlink_head(entry, table, which, next, last);
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

/// Takes a key's oldest request (the head `entry` points at, whose link says `next` and
/// `last`) out of its chain: the entry goes with the last request, else points at the next.
fn unlink_head(
    entry: hashbrown::hash_table::OccupiedEntry<'_, u32>,
    table: &mut Table,
    which: Which,
    next: u32,
    last: u32,
) {
    if next == NONE {
        entry.remove();
        return;
    }
    let mut entry = entry;
    *entry.get_mut() = next;
    if let Some(l) = table.link_mut(next, which) {
        l.last = last;
    }
}

/// The id space a request of this direction lives in.
pub(super) fn side(direction: Option<Direction>) -> u8 {
    match direction {
        None => 0,
        Some(Direction::There) => 1,
        Some(Direction::Back) => 2,
    }
}

/// Builds the key of a raw id in `out`: the side, then `i` and the integer's digits (`-0`
/// folded into `0`) or `s` and the string's decoded bytes ([`Str::decode_into`]'s: lone
/// surrogates as generalized UTF-8, so every distinct string keeps a distinct key; an id
/// without escapes is copied as it is). `false` for `null` and anything that is neither a
/// string nor an integer literal. Total on any bytes, since facts filled in by hand may
/// hold anything.
pub(super) fn key(raw: &[u8], side: u8, scope: Option<&[u8]>, out: &mut Vec<u8>) -> bool {
    out.clear();
    out.push(side);
    // A scope (a gateway log's session) is an id space of its own: its bytes, then their
    // length, before the id, so that no two scopes' keys can be the same bytes.
    if let Some(scope) = scope {
        out.extend_from_slice(scope);
        out.extend_from_slice(&(scope.len() as u64).to_le_bytes());
    }
    match raw.first() {
        Some(b'"') => {
            let Some(inner) = raw.get(1..raw.len() - 1).filter(|_| raw.len() >= 2) else {
                return false;
            };
            out.push(b's');
            Str::from_raw(inner).decode_into(out);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_total() {
        let mut out = Vec::new();
        #[rustfmt::skip]
        let cases: &[(&[u8], bool)] = &[(b"1", true), (b"-", false), (b"\"", false), (b"\"\\", true), (b"\"\\u12\"", true), (b"null", false), (b"1.5", false), (b"", false)];
        for &(raw, ok) in cases {
            assert_eq!(key(raw, 0, None, &mut out), ok, "{raw:?}");
        }
    }

    /// Two ids share a key exactly when their decoded values are equal.
    #[test]
    fn keys_are_decoded_values() {
        #[rustfmt::skip]
        let cases: &[(&str, &str, bool)] = &[
            (r#""a\u0062""#, r#""ab""#, true),
            (r#""\ud83d\ude00""#, "\"\u{1F600}\"", true),
            (r#""\/\n""#, "\"/\n\"", true),
            (r#""\ud800""#, r#""\uD800""#, true),
            (r#""\ud800""#, r#""\udc00""#, false),
            ("-0", "0", true),
            ("1", r#""1""#, false),
            ("18446744073709551617", "18446744073709551616", false),
        ];
        for &(a, b, same) in cases {
            let (mut ka, mut kb) = (Vec::new(), Vec::new());
            assert!(
                key(a.as_bytes(), 1, None, &mut ka) && key(b.as_bytes(), 1, None, &mut kb),
                "{a} {b}"
            );
            assert_eq!(ka == kb, same, "{a} {b}");
        }
    }
}
