//! The one reference classifier of rpcscan (docs/spec.md §8), and the generators that feed it.
//!
//! Obviously correct rather than fast: serde_json does the JSON grammar, reading every
//! member as a [`serde_json::value::RawValue`] so that nothing is decoded, merged or
//! rounded; the envelope rules are then applied to raw literal text, one rule per line.
//! Tests, benchmarks and fuzz targets of rpcscan all compare against [`classify`] and
//! [`validate_json`]; both are total (any bytes, no panic, no deep recursion).
//!
//! ```
//! use rpcscan_oracle::{classify, Kind};
//!
//! let v = classify(br#"{"jsonrpc":"2.0","method":"ping","id":18446744073709551617}"#);
//! assert_eq!(v.kind, Kind::Request);
//! assert_eq!(v.id.as_deref(), Some("18446744073709551617"));
//!
//! let v = classify(br#"{"jsonrpc":"2.0","method":"ping","id":null}"#);
//! assert_eq!((v.kind, v.code, v.reason), (Kind::Invalid, Some(-32600), Some("bad_id")));
//! ```
//!
//! Map of the crate:
//! - [`json`]: strict JSON validity (docs/spec.md §2) and literal helpers;
//! - `classify`: the envelope rules (docs/spec.md §3, §4) → [`Verdict`];
//! - [`corpus`]: deterministic, realistic MCP NDJSON traffic for benches and examples;
//! - [`gen`]: nasty near-valid messages and byte mutations for property tests and fuzzing;
//! - [`rng`]: the splitmix64 generator both of them use;
//! - [`pair`], [`pairlog`]: the response-to-request pairing reference and its logs;
//! - [`suite`]: the JSONTestSuite files and the docs/spec.md §2 stance on each `i_` file;
//! - [`table`]: the rule book's examples with their verdicts, checked against this oracle
//!   and against the scanner.

#![deny(missing_docs)]

mod classify;
pub mod corpus;
pub mod gen;
pub mod json;
pub mod pair;
pub mod pairlog;
pub mod rng;
pub mod suite;
pub mod table;

pub use classify::{classify, INVALID_REQUEST, PARSE_ERROR};
pub use json::validate_json;

/// The five verdicts of docs/spec.md §1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `method` and an `id`.
    Request,
    /// `method` and no `id` member.
    Notification,
    /// `result` and an `id`.
    Result,
    /// `error` object; `id` string, integer, `null` or absent.
    Error,
    /// Anything else; see [`Verdict::code`] and [`Verdict::reason`].
    Invalid,
}

impl Kind {
    /// Lower-case name, as the CLI and `--json` print it.
    pub fn as_str(&self) -> &'static str {
        match self {
            Kind::Request => "request",
            Kind::Notification => "notification",
            Kind::Result => "result",
            Kind::Error => "error",
            Kind::Invalid => "invalid",
        }
    }
}

/// The oracle's full answer for one message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// The kind.
    pub kind: Kind,
    /// `Some(-32700)` or `Some(-32600)` when invalid, else `None`.
    pub code: Option<i64>,
    /// For `-32600`: the exact docs/spec.md §4 reason name. For `-32700`: only the family is
    /// judged, so this is `"empty"` for whitespace-only input and `"parse"` otherwise.
    pub reason: Option<&'static str>,
    /// Raw id text exactly as in the bytes: the `id` member of a valid message (`"null"`
    /// for an error response with a null id); for `-32600` the recovered id (exactly one
    /// top-level `id`, a string or integer literal); otherwise `None`.
    pub id: Option<String>,
    /// The decoded `method` of a request or notification; `None` when it holds a lone
    /// surrogate escape (valid JSON, but no `str`).
    pub method: Option<String>,
    /// Raw text of `error.code` for an error response.
    pub error_code: Option<String>,
}

impl Verdict {
    /// True for the four valid kinds.
    pub fn is_valid(&self) -> bool {
        self.kind != Kind::Invalid
    }
}
