//! The matcher's id tables: the requests in flight in arrival order ([`Table`]), indexed by
//! id and by progress token ([`Index`]), and the keys they are indexed by ([`key_of`]).
//!
//! A request in flight is kept in two parts of one slot number: what the index probes and
//! the arrival list read on every message ([`Hot`]: the id's key and links, a cache line), and
//! what is read once, when the request leaves ([`Cold`]: position, time, name numbers,
//! counts), one cache line each. A raw id its key does not spell back, a progress token
//! that is not the id (rare: the MCP SDKs send the id) and names the matcher did not
//! intern live out of line, boxed.

use std::time::Duration;

use hashbrown::HashTable;

use super::small::Small;
use super::{Direction, Name, Position, RawId};
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
    pub(super) fn new(key: Key, hash: u64) -> Link {
        Link { key, hash, next: NONE, last: NONE }
    }

    /// The key.
    pub(super) fn key(&self) -> &Key {
        &self.key
    }

    /// Whether this link's key is `key`.
    pub(super) fn same_key(&self, key: &Key) -> bool {
        self.key == *key
    }
}

/// The part of a request in flight that lookups read: its id link, its neighbours in
/// arrival order, its arrival number, and whether its progress token is its id. One cache
/// line each (56 bytes unaligned would make most of them straddle two).
#[derive(Debug)]
#[repr(align(64))]
pub(super) struct Hot {
    id: Link,
    older: u32,
    newer: u32,
    /// Arrival number: which of two requests came first.
    pub(super) seq: u64,
    /// Where the id's key spells the raw id ([`spelled`]); [`NONE`]: the raw id is kept in
    /// [`Rare::raw`].
    pub(super) spell: u32,
    /// The slot holds a request.
    live: bool,
    /// The progress token's key is the id's (what the MCP SDKs send: a request's progress
    /// token is its id): the request is not in the token index, and progress finds it
    /// through the id index instead ([`Index::find_first`]).
    pub(super) token_is_id: bool,
}

impl Hot {
    /// The id's key.
    pub(super) fn key(&self) -> &Key {
        &self.id.key
    }
}

/// The part of a request in flight read when it leaves (and by cancels and progress): one
/// cache line. The raw id is not kept when the id's key spells it back ([`spells`]: the
/// common ids, integers and strings without escapes); the rest lives out of line, in
/// [`Rare`].
#[derive(Debug)]
#[repr(align(64))]
pub(super) struct Cold {
    /// The request's position: line, offset, input.
    pub(super) line: u64,
    pub(super) offset: u64,
    pub(super) input: u32,
    pub(super) time: Option<Duration>,
    pub(super) progress: u64,
    /// The method's number among the matcher's names ([`NONE`]: in `rare`).
    pub(super) method: u32,
    /// The tool's number ([`NONE`]: no tool, or in `rare`).
    pub(super) tool: u32,
    pub(super) direction: Option<Direction>,
    pub(super) cancelled: bool,
    /// What few requests have: a raw id the key does not spell, a progress token that is
    /// not the id, names the matcher did not intern.
    pub(super) rare: Option<Box<Rare>>,
}

const _: () = assert!(std::mem::size_of::<Cold>() == 64 && std::mem::size_of::<Hot>() == 64);

impl Cold {
    /// The request's position.
    pub(super) fn at(&self) -> Position {
        Position { line: self.line, offset: self.offset, input: self.input }
    }

    /// The progress token's link, when the request has a token that is not its id.
    fn token(&self) -> Option<&Link> {
        self.rare.as_deref()?.token.as_ref()
    }

    fn token_mut(&mut self) -> Option<&mut Link> {
        self.rare.as_deref_mut()?.token.as_mut()
    }
}

/// What a request in flight seldom has (see [`Cold::rare`]).
#[derive(Debug, Default)]
pub(super) struct Rare {
    /// A method the matcher did not intern ([`Cold::method`] is [`NONE`]).
    pub(super) method: Option<Name>,
    /// A tool the matcher did not intern.
    pub(super) tool: Option<Name>,
    /// The raw id, as sent, when the id's key does not spell it ([`spells`]).
    pub(super) raw: Option<RawId>,
    /// The progress token's link, when the request has a token that is not its id.
    pub(super) token: Option<Link>,
}

