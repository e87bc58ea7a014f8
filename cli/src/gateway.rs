//! `rpcscan gateway --listen ADDR --upstream URL`: an MCP Streamable HTTP gateway in front
//! of one upstream server. A thin wrapper over `rpcscan_tower::gateway` (hyper on both
//! sides, the `McpLayer` in front): POST, GET (server streams) and DELETE pass with their
//! session headers; every POSTed message is scanned once and checked (size, validity,
//! `Mcp-*` headers, duplicate routing keys, the policy flags of `rpcscan proxy`), and the
//! answers are checked (JSON) or observed as they stream (SSE).
//!
//! `--log FILE` writes the records of `rpcscan proxy --log` (`crate::log`): `c2s` around
//! each client message, passed on or not, `s2c` around each message the client gets,
//! verbatim (each message of an SSE answer on its own; the gateway's own answers with
//! `"origin":"gateway"`, an upstream's error answer with its `status` and `request_id`),
//! and `proxy` for each rejection. `--metrics ADDR` serves the Prometheus text on
//! `/metrics`.

use std::convert::Infallible;
use std::future::{ready, Ready};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use clap::Args;
use http::{Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::Incoming;
use rpcscan::mcp::Mcp;
use rpcscan::{Kind, Message};
use rpcscan_tower::{
    gateway, Decision, Denial, Direction, Event, McpLayer, Observer, PrometheusObserver, Rejection,
};
use tokio::net::TcpListener;
use tokio::signal::unix::{signal, SignalKind};
use tower_layer::Layer;
use tower_service::Service;

use crate::log::{self, Log, Traffic};
use crate::policy::{self, Policy};

pub const AFTER_HELP: &str = "\
Each POST carries one JSON-RPC message: it is scanned once and checked before the upstream
sees it (413 over --max-body-size, 400 with -32700/-32600 when invalid, 400 with -32020 when
Mcp-Method / Mcp-Name / MCP-Protocol-Version disagree with the body, 400 for a duplicated
params.name / uri / _meta). JSON answers must answer the request's id (else 502); SSE
answers pass event by event as they arrive. GET streams and DELETE pass untouched.

Policy: the flags of `rpcscan proxy` (globs, a deny wins, protocol methods always pass),
compared on decoded names. A denied request is answered -32601 (method) or -32602 (tool)
with HTTP 200; a denied notification gets HTTP 400.

The listen addresses must be loopback unless --allow-remote: the gateway adds no TLS and
no authentication.

Examples:
  rpcscan gateway --listen 127.0.0.1:8080 --upstream http://127.0.0.1:3001/mcp
  rpcscan gateway --listen 127.0.0.1:8080 --upstream http://127.0.0.1:3001/mcp \\
      --deny-tool 'exec*' --log mcp.ndjson --metrics 127.0.0.1:9090

It runs until SIGINT or SIGTERM (exit 0); 2 if it cannot start.";

/// `rpcscan gateway` options.
#[derive(Args, Debug)]
pub struct GatewayArgs {
    /// Address to serve MCP on (IP:PORT; port 0 picks one, printed on stderr).
    #[arg(long, value_name = "ADDR")]
    listen: SocketAddr,
    /// The upstream Streamable HTTP server (`http://HOST:PORT/PATH`).
    #[arg(long, value_name = "URL")]
    upstream: String,
    /// Forward only client methods matching one of these globs (protocol methods always pass).
    #[arg(long, value_name = "GLOB")]
    allow_method: Vec<String>,
    /// Answer client requests whose method matches with -32601 (notifications: HTTP 400).
    #[arg(long, value_name = "GLOB")]
    deny_method: Vec<String>,
    /// Allow only these tools in `tools/call` (`params.name`).
    #[arg(long, value_name = "GLOB")]
    allow_tool: Vec<String>,
    /// Refuse these tools in `tools/call` (answered -32602).
    #[arg(long, value_name = "GLOB")]
    deny_tool: Vec<String>,
    /// Accept only requests without `Origin` or with one of these (DNS rebinding).
    #[arg(long, value_name = "ORIGIN")]
    allow_origin: Vec<String>,
    /// Largest POST body; larger ones get 413. K, M, G are powers of 1024.
    #[arg(long, value_name = "SIZE", default_value = "4MiB", value_parser = crate::parse_size)]
    max_body_size: usize,
    /// Time from a request's head to the upstream's answer head (0: none). `30s`, `500ms`.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = rpcscan_traffic::duration::parse_duration)]
    request_timeout: Duration,
    /// Write every message, answer and rejection to FILE, one JSON object per line.
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    /// Serve Prometheus metrics on this address (`/metrics`).
    #[arg(long, value_name = "ADDR")]
    metrics: Option<SocketAddr>,
    /// Allow listen addresses other than loopback.
    #[arg(long)]
    allow_remote: bool,
    /// Export a span per MCP message (OpenTelemetry MCP conventions) to this OTLP/HTTP
    /// traces endpoint, protobuf (`http://127.0.0.1:4318/v1/traces`).
    #[arg(long, value_name = "URL")]
    otlp_endpoint: Option<String>,
}

/// Runs the gateway until SIGINT or SIGTERM.
pub fn run(args: GatewayArgs) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("rpcscan gateway: cannot start the runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let code = runtime.block_on(serve(args));
    // Connections still open would keep the runtime's drop waiting on their tasks.
    runtime.shutdown_background();
    ExitCode::from(code)
}

async fn serve(args: GatewayArgs) -> u8 {
    let fail = |what: &str, e: &dyn std::fmt::Display| {
        eprintln!("rpcscan gateway: {what}: {e}");
        2
    };
    for addr in std::iter::once(&args.listen).chain(&args.metrics) {
        if !args.allow_remote && !addr.ip().is_loopback() {
            return fail("refusing a non-loopback address without --allow-remote", addr);
        }
    }
    let upstream = match args.upstream.parse() {
        Ok(uri) => match gateway::Upstream::new(uri) {
            Ok(upstream) => upstream,
            Err(e) => return fail("--upstream", &e),
        },
        Err(e) => return fail("--upstream", &e),
    };
    let (log, log_writer) = match log::open(args.log.as_deref()) {
        Ok(log) => log,
        Err(e) => return fail("--log", &e),
    };
    let policy = Arc::new(Policy {
        allow_methods: args.allow_method,
        deny_methods: args.deny_method,
        allow_tools: args.allow_tool,
        deny_tools: args.deny_tool,
    });
    // Counting costs a lock per message: only when someone reads the counts.
    let metrics = args.metrics.map(|_| Arc::new(PrometheusObserver::new()));
    let mut layer = McpLayer::new()
        .max_body_size(args.max_body_size)
        .request_timeout(Some(args.request_timeout).filter(|t| !t.is_zero()));
    if metrics.is_some() || log.on() {
        layer =
            layer.observer(Record { metrics: metrics.clone(), log, policy: Arc::clone(&policy) });
    }
    if !policy.is_open() {
        layer = layer.policy(Globs(policy));
    }
    if !args.allow_origin.is_empty() {
        layer = layer.allow_origins(args.allow_origin);
    }
    // Exports until this function returns (then flushes).
    let (layer, _otlp) = match crate::otlp::install(args.otlp_endpoint.as_deref(), layer) {
        Ok(installed) => installed,
        Err(e) => return fail("--otlp-endpoint", &e),
    };

    let listener = match TcpListener::bind(args.listen).await {
        Ok(listener) => listener,
        Err(e) => return fail(&format!("cannot listen on {}", args.listen), &e),
    };
    let metrics_listener = match args.metrics {
        Some(at) => match TcpListener::bind(at).await {
            Ok(listener) => Some(listener),
            Err(e) => return fail(&format!("cannot listen on {at}"), &e),
        },
        None => None,
    };
    let (Ok(mut sigterm), Ok(mut sigint)) =
        (signal(SignalKind::terminate()), signal(SignalKind::interrupt()))
    else {
        return fail("signals", &"cannot catch SIGTERM and SIGINT");
    };
    // Scripts and tests read the bound addresses (port 0) from these lines.
    if let Ok(at) = listener.local_addr() {
        eprintln!("rpcscan gateway: listening on {at}, upstream {}", args.upstream);
    }
    if let (Some(listener), Some(metrics)) = (metrics_listener, metrics) {
        if let Ok(at) = listener.local_addr() {
            eprintln!("rpcscan gateway: metrics on http://{at}/metrics");
        }
        tokio::spawn(gateway::serve(listener, Metrics(metrics)));
    }

    let code = tokio::select! {
        result = gateway::serve(listener, layer.layer(upstream)) => match result {
            Ok(()) => 0,
            Err(e) => fail("accept", &e),
        },
        _ = sigterm.recv() => 0,
        _ = sigint.recv() => 0,
    };
    log_writer.finish();
    code
}

/// The policy flags as the layer's policy: client requests and notifications only (a
/// client's response answers the server, which asked for it).
struct Globs(Arc<Policy>);

impl rpcscan_tower::Policy for Globs {
    fn decide(&self, msg: &Message<'_>, mcp: &Mcp<'_>) -> Decision {
        if !matches!(msg.kind(), Kind::Request | Kind::Notification) {
            return Decision::Forward;
        }
        // The layer has found the routing keys already: no second walk of `params`.
        match self.0.check_with_tool(msg, || mcp.tool_name()) {
            Ok(()) => Decision::Forward,
            Err(policy::Denial::Method) => {
                Decision::Deny(Denial::new(rpcscan::response::METHOD_NOT_FOUND, "Method not found"))
            }
            Err(policy::Denial::Tool(_)) => {
                Decision::Deny(Denial::new(rpcscan::response::INVALID_PARAMS, "Unknown tool"))
            }
            Err(policy::Denial::NoToolName) => Decision::Deny(Denial::new(
                rpcscan::response::INVALID_PARAMS,
                "Invalid params: params.name must be one string for the gateway's tool policy",
            )),
        }
    }
}

/// The observer: Prometheus counters, and the `--log` records.
struct Record {
    metrics: Option<Arc<PrometheusObserver>>,
    log: Log,
    policy: Arc<Policy>,
}

impl Record {
    /// A `proxy` record for a message the layer stopped, or an invalid one.
    fn rejection(&self, event: &Event<'_>, from: &str, valid: bool) {
        let (rejected, bytes) = (event.rejected, event.bytes);
        // Only the rejection path parses again, for the id and the reason.
        let parsed = bytes.map(rpcscan::parse);
        let id = match &parsed {
            Some(Ok(msg)) => msg.id().map(|id| id.raw()),
            Some(Err(invalid)) => invalid.id().map(|id| id.raw()),
            None => None,
        };
        let reason = match (&parsed, rejected) {
            (Some(Ok(msg)), Some(Rejection::Policy)) => match self.policy.check(msg) {
                Err(policy::Denial::Method) => {
                    "method not allowed by the gateway's policy".to_owned()
                }
                Err(policy::Denial::Tool(tool)) => format!("tool {tool:?} not allowed"),
                _ => "no single tool name".to_owned(),
            },
            (_, Some(rejected)) => rejected.as_str().to_owned(),
            (_, None) => "invalid".to_owned(),
        };
        let name = match rejected {
            None | Some(Rejection::Invalid) => "invalid",
            Some(Rejection::BodyTooLarge) => "oversized",
            Some(Rejection::MethodNotAllowed | Rejection::ToolNotAllowed | Rejection::Policy) => {
                "denied"
            }
            Some(other) => other.as_str(),
        };
        self.log.event(log::Event {
            from: Some(from),
            id,
            reason: Some(&reason),
            raw: bytes.filter(|_| !valid),
            size: bytes.map(|b| b.len() as u64),
            code: event.error_code,
            session: event.session,
            msg: bytes.filter(|_| valid),
            ..log::Event::new(name)
        });
    }
}

impl Observer for Record {
    fn message(&self, event: &Event<'_>) {
        if let Some(metrics) = &self.metrics {
            metrics.message(event);
        }
        if !self.log.on() {
            return;
        }
        let from = match event.direction {
            Direction::ClientToServer => "client",
            Direction::ServerToClient => "server",
        };
        let valid = event.kind != Kind::Invalid;
        let status = event.status.map(|s| s.as_u16());
        // What the client sent is logged whether it passed or not (its answer, the layer's
        // own, must have a request to answer); an upstream message only when the client
        // got it.
        let traffic = match (event.direction, event.bytes) {
            (Direction::ClientToServer, Some(bytes)) => {
                Some(Traffic { unreadable: !valid, ..Traffic::new("c2s", bytes) })
            }
            (Direction::ServerToClient, Some(bytes)) if valid && event.rejected.is_none() => {
                // An error status binds the answer to its POST's request, whatever its id.
                let request_id = event.request_id.filter(|_| status.is_some());
                Some(Traffic { status, request_id, ..Traffic::new("s2c", bytes) })
            }
            _ => None,
        };
        if let Some(traffic) = traffic {
            self.log.traffic(Traffic { session: event.session, ..traffic });
        }
        if event.rejected.is_some() || !valid {
            self.rejection(event, from, valid);
        }
        if let Some(answer) = &event.answer {
            self.log.traffic(Traffic {
                origin: Some("gateway"),
                status: Some(answer.status.as_u16()).filter(|_| !answer.status.is_success()),
                request_id: event.request_id,
                session: event.session,
                ..Traffic::new("s2c", answer.body)
            });
        }
    }

    fn non_message_event(&self, direction: Direction, session: Option<&str>, event: &str) {
        if let Some(metrics) = &self.metrics {
            metrics.non_message_event(direction, session, event);
        }
        self.log.event(log::Event {
            from: Some(direction.as_str()),
            reason: Some(event),
            session,
            ..log::Event::new("non_message")
        });
    }
}

/// `/metrics` on its own address: the Prometheus text; 404 elsewhere.
#[derive(Clone)]
struct Metrics(Arc<PrometheusObserver>);

impl Service<Request<Incoming>> for Metrics {
    type Response = Response<Full<Bytes>>;
    type Error = Infallible;
    type Future = Ready<Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Incoming>) -> Self::Future {
        let mut response = if request.uri().path() == "/metrics" {
            let mut response = Response::new(Full::new(Bytes::from(self.0.render())));
            response.headers_mut().insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static("text/plain; version=0.0.4"),
            );
            response
        } else {
            Response::new(Full::new(Bytes::new()))
        };
        if request.uri().path() != "/metrics" {
            *response.status_mut() = StatusCode::NOT_FOUND;
        }
        ready(Ok(response))
    }
}
