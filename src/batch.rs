//! Iterating the elements of a top-level array (opt-in batch mode, docs/spec.md §2).

use crate::invalid::{Invalid, Reason};
use crate::message::Message;
use crate::parser::Parser;
use crate::scan::{skip, ws};
use crate::simd::{self, with_kernels};

/// The messages of a JSON-RPC batch, each judged by the rules for a single message.
///
/// Created by [`Parser::batch`], which has already checked that the whole array is JSON;
/// each element is then scanned once more as a message of its own. Element offsets (in
/// [`crate::Raw::offset`]) are relative to the element.
///
/// ```
/// use rpcscan::{Kind, Parser, Reason};
/// let batch = br#"[{"jsonrpc":"2.0","method":"a","id":1}, 1, {"jsonrpc":"2.0","method":"b"}]"#;
/// let kinds: Vec<_> = Parser::new()
///     .batch(batch)
///     .unwrap()
///     .map(|r| r.map(|m| m.kind()).map_err(|e| e.reason()))
///     .collect();
/// assert_eq!(kinds, [Ok(Kind::Request), Err(Reason::NotAnObject), Ok(Kind::Notification)]);
/// ```
#[derive(Clone, Debug)]
pub struct Batch<'a> {
    parser: Parser,
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Batch<'a> {
    /// `buf` is a valid array whose first element (or `]`) is at `pos`.
    pub(crate) const fn new(parser: Parser, buf: &'a [u8], pos: usize) -> Self {
        Batch { parser, buf, pos }
    }
}

impl<'a> Iterator for Batch<'a> {
    type Item = Result<Message<'a>, Invalid<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        let start = self.pos;
        match self.buf.get(start) {
            None | Some(b']') => return None,
            Some(_) => {}
        }
        // The array was validated as a whole: a structural skip finds each element's end.
        let max_depth = self.parser.depth_limit();
        let end = with_kernels!(simd::detected(), k => {
            skip::value::<_, false>(k, self.buf, start, 2, max_depth)
        })
        .ok()?;
        let element = self.buf.get(start..end)?;
        let mut next = ws(self.buf, end);
        if self.buf.get(next) == Some(&b',') {
            next = ws(self.buf, next + 1);
        }
        self.pos = next;
        Some(if element.first() == Some(&b'[') {
            Err(Invalid::new(Reason::NotAnObject, None, None))
        } else {
            self.parser.max_depth(self.parser.depth_limit().saturating_sub(1)).parse(element)
        })
    }
}
