//! The five verdicts of docs/spec.md §1.

use core::fmt;
use core::str::FromStr;

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
    pub const ALL: [Kind; 5] =
        [Kind::Request, Kind::Notification, Kind::Result, Kind::Error, Kind::Invalid];

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

/// The name given to [`Kind`]'s `FromStr` is none of [`Kind::as_str`]'s names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownKind(String);

impl fmt::Display for UnknownKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown kind {:?} (expected request, notification, result, error or invalid)",
            self.0
        )
    }
}

impl std::error::Error for UnknownKind {}

impl FromStr for Kind {
    type Err = UnknownKind;

    /// Accepts exactly the names of [`Kind::as_str`] (lower case).
    ///
    /// ```
    /// use rpcscan::Kind;
    /// assert_eq!("notification".parse::<Kind>(), Ok(Kind::Notification));
    /// assert!("response".parse::<Kind>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Kind::ALL.into_iter().find(|k| k.as_str() == s).ok_or_else(|| UnknownKind(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for kind in Kind::ALL {
            assert_eq!(kind.as_str().parse(), Ok(kind));
            assert_eq!(kind.to_string(), kind.as_str());
        }
    }

    #[test]
    fn unknown_names_are_rejected() {
        for name in ["", "Request", "REQUEST", " request", "request ", "response", "valid"] {
            let err = name.parse::<Kind>().unwrap_err();
            assert_eq!(err, UnknownKind(name.to_owned()));
            assert!(err.to_string().contains(&format!("{name:?}")));
        }
    }
}
