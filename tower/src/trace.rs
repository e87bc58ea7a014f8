//! Spans per MCP message through the `tracing` crate, with the attributes of the
//! OpenTelemetry semantic conventions for MCP (docs/tower.md names the release): one
//! `mcp.server` span per client request or notification, from its head until its answer is
//! settled, and one `mcp.client` span per request or notification the server sends on a
//! stream. Each span is built only when a subscriber wants it: with none installed, a span
//! costs a relaxed atomic load (`tracing`'s global level filter, `OFF`) and nothing of
//! the message is formatted.

use std::fmt::Display;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::Version;
use pin_project_lite::pin_project;
use rpcscan::{Kind, Message};
use tracing::field::Empty;
use tracing::{info_span, Span};

use crate::keys::RoutingKeys;
use crate::layer::SpanHook;
use crate::observe::Rejection;

/// The `tracing` target of every span of the layer.
pub const TARGET: &str = "rpcscan_tower";

/// The span of one message, when a subscriber wants it. One pointer wide: the futures that
/// carry it across their awaits grow by no more than that when nothing is traced.
pub(crate) struct McpSpan(Option<Box<Traced>>);

/// An enabled span, and whether it is a `tools/call` (whose result may still be a tool
/// error).
struct Traced {
    span: Span,
    tool_call: bool,
    /// [`crate::McpLayer::on_span`], for the spans of the server's messages too.
    hook: Option<Arc<SpanHook>>,
}

impl McpSpan {
    pub(crate) fn none() -> Self {
        McpSpan(None)
    }

    /// The span of a client request or notification the layer parsed (none for a client's
    /// response: its method is the server request's, which the layer does not keep).
    pub(crate) fn client_message(
        msg: &Message<'_>,
        keys: &RoutingKeys,
        version: Version,
        hook: Option<&Arc<SpanHook>>,
    ) -> Self {
        if !matches!(msg.kind(), Kind::Request | Kind::Notification) {
            return McpSpan::none();
        }
        let span = info_span!(
            target: TARGET,
            "mcp.server",
            otel.name = Empty,
            otel.kind = "server",
            otel.status_code = Empty,
            otel.status_description = Empty,
            mcp.method.name = Empty,
            jsonrpc.request.id = Empty,
            mcp.session.id = Empty,
            mcp.protocol.version = Empty,
            mcp.resource.uri = Empty,
            gen_ai.tool.name = Empty,
            gen_ai.prompt.name = Empty,
            gen_ai.operation.name = Empty,
            error.type = Empty,
            rpc.response.status_code = Empty,
            network.transport = "tcp",
            network.protocol.name = "http",
            network.protocol.version = Empty,
            rpcscan.rejected = Empty,
        );
        if span.is_disabled() {
            return McpSpan::none();
        }
        describe(&span, msg, keys);
        if let Some(version) = protocol_version(version) {
            span.record("network.protocol.version", version);
        }
        let tool_call = keys.tool().is_some();
        if tool_call {
            span.record("gen_ai.operation.name", "execute_tool");
        }
        if let Some(hook) = hook {
            hook(&span, msg);
        }
        McpSpan(Some(Box::new(Traced { span, tool_call, hook: hook.cloned() })))
    }

    /// A span for a request or notification the server sends on a stream (sampling,
    /// elicitation, progress, log messages), child of the POST's span when the stream
    /// answers one. It ends at once: the client's answer comes in a POST of its own.
    pub(crate) fn server_message(&self, msg: &Message<'_>, session: Option<&str>) {
        if !matches!(msg.kind(), Kind::Request | Kind::Notification) {
            return;
        }
        let parent = self.0.as_ref().and_then(|traced| traced.span.id());
        let span = info_span!(
            target: TARGET,
            parent: parent,
            "mcp.client",
            otel.name = Empty,
            otel.kind = "client",
            mcp.method.name = Empty,
            jsonrpc.request.id = Empty,
            mcp.session.id = Empty,
            mcp.resource.uri = Empty,
            network.transport = "tcp",
            network.protocol.name = "http",
        );
        if span.is_disabled() {
            return;
        }
        let keys = RoutingKeys::found(&Bytes::new(), msg, &msg.mcp(), None, None, false);
        describe(&span, msg, &keys);
        if let Some(session) = session {
            span.record("mcp.session.id", session);
        }
        if let Some(hook) = self.0.as_ref().and_then(|traced| traced.hook.as_ref()) {
            hook(&span, msg);
        }
    }

    /// `future` run inside the span (what the inner service does on the message's
    /// behalf), and its creation by `make` too.
    pub(crate) fn instrument<F>(&self, make: impl FnOnce() -> F) -> InSpan<F> {
        let future = match &self.0 {
            Some(traced) => traced.span.in_scope(make),
            None => make(),
        };
        InSpan { future, span: self.0.as_ref().map(|traced| Box::new(traced.span.clone())) }
    }

