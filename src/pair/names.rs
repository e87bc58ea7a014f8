//! Method and tool names, interned: each distinct name is kept once per matcher and
//! numbered ([`Name`]), so that a request in flight holds two small numbers instead of two
//! strings, and a [`Summary`](super::Summary) finds a name's counts by its number instead
//! of comparing strings.

use std::fmt;
use std::hash::BuildHasher;
use std::ops::Deref;
use std::sync::Arc;

use hashbrown::HashTable;

use super::summary::MAX_KEYS;
use super::table::Seeded;

/// Names longer than this are not interned (a hostile log could make them huge): a request
/// carrying one keeps its own copy.
const MAX_INTERNED_LEN: usize = 128;

/// A method or tool name as the matcher reports it ([`Request::method`],
/// [`Request::tool`]): the text (a string slice, through [`Deref`]), shared by every request
/// that carries it, and the number the matcher gave it.
///
/// The number is what makes counting by name cheap: a [`Summary`](super::Summary) keeps a
/// name's counts at that index. Names equal by text are equal [`Name`]s, whatever their
/// numbers.
///
/// [`Request::method`]: super::Request::method
/// [`Request::tool`]: super::Request::tool
#[derive(Clone)]
pub struct Name {
    text: Arc<str>,
    /// The matcher's number for the name, [`Name::UNNUMBERED`] for a name it did not
    /// intern (past [`MAX_KEYS`] distinct names, or a very long one).
    number: u32,
}

impl Name {
    /// The number of a name no matcher numbered.
    const UNNUMBERED: u32 = u32::MAX;

    /// A name of its own, not numbered by any matcher (what a caller building a
    /// [`Request`](super::Request) by hand gives it).
    pub fn new(text: &str) -> Name {
        Name { text: text.into(), number: Name::UNNUMBERED }
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The matcher's number, when it has one.
    pub(super) fn number(&self) -> Option<usize> {
        (self.number != Name::UNNUMBERED).then_some(self.number as usize)
    }

    /// The shared text.
    pub(super) fn text(&self) -> &Arc<str> {
        &self.text
    }
}

impl Deref for Name {
    type Target = str;

    fn deref(&self) -> &str {
        &self.text
    }
}

impl AsRef<str> for Name {
    fn as_ref(&self) -> &str {
        &self.text
    }
}

impl From<&str> for Name {
    fn from(text: &str) -> Name {
        Name::new(text)
    }
}

impl PartialEq for Name {
    fn eq(&self, other: &Name) -> bool {
        self.text == other.text
    }
}

impl Eq for Name {}

impl PartialEq<str> for Name {
    fn eq(&self, other: &str) -> bool {
        *self.text == *other
    }
}

impl PartialEq<&str> for Name {
    fn eq(&self, other: &&str) -> bool {
        *self.text == **other
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.text, f)
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.text, f)
    }
}

/// Names [`Names::intern`] looks at before hashing: a method and a few tools.
const RECENT: usize = 8;

/// Slots of [`Names::shorts`]: 64 sets of two.
const SHORTS: usize = 128;

/// A name of at most 16 bytes as three words that tell it from every other: its length, and
/// its first and last 8 bytes (4 below 8 bytes; below 4, the bytes themselves). The two
/// parts overlap or meet, so every byte is in one of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Short {
    lo: u64,
    hi: u64,
    len: u64,
}

impl Short {
    /// `text`'s words, when it is at most 16 bytes long.
    #[inline]
    fn of(text: &[u8]) -> Option<Short> {
        let word8 = |b: Option<&[u8; 8]>| b.map_or(0, |b| u64::from_le_bytes(*b));
        let word4 = |b: Option<&[u8; 4]>| b.map_or(0, |b| u64::from(u32::from_le_bytes(*b)));
        let (lo, hi) = match text.len() {
            8..=16 => (word8(text.first_chunk()), word8(text.last_chunk())),
            4..=7 => (word4(text.first_chunk()), word4(text.last_chunk())),
            0..=3 => (text.iter().rev().fold(0, |w, &b| w << 8 | u64::from(b)), 0),
            _ => return None,
        };
        Some(Short { lo, hi, len: text.len() as u64 })
    }

