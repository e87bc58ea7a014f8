//! `rpcscan gateway --listen ADDR --upstream URL`: an MCP Streamable HTTP gateway in front
//! of one upstream server: the `McpLayer` over `rpcscan_tower::gateway::Upstream`, served
//! by `conn` (connection caps and timeouts, TLS, graceful shutdown; hyper): POST, GET (server streams) and DELETE pass with their
//! session headers; every POSTed message is scanned once and checked (size, validity,
//! `Mcp-*` headers, duplicate routing keys, the policy flags of `rpcscan proxy`), and the
//! answers are checked (JSON) or observed as they stream (SSE).
//!
//! `--log FILE` writes the records of `rpcscan proxy --log` (`crate::log`): `c2s` around
//! each client message, passed on or not, `s2c` around each message the client gets,
//! verbatim (each message of an SSE answer on its own; the gateway's own answers with
//! `"origin":"gateway"`, an upstream's error answer with its `status` and `request_id`),
//! and `proxy` for each rejection. `--metrics ADDR` serves the Prometheus text on
//! `/metrics`. `config`: `--config FILE`, every flag in TOML, read again on SIGHUP.
//! docs/gateway.md is the operator's account.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use rpcscan_tower::{gateway, McpLayer, PrometheusObserver};
use tokio::net::TcpListener;
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::watch;
use tower_layer::Layer;

use crate::log::{self, Log};

mod config;
mod conn;
mod record;
use config::Settings;
use record::{Globs, Metrics, Record};

pub const AFTER_HELP: &str = "\
Each POST carries one JSON-RPC message: it is scanned once and checked before the upstream
sees it (413 over --max-body-size; 400 with -32700 and id null when not JSON, -32600 when
not a valid message, -32020 when Mcp-Method / Mcp-Name / MCP-Protocol-Version disagree with
the body; 400 for a duplicated params.name / uri / _meta). JSON answers must answer the request's id (else 502); SSE
answers pass event by event as they arrive. GET streams and DELETE pass untouched.

Policy: the flags of `rpcscan proxy` (globs, a deny wins, protocol methods always pass),
compared on decoded names. A denied request is answered -32601 (method) or -32602 (tool)
with HTTP 200; a denied notification gets HTTP 400.

Connections: a client that does not send its header block within --header-timeout gets 408
and is closed (HTTP/1.1); a connection with nothing in flight and nothing received for
--idle-timeout is closed; past --max-connections, or --max-connections-per-client from one
IP address, a new connection gets 503 and is closed (over TLS: closed). All are counted on
/metrics (rpcscan_connections_*). The soft limit on open files is raised to the hard one.
More in docs/gateway.md.

