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

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use rpcscan_tower::{gateway, McpLayer, PrometheusObserver};
use tokio::net::TcpListener;
use tokio::signal::unix::{signal, SignalKind};
use tower_layer::Layer;

use crate::log;
use crate::policy::Policy;

mod record;
use record::{Globs, Metrics, Record};

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