    /// Its set of two slots in [`Names::shorts`].
    #[inline]
    fn set(&self) -> usize {
        let mixed =
            (self.lo ^ self.hi.rotate_left(29) ^ self.len).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (mixed >> (64 - (SHORTS / 2).trailing_zeros())) as usize
    }
}

/// A slot of [`Names::shorts`]: a short name's words and its number.
#[derive(Debug, Clone, Copy)]
struct Slot {
    key: Short,
    number: u32,
    /// Filled after the other slot of its set.
    newer: bool,
}

impl Slot {
    /// A slot no name matches: no name is `u64::MAX` bytes long.
    const EMPTY: Slot =
        Slot { key: Short { lo: 0, hi: 0, len: u64::MAX }, number: u32::MAX, newer: false };
}

/// A matcher's interned names: at most [`MAX_KEYS`], each at most [`MAX_INTERNED_LEN`]
/// bytes, numbered from 0 in the order first seen.
#[derive(Debug)]
pub(super) struct Names {
    /// Names interned at most: [`MAX_KEYS`] (the tests under miri set fewer).
    limit: usize,
    names: Vec<Arc<str>>,
    /// Text → number (an index into `names`).
    index: HashTable<u32>,
    seed: Seeded,
    /// Names of up to 16 bytes found before, by their words ([`Short`]): a cache of
    /// [`SHORTS`] slots, two ways a set (empty until the first name), looked at before `index`.
    shorts: Vec<Slot>,
    /// The longer names' numbers found last (at most [`RECENT`]), looked at before `index`.
    recent: Vec<u32>,
    /// Which of `recent` a new number replaces next.
    next_recent: usize,
}

impl Default for Names {
    fn default() -> Self {
        Names {
            limit: MAX_KEYS,
            names: Vec::new(),
            index: HashTable::new(),
            seed: Seeded::default(),
            shorts: Vec::new(),
            recent: Vec::new(),
            next_recent: 0,
        }
    }
}

impl Names {
    /// The number of `text`, interned now if it is new and there is room; `None` for a
    /// name kept out of the table ([`Names::name`] then needs the text itself).
    pub(super) fn intern(&mut self, text: &str) -> Option<u32> {
        // Most names are short (`tools/call`, a tool's name): their bytes are the key of a
        // slot, compared in registers, with no hashing and no text compare.
        if let Some(key) = Short::of(text.as_bytes()) {
            // Two ways a set: names that share one take turns in it only three at a time.
            let at = key.set() * 2;
            if let Some([a, b]) = self.shorts.get(at..at + 2) {
                for slot in [a, b] {
                    if slot.key == key {
                        return Some(slot.number);
                    }
                }
            }
            let number = self.find_or_add(text)?;
            if self.shorts.is_empty() {
                self.shorts.resize(SHORTS, Slot::EMPTY);
            }
            // Into the way not filled last (the first while both are empty).
            if let Some([a, b]) = self.shorts.get_mut(at..at + 2) {
                let (newer, older) = if b.newer { (b, a) } else { (a, b) };
                newer.newer = false;
                *older = Slot { key, number, newer: true };
            }
            return Some(number);
        }
        // Most requests carry a name seen a moment ago: a look at the last few costs less
        // than hashing the name (on `tools/call` with 4 tools, 30% fewer instructions).
        let names = &self.names;
        let same = |&n: &u32| names.get(n as usize).is_some_and(|name| **name == *text);
        if let Some(&n) = self.recent.iter().find(|n| same(n)) {
            return Some(n);
        }
        let n = self.find_or_add(text)?;
        if self.recent.len() < RECENT {
            self.recent.push(n);
        } else {
            if let Some(slot) = self.recent.get_mut(self.next_recent % RECENT) {
                *slot = n;
            }
            self.next_recent = self.next_recent.wrapping_add(1);
        }
        Some(n)
    }

