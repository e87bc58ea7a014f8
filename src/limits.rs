//! Limits every layer shares: message size, nesting depth, and the byte spans that the
//! size limit keeps to 32 bits. A leaf: it imports nothing from the crate.

/// Default nesting limit: the top-level object is depth 1 (docs/spec.md §2).
pub const DEFAULT_MAX_DEPTH: usize = 1024;

/// The largest nesting limit [`Parser::max_depth`](crate::Parser::max_depth) accepts; larger values are clamped.
/// The limit exists so that depth tracking needs no allocation (one bit per level).
pub const MAX_DEPTH_LIMIT: usize = 4096;

/// Spans are `u32`: one message may not exceed 4 GiB (reported as `too_large`).
pub(crate) const MAX_MESSAGE_LEN: usize = u32::MAX as usize;

/// A byte range in a message (`u32`: messages are at most 4 GiB).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Span {
    start: u32,
    end: u32,
}

impl Span {
    pub(crate) const fn new(start: u32, end: u32) -> Self {
        Span { start, end }
    }

    pub(crate) const fn start(self) -> usize {
        self.start as usize
    }

    pub(crate) const fn end(self) -> usize {
        self.end as usize
    }

    /// The bytes of this span in `buf` (empty if it does not fit, which cannot happen for
    /// spans the scanner made over the same bytes).
    pub(crate) fn of(self, buf: &[u8]) -> &[u8] {
        buf.get(self.start as usize..self.end as usize).unwrap_or_default()
    }
}
