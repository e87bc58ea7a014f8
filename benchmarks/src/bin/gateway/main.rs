//! `rpcscan gateway` under load: requests/s, p50/p99 latency and the gateway process's CPU
//! time per request, for a 1 KB MCP `tools/call` POSTed over loopback to a minimal hyper
//! upstream four ways: directly; through the same hyper reverse proxy with no layer
//! (`pass-through`: what any hyper gateway costs); through `rpcscan gateway`; and through
//! the hyper proxy with a serde_json `Value` layer doing the same checks
//! (`rpcscan_benchmarks::serde_layer`). A layer's own CPU per request is its gateway's minus
//! the pass-through's. The load generator is `wrk` (Debian: `apt-get install wrk`) with a
//! small Lua script.
//!
//! ```text
//! cargo build --release -p rpcscan-cli -p rpcscan-benchmarks --bin rpcscan --bin gateway
//! target/release/gateway [--duration 10s] [--connections 32] [--threads 2] [--rounds 1]
//!                        [--pin LOAD_CPUS:GATEWAY_CPUS] [--rpcscan PATH]
//! target/release/gateway --smoke      # each target answers; 1 s of wrk when installed
//! ```
//!
//! The gateways run as their own processes (`rpcscan gateway`, and this program with
//! `serve-plain` / `serve-serde`), so `/proc/PID/stat` gives each one's CPU time alone.
//! `gateway serve-upstream` runs the minimal upstream alone (to profile a gateway by hand).
//! `--pin 0:1` runs this program's upstream and wrk on CPU 0 and each gateway on CPU 1
//! (`taskset`), for the direct run too: the gateway then has a core of its own, and tokio
//! sizes each runtime to the CPUs it may use. `--rounds N` runs the targets N times in
//! turn and reports each one's median.

use std::convert::Infallible;
use std::future::Future;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::pin::Pin;
use std::process::{Child, Command, Stdio};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, Either, Full};
use hyper::body::Incoming;
use rpcscan_benchmarks::mcp_1k;
use rpcscan_benchmarks::serde_layer::SerdeLayer;
use rpcscan_tower::gateway::{Upstream, UpstreamBody};
use tower_layer::Layer;
use tower_service::Service;

/// Answers every request with the 1 KB answer.
#[derive(Clone)]
struct MinimalUpstream(Bytes);

impl Service<Request<Incoming>> for MinimalUpstream {
    type Response = Response<Full<Bytes>>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Incoming>) -> Self::Future {
        let answer = self.0.clone();
        Box::pin(async move {
            // Read the body, as a real server would, then answer.
            let _ = request.into_body().collect().await;
            let mut response = Response::new(Full::new(answer));
            response.headers_mut().insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static("application/json"),
            );
            Ok(response)
        })
    }
}

/// The pass-through gateway: the hyper reverse proxy with no layer.
#[derive(Clone)]
struct PassThrough(Upstream);

impl Service<Request<Incoming>> for PassThrough {
    type Response = Response<UpstreamBody>;
    type Error = Infallible;
    type Future = <Upstream as Service<Request<rpcscan_tower::RequestBody<Incoming>>>>::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, request: Request<Incoming>) -> Self::Future {
        self.0.call(request.map(Either::Right))
    }
}

struct Options {
    duration: String,
    connections: u32,
    threads: u32,
    rounds: usize,
    /// The CPU lists of (this program's upstream and wrk, each gateway).
    pin: Option<(String, String)>,
    rpcscan: PathBuf,
    smoke: bool,
}

fn usage(problem: &str) -> ! {
    eprintln!(
        "gateway: {problem}\nusage: gateway [--smoke] [--duration 10s] [--connections 32] [--threads 2] [--rounds 1] [--pin LOAD_CPUS:GATEWAY_CPUS] [--rpcscan PATH]"
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
        rounds: 1,
        pin: None,
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
            "--rounds" => o.rounds = number(&value) as usize,
            "--pin" => {
                let (load, gateway) =
                    value.split_once(':').unwrap_or_else(|| usage("--pin LOAD_CPUS:GATEWAY_CPUS"));
                o.pin = Some((load.into(), gateway.into()));
            }
            "--rpcscan" => o.rpcscan = value.into(),
            _ => usage(&format!("unknown option {flag}")),
        }
    }
    if o.smoke {
        (o.duration, o.connections, o.threads, o.rounds) = ("1s".into(), 2, 1, 1);
    }
    o.rounds = o.rounds.max(1);
    o
}

