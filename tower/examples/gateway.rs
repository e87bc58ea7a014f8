//! A gateway in front of one upstream MCP Streamable HTTP server:
//!
//! ```text
//! cargo run -p rpcscan-tower --features gateway --example gateway -- \
//!     --listen 127.0.0.1:8080 --upstream http://127.0.0.1:3001/mcp \
//!     [--metrics 127.0.0.1:9090] [--allow-tool NAME]... [--allow-method NAME]... \
//!     [--allow-origin ORIGIN]... [--max-body BYTES] [--request-timeout-ms MS] [--envelope]
//! ```
//!
//! `/metrics` (any path) on the `--metrics` address renders the Prometheus text.

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::Full;
use rpcscan_tower::{gateway, McpLayer, PrometheusObserver};
use tower::{service_fn, Layer};

fn usage(problem: &str) -> ! {
    eprintln!("gateway: {problem}\nusage: gateway --listen ADDR --upstream URL [--metrics ADDR] [--allow-tool NAME]... [--allow-method NAME]... [--allow-origin ORIGIN]... [--max-body BYTES] [--request-timeout-ms MS] [--envelope]");
    std::process::exit(2)
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let (mut listen, mut upstream, mut metrics_at) = (None, None, None);
    let (mut tools, mut methods, mut origins) = (Vec::new(), Vec::new(), Vec::new());
    let mut layer = McpLayer::new();
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        if flag == "--envelope" {
            layer = layer.validation(rpcscan::Validation::Envelope);
            continue;
        }
        let Some(value) = args.next() else { usage(&format!("{flag} needs a value")) };
        match flag.as_str() {
            "--listen" => listen = Some(value),
            "--upstream" => upstream = Some(value),
            "--metrics" => metrics_at = Some(value),
            "--allow-tool" => tools.push(value),
            "--allow-method" => methods.push(value),
            "--allow-origin" => origins.push(value),
            "--max-body" => match value.parse() {
                Ok(max) => layer = layer.max_body_size(max),
                Err(_) => usage("--max-body takes a number of bytes"),
            },
            "--request-timeout-ms" => match value.parse() {
                Ok(ms) => layer = layer.request_timeout(Some(std::time::Duration::from_millis(ms))),
                Err(_) => usage("--request-timeout-ms takes a number of milliseconds"),
            },
            _ => usage(&format!("unknown flag {flag}")),
        }
    }
    let listen = listen.unwrap_or_else(|| usage("--listen is required"));
    let upstream = upstream.unwrap_or_else(|| usage("--upstream is required"));
    let upstream = match upstream.parse() {
        Ok(uri) => gateway::Upstream::new(uri)?,
        Err(_) => usage("--upstream is not a URL"),
    };
    if !tools.is_empty() {
        layer = layer.allow_tools(tools);
    }
    if !methods.is_empty() {
        layer = layer.allow_methods(methods);
    }
    if !origins.is_empty() {
        layer = layer.allow_origins(origins);
    }
    let metrics = Arc::new(PrometheusObserver::new());
    let layer = layer.observer(Arc::clone(&metrics));

    if let Some(at) = metrics_at {
        let listener = tokio::net::TcpListener::bind(&at).await?;
        let render = service_fn(move |_: Request<hyper::body::Incoming>| {
            let text = metrics.render();
            async move {
                let response = Response::builder()
                    .header("content-type", "text/plain; version=0.0.4")
                    .body(Full::new(Bytes::from(text)));
                Ok::<_, Infallible>(response.unwrap_or_default())
            }
        });
        tokio::spawn(gateway::serve(listener, render));
    }
    let listener = tokio::net::TcpListener::bind(&listen).await?;
    eprintln!("gateway: {} -> upstream", listener.local_addr()?);
    gateway::serve(listener, layer.layer(upstream)).await
}
