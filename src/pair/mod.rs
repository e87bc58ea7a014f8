//! Pairing responses with the requests they answer, over a whole log, in bounded memory.
//!
//! A [`Pairing`] is fed the facts of one message at a time ([`Fact`]: kind, raw id,
//! method, tool, position, and when the log has them a direction and a timestamp) and hands
//! back what each one settles as [`Event`]s: a request answered ([`Event::Paired`]), a
//! response that answers nothing ([`Event::Orphan`]), a second request with an id still in
//! flight ([`Event::Duplicate`]), an error response with a `null` id
//! ([`Event::NullIdError`]), and at the end (or when the in-flight table is full, or a
//! request times out) the requests never answered ([`Event::Unanswered`],
//! [`Event::Cancelled`]). Every event about a request names its tool ([`Event::tool`]). A
//! [`Summary`] adds the events up per method and per tool, with latency percentiles at most
//! 1/128 above the true value ([`Latency`]); a caller that wants only the counts of pairs
//! feeds with [`Pairing::feed_counting`], which counts each answered request without
//! building it.
//!
//! ```
//! use rpcscan::pair::{Event, Fact, Pairing, Position, Summary};
//!
//! let log = [
//!     br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#.as_slice(),
//!     br#"{"jsonrpc":"2.0","id":"1","method":"ping"}"#,
//!     br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}"#,
//!     br#"{"jsonrpc":"2.0","id":2,"result":{}}"#,
//! ];
//! let mut pairing = Pairing::new();
//! let mut summary = Summary::new();
//! for (n, bytes) in log.iter().enumerate() {
//!     let msg = rpcscan::parse(bytes)?;
//!     let fact = Fact::of(&msg, Position { line: n as u64 + 1, offset: 0, input: 0 });
//!     pairing.feed(&fact, |event| {
//!         if let Event::Paired { request, .. } = &event {
//!             assert_eq!((&*request.method, request.tool.as_deref()), ("tools/call", Some("echo")));
//!         }
//!         summary.add(&event);
//!     });
//! }
//! pairing.finish(|event| summary.add(&event));
//! assert_eq!(summary.pairs, 1);
//! assert_eq!(summary.orphans, 1); // id 2 was never asked for
//! assert_eq!(summary.unanswered["ping"].count, 1); // `"1"` is not `1`
//! assert_eq!(summary.tools["echo"].errors[&b"-32602"[..]], 1);
//! # Ok::<(), rpcscan::Invalid<'static>>(())
//! ```
//!
//! ## The rules
//!
//! * **Id equality** is [`crate::Id`]'s: the decoded value. `1` never equals `"1"`,
//!   `"a\u0062"` equals `"ab"`, integers of any size compare by their exact digits, and
//!   `-0` equals `0` (JSON-RPC says ids should not have fractional parts, and `-0` is the
//!   same number as `0`; [`crate::Id`] makes the same choice, so a gateway and this log
//!   view agree).
//! * **Directions.** Give every fact a [`Direction`], or none. With directions, a response
//!   answers a request that travelled the other way, so a client's id 0 and a server's
//!   sampling request id 0 are two different requests; without, there is one id space.
//!   `notifications/cancelled` travels with its request, `notifications/progress` against it.
//!   [`Directions`] turns a log's two labels, whatever they are, into directions; only the
//!   facts whose direction the matcher reads ([`Fact::is_directed`]) name them, so an
//!   invalid line fed for its time never takes a side ([`Directions::direction_of`]).
//! * **Duplicates.** A request whose id is still in flight (same direction) is reported as
//!   [`Event::Duplicate`] and still waits: responses answer the waiting requests of an id
//!   first-in first-out. An id reused after its response is an ordinary new request.
//! * **`"id": null`** (or no id) on an error response answers no one: [`Event::NullIdError`].
//! * **Cancellation** (`notifications/cancelled` with `params.requestId`) marks the oldest
//!   waiting request with that id. A response may still come (then it is paired, with
//!   [`Request::cancelled`] set); if none does, the request ends as [`Event::Cancelled`],
//!   not [`Event::Unanswered`].
//! * **Progress** (`notifications/progress` with `params.progressToken`) counts towards the
//!   oldest waiting request whose `params._meta.progressToken` is equal (id rules).
//! * **Memory** holds only the requests in flight, each as its id key, raw id, position and
//!   timestamp, and its method and tool as numbers of names kept once ([`Name`]; at most
//!   [`MAX_KEYS`] names, a request with another keeps its own copy) (no copy of the message). At [`Pairing::max_in_flight`] the
//!   oldest request is evicted as unanswered. With [`Pairing::timeout`] and timestamps, each
//!   fact that carries a time first expires the oldest waiting requests (in arrival order)
//!   older than the timeout; a request without a timestamp never expires and stops the
//!   check at its place in the line.

mod event;
mod fact;
mod latency;
mod matcher;
mod names;
mod small;
mod summary;
mod table;

pub use event::{Ending, Event, Outcome, Request, Response};
pub use fact::{Direction, Directions, Fact, Position};
pub use latency::Latency;
pub use matcher::{Pairing, DEFAULT_MAX_IN_FLIGHT};
pub use names::Name;
pub use small::RawId;
pub use summary::{Named, Seen, Stat, Summary, FIRST_LINES, MAX_KEYS, OTHER};