--config FILE: a TOML file with any of the flags under their own names (deny-tool =
[\"exec*\"], header-timeout = \"10s\", max-body-size = \"4MiB\"); flags given on the command
line win (a list flag replaces the file's list). Paths in it are relative to its folder.

Signals: SIGTERM or SIGINT stops accepting, lets requests in flight and open SSE streams
finish for up to --drain, closes the rest and exits 0. SIGHUP reads --config again and
applies the policy, origins, sizes, timeouts, connection caps and the TLS certificate
without dropping a connection (the listen, upstream, log and metrics addresses need a
restart).

The listen addresses must be loopback unless --allow-remote: the gateway adds no
authentication, and without --tls-cert/--tls-key no TLS.

Examples:
  rpcscan gateway --listen 127.0.0.1:8080 --upstream http://127.0.0.1:3001/mcp
  rpcscan gateway --listen 127.0.0.1:8080 --upstream http://127.0.0.1:3001/mcp \\
      --deny-tool 'exec*' --log mcp.ndjson --metrics 127.0.0.1:9090
  rpcscan gateway --config /etc/rpcscan/gateway.toml --tls-cert cert.pem --tls-key key.pem

It runs until SIGINT or SIGTERM (exit 0); 2 if it cannot start.";

/// `rpcscan gateway` options. Each has a key of the same name in the `--config` file.
#[derive(Args, Debug)]
pub struct GatewayArgs {
    /// Read the flags from this TOML file (flags given here win); SIGHUP reads it again.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Address to serve MCP on (IP:PORT; port 0 picks one, printed on stderr). Required.
    #[arg(long, value_name = "ADDR")]
    listen: Option<SocketAddr>,
    /// The upstream Streamable HTTP server (`http://HOST:PORT/PATH`). Required.
    #[arg(long, value_name = "URL")]
    upstream: Option<String>,
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
    /// Largest POST body; larger ones get 413. K, M, G are powers of 1024. [default: 4MiB]
    #[arg(long, value_name = "SIZE", value_parser = crate::parse_size)]
    max_body_size: Option<usize>,
    /// Time from a request's head to the upstream's answer head (0: none). [default: 30s]
    #[arg(long, value_name = "DURATION", value_parser = rpcscan_traffic::duration::parse_duration)]
    request_timeout: Option<Duration>,
    /// Time to receive a request's header block, else 408 and close (0: none); it runs
    /// too while a kept-alive HTTP/1.1 connection waits for its next request. [default: 10s]
    #[arg(long, value_name = "DURATION", value_parser = rpcscan_traffic::duration::parse_duration)]
    header_timeout: Option<Duration>,
    /// Close a connection with no request in flight and nothing received for this long
    /// (0: never). [default: 60s]
    #[arg(long, value_name = "DURATION", value_parser = rpcscan_traffic::duration::parse_duration)]
    idle_timeout: Option<Duration>,
    /// Connections open at once; more get 503 and are closed (0: no cap). [default: 1024]
    #[arg(long, value_name = "N")]
    max_connections: Option<usize>,
    /// Connections open at once from one IP address; more get 503 (0: no cap). [default: 128]
    #[arg(long, value_name = "N")]
    max_connections_per_client: Option<usize>,
    /// On SIGTERM, how long requests in flight and SSE streams may go on. [default: 10s]
    #[arg(long, value_name = "DURATION", value_parser = rpcscan_traffic::duration::parse_duration)]
    drain: Option<Duration>,
    /// Serve HTTPS with this PEM certificate chain (with --tls-key; HTTP/2 or HTTP/1.1 by ALPN).
    #[arg(long, value_name = "FILE")]
    tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long, value_name = "FILE")]
    tls_key: Option<PathBuf>,
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
    // On one CPU (a container's quota, `taskset`) a current-thread runtime does what one
    // work-stealing worker would, for ~10% less CPU per request. The OTLP exporter's
    // batch task needs the multi-thread runtime to flush at exit (`block_in_place`).
    let one_cpu = std::thread::available_parallelism().is_ok_and(|n| n.get() == 1);
    let otlp = Settings::resolve(&args).map_or(true, |s| s.otlp_endpoint.is_some());
    let mut builder = if one_cpu && !otlp {
        tokio::runtime::Builder::new_current_thread()
    } else {
        tokio::runtime::Builder::new_multi_thread()
    };
    let runtime = match builder.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("rpcscan gateway: cannot start the runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let code = runtime.block_on(serve(args));
    // Connections still open after the drain would keep the runtime's drop waiting on
    // their tasks.
    runtime.shutdown_background();
    ExitCode::from(code)
}

/// The service the gateway serves: the layer over the upstream.
type Gateway = rpcscan_tower::McpService<gateway::Upstream>;

/// The layer the settings describe (policy, origins, sizes, timeouts), observed by the
/// counters and the log when they are on.
fn layer(settings: &Settings, metrics: &Option<Arc<PrometheusObserver>>, log: &Log) -> McpLayer {
    let policy = Arc::new(settings.policy.clone());
    let mut layer = McpLayer::new()
        .max_body_size(settings.max_body_size)
        .request_timeout(Some(settings.request_timeout).filter(|t| !t.is_zero()));
    if metrics.is_some() || log.on() {
        let record =
            Record { metrics: metrics.clone(), log: log.clone(), policy: Arc::clone(&policy) };
        layer = layer.observer(record);
    }
    if !policy.is_open() {
        layer = layer.policy(Globs(policy));
    }
    if !settings.allow_origin.is_empty() {
        layer = layer.allow_origins(settings.allow_origin.clone());
    }
    if settings.otlp_endpoint.is_some() {
        // Spans take their parent from the message's `_meta` (W3C trace context).
        layer = crate::otlp::traced(layer);
    }
    layer
}

fn tls_of(settings: &Settings) -> Result<Option<tokio_rustls::TlsAcceptor>, String> {
    settings.tls.as_ref().map(|(cert, key)| conn::tls_acceptor(cert, key)).transpose()
}

async fn serve(args: GatewayArgs) -> u8 {
    let fail = |what: &str, e: &dyn std::fmt::Display| {
        eprintln!("rpcscan gateway: {what}: {e}");
        2
    };
    let settings = match Settings::resolve(&args) {
        Ok(settings) => settings,
        Err(e) => return fail("settings", &e),
    };
    for addr in std::iter::once(&settings.listen).chain(&settings.metrics) {
        if !settings.allow_remote && !addr.ip().is_loopback() {
            return fail("refusing a non-loopback address without --allow-remote", addr);
        }
    }
    let upstream = match settings.upstream.parse() {
        Ok(uri) => match gateway::Upstream::new(uri) {
            Ok(upstream) => upstream,
            Err(e) => return fail("--upstream", &e),
        },
        Err(e) => return fail("--upstream", &e),
    };
    let tls = match tls_of(&settings) {
        Ok(tls) => tls,
        Err(e) => return fail("TLS", &e),
    };
    let (log, log_writer) = match log::open(settings.log.as_deref()) {
        Ok(log) => log,
        Err(e) => return fail("--log", &e),
    };
    // Exports until this function returns (then flushes the spans still waiting).
    let _otlp = match settings.otlp_endpoint.as_deref().map(crate::otlp::exporter).transpose() {
        Ok(otlp) => otlp,
        Err(e) => return fail("--otlp-endpoint", &e),
    };
    // Counting messages costs a lock per message: only when someone reads the counts.
    let metrics = settings.metrics.map(|_| Arc::new(PrometheusObserver::new()));
    let service: Gateway = layer(&settings, &metrics, &log).layer(upstream.clone());
    let stats = Arc::new(conn::Stats::default());
    let server = Arc::new(conn::Server::new(service, settings.limits, tls, Arc::clone(&stats)));

    let files = conn::raise_fd_limit().unwrap_or(0);
    let needed = 2 * settings.limits.max_connections as u64 + 64;
    if files != 0 && settings.limits.max_connections != 0 && files < needed {
        eprintln!(
            "rpcscan gateway: warning: {files} open files allowed, --max-connections {} may \
             need {needed}",
            settings.limits.max_connections
        );
    }
    let listener = match TcpListener::bind(settings.listen).await {
        Ok(listener) => listener,
        Err(e) => return fail(&format!("cannot listen on {}", settings.listen), &e),
    };
    let metrics_listener = match settings.metrics {
        Some(at) => match TcpListener::bind(at).await {
            Ok(listener) => Some(listener),
            Err(e) => return fail(&format!("cannot listen on {at}"), &e),
        },
        None => None,
    };
    let (Ok(mut sigterm), Ok(mut sigint), Ok(mut sighup)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
        signal(SignalKind::hangup()),
    ) else {
        return fail("signals", &"cannot catch SIGTERM, SIGINT and SIGHUP");
    };
    // Scripts and tests read the bound addresses (port 0) from these lines.
    if let Ok(at) = listener.local_addr() {
        let tls = if settings.tls.is_some() { " (TLS)" } else { "" };
        eprintln!("rpcscan gateway: listening on {at}, upstream {}{tls}", settings.upstream);
    }
    if let (Some(listener), Some(metrics)) = (metrics_listener, metrics.clone()) {
        if let Ok(at) = listener.local_addr() {
            eprintln!("rpcscan gateway: metrics on http://{at}/metrics");
        }
        tokio::spawn(gateway::serve(listener, Metrics(metrics, Arc::clone(&stats))));
    }

    let (stop, stopped) = watch::channel(false);
    let mut accepting = tokio::spawn(Arc::clone(&server).serve(listener, stopped));
    let mut current = settings;
    let code = loop {
        tokio::select! {
            result = &mut accepting => break match result {
                Ok(Ok(())) => 0,
                Ok(Err(e)) => fail("accept", &e),
                Err(e) => fail("accept", &e),
            },
            _ = sigterm.recv() => break 0,
            _ = sigint.recv() => break 0,
            _ = sighup.recv() => {
                if args.config.is_none() {
                    eprintln!("rpcscan gateway: SIGHUP: no --config to read");
                    continue;
                }
                let reloaded = Settings::resolve(&args).and_then(|new| Ok((tls_of(&new)?, new)));
                match reloaded {
                    Ok((tls, new)) => {
                        let fixed = current.fixed_changes(&new);
                        if !fixed.is_empty() {
                            eprintln!(
                                "rpcscan gateway: SIGHUP: {} changed: kept until a restart",
                                fixed.join(", ")
                            );
                        }
                        let service = layer(&new, &metrics, &log).layer(upstream.clone());
                        server.replace(service, new.limits, tls);
                        eprintln!("rpcscan gateway: reloaded {}", args.config.as_deref().map_or_else(Default::default, |p| p.display().to_string()));
                        current = Settings { listen: current.listen, upstream: current.upstream, log: current.log, metrics: current.metrics, allow_remote: current.allow_remote, otlp_endpoint: current.otlp_endpoint, tls: current.tls.clone().and(new.tls.clone()), ..new };
                    }
                    // A broken file leaves the gateway as it was.
                    Err(e) => eprintln!("rpcscan gateway: SIGHUP: {e}; the settings are unchanged"),
                }
            }
        }
    };
    eprintln!("rpcscan gateway: stopping, draining for up to {:?}", current.drain);
    server.drain(stop, current.drain).await;
    log_writer.finish();
    code
}
