//! Bytes kept inline when short ([`Small`]): the raw ids ([`RawId`]) and table keys of the
//! requests in flight, so that remembering one costs no allocation of its own.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};

/// Bytes kept inline up to [`INLINE`] long, on the heap beyond: ids and keys are mostly
/// short, so a request in flight costs no allocation of its own.
#[derive(Clone)]
pub(super) enum Small {
    Inline { len: u8, bytes: [u8; INLINE] },
    Heap(Box<[u8]>),
}

/// The longest bytes [`Small`] keeps inline (24 bytes in all, with the length and the
/// variant): any `u64` id's key (side, tag, 20 digits) fits.
const INLINE: usize = 22;

impl Small {
    pub(super) fn new(from: &[u8]) -> Small {
        let mut bytes = [0; INLINE];
        match (bytes.get_mut(..from.len()), u8::try_from(from.len())) {
            (Some(inline), Ok(len)) => {
                inline.copy_from_slice(from);
                Small::Inline { len, bytes }
            }
            _ => Small::Heap(from.into()),
        }
    }

    /// `head` then `body`, inline; `None` when they do not fit (then [`Small::new`] of the
    /// joined bytes keeps them on the heap). Writing the parts in place saves building the
    /// bytes elsewhere first.
    pub(super) fn inline(head: [u8; 2], body: &[u8]) -> Option<Small> {
        let mut bytes = [0; INLINE];
        let (start, rest) = bytes.split_at_mut(2);
        start.copy_from_slice(&head);
        rest.get_mut(..body.len())?.copy_from_slice(body);
        Some(Small::Inline { len: body.len() as u8 + 2, bytes })
    }

    pub(super) fn as_slice(&self) -> &[u8] {
        match self {
            Small::Inline { len, bytes } => bytes.get(..usize::from(*len)).unwrap_or_default(),
            Small::Heap(bytes) => bytes,
        }
    }
}

impl PartialEq for Small {
    #[inline]
    fn eq(&self, other: &Small) -> bool {
        match (self, other) {
            // Zero past the length (`Small::new`): the whole arrays compare, a fixed size
            // the compiler compares inline (the table lookups' hottest compare).
            (Small::Inline { len: a, bytes: x }, Small::Inline { len: b, bytes: y }) => {
                a == b && x == y
            }
            _ => self.as_slice() == other.as_slice(),
        }
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

    /// `inner` in double quotes (a string id without escapes, from its key).
    pub(super) fn quoted(inner: &[u8]) -> RawId {
        let len = inner.len() + 2;
        if len <= INLINE {
            let mut bytes = [0; INLINE];
            bytes[0] = b'"';
            bytes[1..len - 1].copy_from_slice(inner);
            bytes[len - 1] = b'"';
            return RawId(Small::Inline { len: len as u8, bytes });
        }
        let mut heap = Vec::with_capacity(inner.len() + 2);
        heap.push(b'"');
        heap.extend_from_slice(inner);
        heap.push(b'"');
        RawId(Small::Heap(heap.into()))
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

impl fmt::Debug for Small {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(self.as_slice()))
    }
}
