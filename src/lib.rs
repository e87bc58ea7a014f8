//! # rpcscan
//!
//! A borrowing, streaming scanner for JSON-RPC 2.0 and MCP messages. It walks the top level
//! of a message once, finds the `jsonrpc` / `id` / `method` / `params` / `result` / `error`
//! members, validates what it must, skips the rest, and hands back borrowed slices: no tree,
//! no copy, no allocation.
//!
//! ```
//! use rpcscan::{Kind, Reason};
//!
//! let msg = rpcscan::parse(br#"{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/call","params":{"name":"x"}}"#)?;
//! assert_eq!(msg.kind(), Kind::Request);
//! assert_eq!(msg.id().unwrap().raw(), b"9007199254740993"); // above 2^53, not rounded
//! assert!(msg.method().unwrap() == "tools/call");
//!
//! // `"id": null` is not a notification.
//! let bad = rpcscan::parse(br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#).unwrap_err();
//! assert_eq!((bad.reason(), bad.code()), (Reason::BadId, -32600));
//! # Ok::<(), rpcscan::Invalid<'static>>(())
//! ```
//!
//! ## The contract
//!
//! Verdicts follow the project's rule book (docs/spec.md): five kinds ([`Kind`]), strict
//! RFC 8259 + UTF-8 validation by default ([`Validation::Strict`]), an envelope mode that
//! only structurally scans values it does not read ([`Validation::Envelope`]), and a named
//! [`Reason`] with its JSON-RPC code for every invalid message.
//!
//! Choices this crate makes where the rule book is silent:
//!
//! * **Reason order.** When a message breaks several envelope rules, the reason reported is
//!   the first in this order: `duplicate_key`, `bad_version`; then with `method`:
//!   `bad_method`, `method_with_response`, `bad_params`, `bad_id`; without it:
//!   `result_and_error`, `no_result_or_error`, then `bad_id` (result) or `bad_error_object`
//!   followed by `bad_id` (error). Any JSON-level failure anywhere in the message wins over
//!   all of them (-32700 before -32600).
//! * **Offsets.** The reported offset is the first byte that cannot start or continue the
//!   grammar; when the input ends too early it is the input's length. A byte that starts no
//!   valid UTF-8 sequence is reported as `invalid_utf8`, even where no JSON token could
//!   stand (`\xff` alone). `empty` reports the length of the whitespace.
//! * **Repeated `error.data`** is allowed (only `code` and `message` must be unique);
//!   [`Message::error_data`] returns the first.
//! * **Depth.** [`Parser::max_depth`] is clamped to [`MAX_DEPTH_LIMIT`] (4096) so depth
//!   tracking needs no allocation. Messages over 4 GiB are `too_large`.
//! * **Batch mode.** [`Parser::batch`] validates the whole array before yielding elements
//!   (a broken batch gets the single -32700 answer JSON-RPC prescribes); an element that is
//!   an array or a scalar is `not_an_object`; a top-level value that is not an array is
//!   also reported as `not_an_object`.
//! * **Envelope mode** still checks numbers and literals that stand directly as member
//!   values (they are short); only containers and strings it does not read are skipped
//!   structurally.
//! * **Verdicts never depend on the CPU.** Strict mode first tries a fast path (64-byte
//!   blocks: a token stream with string contents, escapes and UTF-8 checked in bulk, then the
//!   grammar walked over the tokens); it only ever accepts. Anything it doubts goes to the
//!   exact byte-by-byte path, which alone decides reasons and offsets, so every kernel level
//!   (`RPCSCAN_FORCE`, [`kernel_level`]) gives identical answers.
//!
//! ## Map of the crate
//!
//! | module | what it is |
//! |---|---|
//! | [`Kind`], [`Parser`], [`Validation`] | the verdicts and the options |
//! | [`Message`], [`Raw`] | the borrowed view of a valid message |
//! | [`Id`], [`ErrorCode`], [`Str`] | ids, codes and strings: raw bytes plus typed access |
//! | [`Invalid`], [`Reason`] | why a message is invalid, with code, offset and id |
//! | [`response`] | error responses echoing raw ids into any `BufMut` |
//! | [`json`] | the strict RFC 8259 validator on its own |
//! | [`frame`], [`OwnedMessage`] | byte streams → frames (NDJSON, Content-Length, SSE, json-seq); owned messages |
//! | [`mcp`], [`rewrite`], [`Field`] | gateway toolkit: MCP routing keys and header checks, id rewriting and correlation |
//! | [`pair`] | responses matched to their requests over a whole log: pairs, orphans, duplicates, unanswered |
//! | [`recover`] | the top-level id of a message too large to hold, found while it streams past |
#![deny(missing_docs, clippy::undocumented_unsafe_blocks)]
#![deny(unsafe_code)]

mod batch;
mod dispatch;
mod error;
pub mod frame;
mod id;
mod invalid;
pub mod json;
mod kind;
mod limits;
pub mod mcp;
mod message;
mod owned;
pub mod pair;
mod parser;
pub mod recover;
pub mod response;
pub mod rewrite;
mod scan;
mod simd;
mod text;

pub use batch::Batch;
pub use id::{ErrorCode, Id};
pub use invalid::{Invalid, Reason, UnknownReason};
pub use kind::{Kind, UnknownKind};
pub use limits::{DEFAULT_MAX_DEPTH, MAX_DEPTH_LIMIT};
pub use message::{Answer, Field, Members, Message, Raw};
pub use owned::{OwnedInvalid, OwnedMessage};
pub use parser::{Parser, UnknownValidation, Validation};
pub use simd::{kernel_level, KernelLevel};
pub use text::{DecodeError, Str};

/// The strict verdict on one message (`Parser::new().classify(msg)`).
///
/// ```
/// assert_eq!(rpcscan::classify(br#"{"jsonrpc":"2.0","result":null,"id":3}"#), rpcscan::Kind::Result);
/// ```
#[inline]
pub fn classify(msg: &[u8]) -> Kind {
    Parser::new().classify(msg)
}

/// Scans one message strictly (`Parser::new().parse(msg)`).
#[inline]
pub fn parse(msg: &[u8]) -> Result<Message<'_>, Invalid<'_>> {
    Parser::new().parse(msg)
}

/// The README's Rust examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
