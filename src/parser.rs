//! Parser options and the entry points.

use core::fmt;
use core::str::FromStr;

use crate::batch::Batch;
use crate::dispatch;
use crate::invalid::{Invalid, Reason};
use crate::kind::Kind;
use crate::limits::{DEFAULT_MAX_DEPTH, MAX_DEPTH_LIMIT};
use crate::message::Message;
use crate::scan::{decide, envelope, ws, Top};
use crate::Id;

/// How much of a message is validated (docs/spec.md §2 and §6).
///
/// ```
/// use rpcscan::Validation;
/// assert_eq!(Validation::default(), Validation::Strict);
/// assert_eq!("envelope".parse::<Validation>(), Ok(Validation::Envelope));
/// assert_eq!(Validation::Strict.as_str(), "strict");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Validation {
    /// Every byte is checked: RFC 8259 grammar and UTF-8 everywhere. The default.
    #[default]
    Strict,
    /// Values the scanner does not read (`params`, `result`, `error.data`, unknown
    /// members) are only structurally scanned: strings and brackets matched, depth
    /// counted. Same verdicts on every valid JSON text; for trusted hops and archives.
    Envelope,
}

impl Validation {
    /// The former name of [`Validation::Strict`].
    #[deprecated(note = "renamed to `Validation::Strict`")]
    #[allow(non_upper_case_globals)]
    pub const Full: Validation = Validation::Strict;

    /// Both modes, in declaration order.
    pub const ALL: [Validation; 2] = [Validation::Strict, Validation::Envelope];

    /// The name used by the CLI (`--mode NAME`): `strict` or `envelope`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Validation::Strict => "strict",
            Validation::Envelope => "envelope",
        }
    }
}

impl fmt::Display for Validation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The name given to [`Validation`]'s `FromStr` is none of [`Validation::as_str`]'s names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownValidation(String);

impl fmt::Display for UnknownValidation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown validation {:?} (expected strict or envelope)", self.0)
    }
}

impl std::error::Error for UnknownValidation {}

impl FromStr for Validation {
    type Err = UnknownValidation;

    /// Accepts exactly the names of [`Validation::as_str`]: `strict`, `envelope`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Validation::ALL
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| UnknownValidation(s.to_owned()))
    }
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
    note_params_name: bool,
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
            validation: Validation::Strict,
            max_depth: DEFAULT_MAX_DEPTH,
            note_params_name: false,
        }
    }

    /// Chooses how much is validated.
    #[must_use]
    pub const fn validation(mut self, validation: Validation) -> Self {
        self.validation = validation;
        self
    }

    /// Sets the nesting limit (the top-level object counts as 1). Values above
    /// [`MAX_DEPTH_LIMIT`] are clamped to it.
    #[must_use]
    pub const fn max_depth(mut self, max_depth: usize) -> Self {
        self.max_depth = if max_depth > MAX_DEPTH_LIMIT { MAX_DEPTH_LIMIT } else { max_depth };
        self
    }

    /// Has strict mode note `params.name` and `params._meta` on its way through `params`,
    /// so that [`Message::params_name`] (the tool of a `tools/call`, the prompt of a
    /// `prompts/get`) and [`Message::params_meta`] (where a progress token lives) take no
    /// second pass over `params`. For routers, tool policies and pairing; off by default,
    /// where nothing reads it: the walk then looks at every key of `params` (a few
    /// instructions each). Envelope mode never notes it (its skipper sees no keys);
    /// `params_name` walks `params` then. Verdicts are the same either way.
    ///
    /// ```
    /// use rpcscan::Parser;
    /// let parser = Parser::new().note_params_name(true);
    /// let msg = parser.parse(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#).unwrap();
    /// assert!(msg.params_name().as_str().unwrap() == "echo");
    /// ```
    #[must_use]
    pub const fn note_params_name(mut self, note: bool) -> Self {
        self.note_params_name = note;
        self
    }

    /// Whether strict mode notes `params.name` ([`Parser::note_params_name`]).
    pub const fn notes_params_name(&self) -> bool {
        self.note_params_name
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
        // `parse` without building the message view: only the verdict leaves.
        let mut facts = envelope::Facts::default();
        let top = match self.validation {
            Validation::Strict => dispatch::top::<true>(msg, self.max_depth, &mut facts),
            Validation::Envelope => dispatch::top::<false>(msg, self.max_depth, &mut facts),
        };
        match top {
            Ok(Top::Object) => decide::decide(&facts).map_or(Kind::Invalid, |fields| fields.kind),
            _ => Kind::Invalid,
        }
    }

    /// Scans one message: a borrowed view of a valid one, or why it is invalid. Any
    /// top-level array is invalid ([`Reason::Batch`]); see [`Parser::batch`].
    #[inline]
    pub fn parse<'a>(&self, msg: &'a [u8]) -> Result<Message<'a>, Invalid<'a>> {
        let mut facts = envelope::Facts::default();
        facts.note_params_name = self.note_params_name;
        let top = match self.validation {
            Validation::Strict => dispatch::top::<true>(msg, self.max_depth, &mut facts),
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
            Validation::Strict => dispatch::validate_value::<true>(msg, self.max_depth),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for validation in Validation::ALL {
            assert_eq!(validation.as_str().parse(), Ok(validation));
            assert_eq!(validation.to_string(), validation.as_str());
        }
    }

    #[test]
    fn unknown_names_are_rejected() {
        for name in ["", "full", "Strict", "fast", "lenient", "strict "] {
            assert_eq!(name.parse::<Validation>(), Err(UnknownValidation(name.to_owned())));
        }
    }

    #[test]
    #[allow(deprecated)]
    fn the_old_name_still_compiles_and_matches() {
        assert_eq!(Validation::Full, Validation::Strict);
        assert!(matches!(Validation::Strict, Validation::Full));
        assert_eq!(Parser::new().validation(Validation::Full), Parser::new());
    }
}
