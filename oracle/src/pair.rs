//! The pairing reference: which response answers which request in a log, computed the
//! plain way (a list of waiting requests in arrival order, searched front to back) from the
//! oracle's own verdicts. `rpcscan::pair` must report exactly the same [`PairEvent`]s.
//!
//! The rules (the library's module docs explain them): ids are equal when their decoded
//! values are (`1` is not `"1"`, `-0` is `0`); with directions a response answers a request
//! that travelled the other way, `notifications/cancelled` travels with its request and
//! `notifications/progress` against it; a request whose id is still waiting is a duplicate
//! and waits behind the earlier one; the oldest waiting request is evicted when the table
//! is full, and expired when a timed entry comes more than the timeout after it.
//!
//! ```
//! use rpcscan_oracle::pair::{pair, Entry, PairEvent};
//!
//! let log = [
//!     Entry::new(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
//!     Entry::new(br#"{"jsonrpc":"2.0","id":"1","result":{}}"#),
//! ];
//! let events = pair(&log, usize::MAX, None);
//! assert_eq!(events[0], PairEvent::Orphan(1));
//! assert!(matches!(events[1], PairEvent::Unanswered { at: 0, ending: "finished" }));
//! ```
//!
//! A string id holding a lone surrogate escape has no decoded `String`; the reference
//! compares such ids by their raw text, so the generators never produce them.

use crate::json::{decode_string, is_integer, is_string, members};
use crate::{classify, Kind};

/// One message of a log: which way it went and when, when the log says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// `Some(true)` one way, `Some(false)` the other, `None` when unknown.
    pub direction: Option<bool>,
    /// Milliseconds since the Unix epoch, when known.
    pub time_ms: Option<u64>,
    /// The message.
    pub bytes: Vec<u8>,
}

impl Entry {
    /// A message with no direction and no time.
    pub fn new(bytes: &[u8]) -> Entry {
        Entry { direction: None, time_ms: None, bytes: bytes.to_vec() }
    }
}

/// What the reference reports; positions are indexes into the log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PairEvent {
    /// A response answered a request.
    Paired {
        /// The request.
        request: usize,
        /// The response.
        response: usize,
        /// The request's decoded method.
        method: String,
        /// `params.name` of a `tools/call`.
        tool: Option<String>,
        /// Raw `error.code` for an error response (`None` for a result).
        code: Option<String>,
        /// Progress notifications counted for the request.
        progress: u64,
        /// A cancel named the request before its response.
        cancelled: bool,
        /// Response time minus request time (0 at least), when both are known.
        latency_ms: Option<u64>,
    },
    /// A response no waiting request matches.
    Orphan(usize),
    /// A request whose id is still waiting.
    Duplicate {
        /// The request.
        at: usize,
        /// The oldest waiting request with the same id.
        earlier: usize,
    },
    /// An error response with a `null` or absent id.
    NullIdError(usize),
    /// A request never answered: `"finished"`, `"evicted"` or `"timed_out"`.
    Unanswered {
        /// The request.
        at: usize,
        /// Why it left.
        ending: &'static str,
    },
    /// A cancelled request never answered.
    Cancelled {
        /// The request.
        at: usize,
        /// Why it left.
        ending: &'static str,
    },
    /// A progress notification no waiting request's token matches.
    StrayProgress(usize),
    /// A cancel notification no waiting request's id matches.
    StrayCancel(usize),
}

/// An id's decoded value (progress tokens and `requestId` have the same shape).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Key {
    Integer(String),
    Text(String),
    /// A string with a lone surrogate escape: raw text.
    Undecodable(String),
}

fn key(raw: &str) -> Option<Key> {
    if is_integer(raw) {
        let value = if raw == "-0" { "0" } else { raw };
        Some(Key::Integer(value.to_owned()))
    } else if is_string(raw) {
        Some(decode_string(raw).map_or_else(|| Key::Undecodable(raw.to_owned()), Key::Text))
    } else {
        None
    }
}

/// The value of `name` in `object`, when it is there exactly once.
fn member<'a>(object: &'a str, name: &str) -> Option<&'a str> {
    let all = members(object)?;
    let mut found = all.iter().filter(|m| m.key().as_deref() == Some(name));
    let first = found.next()?;
    found.next().is_none().then_some(first.value)
}