    /// [`Names::intern`] past the recent names.
    fn find_or_add(&mut self, text: &str) -> Option<u32> {
        let hash = self.seed.hash_one(text.as_bytes());
        let names = &self.names;
        let same = |&n: &u32| names.get(n as usize).is_some_and(|name| **name == *text);
        if let Some(&n) = self.index.find(hash, same) {
            return Some(n);
        }
        if text.len() > MAX_INTERNED_LEN || self.names.len() >= self.limit {
            return None;
        }
        let n = u32::try_from(self.names.len()).ok()?;
        self.names.push(text.into());
        let (seed, names) = (&self.seed, &self.names);
        let rehash = |&n: &u32| names.get(n as usize).map_or(0, |s| seed.hash_one(s.as_bytes()));
        self.index.insert_unique(hash, n, rehash);
        Some(n)
    }

    /// The text numbered `number`, where it is kept.
    #[inline]
    pub(super) fn text(&self, number: u32) -> Option<&Arc<str>> {
        self.names.get(number as usize)
    }

    /// The [`Name`] numbered `number`.
    pub(super) fn name(&self, number: u32) -> Option<Name> {
        let text = self.names.get(number as usize)?.clone();
        Some(Name { text, number })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interned_once_and_bounded() {
        // The real bound natively; under miri (~16 ms an intern there) a smaller one.
        let limit = if cfg!(miri) { 64 } else { MAX_KEYS };
        let mut names = Names { limit, ..Names::default() };
        assert_eq!(names.intern("tools/call"), Some(0));
        assert_eq!(names.intern("echo"), Some(1));
        assert_eq!(names.intern("tools/call"), Some(0));
        let a = names.name(0).unwrap();
        let b = names.name(0).unwrap();
        assert!(Arc::ptr_eq(a.text(), b.text()));
        assert_eq!(a, "tools/call");
        assert_eq!(names.intern(&"x".repeat(MAX_INTERNED_LEN + 1)), None);
        for n in 0..limit {
            names.intern(&n.to_string());
        }
        assert_eq!(names.names.len(), limit);
        assert_eq!(names.intern("one too many"), None);
        assert_eq!(names.intern("echo"), Some(1));
        assert_eq!(Name::new("echo"), names.name(1).unwrap());
    }

    /// Short names are told apart by their words at every length, from each other and from
    /// longer names, NULs included; names sharing a slot take turns in it.
    #[test]
    fn short_names_are_told_apart() {
        let mut texts: Vec<String> = Vec::new();
        let lengths: Vec<usize> =
            if cfg!(miri) { vec![0, 1, 3, 4, 7, 8, 9, 16, 17] } else { (0..=20).collect() };
        for len in lengths {
            let base: String = (0..len).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
            texts.push(base.clone());
            for at in 0..len {
                let mut other = base.clone().into_bytes();
                other[at] = b'Z';
                texts.push(String::from_utf8(other).unwrap());
            }
            texts.push(format!("{base}\0"));
        }
        let mut names = Names::default();
        for _ in 0..3 {
            for (n, text) in texts.iter().enumerate() {
                assert_eq!(names.intern(text), Some(n as u32), "{text:?}");
                assert_eq!(names.name(n as u32).as_deref(), Some(text.as_str()));
            }
        }
        let shorts: Vec<Option<Short>> = texts.iter().map(|t| Short::of(t.as_bytes())).collect();
        for (text, short) in texts.iter().zip(&shorts) {
            assert_eq!(short.is_some(), text.len() <= 16);
            for (other, other_short) in texts.iter().zip(&shorts) {
                if short.is_some() && short == other_short {
                    assert_eq!(text, other);
                }
            }
        }
    }
}
