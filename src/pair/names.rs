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

    /// Whether `self` and `other` are the same shared text (not only equal text).
    pub(super) fn same_text(&self, other: &Arc<str>) -> bool {
        Arc::ptr_eq(&self.text, other)
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

/// A matcher's interned names: at most [`MAX_KEYS`], each at most [`MAX_INTERNED_LEN`]
/// bytes, numbered from 0 in the order first seen.
#[derive(Debug, Default)]
pub(super) struct Names {
    names: Vec<Arc<str>>,
    /// Text → number (an index into `names`).
    index: HashTable<u32>,
    seed: Seeded,
    /// The numbers found last (at most [`RECENT`]), looked at before `index`.
    recent: Vec<u32>,
    /// Which of `recent` a new number replaces next.
    next_recent: usize,
}

impl Names {
    /// The number of `text`, interned now if it is new and there is room; `None` for a
    /// name kept out of the table ([`Names::name`] then needs the text itself).
    pub(super) fn intern(&mut self, text: &str) -> Option<u32> {
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
        if text.len() > MAX_INTERNED_LEN || self.names.len() >= MAX_KEYS {
            return None;
        }
        let n = u32::try_from(self.names.len()).ok()?;
        self.names.push(text.into());
        let (seed, names) = (&self.seed, &self.names);
        let rehash = |&n: &u32| names.get(n as usize).map_or(0, |s| seed.hash_one(s.as_bytes()));
        self.index.insert_unique(hash, n, rehash);
        Some(n)
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
        let mut names = Names::default();
        assert_eq!(names.intern("tools/call"), Some(0));
        assert_eq!(names.intern("echo"), Some(1));
        assert_eq!(names.intern("tools/call"), Some(0));
        let a = names.name(0).unwrap();
        let b = names.name(0).unwrap();
        assert!(a.same_text(b.text()));
        assert_eq!(a, "tools/call");
        assert_eq!(names.intern(&"x".repeat(MAX_INTERNED_LEN + 1)), None);
        for n in 0..MAX_KEYS {
            names.intern(&n.to_string());
        }
        assert_eq!(names.names.len(), MAX_KEYS);
        assert_eq!(names.intern("one too many"), None);
        assert_eq!(names.intern("echo"), Some(1));
        assert_eq!(Name::new("echo"), names.name(1).unwrap());
    }
}
