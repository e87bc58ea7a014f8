//! The five verdicts of docs/spec.md §1.

use core::fmt;

/// What a message is (docs/spec.md §1): exactly one of five kinds.
///
/// ```
/// use rpcscan::{classify, Kind};
/// assert_eq!(classify(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#), Kind::Request);
/// assert_eq!(Kind::Request.as_str(), "request");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// Has `method` and an `id`: expects a response.
    Request,
    /// Has `method` and no `id` member at all: no response allowed.
    Notification,
    /// Success response: `result` and an `id`.
    Result,
    /// Error response: an `error` object; `id` may be absent or `null`.
    Error,
    /// Anything else; [`crate::Invalid`] says why.
    Invalid,
}

impl Kind {
    /// All five kinds, in declaration order (handy for counting tables).
    pub const ALL: [Kind; 5] = [
        Kind::Request,
        Kind::Notification,
        Kind::Result,
        Kind::Error,
        Kind::Invalid,
    ];

    /// The lower-case name used by the CLI, `--json` output and SQL functions.
    pub const fn as_str(self) -> &'static str {
        match self {
            Kind::Request => "request",
            Kind::Notification => "notification",
            Kind::Result => "result",
            Kind::Error => "error",
            Kind::Invalid => "invalid",
        }
    }

    /// `true` for the kinds a server must answer: requests (and invalid messages,
    /// which get an error response).
    pub const fn expects_response(self) -> bool {
        matches!(self, Kind::Request | Kind::Invalid)
    }

    /// `true` for [`Kind::Result`] and [`Kind::Error`].
    pub const fn is_response(self) -> bool {
        matches!(self, Kind::Result | Kind::Error)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