    /// Ends the span (when the answer is settled before the span's owner goes).
    pub(crate) fn close(&mut self) {
        self.0 = None;
    }

    /// The layer stopped the message, or answered for the upstream: `answer` is the
    /// JSON-RPC error the client got instead.
    pub(crate) fn rejected(&self, rejection: Rejection, answer: &[u8]) {
        let Some(traced) = &self.0 else { return };
        traced.span.record("rpcscan.rejected", rejection.as_str());
        match rpcscan::parse(answer) {
            Ok(msg) => self.answered(&msg),
            Err(_) => self.failed("_OTHER", rejection.as_str()),
        }
    }

    /// The message's answer, as the client gets it: an error response or a tool's error
    /// result marks the span as failed.
    pub(crate) fn answered(&self, answer: &Message<'_>) {
        let Some(traced) = &self.0 else { return };
        match answer.kind() {
            Kind::Error => {
                let code = answer.error_code().and_then(|c| c.as_i64());
                let message = answer.error_message().and_then(|m| m.decode().ok());
                match code {
                    Some(code) => self.error(code, message.as_deref()),
                    None => self.failed("_OTHER", message.as_deref().unwrap_or_default()),
                }
            }
            Kind::Result if traced.tool_call && is_error(answer) => {
                self.failed("tool_error", "the tool's result has isError: true");
            }
            _ => {}
        }
    }

    /// The answer is not a JSON-RPC message (an upstream's non-JSON error status, a stream
    /// that ended before the response): `error_type` is the HTTP status or a word.
    pub(crate) fn failed(&self, error_type: &str, description: &str) {
        let Some(traced) = &self.0 else { return };
        traced.span.record("error.type", error_type);
        traced.span.record("otel.status_code", "error");
        if !description.is_empty() {
            traced.span.record("otel.status_description", description);
        }
    }

    fn error(&self, code: i64, message: Option<&str>) {
        let Some(traced) = &self.0 else { return };
        let code = code.to_string();
        traced.span.record("rpc.response.status_code", code.as_str());
        self.failed(&code, message.unwrap_or_default());
    }
}

pin_project! {
    /// A future polled inside a span (when there is one: one pointer otherwise).
    pub(crate) struct InSpan<F> {
        #[pin]
        future: F,
        span: Option<Box<Span>>,
    }
}

impl<F: Future> Future for InSpan<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let _entered = this.span.as_ref().map(|span| span.enter());
        this.future.poll(cx)
    }
}

/// The attributes every message span has: name, method, id, session, protocol version,
/// tool / prompt / resource.
fn describe(span: &Span, msg: &Message<'_>, keys: &RoutingKeys) {
    let Some(method) = keys.method() else { return };
    match keys.target() {
        Some(target) => span.record("otel.name", format!("{method} {target}")),
        None => span.record("otel.name", method),
    };
    span.record("mcp.method.name", method);
    // The id's text: a string's decoded content, a number as written (null: none).
    if let Some(id) = msg.id().filter(|id| !id.is_null()) {
        match id.as_str() {
            Some(s) => span.record("jsonrpc.request.id", display(s.decode().unwrap_or_default())),
            None => span.record("jsonrpc.request.id", display(String::from_utf8_lossy(id.raw()))),
        };
    }
    let fields = [
        ("mcp.session.id", keys.session_id()),
        ("mcp.protocol.version", keys.protocol_version()),
        ("mcp.resource.uri", keys.resource_uri()),
        ("gen_ai.tool.name", keys.tool()),
        ("gen_ai.prompt.name", keys.prompt()),
    ];
    for (field, value) in fields {
        if let Some(value) = value {
            span.record(field, value);
        }
    }
}

fn display<T: Display>(value: T) -> tracing::field::DisplayValue<T> {
    tracing::field::display(value)
}

/// `result.isError` is `true` (a `CallToolResult` reporting the tool's failure).
fn is_error(answer: &Message<'_>) -> bool {
    answer
        .result()
        .and_then(|result| result.get("isError").unique())
        .is_some_and(|flag| flag.as_bytes() == b"true")
}

/// `network.protocol.version` of an HTTP version.
fn protocol_version(version: Version) -> Option<&'static str> {
    match version {
        Version::HTTP_09 => Some("0.9"),
        Version::HTTP_10 => Some("1.0"),
        Version::HTTP_11 => Some("1.1"),
        Version::HTTP_2 => Some("2"),
        Version::HTTP_3 => Some("3"),
        _ => None,
    }
}
