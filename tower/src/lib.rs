//! # rpcscan-tower
//!
//! A [tower] layer for MCP Streamable HTTP servers and gateways: each POSTed JSON-RPC
//! message is scanned once by [`rpcscan`] (no tree, no copy), checked against its
//! `Mcp-*` headers, duplicate routing keys, allow-lists and your [`Policy`], and either
//! answered on the spot with the JSON-RPC error the transport prescribes or forwarded with
//! the scan result attached. Answers are checked (`application/json`) or observed in
//! passing without being held back (`text/event-stream`).
//!
//! ```
//! use bytes::Bytes;
//! use http::{Request, Response};
//! use http_body_util::{BodyExt, Full};
//! use rpcscan::OwnedMessage;
//! use rpcscan_tower::{McpLayer, RequestBody};
//! use tower::{service_fn, Layer, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let upstream = service_fn(|request: Request<RequestBody<Full<Bytes>>>| async move {
//!     // The scan travels with the request: route on it without parsing again.
//!     let msg = request.extensions().get::<OwnedMessage>().unwrap();
//!     assert!(msg.mcp().tool_name().unwrap() == "echo");
//!     let answer = r#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#;
//!     Ok::<_, std::convert::Infallible>(
//!         Response::builder().header("content-type", "application/json").body(Full::new(Bytes::from(answer))).unwrap(),
//!     )
//! });
//! let service = McpLayer::new().allow_tools(["echo"]).layer(upstream);
//!
//! let call = |name: &str| {
//!     let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{name}"}}}}"#);
//!     Request::post("/mcp").body(Full::new(Bytes::from(body))).unwrap()
//! };
//! let ok = service.clone().oneshot(call("echo")).await.unwrap();
//! assert_eq!(ok.status(), 200);
//!
//! let denied = service.oneshot(call("rm_rf")).await.unwrap();
//! let body = denied.into_body().collect().await.unwrap().to_bytes();
//! assert_eq!(body, r#"{"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "Invalid params: unknown tool"}}"#);
//! # }
//! ```
//!
//! ## What a POST goes through
//!
//! | step | on failure |
//! |---|---|
//! | header block ≤ [`McpLayer::max_header_size`] | 431, -32600, `id: null` |
//! | `Origin` on [`McpLayer::allow_origins`] (when set) | 403, -32600, `id: null` |
//! | body ≤ [`McpLayer::max_body_size`], in time ([`McpLayer::request_timeout`], [`McpLayer::idle_timeout`]) | 413 / 408, -32600, `id: null` |
//! | one valid JSON-RPC message (docs/spec.md §1–§6; strict or envelope) | 400, -32700 / -32600, the recovered id |
//! | `Mcp-Method`, `Mcp-Name`, `MCP-Protocol-Version` match the body ([`HeaderCheck`]) | 400, -32020, the request's id |
//! | `params.name` / `params.uri` / `params._meta` each at most once, in any spelling | 400, -32600, the request's id |
//! | method on [`McpLayer::allow_methods`] (when set; decoded) | -32601 |
//! | tool on [`McpLayer::allow_tools`] (when set; decoded) | -32602 |
//! | [`Policy::decide`] | the [`Denial`]'s code and message |
//!
//! Denials of the last three are HTTP 200 for a request (a JSON-RPC error answers it) and
//! 400 for a notification or a response (the transport requires an error status for input
//! the server does not accept); [`Denial::status`] overrides it. Every rejection leaves
//! the inner service uncalled.
//!
//! A forwarded POST reaches the inner service with its body unchanged
//! ([`RequestBody`]`::Left`) and the scan in its extensions as an
//! [`rpcscan::OwnedMessage`] over the same [`bytes::Bytes`], beside its [`RoutingKeys`]
//! (method, tool, prompt, resource URI, session id, protocol version; decoded) for routers
//! and rate limiters. Other methods (GET, DELETE) pass with their body untouched (`Right`)
//! after the header-size and `Origin` checks.
//!
//! ## What an answer goes through
//!
//! * To a client notification or response, a 2xx answer becomes **202 Accepted** with no
//!   body, as the transport requires.
//! * A 2xx `application/json` answer to a request is read whole (≤
//!   [`McpLayer::max_response_size`]), scanned, and must be a response with the request's
//!   id; otherwise the client gets 502 and a -32603 error for its id.
//! * A non-2xx `application/json` answer (a session that ended: 400 and a JSON-RPC error
//!   with `"id": null`) is read whole (≤ [`McpLayer::max_response_size`]), scanned, and
//!   passed on unchanged; the [`Observer`] gets it with its [`Event::status`] and the
//!   request it answers ([`Event::request_id`]). One that cannot be read whole becomes the
//!   layer's 502 (504 when late).
//! * A `text/event-stream` answer is passed on chunk by chunk as it arrives; a copy of
//!   each chunk feeds an [`rpcscan::frame::SseDecoder`] that classifies every event for
//!   the [`Observer`]. Events of another type than `message` (`event: endpoint`) are
//!   passed on and reported as non-message events, never as invalid (docs/spec.md §7).
//! * Anything else passes untouched.
//!
//! ## Observing
//!
//! An [`Observer`] sees every classified message, either way, with its session
//! (`Mcp-Session-Id`), method, tool, kind, error code, latency and, when the layer stopped
//! it, the [`Rejection`] and the [`Answer`] the client got from the layer instead. Every
//! answer the client gets is observed: a message passed on, an upstream's error status
//! ([`Event::status`]), or the layer's own (a rejection, a 502 or a 504). An answer that
//! HTTP binds to its POST's request names it ([`Event::request_id`]), whatever the id in
//! its body. [`PrometheusObserver`] keeps counters and a latency histogram and renders
//! them as Prometheus text.
//!
//! ## Tracing
//!
//! The layer opens a span per MCP message through the `tracing` crate (target
//! [`TRACING_TARGET`], level INFO) with the attributes of the OpenTelemetry semantic
//! conventions for MCP (`mcp.method.name`, `jsonrpc.request.id`, `mcp.session.id`,
//! `gen_ai.tool.name`, `error.type`, ...): a `mcp.server` span per client request or
//! notification until its answer is settled, a `mcp.client` span per request or
//! notification the server sends on a stream. The inner service runs inside the message's
//! span. Nothing is built without a subscriber. The repository's docs/tower.md lists them.
//!
//! ## Gateway
//!
//! With the `gateway` feature, the `gateway` module holds a hyper reverse proxy
//! for one upstream server (`gateway::Upstream`, the inner service) and
//! `gateway::serve`, an HTTP/1.1 accept loop; the `gateway` example is a ready binary.
//!
//! ## Runtime
//!
//! The timeouts use tokio's timer: run the service inside a tokio runtime with time
//! enabled, or set both timeouts to `None`.
//!
//! [tower]: https://docs.rs/tower
#![deny(missing_docs, clippy::undocumented_unsafe_blocks)]
#![forbid(unsafe_code)]

mod body;
mod collect;
#[cfg(feature = "gateway")]
pub mod gateway;
mod keys;
mod layer;
mod observe;
mod policy;
mod prometheus;
mod service;
mod trace;

pub use body::{IdleTimeout, ResponseBody};
pub use keys::RoutingKeys;
pub use layer::{
    HeaderCheck, McpLayer, DEFAULT_MAX_BODY_SIZE, DEFAULT_MAX_HEADER_SIZE,
    DEFAULT_MAX_RESPONSE_SIZE, DEFAULT_REQUEST_TIMEOUT,
};
pub use observe::{Answer, Direction, Event, NoObserver, Observer, Rejection};
pub use policy::{policy_fn, Decision, Denial, ForwardAll, Policy};
pub use prometheus::PrometheusObserver;
pub use service::{McpService, RequestBody, ResponseFuture};
pub use trace::TARGET as TRACING_TARGET;

/// The README's example, compiled as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// The error type of bodies the layer hands out.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
