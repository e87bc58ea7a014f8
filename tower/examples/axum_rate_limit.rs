//! `rpcscan-tower` in an axum server, with rate limits keyed by tool.
//!
//! `McpLayer` scans each POST once and puts [`RoutingKeys`] in the request's extensions;
//! the layer below reads the tool from there and sends the request through that tool's
//! own `tower::limit::RateLimit` (tower's limiter is one window for one service: keying
//! is one limiter per key, each a clone of the inner service, chosen per request). Calls
//! to a limited tool beyond its rate wait for the next window, in arrival order, without
//! holding up other tools. The limiters exist for the configured tools only, so a client
//! inventing tool names cannot grow the table; other messages pass unlimited (the
//! allow-list turns unknown tools away before they get here).
//!
//! ```text
//! cargo run -p rpcscan-tower --example axum_rate_limit -- 127.0.0.1:8080
//! curl -s localhost:8080/mcp -H 'content-type: application/json' \
//!     -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search"}}'
//! ```
//!
//! `tower/tests/axum_example.rs` drives `app()` with paused time.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::extract::Extension;
use axum::http::{Request, Response};
use axum::routing::post;
use axum::Router;
use rpcscan::response::ResultResponse;
use rpcscan::OwnedMessage;
use rpcscan_tower::{McpLayer, RequestBody, RoutingKeys};
use tokio::sync::Mutex;
use tower::limit::{RateLimit, RateLimitLayer};
use tower::{Layer, Service, ServiceBuilder, ServiceExt};

/// The server: `search` at most 2 calls a second, `echo` unlimited, other tools refused.
pub fn app() -> Router {
    let limits = ToolRateLimitLayer::default().tool("search", 2, Duration::from_secs(1));
    Router::new()
        .route("/mcp", post(call))
        .layer(
            ServiceBuilder::new()
                .layer(McpLayer::new().allow_tools(["search", "echo"]))
                // axum's handlers take its own body type.
                .map_request(|request: Request<RequestBody<Body>>| request.map(Body::new))
                .layer(limits),
        )
        // Turns the handler into its route now, layers applied once: without it, axum
        // applies them to a handler's route per request, and each request would get
        // limiters of its own.
        .with_state(())
}

/// The MCP handler: answers each request with the tool it called, from the keys the layer
/// found (no second parse), or an empty result.
async fn call(
    Extension(keys): Extension<RoutingKeys>,
    Extension(message): Extension<OwnedMessage>,
) -> Response<Body> {
    let Some(id) = message.id() else {
        // A notification or a response: the layer answers 202 for any 2xx.
        return Response::new(Body::empty());
    };
    let mut result = br#"{"content":[{"type":"text","text":"#.to_vec();
    rpcscan::response::write_json_string(&mut result, keys.tool().unwrap_or_default());
    result.extend_from_slice(b"}]}");
    let answer = ResultResponse::new(id.raw(), &result).to_vec();
    Response::builder()
        .header("content-type", "application/json")
        .body(Body::from(answer))
        .unwrap_or_default()
}

/// One `tower::limit::RateLimit` per configured tool.
#[derive(Clone, Debug, Default)]
pub struct ToolRateLimitLayer {
    limits: Vec<(String, u64, Duration)>,
}

impl ToolRateLimitLayer {
    /// At most `calls` calls of `tool` per `per`.
    pub fn tool(mut self, tool: &str, calls: u64, per: Duration) -> Self {
        self.limits.push((tool.to_owned(), calls, per));
        self
    }
}

impl<S: Clone> Layer<S> for ToolRateLimitLayer {
    type Service = ToolRateLimit<S>;

    fn layer(&self, inner: S) -> ToolRateLimit<S> {
        let limiters = self
            .limits
            .iter()
            .map(|(tool, calls, per)| {
                let limiter = RateLimitLayer::new(*calls, *per).layer(inner.clone());
                (tool.clone(), Arc::new(Mutex::new(limiter)))
            })
            .collect();
        ToolRateLimit { inner, limiters: Arc::new(limiters) }
    }
}

/// The service of [`ToolRateLimitLayer`]: the tool of each request
/// ([`RoutingKeys::tool`]) picks its limiter.
#[derive(Clone)]
pub struct ToolRateLimit<S> {
    inner: S,
    /// Fixed when the layer is built: a key no one configured never gets an entry.
    limiters: Arc<HashMap<String, Arc<Mutex<RateLimit<S>>>>>,
}

type BoxFuture<T, E> = Pin<Box<dyn Future<Output = Result<T, E>> + Send>>;

impl<S, B> Service<Request<B>> for ToolRateLimit<S>
where
    S: Service<Request<B>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    B: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = BoxFuture<S::Response, S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        // The key is known only in `call`: readiness of a tool's window is awaited there.
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let keys = request.extensions().get::<RoutingKeys>();
        let limiter = keys.and_then(RoutingKeys::tool).and_then(|tool| self.limiters.get(tool));
        match limiter.cloned() {
            None => Box::pin(self.inner.call(request)),
            Some(limiter) => Box::pin(async move {
                // Callers of one tool queue on its limiter (tokio's mutex is fair); the
                // lock is held until the window lets this call through.
                let call = {
                    let mut limiter = limiter.lock().await;
                    limiter.ready().await?.call(request)
                };
                call.await
            }),
        }
    }
}

#[allow(dead_code)] // The test includes this file for `app()`.
#[tokio::main]
async fn main() -> std::io::Result<()> {
    let at = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:8080".to_owned());
    let listener = tokio::net::TcpListener::bind(&at).await?;
    eprintln!("MCP on http://{}/mcp", listener.local_addr()?);
    axum::serve(listener, app()).await
}
