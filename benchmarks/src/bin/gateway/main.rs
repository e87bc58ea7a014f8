//! `rpcscan gateway` under load: requests/s, p50/p99 latency and the gateway process's CPU
//! time per request, for a 1 KB MCP `tools/call` POSTed over loopback to a minimal hyper
//! upstream three ways: directly, through `rpcscan gateway`, and through the same hyper
//! gateway with a serde_json `Value` layer doing the same checks (`serde_layer.rs`). The
//! load generator is `wrk` (Debian: `apt-get install wrk`) with a small Lua script.
//!
//! ```text
//! cargo build --release -p rpcscan-cli -p rpcscan-benchmarks --bin rpcscan --bin gateway
//! target/release/gateway [--duration 10s] [--connections 32] [--threads 2] [--rpcscan PATH]
//! target/release/gateway --smoke      # each target answers; 1 s of wrk when installed
//! ```
//!
//! The gateways run as their own processes (`rpcscan gateway`, and this program with
//! `serve-serde`), so `/proc/PID/stat` gives each one's CPU time alone.

mod serde_layer;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use tower_service::Service;

/// The answer of the upstream: a `tools/call` result for id 1 (the only id sent).
const ANSWER: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}],"isError":false}}"#;

/// The POSTed message: a `tools/call` of `search` padded to 1 KB with a query text.
fn message() -> String {
    let head = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":""#;
    let tail = r#""},"_meta":{"progressToken":"p-1"}}}"#;
    let pad = 1024 - head.len() - tail.len();
    let text: String = "lorem ipsum dolor sit amet ".chars().cycle().take(pad).collect();
    format!("{head}{text}{tail}")
}

#[derive(Clone)]
struct MinimalUpstream;

impl Service<Request<Incoming>> for MinimalUpstream {
    type Response = Response<Full<Bytes>>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Incoming>) -> Self::Future {
        Box::pin(async move {
            // Read the body, as a real server would, then answer.
            let _ = request.into_body().collect().await;
            let mut response = Response::new(Full::new(Bytes::from_static(ANSWER.as_bytes())));
            response.headers_mut().insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static("application/json"),
            );
            Ok(response)
        })
    }
}

struct Options {
    duration: String,
    connections: u32,
    threads: u32,
    rpcscan: PathBuf,
    smoke: bool,
}

fn usage(problem: &str) -> ! {
    eprintln!(
        "gateway: {problem}\nusage: gateway [--smoke] [--duration 10s] [--connections 32] [--threads 2] [--rpcscan PATH]"
    );
    std::process::exit(2)
}

fn options() -> Options {
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join("rpcscan")))
        .unwrap_or_else(|| PathBuf::from("rpcscan"));
    let mut o = Options {
        duration: "10s".into(),
        connections: 32,
        threads: 2,
        rpcscan: beside,
        smoke: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        if flag == "--smoke" {
            o.smoke = true;
            continue;
        }
        let value = args.next().unwrap_or_else(|| usage(&format!("{flag} needs a value")));
        let number = |v: &str| v.parse().unwrap_or_else(|_| usage(&format!("{flag}: {v}?")));
        match flag.as_str() {
            "--duration" => o.duration = value,
            "--connections" => o.connections = number(&value),
            "--threads" => o.threads = number(&value),
            "--rpcscan" => o.rpcscan = value.into(),
            _ => usage(&format!("unknown option {flag}")),
        }
    }
    if o.smoke {
        (o.duration, o.connections, o.threads) = ("1s".into(), 2, 1);
    }
    o
}

fn main() {
    let mut args = std::env::args().skip(1);
    if args.next().as_deref() == Some("serve-serde") {
        let upstream = args.next().unwrap_or_else(|| usage("serve-serde UPSTREAM_URL"));
        serve_serde(&upstream);
        return;
    }
    let o = options();
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let listener =
        runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).expect("bind the upstream");
    let upstream = listener.local_addr().expect("upstream address");
    runtime.spawn(rpcscan_tower::gateway::serve(listener, MinimalUpstream));
    let upstream_url = format!("http://{upstream}/mcp");

    let script =
        std::env::temp_dir().join(format!("rpcscan-gateway-bench-{}.lua", std::process::id()));
    let body = message();
    assert_eq!(body.len(), 1024);
    assert!(rpcscan::parse(body.as_bytes()).is_ok());
    std::fs::write(&script, lua(&body)).expect("write the wrk script");
    let wrk = Command::new("wrk").arg("--version").output().is_ok();
    if !wrk && !o.smoke {
        usage("wrk is not installed (Debian: apt-get install wrk)");
    }

    let tck = clock_ticks();
    println!("1 KB tools/call POSTs, wrk -t{} -c{} -d{}", o.threads, o.connections, o.duration);
    println!(
        "{:<28}{:>12}{:>12}{:>12}{:>16}",
        "target", "requests/s", "p50", "p99", "CPU µs/request"
    );
    let mut rows = Vec::new();
    for target in ["direct", "rpcscan gateway", "serde_json Value gateway"] {
        let mut child = match target {
            "direct" => None,
            "rpcscan gateway" => Some(spawn(Command::new(&o.rpcscan).args([
                "gateway",
                "--listen",
                "127.0.0.1:0",
                "--upstream",
                &upstream_url,
                "--deny-tool",
                "exec*",
            ]))),
            _ => Some(spawn(
                Command::new(std::env::current_exe().expect("this program"))
                    .args(["serve-serde", &upstream_url]),
            )),
        };
        let addr = match &mut child {
            None => upstream,
            Some((_, addr)) => *addr,
        };
        // Every target answers the message correctly before it is timed.
        let answer = post(addr, &body);
        assert!(answer.ends_with(ANSWER), "{target}: {answer}");
        let pid = child.as_ref().map(|(c, _)| c.id());
        let before = pid.map(cpu_ticks);
        let result = if wrk { Some(run_wrk(&o, &script, addr)) } else { None };
        let after = pid.map(cpu_ticks);
        if let Some((mut c, _)) = child {
            let _ = c.kill();
            let _ = c.wait();
        }
        let Some((rps, requests, p50, p99)) = result else {
            println!("{target:<28}{:>12}", "answered (no wrk)");
            continue;
        };
        let cpu = match (before, after) {
            (Some(b), Some(a)) if requests > 0 => {
                format!("{:.1}", (a - b) as f64 / tck * 1e6 / requests as f64)
            }
            _ => "-".into(),
        };
        println!("{target:<28}{rps:>12.0}{p50:>12}{p99:>12}{cpu:>16}");
        rows.push((target, rps));
    }
    let _ = std::fs::remove_file(&script);
    if let (Some(direct), Some(gateway)) = (rows.first(), rows.get(1)) {
        println!(
            "rpcscan gateway: {:.1}% of direct throughput",
            100.0 * gateway.1 / direct.1.max(1.0)
        );
    }
}

