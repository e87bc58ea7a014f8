//! [`McpLayer`]: the configuration, shared by every service the layer makes.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use http::HeaderValue;
use rpcscan::{Message, Parser, Validation};
use tower_layer::Layer;

use crate::observe::{NoObserver, Observer};
use crate::policy::{AllowList, ForwardAll, Policy};
use crate::service::McpService;

/// Default largest request body: 4 MiB (the MCP TypeScript SDK's limit).
pub const DEFAULT_MAX_BODY_SIZE: usize = 4 * 1024 * 1024;

/// Default largest upstream message (a JSON body or one SSE event): 16 MiB, as
/// [`rpcscan::frame::DEFAULT_MAX_MESSAGE_SIZE`].
pub const DEFAULT_MAX_RESPONSE_SIZE: usize = rpcscan::frame::DEFAULT_MAX_MESSAGE_SIZE;

/// Default largest request header block (names plus values): 32 KiB.
pub const DEFAULT_MAX_HEADER_SIZE: usize = 32 * 1024;

/// Default time from the request's head to the upstream's response head, body upload
/// included: 30 s.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// When the `Mcp-Method` / `Mcp-Name` / `MCP-Protocol-Version` headers are checked against
/// the body ([`rpcscan::mcp::McpHeaders`], -32020 `HeaderMismatch` on failure).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HeaderCheck {
    /// Always, by the MCP 2026-07-28 rules: a request without `Mcp-Method` is rejected.
    Always,
    /// When the request speaks 2026-07-28: it has an `Mcp-Method` or `Mcp-Name` header, or
    /// its body has `params._meta`'s protocol version. Clients of earlier protocol versions
    /// send none of these and pass.
    #[default]
    WhenPresent,
    /// Never.
    Off,
}

/// The tower layer: see the [crate docs](crate).
///
/// Defaults: strict validation, 4 MiB bodies, 32 KiB of headers, 16 MiB upstream
/// messages, a 30 s request timeout, no idle timeout, headers checked
/// [when present](HeaderCheck::WhenPresent), duplicate routing keys rejected, no
/// allow-lists, no `Origin` check, every message forwarded, no observer.
#[derive(Clone)]
pub struct McpLayer {
    pub(crate) shared: Arc<Shared>,
}

/// What every service of one layer shares.
pub(crate) struct Shared {
    pub(crate) parser: Parser,
    pub(crate) max_body_size: usize,
    pub(crate) max_response_size: usize,
    pub(crate) max_header_size: usize,
    pub(crate) request_timeout: Option<Duration>,
    pub(crate) idle_timeout: Option<Duration>,
    pub(crate) header_check: HeaderCheck,
    pub(crate) reject_duplicate_routing_keys: bool,
    pub(crate) methods: Option<AllowList>,
    pub(crate) tools: Option<AllowList>,
    pub(crate) origins: Option<HashSet<HeaderValue>>,
    pub(crate) policy: Arc<dyn Policy>,
    pub(crate) observer: Arc<dyn Observer>,
    pub(crate) on_span: Option<Arc<SpanHook>>,
}

/// See [`McpLayer::on_span`].
pub(crate) type SpanHook = dyn Fn(&tracing::Span, &Message<'_>) + Send + Sync;

impl Default for McpLayer {
    fn default() -> Self {
        McpLayer::new()
    }
}

impl fmt::Debug for McpLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.shared;
        f.debug_struct("McpLayer")
            .field("validation", &s.parser.validation_mode())
            .field("max_body_size", &s.max_body_size)
            .field("max_response_size", &s.max_response_size)
            .field("max_header_size", &s.max_header_size)
            .field("request_timeout", &s.request_timeout)
            .field("idle_timeout", &s.idle_timeout)
            .field("header_check", &s.header_check)
            .field("methods", &s.methods)
            .field("tools", &s.tools)
            .field("origins", &s.origins)
            .finish_non_exhaustive()
    }
}

impl McpLayer {
    /// A layer with the defaults listed in the type's docs.
    pub fn new() -> Self {
        McpLayer {
            shared: Arc::new(Shared {
                parser: Parser::new(),
                max_body_size: DEFAULT_MAX_BODY_SIZE,
                max_response_size: DEFAULT_MAX_RESPONSE_SIZE,
                max_header_size: DEFAULT_MAX_HEADER_SIZE,
                request_timeout: Some(DEFAULT_REQUEST_TIMEOUT),
                idle_timeout: None,
                header_check: HeaderCheck::default(),
                reject_duplicate_routing_keys: true,
                methods: None,
                tools: None,
                origins: None,
                policy: Arc::new(ForwardAll),
                observer: Arc::new(NoObserver),
                on_span: None,
            }),
        }
    }

    fn with(mut self, change: impl FnOnce(&mut Shared)) -> Self {
        match Arc::get_mut(&mut self.shared) {
            Some(shared) => change(shared),
            None => {
                let mut shared = self.shared.copy();
                change(&mut shared);
                self.shared = Arc::new(shared);
            }
        }
        self
    }

    /// Strict ([`Validation::Strict`], the default) or envelope validation
    /// (docs/spec.md §6) of every message.
    pub fn validation(self, validation: Validation) -> Self {
        self.with(|s| s.parser = s.parser.validation(validation))
    }

    /// Largest request body (bytes); above it: HTTP 413 and a JSON-RPC error.
    pub fn max_body_size(self, max: usize) -> Self {
        self.with(|s| s.max_body_size = max)
    }

