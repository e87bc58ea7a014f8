//! What the proxy does with each message: the decisions, with no I/O. Each call appends
//! whole lines (message and `\n`) to the buffers of [`Out`]; the caller sends them.
//!
//! Client → server: invalid lines are answered -32700/-32600 with the recovered id
//! (docs/spec.md §4); requests pass the [`Policy`] and the in-flight bound, then get a fresh
//! integer id ([`Correlation::forward`]); `notifications/cancelled` has its `requestId`
//! rewritten to that id and takes the request out of the table; everything else goes
//! through untouched.
//!
//! Server → client: responses get their original id back ([`Correlation::restore`]); a
//! response to a cancelled request, or with an unknown id, is dropped and logged; invalid
//! lines are logged and dropped; requests and notifications go through untouched.
//!
//! Oversized lines (docs/spec.md §7) are answered at once with the id an [`IdRecovery`]
//! found while they streamed past.

use std::collections::{HashSet, VecDeque};
use std::ops::Range;
use std::sync::{Mutex, MutexGuard, PoisonError};

use bytes::{BufMut, BytesMut};
use rpcscan::frame::FrameError;
use rpcscan::recover::IdRecovery;
use rpcscan::response::{
    write_json_string, ErrorResponse, INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, PARSE_ERROR,
};
use rpcscan::rewrite::{self, Correlation};
use rpcscan::{Id, Kind, Message, Parser};

use crate::log::{Event, Log, Traffic};
use crate::policy::{Denial, Policy};

/// -32000 (a JSON-RPC implementation-defined server error): `--max-in-flight` reached.
pub const OVERLOADED: i64 = -32000;

/// Which way an answer of the proxy's own travels, as the log labels it.
#[derive(Clone, Copy)]
enum Dir {
    ToClient,
    ToServer,
}

impl Dir {
    fn label(self) -> &'static str {
        match self {
            Dir::ToClient => "s2c",
            Dir::ToServer => "c2s",
        }
    }
}

const SERVER_GONE: &[u8] = br#"{"reason": "the MCP server exited before responding"}"#;

/// How many cancelled downstream ids are remembered, to drop their late responses quietly.
const CANCELLED_KEPT: usize = 4096;

/// Lines to send, appended by the routing calls; and, between [`Out::release`] calls, the
/// lock on the router's state, taken by the first message that needs it and then kept for
/// the rest of the batch (one lock per batch, not per message: the two relaying threads
/// would otherwise fight over it at every message).
///
/// What goes to the client is `to_client` with, interleaved, the long parts of lines that
/// are still in the read buffer they came in ([`Out::from_read`]): a restored answer is
/// written from where it was read, its original id spliced in as a part of its own (one
/// `writev`), not copied into `to_client` first.
#[derive(Default)]
pub struct Out<'r> {
    pub to_server: BytesMut,
    pub to_client: BytesMut,
    /// Parts of the client's output left in the read buffer, in order: how many bytes of
    /// `to_client` come before each, and where it is in the read buffer.
    pub from_read: Vec<(usize, Range<usize>)>,
    held: Option<MutexGuard<'r, State>>,
}

/// Where a line lies in the relaying thread's read buffer: its offset, and whether a `\n`
/// follows it there (its content was not cut short by a stripped `\r`).
#[derive(Clone, Copy)]
pub struct InRead {
    pub at: usize,
    pub newline: bool,
}

/// Parts shorter than this are copied into `to_client` (an `iovec` costs more).
const FROM_READ_MIN: usize = 1024;

/// Most parts left in the read buffer per write (`IOV_MAX` is 1,024; each part costs two).
const FROM_READ_MAX: usize = 256;

