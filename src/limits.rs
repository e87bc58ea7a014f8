//! Limits every layer shares: message size, nesting depth, and the byte spans that the
//! size limit keeps to 32 bits. A leaf: it imports nothing from the crate.

use core::num::NonZeroU32;

/// Default nesting limit: the top-level object is depth 1 (docs/spec.md §2).
pub const DEFAULT_MAX_DEPTH: usize = 1024;

/// The largest nesting limit [`Parser::max_depth`](crate::Parser::max_depth) accepts; larger values are clamped.
/// The limit exists so that depth tracking needs no allocation (one bit per level).
pub const MAX_DEPTH_LIMIT: usize = 4096;

/// Spans are `u32`: one message may not exceed 4 GiB less one byte (reported as
/// `too_large`), so that a span's end plus one fits too.
pub(crate) const MAX_MESSAGE_LEN: usize = u32::MAX as usize - 1;

/// A byte range in a message (`u32`: messages are at most 4 GiB).
///
/// The end is kept plus one, never zero, so that `Option<Span>` takes no more room than a
/// span: the scanner's fields (a dozen optional spans) are copied into every message view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Span {
    start: u32,
    end_plus_one: NonZeroU32,
}

impl Span {
    pub(crate) const fn new(start: u32, end: u32) -> Self {
        // `end` is at most MAX_MESSAGE_LEN: the sum neither saturates nor is zero.
        Span { start, end_plus_one: NonZeroU32::MIN.saturating_add(end) }
    }

    pub(crate) const fn start(self) -> usize {
        self.start as usize
    }

    pub(crate) const fn end(self) -> usize {
        (self.end_plus_one.get() - 1) as usize
    }

    /// The bytes of this span in `buf` (empty if it does not fit, which cannot happen for
    /// spans the scanner made over the same bytes).
    pub(crate) fn of(self, buf: &[u8]) -> &[u8] {
        buf.get(self.start()..self.end()).unwrap_or_default()
    }
}

impl Default for Span {
    fn default() -> Span {
        Span::new(0, 0)
    }
}
