//! The observer hook: every message the layer classifies, in either direction, with what
//! a dashboard or an audit log needs (session, method, tool, kind, error code, latency).

use std::sync::Arc;
use std::time::Duration;

use http::StatusCode;
use rpcscan::{Kind, Str};

/// Which way a message travels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// A POST body from the client.
    ClientToServer,
    /// A message of the server's answer: a JSON body or one SSE event.
    ServerToClient,
}

impl Direction {
    /// `client` or `server`: who sent it (a metrics label).
    pub const fn as_str(self) -> &'static str {
        match self {
            Direction::ClientToServer => "client",
            Direction::ServerToClient => "server",
        }
    }
}

/// Why the layer stopped a message instead of passing it on.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rejection {
    /// The `Origin` header is not on the allow-list (HTTP 403).
    Origin,
    /// The request headers are larger than the limit (HTTP 431).
    HeadersTooLarge,
    /// The body is larger than the limit (HTTP 413; 502 for an upstream body).
    BodyTooLarge,
    /// The body did not arrive in time (HTTP 408), or the upstream did not answer in time
    /// (HTTP 504).
    Timeout,
    /// The body could not be read.
    BodyError,
    /// Not a valid JSON-RPC message (HTTP 400, -32700 / -32600).
    Invalid,
    /// `Mcp-Method`, `Mcp-Name` or `MCP-Protocol-Version` disagrees with the body (HTTP 400,
    /// -32020).
    HeaderMismatch,
    /// `params.name`, `params.uri` or `params._meta` appears twice (HTTP 400, -32600).
    DuplicateRoutingKey,
    /// The method is not on the allow-list (-32601).
    MethodNotAllowed,
    /// The tool is not on the allow-list (-32602).
    ToolNotAllowed,
    /// The user policy said no.
    Policy,
    /// The upstream's JSON answer is invalid or does not answer the request's id (HTTP 502).
    UpstreamMismatch,
    /// The upstream could not be reached (HTTP 502, from the `gateway` module's `Upstream`).
    UpstreamUnreachable,
}

impl Rejection {
    /// A snake_case name (a metrics label).
    pub const fn as_str(self) -> &'static str {
        match self {
            Rejection::Origin => "origin",
            Rejection::HeadersTooLarge => "headers_too_large",
            Rejection::BodyTooLarge => "body_too_large",
            Rejection::Timeout => "timeout",
            Rejection::BodyError => "body_error",
            Rejection::Invalid => "invalid",
            Rejection::HeaderMismatch => "header_mismatch",
            Rejection::DuplicateRoutingKey => "duplicate_routing_key",
            Rejection::MethodNotAllowed => "method_not_allowed",
            Rejection::ToolNotAllowed => "tool_not_allowed",
            Rejection::Policy => "policy",
            Rejection::UpstreamMismatch => "upstream_mismatch",
            Rejection::UpstreamUnreachable => "upstream_unreachable",
        }
    }
}

/// One classified message (or one body the layer turned away before it was a message).
#[non_exhaustive]
#[derive(Clone, Copy, Debug)]
pub struct Event<'a> {
    /// Which way it travels.
    pub direction: Direction,
    /// The `Mcp-Session-Id` of the exchange (the response's when it assigns one, else the
    /// request's).
    pub session: Option<&'a str>,
    /// The verdict; [`Kind::Invalid`] also for a body the layer could not read.
    pub kind: Kind,
    /// The message's `method`; for a response, the method of the request it answers when
    /// the layer knows it (the POST's own request).
    pub method: Option<Str<'a>>,
    /// The tool of a `tools/call` request (or of the request a response answers).
    pub tool: Option<Str<'a>>,
    /// `error.code` of an error response; -32700 / -32600 for an invalid message.
    pub error_code: Option<i64>,
    /// Time since the layer received the request's head (server messages only).
    pub latency: Option<Duration>,
    /// Why the layer stopped it; `None` when it was passed on.
    pub rejected: Option<Rejection>,
    /// The message's bytes as they travel (a POST body, a JSON answer, an SSE event's
    /// data), when the layer read them: an audit log can keep them verbatim.
    pub bytes: Option<&'a [u8]>,
    /// The status of the upstream's answer that carried this server message, when it is
    /// not a success (a session that ended: `400` with a JSON-RPC error). The message is
    /// passed on with it.
    pub status: Option<StatusCode>,
    /// What the client got from the layer itself instead, when it stopped this message (or
    /// the upstream's answer, or a request the upstream never answered): the client's
    /// answer, for an audit log to keep beside the message.
    pub answer: Option<Answer<'a>>,
    /// The raw id of the POST's request that a server message (or the layer's `answer`)
    /// answers: HTTP binds an answer to its request whatever the id in its body (`null`,
    /// often, on an error status).
    pub request_id: Option<&'a [u8]>,
}

/// An answer the layer wrote itself: a status and a JSON-RPC error response.
#[non_exhaustive]
#[derive(Clone, Copy, Debug)]
pub struct Answer<'a> {
    /// The HTTP status.
    pub status: StatusCode,
    /// The body: one JSON-RPC error response.
    pub body: &'a [u8],
}

impl<'a> Answer<'a> {
    pub(crate) fn new(status: StatusCode, body: &'a [u8]) -> Self {
        Answer { status, body }
    }
}

/// Sees every message the layer classifies. Called inline on the request path and while
/// response chunks pass, so implementations should be quick (count, enqueue).
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use rpcscan_tower::{Event, Observer};
///
/// #[derive(Default)]
/// struct Rejections(AtomicU64);
///
/// impl Observer for Rejections {
///     fn message(&self, event: &Event<'_>) {
///         if event.rejected.is_some() {
///             self.0.fetch_add(1, Ordering::Relaxed);
///         }
///     }
/// }
/// let layer = rpcscan_tower::McpLayer::new().observer(Rejections::default());
/// # drop(layer);
/// ```
pub trait Observer: Send + Sync + 'static {
    /// A classified message.
    fn message(&self, event: &Event<'_>);

    /// An SSE event whose type is not `message` (docs/spec.md §7): passed on, never
    /// classified. `event` is its type (`endpoint`, ...).
    fn non_message_event(&self, direction: Direction, session: Option<&str>, event: &str) {
        let _ = (direction, session, event);
    }
}

impl<T: Observer + ?Sized> Observer for Arc<T> {
    fn message(&self, event: &Event<'_>) {
        (**self).message(event);
    }

    fn non_message_event(&self, direction: Direction, session: Option<&str>, event: &str) {
        (**self).non_message_event(direction, session, event);
    }
}

/// The observer that does nothing (the default).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoObserver;

impl Observer for NoObserver {
    fn message(&self, _: &Event<'_>) {}
}