impl Out<'_> {
    /// Lets the other thread have the router's state (before any write or read, which may
    /// block).
    pub fn release(&mut self) {
        self.held = None;
    }

    /// Appends the bytes `range` of the read buffer, `part`, to the client's output: left
    /// where it is when long (then `true`), else copied.
    fn client_part(&mut self, part: &[u8], range: Range<usize>) -> bool {
        if part.len() >= FROM_READ_MIN && self.from_read.len() < FROM_READ_MAX {
            self.from_read.push((self.to_client.len(), range));
            true
        } else {
            self.to_client.put_slice(part);
            false
        }
    }

    /// Appends `line` (in the read buffer at `place`) from `head` on, and a `\n`, to the
    /// client's output (`head` is where `tail` starts in `line`).
    fn client_tail(&mut self, line: &[u8], head: usize, place: InRead) {
        let tail = line.get(head..).unwrap_or_default();
        let (start, end) = (place.at + head, place.at + line.len());
        // The `\n` after it in the read buffer goes with it, unless it is copied.
        let newline = usize::from(place.newline);
        if !self.client_part(tail, start..end + newline) || !place.newline {
            self.to_client.put_u8(b'\n');
        }
    }
}

/// The proxy's settings and its one piece of shared state.
pub struct Router {
    pub policy: Policy,
    pub max_message_size: usize,
    pub max_in_flight: usize,
    pub log: Log,
    parser: Parser,
    state: Mutex<State>,
}

struct State {
    table: Correlation<()>,
    cancelled: Cancelled,
    server_gone: bool,
}

/// Downstream ids of cancelled requests, oldest forgotten first.
#[derive(Default)]
struct Cancelled {
    order: VecDeque<u64>,
    ids: HashSet<u64>,
}

impl Cancelled {
    fn insert(&mut self, id: u64) {
        if self.order.len() >= CANCELLED_KEPT {
            if let Some(old) = self.order.pop_front() {
                self.ids.remove(&old);
            }
        }
        if self.ids.insert(id) {
            self.order.push_back(id);
        }
    }

    fn take(&mut self, id: &Id<'_>) -> bool {
        id.as_u64().is_some_and(|n| self.ids.remove(&n))
    }
}

