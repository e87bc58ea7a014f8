//! Policy: the user's say on each client message, after the layer's own checks, before
//! the inner service sees it; and the allow-lists, which compare decoded names.

use std::borrow::Cow;
use std::collections::HashSet;

use http::StatusCode;
use rpcscan::mcp::Mcp;
use rpcscan::{Message, Str};

/// What to do with a client message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Pass it to the inner service.
    Forward,
    /// Answer it with a JSON-RPC error; the inner service never sees it.
    Deny(Denial),
}

/// A JSON-RPC error answering a denied message (its id is echoed).
///
/// The HTTP status is 200 for a request (a JSON-RPC error is a normal answer to a
/// request, which the client's SDK hands to the caller) and 400 for a notification or a
/// response (the MCP Streamable HTTP transport requires an HTTP error status when the
/// server does not accept one); [`Denial::status`] overrides it (403, ...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Denial {
    code: i64,
    message: Cow<'static, str>,
    status: Option<StatusCode>,
}

impl Denial {
    /// An error with this code and message.
    pub fn new(code: i64, message: impl Into<Cow<'static, str>>) -> Self {
        Denial { code, message: message.into(), status: None }
    }

    /// Answer with this HTTP status instead of the default.
    pub fn status(mut self, status: StatusCode) -> Self {
        self.status = Some(status);
        self
    }

    /// The JSON-RPC error code.
    pub fn code(&self) -> i64 {
        self.code
    }

    /// The JSON-RPC error message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The status override, if any.
    pub fn http_status(&self) -> Option<StatusCode> {
        self.status
    }
}

/// Decides on each client message that passed the layer's checks: gets the borrowed
/// message and its MCP routing keys (decoded comparisons: `tool == "echo"` holds for
/// `"\u0065cho"` too).
///
/// Any `Fn(&Message, &Mcp) -> Decision` is a policy:
///
/// ```
/// use rpcscan_tower::{Decision, Denial, McpLayer};
///
/// let layer = McpLayer::new().policy(|_msg: &rpcscan::Message<'_>, mcp: &rpcscan::mcp::Mcp<'_>| {
///     match mcp.tool_name() {
///         Some(tool) if tool == "delete_everything" => Decision::Deny(Denial::new(-32001, "not on a Friday")),
///         _ => Decision::Forward,
///     }
/// });
/// # drop(layer);
/// ```
pub trait Policy: Send + Sync + 'static {
    /// The decision on one client message.
    fn decide(&self, msg: &Message<'_>, mcp: &Mcp<'_>) -> Decision;
}

impl<F> Policy for F
where
    F: Fn(&Message<'_>, &Mcp<'_>) -> Decision + Send + Sync + 'static,
{
    fn decide(&self, msg: &Message<'_>, mcp: &Mcp<'_>) -> Decision {
        self(msg, mcp)
    }
}

/// Helps a closure's parameter types to be inferred (`|msg, mcp| ...`) where
/// [`crate::McpLayer::policy`] alone would need them spelled out.
///
/// ```
/// use rpcscan_tower::{policy_fn, Decision, McpLayer};
///
/// let layer = McpLayer::new().policy(policy_fn(|msg, _mcp| match msg.method() {
///     Some(method) if method == "sampling/createMessage" => Decision::Forward,
///     _ => Decision::Forward,
/// }));
/// # drop(layer);
/// ```
pub fn policy_fn<F>(f: F) -> F
where
    F: Fn(&Message<'_>, &Mcp<'_>) -> Decision + Send + Sync + 'static,
{
    f
}

/// Forwards everything (the default).
#[derive(Clone, Copy, Debug, Default)]
pub struct ForwardAll;

impl Policy for ForwardAll {
    fn decide(&self, _: &Message<'_>, _: &Mcp<'_>) -> Decision {
        Decision::Forward
    }
}

/// A set of names matched against *decoded* JSON strings, so that an escaped spelling
/// (`"n\u0061me"`) is the name it decodes to, no more and no less.
#[derive(Clone, Debug, Default)]
pub(crate) struct AllowList(HashSet<String>);

impl AllowList {
    pub(crate) fn new<I, S>(names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        AllowList(names.into_iter().map(Into::into).collect())
    }

    /// Whether `name` decodes to a listed name (a lone surrogate escape never does).
    pub(crate) fn allows(&self, name: Str<'_>) -> bool {
        name.decode().is_ok_and(|name| self.0.contains(name.as_ref()))
    }
}