/// The comparison gateway, as its own process: prints its address like `rpcscan gateway`.
fn serve_serde(upstream: &str) {
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    runtime.block_on(async {
        let upstream = rpcscan_tower::gateway::Upstream::new(upstream.parse().expect("a URL"))
            .expect("an http:// upstream");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("address");
        eprintln!("rpcscan gateway: listening on {addr}, serde_json Value layer");
        let service = serde_layer::SerdeGateway { upstream, deny_tool_prefix: "exec".into() };
        let _ = rpcscan_tower::gateway::serve(listener, service).await;
    });
}

/// Starts a gateway and reads the address it listens on from its stderr.
fn spawn(command: &mut Command) -> (Child, SocketAddr) {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            usage(&format!("cannot start {command:?}: {e} (build rpcscan-cli, or --rpcscan PATH)"))
        });
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let mut line = String::new();
    let _ = stderr.read_line(&mut line);
    let addr = line
        .strip_prefix("rpcscan gateway: listening on ")
        .and_then(|rest| rest.split(',').next())
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| usage(&format!("{command:?} said {line:?}")));
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    (child, addr)
}

/// One POST over a fresh connection; the raw answer.
fn post(addr: SocketAddr, body: &str) -> String {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
    let _ = write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Method: tools/call\r\nMcp-Name: search\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut raw = String::new();
    let _ = stream.read_to_string(&mut raw);
    raw
}

fn lua(body: &str) -> String {
    let quoted = body.replace('\\', "\\\\").replace('"', "\\\"");
    format!(
        "wrk.method = \"POST\"\nwrk.body = \"{quoted}\"\n\
         wrk.headers[\"Content-Type\"] = \"application/json\"\n\
         wrk.headers[\"Accept\"] = \"application/json, text/event-stream\"\n\
         wrk.headers[\"Mcp-Method\"] = \"tools/call\"\n\
         wrk.headers[\"Mcp-Name\"] = \"search\"\n\
         done = function(summary, latency, requests)\n\
         \x20 io.write(string.format(\"RESULT %d %d %d %d\\n\", summary.requests, summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout, latency:percentile(50), latency:percentile(99)))\n\
         end\n"
    )
}

/// wrk against `addr`: (requests/s, requests, p50, p99); fails on any error or non-2xx.
fn run_wrk(o: &Options, script: &std::path::Path, addr: SocketAddr) -> (f64, u64, String, String) {
    let out = Command::new("wrk")
        .args([
            &format!("-t{}", o.threads),
            &format!("-c{}", o.connections),
            &format!("-d{}", o.duration),
            "-s",
        ])
        .arg(script)
        .arg(format!("http://{addr}/mcp"))
        .output()
        .expect("run wrk");
    let text = String::from_utf8_lossy(&out.stdout);
    let rps = text
        .lines()
        .find_map(|l| l.strip_prefix("Requests/sec:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no Requests/sec in wrk's output: {text}"));
    let result: Vec<u64> = text
        .lines()
        .find_map(|l| l.strip_prefix("RESULT "))
        .map(|r| r.split(' ').filter_map(|n| n.parse().ok()).collect())
        .unwrap_or_default();
    let [requests, errors, p50, p99] = result[..] else {
        panic!("no RESULT line in wrk's output: {text}");
    };
    assert_eq!(errors, 0, "wrk saw errors: {text}");
    let us = |v: u64| {
        if v >= 1000 {
            format!("{:.2} ms", v as f64 / 1000.0)
        } else {
            format!("{v} µs")
        }
    };
    (rps, requests, us(p50), us(p99))
}

/// utime + stime of a process, in clock ticks (`/proc/PID/stat` fields 14 and 15).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The command name (field 2) may hold spaces: count from the closing parenthesis.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let field = |i: usize| fields.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    field(11) + field(12)
}

/// Clock ticks per second (`getconf CLK_TCK`; 100 on Linux when that fails).
fn clock_ticks() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(100.0)
}