struct Waiting {
    at: usize,
    /// The direction it travelled (`None`: unknown).
    direction: Option<bool>,
    id: Key,
    token: Option<Key>,
    method: String,
    tool: Option<String>,
    time_ms: Option<u64>,
    progress: u64,
    cancelled: bool,
}

fn ended(w: Waiting, ending: &'static str) -> PairEvent {
    if w.cancelled {
        PairEvent::Cancelled { at: w.at, ending }
    } else {
        PairEvent::Unanswered { at: w.at, ending }
    }
}

/// Pairs a whole log. `max_in_flight` is clamped to at least 1.
pub fn pair(log: &[Entry], max_in_flight: usize, timeout_ms: Option<u64>) -> Vec<PairEvent> {
    let max_in_flight = max_in_flight.max(1);
    let mut events = Vec::new();
    let mut waiting: Vec<Waiting> = Vec::new();
    for (at, entry) in log.iter().enumerate() {
        if let (Some(timeout), Some(now)) = (timeout_ms, entry.time_ms) {
            while waiting
                .first()
                .and_then(|w| w.time_ms)
                .is_some_and(|sent| now.saturating_sub(sent) > timeout)
            {
                events.push(ended(waiting.remove(0), "timed_out"));
            }
        }
        let verdict = classify(&entry.bytes);
        let text = std::str::from_utf8(&entry.bytes).unwrap_or("");
        let params = member(text, "params");
        let reverse = entry.direction.map(|d| !d);
        match verdict.kind {
            Kind::Request => {
                let Some(id) = verdict.id.as_deref().and_then(key) else {
                    continue;
                };
                if waiting.len() >= max_in_flight {
                    events.push(ended(waiting.remove(0), "evicted"));
                }
                if let Some(earlier) =
                    waiting.iter().find(|w| w.direction == entry.direction && w.id == id)
                {
                    events.push(PairEvent::Duplicate { at, earlier: earlier.at });
                }
                let method = verdict.method.clone().unwrap_or_default();
                let tool = params
                    .filter(|_| method == "tools/call")
                    .and_then(|p| member(p, "name"))
                    .and_then(decode_string);
                let token = params
                    .and_then(|p| member(p, "_meta"))
                    .and_then(|m| member(m, "progressToken"))
                    .and_then(key);
                waiting.push(Waiting {
                    at,
                    direction: entry.direction,
                    id,
                    token,
                    method,
                    tool,
                    time_ms: entry.time_ms,
                    progress: 0,
                    cancelled: false,
                });
            }
            Kind::Result | Kind::Error => {
                let Some(id) = verdict.id.as_deref().and_then(key) else {
                    events.push(PairEvent::NullIdError(at));
                    continue;
                };
                let found = waiting.iter().position(|w| w.direction == reverse && w.id == id);
                match found {
                    Some(i) => {
                        let w = waiting.remove(i);
                        let latency_ms = match (w.time_ms, entry.time_ms) {
                            (Some(sent), Some(seen)) => Some(seen.saturating_sub(sent)),
                            _ => None,
                        };
                        events.push(PairEvent::Paired {
                            request: w.at,
                            response: at,
                            method: w.method,
                            tool: w.tool,
                            code: verdict.error_code.clone(),
                            progress: w.progress,
                            cancelled: w.cancelled,
                            latency_ms,
                        });
                    }
                    None => events.push(PairEvent::Orphan(at)),
                }
            }
            Kind::Notification => {
                let method = verdict.method.as_deref();
                if method == Some("notifications/cancelled") {
                    let Some(id) = params.and_then(|p| member(p, "requestId")).and_then(key) else {
                        continue;
                    };
                    match waiting.iter_mut().find(|w| w.direction == entry.direction && w.id == id)
                    {
                        Some(w) => w.cancelled = true,
                        None => events.push(PairEvent::StrayCancel(at)),
                    }
                } else if method == Some("notifications/progress") {
                    let Some(token) = params.and_then(|p| member(p, "progressToken")).and_then(key)
                    else {
                        continue;
                    };
                    match waiting
                        .iter_mut()
                        .find(|w| w.direction == reverse && w.token.as_ref() == Some(&token))
                    {
                        Some(w) => w.progress += 1,
                        None => events.push(PairEvent::StrayProgress(at)),
                    }
                }
            }
            Kind::Invalid => {}
        }
    }
    events.extend(waiting.into_iter().map(|w| ended(w, "finished")));
    events
}