/// Re-reads an integer id written by the table (for [`Correlation::remove`]).
fn with_integer_id<T>(raw: &[u8], f: impl FnOnce(&Id<'_>) -> T) -> Option<T> {
    let mut msg = Vec::with_capacity(48);
    msg.extend_from_slice(br#"{"jsonrpc":"2.0","result":0,"id":"#);
    msg.extend_from_slice(raw);
    msg.push(b'}');
    let parsed = rpcscan::parse(&msg).ok()?;
    Some(f(&parsed.id()?))
}

impl Router {
    pub fn new(policy: Policy, max_message_size: usize, max_in_flight: usize, log: Log) -> Self {
        Router {
            // The tool policy reads `params.name` of every `tools/call`: noted by the scan.
            parser: Parser::new().note_params_name(policy.has_tool_rules()),
            policy,
            max_message_size,
            max_in_flight,
            log,
            state: Mutex::new(State {
                table: Correlation::new(),
                cancelled: Cancelled::default(),
                server_gone: false,
            }),
        }
    }

    /// The state, locked until `held` is released.
    fn state<'r, 'o>(&'r self, held: &'o mut Option<MutexGuard<'r, State>>) -> &'o mut State {
        held.get_or_insert_with(|| self.state.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Writes an answer to `buf` as one line, and logs the decision (a `proxy` record) and
    /// the answer as its receiver gets it: `s2c` towards the client, `c2s` towards the
    /// server, `"origin":"proxy"` (pairing reads only those two directions).
    fn answer(&self, buf: &mut BytesMut, dir: Dir, response: ErrorResponse<'_>, event: Event<'_>) {
        let start = buf.len();
        response.write(buf);
        let written = buf.get(start..);
        self.log.event(Event { msg: written, ..event });
        if let Some(msg) = written {
            self.log.traffic(Traffic { origin: Some("proxy"), ..Traffic::new(dir.label(), msg) });
        }
        buf.put_u8(b'\n');
    }

    /// One line from the client.
    pub fn client_line<'r>(&'r self, line: &[u8], out: &mut Out<'r>) {
        let msg = match self.parser.parse(line) {
            Ok(msg) => msg,
            Err(invalid) => {
                let id = invalid.id();
                // What the client sent, for its answer to have something to answer.
                self.log.traffic(Traffic { unreadable: true, ..Traffic::new("c2s", line) });
                self.answer(
                    &mut out.to_client,
                    Dir::ToClient,
                    invalid.response(),
                    Event {
                        from: Some("client"),
                        id: id.map(|id| id.raw()),
                        reason: Some(invalid.reason().as_str()),
                        raw: Some(line),
                        code: Some(invalid.code()),
                        ..Event::new("invalid")
                    },
                );
                return;
            }
        };
        self.log.message("c2s", line);
        match msg.kind() {
            Kind::Request => self.client_request(&msg, out),
            Kind::Notification => self.client_notification(&msg, out),
            _ => {
                // A response to a server-initiated request: its id is the server's own.
                out.to_server.put_slice(line);
                out.to_server.put_u8(b'\n');
            }
        }
    }

    fn client_request<'r>(&'r self, msg: &Message<'_>, out: &mut Out<'r>) {
        let id = msg.id().map_or(&b"null"[..], |id| id.raw());
        if let Err(denial) = self.policy.check(msg) {
            let mut data = Vec::new();
            let (response, reason) = match &denial {
                Denial::Method => (
                    ErrorResponse::standard(METHOD_NOT_FOUND),
                    "method not allowed by the proxy's policy".to_owned(),
                ),
                Denial::Tool(tool) => {
                    data.extend_from_slice(b"{\"reason\": \"tool not allowed by the proxy's policy\", \"tool\": ");
                    write_json_string(&mut data, tool);
                    data.push(b'}');
                    (
                        ErrorResponse::new(INVALID_PARAMS, "Unknown tool").data(&data),
                        format!("tool {tool:?} not allowed"),
                    )
                }
                Denial::NoToolName => (
                    ErrorResponse::standard(INVALID_PARAMS).data(
                        br#"{"reason": "params.name must be one string for the proxy's tool policy"}"#,
                    ),
                    "no single tool name".to_owned(),
                ),
            };
            self.answer(
                &mut out.to_client,
                Dir::ToClient,
                response.id(id),
                Event {
                    from: Some("client"),
                    id: Some(id),
                    reason: Some(&reason),
                    ..Event::new("denied")
                },
            );
            return;
        }
        let state = self.state(&mut out.held);
        if state.server_gone {
            self.answer(
                &mut out.to_client,
                Dir::ToClient,
                ErrorResponse::standard(INTERNAL_ERROR).id(id).data(SERVER_GONE),
                Event { from: Some("client"), id: Some(id), ..Event::new("server_gone") },
            );
            return;
        }
        if state.table.len() >= self.max_in_flight {
            let data = format!(
                r#"{{"reason": "too many requests in flight", "max_in_flight": {}}}"#,
                self.max_in_flight
            );
            self.answer(
                &mut out.to_client,
                Dir::ToClient,
                ErrorResponse::new(OVERLOADED, "Too many requests in flight")
                    .id(id)
                    .data(data.as_bytes()),
                Event { from: Some("client"), id: Some(id), ..Event::new("overloaded") },
            );
            return;
        }
        state.table.forward((), msg, &mut out.to_server);
        out.to_server.put_u8(b'\n');
    }

    fn client_notification<'r>(&'r self, msg: &Message<'_>, out: &mut Out<'r>) {
        let line = msg.as_bytes();
        if self.policy.check(msg).is_err() {
            self.log.event(Event {
                from: Some("client"),
                reason: Some("method not allowed by the proxy's policy (not forwarded)"),
                msg: Some(line),
                ..Event::new("denied")
            });
            return;
        }
        if !msg.method().is_some_and(|m| m == "notifications/cancelled") {
            out.to_server.put_slice(line);
            out.to_server.put_u8(b'\n');
            return;
        }
        let field = msg.params().map(|p| p.get("requestId"));
        let Some((at, asked)) = field.and_then(|f| f.unique()).and_then(|v| Some((v, v.as_id()?)))
        else {
            // Malformed: the server will make of it what it can.
            out.to_server.put_slice(line);
            out.to_server.put_u8(b'\n');
            return;
        };
        let state = self.state(&mut out.held);
        let Some(pending) = state.table.find(&(), &asked) else {
            self.log.event(Event {
                from: Some("client"),
                id: Some(asked.raw()),
                reason: Some("cancellation of a request not in flight (not forwarded)"),
                ..Event::new("dropped")
            });
            return;
        };
        let downstream = pending.downstream_id().raw().to_vec();
        rewrite::write_replacing(line, at, &downstream, &mut out.to_server);
        out.to_server.put_u8(b'\n');
        // A cancelled request gets no response (MCP): forget it, and drop a late one.
        with_integer_id(&downstream, |id| state.table.remove(id));
        if let Some(n) = with_integer_id(&downstream, |id| id.as_u64()).flatten() {
            state.cancelled.insert(n);
        }
        self.log.event(Event {
            from: Some("client"),
            id: Some(asked.raw()),
            ..Event::new("cancelled")
        });
    }

    /// An oversized line from the client, with what the recovery found in it.
    pub fn client_oversized<'r>(
        &'r self,
        err: &FrameError,
        found: Option<&IdRecovery>,
        out: &mut Out<'r>,
    ) {
        let id = found.and_then(IdRecovery::finish).filter(|id| !id.is_null());
        let is_response =
            found.is_some_and(|r| !r.saw_method() && (r.saw_result() || r.saw_error()));
        let reason =
            format!("the message exceeded --max-message-size ({} bytes)", self.max_message_size);
        let data = oversize_data(&reason, err.len(), self.max_message_size);
        let event = |id| oversized("client", id, &reason, err.len());
        match id {
            // A response to a server-initiated request: the server must not wait for it.
            Some(id) if is_response => {
                self.answer(
                    &mut out.to_server,
                    Dir::ToServer,
                    ErrorResponse::standard(INTERNAL_ERROR).id(id.raw()).data(&data),
                    event(Some(id.raw())),
                );
            }
            Some(id) => self.answer(
                &mut out.to_client,
                Dir::ToClient,
                ErrorResponse::standard(PARSE_ERROR).id(id.raw()).data(&data),
                event(Some(id.raw())),
            ),
            // A notification (no id, a method): nothing to answer.
            None if found.is_some_and(IdRecovery::saw_method) => self.log.event(event(None)),
            None => self.answer(
                &mut out.to_client,
                Dir::ToClient,
                ErrorResponse::standard(PARSE_ERROR).data(&data),
                event(None),
            ),
        }
    }

    /// One line from the server (`place`: where it lies in the read buffer, when it does).
    pub fn server_line<'r>(&'r self, line: &[u8], place: Option<InRead>, out: &mut Out<'r>) {
        let msg = match self.parser.parse(line) {
            Ok(msg) => msg,
            Err(invalid) => {
                self.log.event(Event {
                    from: Some("server"),
                    reason: Some(invalid.reason().as_str()),
                    raw: Some(line),
                    code: Some(invalid.code()),
                    ..Event::new("invalid")
                });
                eprintln!("rpcscan proxy: dropping an invalid line from the server: {invalid}");
                return;
            }
        };
        if !matches!(msg.kind(), Kind::Result | Kind::Error) {
            self.to_client(line, place, out);
            return;
        }
        let state = self.state(&mut out.held);
        if let Some(pending) = msg.id().and_then(|id| state.table.remove(&id)) {
            self.restored(&msg, line, place, pending.original_id(), out);
            return;
        }
        let Some(id) = msg.id().filter(|id| !id.is_null()) else {
            // An error about a request the server could not read: the client's business.
            self.to_client(line, place, out);
            return;
        };
        let reason = if state.cancelled.take(&id) {
            "response to a cancelled request"
        } else {
            eprintln!("rpcscan proxy: dropping a response with unknown id {id}");
            "response with an unknown id"
        };
        self.log.event(Event {
            from: Some("server"),
            reason: Some(reason),
            msg: Some(line),
            ..Event::new("dropped")
        });
    }

    fn to_client(&self, line: &[u8], place: Option<InRead>, out: &mut Out<'_>) {
        self.log.message("s2c", line);
        match place.filter(|_| line.len() >= FROM_READ_MIN) {
            Some(place) => out.client_tail(line, 0, place),
            None => {
                out.to_client.put_slice(line);
                out.to_client.put_u8(b'\n');
            }
        }
    }

    /// A response `msg` (the whole of `line`) with its original id back: the parts around
    /// the id left in the read buffer when `line` is there (and not logged).
    fn restored(
        &self,
        msg: &Message<'_>,
        line: &[u8],
        place: Option<InRead>,
        original: &[u8],
        out: &mut Out<'_>,
    ) {
        // A short line has no part long enough to be left in place.
        let place = place.filter(|_| line.len() >= FROM_READ_MIN && !self.log.on());
        let around = place.and_then(|_| rewrite::around_id(msg)).filter(|(before, after)| {
            // Both in `line`, where its offsets say (the message is the whole line).
            line.get(..before.len()).is_some_and(|b| core::ptr::eq(b, *before))
                && line
                    .len()
                    .checked_sub(after.len())
                    .and_then(|at| line.get(at..))
                    .is_some_and(|a| core::ptr::eq(a, *after))
        });
        match (place, around) {
            (Some(place), Some((before, after))) => {
                out.client_part(before, place.at..place.at + before.len());
                out.to_client.put_slice(original);
                out.client_tail(line, line.len() - after.len(), place);
            }
            _ => {
                let start = out.to_client.len();
                rewrite::write_with_id(msg, original, &mut out.to_client);
                self.log.message("s2c", out.to_client.get(start..).unwrap_or_default());
                out.to_client.put_u8(b'\n');
            }
        }
    }

    /// An oversized line from the server: a response is answered for it at once.
    pub fn server_oversized<'r>(
        &'r self,
        err: &FrameError,
        found: Option<&IdRecovery>,
        out: &mut Out<'r>,
    ) {
        let reason = format!(
            "the MCP server's response exceeded --max-message-size ({} bytes)",
            self.max_message_size
        );
        let data = oversize_data(&reason, err.len(), self.max_message_size);
        let id = found.and_then(IdRecovery::finish).filter(|id| !id.is_null());
        let event = |id, reason| oversized("server", id, reason, err.len());
        eprintln!("rpcscan proxy: {err}");
        let Some(id) = id else {
            self.log.event(event(None, &reason));
            return;
        };
        if found.is_some_and(IdRecovery::saw_method) {
            // A server-initiated request the client will never see: tell the server.
            let reason = "the request exceeded --max-message-size";
            let data = oversize_data(reason, err.len(), self.max_message_size);
            self.answer(
                &mut out.to_server,
                Dir::ToServer,
                ErrorResponse::standard(INTERNAL_ERROR).id(id.raw()).data(&data),
                event(Some(id.raw()), reason),
            );
            return;
        }
        let state = self.state(&mut out.held);
        let pending = state.table.remove(&id);
        let cancelled = pending.is_none() && state.cancelled.take(&id);
        match pending {
            Some(pending) => self.answer(
                &mut out.to_client,
                Dir::ToClient,
                ErrorResponse::standard(INTERNAL_ERROR).id(pending.original_id()).data(&data),
                event(Some(pending.original_id()), &reason),
            ),
            None => {
                let why = if cancelled {
                    "oversized response to a cancelled request"
                } else {
                    "oversized response with an unknown id"
                };
                self.log.event(event(Some(id.raw()), why));
            }
        }
    }

    /// The server is gone and its output read to the end: every request still in flight
    /// was never answered, so the proxy answers it -32603. New requests get the same.
    pub fn server_gone<'r>(&'r self, out: &mut Out<'r>) {
        let state = self.state(&mut out.held);
        state.server_gone = true;
        let pending: Vec<_> = state.table.drain().collect();
        for p in pending {
            self.answer(
                &mut out.to_client,
                Dir::ToClient,
                ErrorResponse::standard(INTERNAL_ERROR).id(p.original_id()).data(SERVER_GONE),
                Event {
                    from: Some("server"),
                    id: Some(p.original_id()),
                    ..Event::new("server_gone")
                },
            );
        }
    }
}

fn oversized<'a>(from: &'a str, id: Option<&'a [u8]>, reason: &'a str, size: u64) -> Event<'a> {
    Event {
        from: Some(from),
        id,
        reason: Some(reason),
        size: Some(size),
        ..Event::new("oversized")
    }
}

fn oversize_data(reason: &str, size: u64, max: usize) -> Vec<u8> {
    let mut data = Vec::with_capacity(128);
    data.extend_from_slice(b"{\"reason\": ");
    write_json_string(&mut data, reason);
    data.extend_from_slice(format!(", \"size\": {size}, \"max_message_size\": {max}}}").as_bytes());
    data
}
