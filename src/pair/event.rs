//! What the matcher reports: [`Event`]s, and the [`Request`]s and [`Response`]s they are
//! about.

use std::time::Duration;

use super::{Direction, Name, Position, RawId};

/// A request the matcher remembered: what [`Event::Paired`], [`Event::Unanswered`] and
/// [`Event::Cancelled`] report about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// The raw id, exactly as sent.
    pub id: RawId,
    /// The decoded method (shared among the requests of a method).
    pub method: Name,
    /// The tool of a `tools/call` (shared likewise).
    pub tool: Option<Name>,
    /// Where the request is.
    pub at: Position,
    /// When it was sent, if known.
    pub time: Option<Duration>,
    /// Which way it travelled, if known.
    pub direction: Option<Direction>,
    /// `notifications/progress` received for it.
    pub progress: u64,
    /// A `notifications/cancelled` named it.
    pub cancelled: bool,
}

/// How a response ended its request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome<'f> {
    /// A success response.
    Result,
    /// An error response, with its raw `error.code`.
    Error(Option<&'f [u8]>),
}

/// A response, as the events report it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Response<'f> {
    /// The raw id, exactly as sent (`None` when the error response has no id member).
    pub id: Option<&'f [u8]>,
    /// Where the response is.
    pub at: Position,
    /// Success or error.
    pub outcome: Outcome<'f>,
    /// When it was seen, if known.
    pub time: Option<Duration>,
}

/// Why a request left the table without a response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// The log ended ([`Pairing::finish`](super::Pairing::finish)).
    Finished,
    /// The table held [`Pairing::max_in_flight`](super::Pairing::max_in_flight) requests
    /// and this was the oldest.
    Evicted,
    /// It waited longer than [`Pairing::timeout`](super::Pairing::timeout).
    TimedOut,
}

/// What a message (or the end of the log) settled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event<'f> {
    /// A response answered a request.
    Paired {
        /// The request, with its progress count.
        request: Request,
        /// The response.
        response: Response<'f>,
        /// Response time minus request time, when both are known (zero when the clocks
        /// disagree the wrong way).
        latency: Option<Duration>,
    },
    /// A response with an id no waiting request has (answered already, never sent, or
    /// sent after it).
    Orphan(Response<'f>),
    /// A request whose id is still in flight; it waits behind the earlier one.
    Duplicate {
        /// The raw id.
        id: &'f [u8],
        /// The decoded method.
        method: &'f str,
        /// The tool of a `tools/call`, as [`Request::tool`] names it in this request's later
        /// events.
        tool: Option<&'f str>,
        /// Where this request is.
        at: Position,
        /// Where the oldest waiting request with the same id is.
        earlier: Position,
    },
    /// An error response with a `null` id (or none): it answers no one.
    NullIdError(Response<'f>),
    /// A request that got no response.
    Unanswered {
        /// The request.
        request: Request,
        /// Why it left the table.
        ending: Ending,
    },
    /// A cancelled request that got no response.
    Cancelled {
        /// The request.
        request: Request,
        /// Why it left the table.
        ending: Ending,
    },
    /// A `notifications/progress` whose token no waiting request carries.
    StrayProgress(Position),
    /// A `notifications/cancelled` whose `requestId` no waiting request has.
    StrayCancel(Position),
}

impl Event<'_> {
    /// The tool of the `tools/call` request the event is about: every event about a request
    /// names it ([`Event::Paired`], [`Event::Duplicate`], [`Event::Unanswered`],
    /// [`Event::Cancelled`]), so that a report can give each of its lines the tool.
    pub fn tool(&self) -> Option<&str> {
        match self {
            Event::Paired { request, .. }
            | Event::Unanswered { request, .. }
            | Event::Cancelled { request, .. } => request.tool.as_deref(),
            Event::Duplicate { tool, .. } => *tool,
            Event::Orphan(_)
            | Event::NullIdError(_)
            | Event::StrayProgress(_)
            | Event::StrayCancel(_) => None,
        }
    }
}
