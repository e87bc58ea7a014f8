//! Parser options and the entry points.

use crate::batch::Batch;
use crate::dispatch;
use crate::invalid::{Invalid, Reason};
use crate::kind::Kind;
use crate::limits::{DEFAULT_MAX_DEPTH, MAX_DEPTH_LIMIT};
use crate::message::Message;
use crate::scan::{decide, envelope, ws, Top};
use crate::Id;

/// How much of a message is validated (docs/spec.md §2 and §6).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Validation {
    /// Every byte is checked: RFC 8259 grammar and UTF-8 everywhere. The default.
    #[default]
    Full,
    /// Values the scanner does not read (`params`, `result`, `error.data`, unknown
    /// members) are only structurally scanned: strings and brackets matched, depth
    /// counted. Same verdicts on every valid JSON text; for trusted hops and archives.
    Envelope,
}

/// Reusable, `Copy` scanner options.
///
/// ```
/// use rpcscan::{Kind, Parser, Validation};
/// let parser = Parser::new().validation(Validation::Envelope).max_depth(64);
/// assert_eq!(parser.classify(br#"{"jsonrpc":"2.0","method":"initialized"}"#), Kind::Notification);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Parser {
    validation: Validation,
    max_depth: usize,
}

impl Default for Parser {
    fn default() -> Self {
        Parser::new()
    }
}

impl Parser {
    /// Strict validation, nesting limit 1024.
    pub const fn new() -> Self {
        Parser {
            validation: Validation::Full,
            max_depth: DEFAULT_MAX_DEPTH,
        }
    }

    /// Chooses how much is validated.
    pub const fn validation(mut self, validation: Validation) -> Self {
        self.validation = validation;
        self
    }

    /// Sets the nesting limit (the top-level object counts as 1). Values above
    /// [`MAX_DEPTH_LIMIT`] are clamped to it.
    pub const fn max_depth(mut self, max_depth: usize) -> Self {
        self.max_depth = if max_depth > MAX_DEPTH_LIMIT {
            MAX_DEPTH_LIMIT
        } else {
            max_depth
        };
        self
    }

    /// The configured validation.
    pub const fn validation_mode(&self) -> Validation {
        self.validation
    }

    /// The configured nesting limit.
    pub const fn depth_limit(&self) -> usize {
        self.max_depth
    }

    /// The verdict alone.
    #[inline]
    pub fn classify(&self, msg: &[u8]) -> Kind {
        match self.parse(msg) {
            Ok(m) => m.kind(),
            Err(_) => Kind::Invalid,
        }
    }

    /// Scans one message: a borrowed view of a valid one, or why it is invalid. Any
    /// top-level array is invalid ([`Reason::Batch`]); see [`Parser::batch`].
    #[inline]
    pub fn parse<'a>(&self, msg: &'a [u8]) -> Result<Message<'a>, Invalid<'a>> {
        let mut facts = envelope::Facts::default();
        let top = match self.validation {
            Validation::Full => dispatch::top::<true>(msg, self.max_depth, &mut facts),
            Validation::Envelope => dispatch::top::<false>(msg, self.max_depth, &mut facts),
        };
        match top {
            Ok(Top::Object) => match decide::decide(&facts) {
                Ok(fields) => Ok(Message::new(msg, fields)),
                Err((reason, id)) => Err(Invalid::new(
                    reason,
                    None,
                    id.map(|(span, kind)| Id::new(span.of(msg), kind)),
                )),
            },
            Ok(Top::Array(_)) => Err(Invalid::new(Reason::Batch, None, None)),
            Ok(Top::Scalar) => Err(Invalid::new(Reason::NotAnObject, None, None)),
            Err(e) => Err(Invalid::new(e.reason(), Some(e.offset()), None)),
        }
    }

    /// Opt-in batch mode: for a top-level array, an iterator of per-element verdicts.
    ///
    /// The whole array must be JSON first (otherwise the one -32700 answer of JSON-RPC
    /// applies); `[]` is [`Reason::EmptyBatch`]; any other top-level value is
    /// [`Reason::NotAnObject`] (read: "not a batch").
    pub fn batch<'a>(&self, msg: &'a [u8]) -> Result<Batch<'a>, Invalid<'a>> {
        let top = match self.validation {
            Validation::Full => dispatch::validate_value::<true>(msg, self.max_depth),
            Validation::Envelope => dispatch::validate_value::<false>(msg, self.max_depth),
        };
        match top {
            Ok(Top::Array(open)) => {
                let first = ws(msg, open + 1);
                if msg.get(first) == Some(&b']') {
                    return Err(Invalid::new(Reason::EmptyBatch, None, None));
                }
                Ok(Batch::new(*self, msg, first))
            }
            Ok(Top::Object | Top::Scalar) => Err(Invalid::new(Reason::NotAnObject, None, None)),
            Err(e) => Err(Invalid::new(e.reason(), Some(e.offset()), None)),
        }
    }
}