/// The raw id a key spells from its byte `at` on ([`spells`]): an integer key's digits, a
/// string key's bytes in quotes.
pub(super) fn spelled(key: &Key, at: u32) -> Option<RawId> {
    match key.as_slice().get(at as usize..)? {
        [b'i', digits @ ..] => Some(RawId::new(digits)),
        [b's', inner @ ..] => Some(RawId::quoted(inner)),
        _ => None,
    }
}

/// Where in `key` ([`spelled`] from there) `raw` is spelled exactly, if it is: a key built
/// from an integer without sign or a string without escapes ends with its type's tag and
/// the raw id's bytes (a string's without quotes), whatever scope comes before. Checked
/// when a request comes in, so that any other raw id is kept as it is.
pub(super) fn spells(key: &Key, raw: &[u8]) -> Option<u32> {
    let key = key.as_slice();
    let (tag, body) = match raw {
        [b'"', inner @ .., b'"'] => (b's', inner),
        _ => (b'i', raw),
    };
    let at = key.len().checked_sub(body.len() + 1).filter(|&at| at > 0)?;
    (key.get(at) == Some(&tag) && key.get(at + 1..) == Some(body)).then_some(at as u32)
}

/// No slot (and no name number).
pub(super) const NONE: u32 = u32::MAX;

/// The requests in flight: a slab (freed slots are reused, so it never grows past the
/// most requests ever in flight at once) threaded by a list in arrival order, oldest
/// first, in two parallel parts ([`Hot`], [`Cold`]). Every operation is O(1).
#[derive(Debug, Default)]
pub(super) struct Table {
    hot: Vec<Hot>,
    cold: Vec<Cold>,
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

    pub(super) fn hot(&self, at: u32) -> Option<&Hot> {
        self.hot.get(at as usize).filter(|hot| hot.live)
    }

    pub(super) fn cold(&self, at: u32) -> Option<&Cold> {
        self.hot(at)?;
        self.cold.get(at as usize)
    }

    pub(super) fn cold_mut(&mut self, at: u32) -> Option<&mut Cold> {
        self.hot(at)?;
        self.cold.get_mut(at as usize)
    }

    fn link(&self, at: u32, which: Which) -> Option<&Link> {
        match which {
            Which::Id => self.hot(at).map(|hot| &hot.id),
            Which::Token => self.cold(at)?.token(),
        }
    }

    fn link_mut(&mut self, at: u32, which: Which) -> Option<&mut Link> {
        match which {
            Which::Id => self.hot.get_mut(at as usize).filter(|hot| hot.live).map(|h| &mut h.id),
            Which::Token => self.cold_mut(at)?.token_mut(),
        }
    }

    /// The oldest request's slot.
    pub(super) fn oldest(&self) -> Option<u32> {
        (self.oldest != NONE).then_some(self.oldest)
    }

    /// Adds the newest request (its arrival number is set here); `None` only when the table
    /// cannot index more (never with
    /// [`Pairing::max_in_flight`](super::Pairing::max_in_flight) below `u32::MAX`).
    pub(super) fn push(
        &mut self,
        id: Link,
        spell: u32,
        token_is_id: bool,
        cold: Cold,
    ) -> Option<u32> {
        let seq = self.pushed;
        let (older, newer, live) = (self.newest, NONE, true);
        let hot = Hot { id, older, newer, seq, spell, live, token_is_id };
        let at = match self.free.pop() {
            Some(at) => {
                *self.hot.get_mut(at as usize)? = hot;
                *self.cold.get_mut(at as usize)? = cold;
                at
            }
            None => {
                let at = u32::try_from(self.hot.len()).ok().filter(|&at| at != NONE)?;
                self.hot.push(hot);
                self.cold.push(cold);
                at
            }
        };
        match self.hot.get_mut(self.newest as usize) {
            Some(newest) => newest.newer = at,
            None => self.oldest = at,
        }
        self.newest = at;
        self.len += 1;
        self.pushed += 1;
        Some(at)
    }