const TARGETS: [&str; 4] =
    ["direct", "pass-through gateway", "rpcscan gateway", "serde_json Value gateway"];

/// One timed run of one target.
#[derive(Clone, Copy)]
struct Run {
    rps: f64,
    p50: u64,
    p99: u64,
    /// The gateway's CPU time per request, µs (none for direct).
    cpu: Option<f64>,
}

fn main() {
    let mut args = std::env::args().skip(1);
    match args.next().as_deref() {
        Some(kind @ ("serve-serde" | "serve-plain")) => {
            let upstream = args.next().unwrap_or_else(|| usage("serve-serde|serve-plain URL"));
            serve_gateway(kind, &upstream);
            return;
        }
        Some("serve-upstream") => {
            serve_upstream();
            return;
        }
        _ => {}
    }
    let o = options();
    if let Some((load, _)) = &o.pin {
        // Before the runtime starts: its threads, and wrk, inherit the mask.
        let pid = std::process::id().to_string();
        let pinned = Command::new("taskset").args(["-c", "-p", load, &pid]).output();
        if !pinned.is_ok_and(|out| out.status.success()) {
            usage(&format!("taskset -c -p {load} failed"));
        }
    }
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let listener =
        runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).expect("bind the upstream");
    let upstream = listener.local_addr().expect("upstream address");
    let answer = mcp_1k::answer();
    runtime.spawn(rpcscan_tower::gateway::serve(listener, MinimalUpstream(answer.clone().into())));
    let upstream_url = format!("http://{upstream}/mcp");

    let script =
        std::env::temp_dir().join(format!("rpcscan-gateway-bench-{}.lua", std::process::id()));
    let body = mcp_1k::request();
    std::fs::write(&script, lua(&body)).expect("write the wrk script");
    let wrk = Command::new("wrk").arg("--version").output().is_ok();
    if !wrk && !o.smoke {
        usage("wrk is not installed (Debian: apt-get install wrk)");
    }

    let tck = clock_ticks();
    println!("CPU: {}; load average: {}", cpu_model(), load_average());
    println!(
        "1 KB tools/call POSTs answered with 1 KB, wrk -t{} -c{} -d{}, {} round(s){}",
        o.threads,
        o.connections,
        o.duration,
        o.rounds,
        match &o.pin {
            Some((load, gateway)) =>
                format!(", upstream and wrk on CPU {load}, gateway on CPU {gateway}"),
            None => ", unpinned".into(),
        }
    );
    let mut runs: Vec<Vec<Run>> = vec![Vec::new(); TARGETS.len()];
    for round in 0..o.rounds {
        for (t, target) in TARGETS.iter().enumerate() {
            let gateway = |command: &mut Command| -> (Child, SocketAddr) {
                match &o.pin {
                    Some((_, cpus)) => {
                        let mut pinned = Command::new("taskset");
                        pinned
                            .args(["-c", cpus])
                            .arg(command.get_program())
                            .args(command.get_args());
                        spawn(&mut pinned)
                    }
                    None => spawn(command),
                }
            };
            let this = || Command::new(std::env::current_exe().expect("this program"));
            let mut child = match t {
                0 => None,
                1 => Some(gateway(this().args(["serve-plain", &upstream_url]))),
                2 => Some(gateway(Command::new(&o.rpcscan).args([
                    "gateway",
                    "--listen",
                    "127.0.0.1:0",
                    "--upstream",
                    &upstream_url,
                    "--deny-tool",
                    "exec*",
                ]))),
                _ => Some(gateway(this().args(["serve-serde", &upstream_url]))),
            };
            let addr = match &mut child {
                None => upstream,
                Some((_, addr)) => *addr,
            };
            // Every target answers the message correctly before it is timed.
            let got = post(addr, &body);
            assert!(got.ends_with(&answer), "{target}: {got}");
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
                    Some((a - b) as f64 / tck * 1e6 / requests as f64)
                }
                _ => None,
            };
            if o.rounds > 1 {
                eprintln!(
                    "round {}: {target}: {rps:.0}/s, p50 {}, p99 {}, {} µs CPU/request",
                    round + 1,
                    us(p50),
                    us(p99),
                    cpu.map_or("-".into(), |c| format!("{c:.1}"))
                );
            }
            runs[t].push(Run { rps, p50, p99, cpu });
        }
    }
    let _ = std::fs::remove_file(&script);
    if runs.iter().any(Vec::is_empty) {
        return;
    }
    let median = |v: &[Run], f: &dyn Fn(&Run) -> f64| -> f64 {
        let mut xs: Vec<f64> = v.iter().map(f).collect();
        xs.sort_by(f64::total_cmp);
        let n = xs.len();
        if n % 2 == 1 {
            xs[n / 2]
        } else {
            (xs[n / 2 - 1] + xs[n / 2]) / 2.0
        }
    };
    println!(
        "{:<28}{:>12}{:>12}{:>12}{:>16}",
        "target", "requests/s", "p50", "p99", "CPU µs/request"
    );
    let mut rps = [0.0; TARGETS.len()];
    let mut cpu = [0.0; TARGETS.len()];
    for (t, target) in TARGETS.iter().enumerate() {
        rps[t] = median(&runs[t], &|r| r.rps);
        cpu[t] = median(&runs[t], &|r| r.cpu.unwrap_or(f64::NAN));
        let p50 = median(&runs[t], &|r| r.p50 as f64) as u64;
        let p99 = median(&runs[t], &|r| r.p99 as f64) as u64;
        let shown = if cpu[t].is_nan() { "-".into() } else { format!("{:.1}", cpu[t]) };
        println!("{target:<28}{:>12.0}{:>12}{:>12}{shown:>16}", rps[t], us(p50), us(p99));
    }
    for t in 1..TARGETS.len() {
        println!("{}: {:.1}% of direct throughput", TARGETS[t], 100.0 * rps[t] / rps[0].max(1.0));
    }
    let (rpcscan_layer, serde_layer) = (cpu[2] - cpu[1], cpu[3] - cpu[1]);
    println!(
        "layer CPU per request (gateway minus pass-through): rpcscan {rpcscan_layer:.1} µs, \
         serde_json Value {serde_layer:.1} µs; serde / rpcscan: {:.2}x for the layer, {:.2}x for the whole gateway",
        serde_layer / rpcscan_layer,
        cpu[3] / cpu[2]
    );
}