    /// Largest upstream message: an `application/json` body, or the data of one SSE event.
    pub fn max_response_size(self, max: usize) -> Self {
        self.with(|s| s.max_response_size = max)
    }

    /// Largest request header block (the sum of names and values); above it: HTTP 431.
    pub fn max_header_size(self, max: usize) -> Self {
        self.with(|s| s.max_header_size = max)
    }

    /// Longest wait from the request's head to the upstream's response head, body upload
    /// included (HTTP 408 while the body is arriving, 504 while waiting for the upstream);
    /// `None` for no limit. Needs a tokio runtime with its timer.
    pub fn request_timeout(self, timeout: Option<Duration>) -> Self {
        self.with(|s| s.request_timeout = timeout)
    }

    /// Longest gap between two chunks of a body, the request's (HTTP 408) or an upstream
    /// stream's (the stream ends with an error); `None` (the default) for no limit. Long
    /// idle server streams are normal in MCP: set this above the upstream's keep-alive
    /// interval. Needs a tokio runtime with its timer.
    pub fn idle_timeout(self, timeout: Option<Duration>) -> Self {
        self.with(|s| s.idle_timeout = timeout)
    }

    /// When the MCP headers are checked against the body.
    pub fn header_check(self, check: HeaderCheck) -> Self {
        self.with(|s| s.header_check = check)
    }

    /// Whether a request or notification whose `params.name`, `params.uri` or
    /// `params._meta` appears twice (in any spelling) is rejected (the default): hops
    /// behind the gateway may resolve a duplicated key differently from the layer.
    pub fn reject_duplicate_routing_keys(self, reject: bool) -> Self {
        self.with(|s| s.reject_duplicate_routing_keys = reject)
    }

    /// Only these methods may be requested or notified (compared decoded); others get
    /// -32601 Method not found. Client responses are not affected.
    pub fn allow_methods<I, S>(self, methods: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let list = AllowList::new(methods);
        self.with(|s| s.methods = Some(list))
    }

    /// Only these tools may be called (`tools/call`'s `params.name`, compared decoded);
    /// others, and calls without one string name, get -32602 Invalid params.
    pub fn allow_tools<I, S>(self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let list = AllowList::new(tools);
        self.with(|s| s.tools = Some(list))
    }

    /// Requests carrying an `Origin` header not in this list (compared exactly, e.g.
    /// `http://localhost:3000`) get HTTP 403, as the MCP transport asks of servers (DNS
    /// rebinding); requests without `Origin` pass. Values that are not valid header
    /// values are ignored.
    pub fn allow_origins<I, S>(self, origins: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let set =
            origins.into_iter().filter_map(|o| HeaderValue::from_str(o.as_ref()).ok()).collect();
        self.with(|s| s.origins = Some(set))
    }

    /// The user's decision on each client message (see [`Policy`]).
    pub fn policy(self, policy: impl Policy) -> Self {
        let policy: Arc<dyn Policy> = Arc::new(policy);
        self.with(|s| s.policy = policy)
    }

    /// The observer of every classified message (see [`Observer`]); pass an `Arc` to keep a
    /// handle (e.g. on a [`crate::PrometheusObserver`] to render it).
    pub fn observer(self, observer: impl Observer) -> Self {
        let observer: Arc<dyn Observer> = Arc::new(observer);
        self.with(|s| s.observer = observer)
    }

    /// Called with each span the layer opens for a message (only when a subscriber enabled
    /// it) and the message, before anything runs inside the span: to give the span the
    /// remote parent its sender put in `params._meta` (`traceparent`, `tracestate`), as the
    /// OpenTelemetry MCP conventions ask, with the OpenTelemetry crate of your choice; or to
    /// record fields of your own. `rpcscan gateway --otlp-endpoint` does the former.
    ///
    /// ```
    /// use rpcscan::Message;
    ///
    /// fn traceparent<'a>(msg: &Message<'a>) -> Option<rpcscan::Str<'a>> {
    ///     msg.params_meta().unique()?.get("traceparent").as_str()
    /// }
    /// let layer = rpcscan_tower::McpLayer::new().on_span(|span, msg| {
    ///     if let Some(parent) = traceparent(msg) {
    ///         // e.g. tracing_opentelemetry's `span.set_parent(...)` with the context a
    ///         // W3C propagator extracts from it.
    ///         let _ = (span, parent);
    ///     }
    /// });
    /// # drop(layer);
    /// ```
    pub fn on_span(
        self,
        hook: impl Fn(&tracing::Span, &Message<'_>) + Send + Sync + 'static,
    ) -> Self {
        let hook: Arc<SpanHook> = Arc::new(hook);
        self.with(|s| s.on_span = Some(hook))
    }
}

impl Shared {
    fn copy(&self) -> Shared {
        Shared {
            parser: self.parser,
            max_body_size: self.max_body_size,
            max_response_size: self.max_response_size,
            max_header_size: self.max_header_size,
            request_timeout: self.request_timeout,
            idle_timeout: self.idle_timeout,
            header_check: self.header_check,
            reject_duplicate_routing_keys: self.reject_duplicate_routing_keys,
            methods: self.methods.clone(),
            tools: self.tools.clone(),
            origins: self.origins.clone(),
            policy: Arc::clone(&self.policy),
            observer: Arc::clone(&self.observer),
            on_span: self.on_span.clone(),
        }
    }
}

impl<S> Layer<S> for McpLayer {
    type Service = McpService<S>;

    fn layer(&self, inner: S) -> McpService<S> {
        McpService::new(inner, Arc::clone(&self.shared))
    }
}