    /// Takes a request out, and frees its slot: `leave` reads (and may take) what it
    /// needs of the request's [`Cold`] part first.
    pub(super) fn take<R>(
        &mut self,
        at: u32,
        leave: impl FnOnce(&Hot, &mut Cold) -> R,
    ) -> Option<R> {
        let hot = self.hot.get_mut(at as usize).filter(|hot| hot.live)?;
        hot.live = false;
        let (older, newer) = (hot.older, hot.newer);
        match self.hot.get_mut(older as usize) {
            Some(o) => o.newer = newer,
            None => self.oldest = newer,
        }
        match self.hot.get_mut(newer as usize) {
            Some(n) => n.older = older,
            None => self.newest = older,
        }
        self.free.push(at);
        self.len -= 1;
        let cold = self.cold.get_mut(at as usize)?;
        let left = leave(self.hot.get(at as usize)?, cold);
        // Nothing boxed outlives its request (the slot's next request overwrites the rest).
        cold.rare = None;
        Some(left)
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
        pred: impl Fn(&Hot) -> bool,
    ) -> Option<u32> {
        let mut at = self.find(table, which, hash, key)?;
        // A chain never holds more requests than are in flight: the bound only guards a
        // broken chain from looping.
        for _ in 0..=table.len {
            if pred(table.hot(at)?) {
                return Some(at);
            }
            at = table.link(at, which)?.next;
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

/// The key of a raw id ([`key`]'s bytes), `None` where [`key`] says `false`. The common
/// ids, short integers and strings without escapes in no scope, are written straight into
/// the key's inline bytes; the rest are built in `scratch` first.
pub(super) fn key_of(
    raw: &[u8],
    side: u8,
    scope: Option<&[u8]>,
    scratch: &mut Vec<u8>,
) -> Option<Key> {
    if scope.is_none() {
        let plain = match raw {
            [b'"', inner @ .., b'"'] if !inner.contains(&b'\\') => Some((b's', inner)),
            [b'0'..=b'9', ..] if raw.iter().all(u8::is_ascii_digit) => Some((b'i', raw)),
            _ => None,
        };
        if let Some(key) = plain.and_then(|(tag, body)| Small::inline([side, tag], body)) {
            return Some(key);
        }
    }
    key(raw, side, scope, scratch).then(|| Small::new(scratch))
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

    /// The shortcut of [`key_of`] builds the bytes [`key`] builds.
    #[test]
    fn shortcut_keys_are_keys() {
        let long = format!("\"{}\"", "x".repeat(30));
        #[rustfmt::skip]
        let raws: &[&[u8]] = &[b"1", b"0", b"-0", b"-12", b"007", b"12345678901234567890", b"123456789012345678901", b"\"\"", b"\"a\"", b"\"a\\u0062\"", b"\"", b"\"a", b"null", b"1.5", b"", long.as_bytes()];
        let (mut scratch, mut out) = (Vec::new(), Vec::new());
        for &raw in raws {
            for scope in [None, Some(&b"s"[..])] {
                let expected = key(raw, 2, scope, &mut out).then(|| out.clone());
                let got = key_of(raw, 2, scope, &mut scratch).map(|k| k.as_slice().to_vec());
                assert_eq!(got, expected, "{:?} {scope:?}", String::from_utf8_lossy(raw));
            }
        }
    }

    /// A raw id left out of a request in flight comes back from its key exactly; the ids
    /// a key does not spell (signed zero, escapes) are kept.
    #[test]
    fn keys_spell_raw_ids() {
        let long = format!("\"{}\"", "x".repeat(30));
        #[rustfmt::skip]
        let raws: &[(&[u8], bool)] = &[(b"1", true), (b"0", true), (b"-12", true), (b"-0", false), (b"007", true), (b"123456789012345678901", true), (b"\"\"", true), (b"\"a\"", true), (b"\"a\\u0062\"", false), (b"\"\\\"\"", false), (long.as_bytes(), true)];
        let mut scratch = Vec::new();
        for &(raw, spelt) in raws {
            for scope in [None, Some(&b"s"[..]), Some(&b"is"[..])] {
                let key = key_of(raw, 1, scope, &mut scratch).unwrap();
                let at = spells(&key, raw);
                assert_eq!(at.is_some(), spelt, "{:?} {scope:?}", String::from_utf8_lossy(raw));
                if let Some(at) = at {
                    assert_eq!(spelled(&key, at).as_deref(), Some(raw));
                }
            }
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