/// The minimal upstream alone, for profiling a gateway by hand (`perf record -p`).
fn serve_upstream() {
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("address");
        eprintln!("rpcscan gateway: listening on {addr}, minimal upstream");
        let upstream = MinimalUpstream(mcp_1k::answer().into());
        let _ = rpcscan_tower::gateway::serve(listener, upstream).await;
    });
}

/// A comparison gateway, as its own process: prints its address like `rpcscan gateway`.
fn serve_gateway(kind: &str, upstream: &str) {
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    runtime.block_on(async {
        let upstream =
            Upstream::new(upstream.parse().expect("a URL")).expect("an http:// upstream");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("address");
        let _ = if kind == "serve-serde" {
            eprintln!("rpcscan gateway: listening on {addr}, serde_json Value layer");
            let service = SerdeLayer::new("exec").layer(upstream);
            rpcscan_tower::gateway::serve(listener, service).await
        } else {
            eprintln!("rpcscan gateway: listening on {addr}, no layer");
            rpcscan_tower::gateway::serve(listener, PassThrough(upstream)).await
        };
    });
}

fn us(v: u64) -> String {
    if v >= 1000 {
        format!("{:.2} ms", v as f64 / 1000.0)
    } else {
        format!("{v} µs")
    }
}

/// The CPU model, as `lscpu` names it.
fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .map(|v| v.trim_start_matches([' ', '\t', ':']).to_owned())
        })
        .unwrap_or_else(|| "unknown".into())
}

/// The 1, 5 and 15 minute load averages.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
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

/// wrk against `addr`: (requests/s, requests, p50 µs, p99 µs); fails on any error or non-2xx.
fn run_wrk(o: &Options, script: &std::path::Path, addr: SocketAddr) -> (f64, u64, u64, u64) {
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
    (rps, requests, p50, p99)
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
