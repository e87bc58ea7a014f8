//! `rpcscan gateway` under load: requests/s, p50/p99 latency and each gateway's CPU time
//! per request, for a 1 KB MCP `tools/call` POSTed over loopback to a minimal hyper
//! upstream: directly; through the same hyper reverse proxy with no layer
//! (`pass-through`: what any hyper gateway costs); through `rpcscan gateway`; through the
//! hyper proxy with a serde_json `Value` layer doing the same checks
//! (`rpcscan_benchmarks::serde_layer`); through nginx's `proxy_pass` (upstream keep-alive);
//! and, for `--log`, through `rpcscan gateway --log FILE` and through nginx with a buffered
//! `access_log`. A layer's own CPU per request is its gateway's minus the pass-through's.
//! The load generator is `wrk` (Debian: `apt-get install wrk`) with a small Lua script;
//! nginx is Debian's (`apt-get install nginx-light`), skipped with a message when missing.
//!
//! ```text
//! cargo build --release -p rpcscan-cli -p rpcscan-benchmarks --bin rpcscan --bin gateway
//! target/release/gateway [--duration 10s] [--connections 32] [--threads 2] [--rounds 1]
//!                        [--pin LOAD_CPUS:GATEWAY_CPUS] [--rpcscan PATH] [--nginx PATH]
//!                        [--awake]
//!                        [--only direct,pass,rpcscan,serde,nginx,rpcscan-log,nginx-log]
//! target/release/gateway --smoke      # each target answers; 1 s of wrk when installed
//! ```
//!
//! The gateways run as their own processes (`rpcscan gateway`, nginx, and this program with
//! `serve-plain` / `serve-serde`), so `/proc/PID/stat` gives each one's CPU time alone
//! (nginx's: its master's and its worker's, summed).
//!
//! `--awake` runs `gateway tick` on the gateway's CPUs for the whole run: a process that
//! sleeps 0.5 ms at a time. In a virtual machine an idle vCPU halts, and waking it for
//! the next request costs the host an interrupt and the run millisecond-long tails, so a
//! gateway that keeps its CPU busier (`rpcscan gateway --log`, whose writer thread wakes
//! often) gets ~3x the throughput and a little less CPU per request; with `--awake` every
//! gateway runs on a CPU kept out of idle alike. The ticker's own CPU is not counted.
//! `gateway serve-upstream` runs the minimal upstream alone (to profile a gateway by hand).
//! `--pin 0:1` runs this program's upstream and wrk on CPU 0 and each gateway on CPU 1
//! (`taskset`), for the direct run too: the gateway then has a core of its own, and tokio
//! sizes each runtime to the CPUs it may use. `--rounds N` runs the targets N times in
//! turn and reports each one's median.

use std::convert::Infallible;
use std::future::Future;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
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

/// What the bench can run, by its `--only` name.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Target {
    Direct,
    Pass,
    Rpcscan,
    Serde,
    Nginx,
    RpcscanLog,
    NginxLog,
}

/// Each target: its `--only` name and its label.
const TARGETS: [(Target, &str, &str); 7] = [
    (Target::Direct, "direct", "direct"),
    (Target::Pass, "pass", "pass-through gateway"),
    (Target::Rpcscan, "rpcscan", "rpcscan gateway"),
    (Target::Serde, "serde", "serde_json Value gateway"),
    (Target::Nginx, "nginx", "nginx proxy_pass"),
    (Target::RpcscanLog, "rpcscan-log", "rpcscan gateway --log"),
    (Target::NginxLog, "nginx-log", "nginx + access_log"),
];

struct Options {
    duration: String,
    connections: u32,
    threads: u32,
    rounds: usize,
    /// The CPU lists of (this program's upstream and wrk, each gateway).
    pin: Option<(String, String)>,
    rpcscan: PathBuf,
    /// nginx, when found (`--nginx PATH`, else `nginx` on the PATH or in /usr/sbin).
    nginx: Option<PathBuf>,
    /// The targets to run, in `TARGETS` order.
    only: Vec<Target>,
    /// Keep the gateway's CPUs out of idle (`gateway tick`).
    awake: bool,
    smoke: bool,
}

fn usage(problem: &str) -> ! {
    eprintln!(
        "gateway: {problem}\nusage: gateway [--smoke] [--duration 10s] [--connections 32] [--threads 2] [--rounds 1] [--pin LOAD_CPUS:GATEWAY_CPUS] [--rpcscan PATH] [--nginx PATH] [--awake] [--only {}]",
        TARGETS.map(|t| t.1).join(",")
    );
    std::process::exit(2)
}

/// The nginx binary to run: `given`, else `nginx` from the PATH, else Debian's
/// `/usr/sbin/nginx`; `None` when none answers `nginx -v`.
fn find_nginx(given: Option<PathBuf>) -> Option<PathBuf> {
    let candidates = match given {
        Some(path) => vec![path],
        None => vec![PathBuf::from("nginx"), PathBuf::from("/usr/sbin/nginx")],
    };
    candidates.into_iter().find(|nginx| {
        Command::new(nginx)
            .arg("-v")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
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
        nginx: None,
        only: TARGETS.map(|t| t.0).to_vec(),
        awake: false,
        smoke: false,
    };
    let mut nginx = None;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        if flag == "--smoke" {
            o.smoke = true;
            continue;
        }
        if flag == "--awake" {
            o.awake = true;
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
            "--nginx" => nginx = Some(PathBuf::from(value)),
            "--only" => {
                let names: Vec<&str> = value.split(',').collect();
                if let Some(unknown) = names.iter().find(|n| !TARGETS.iter().any(|t| t.1 == **n)) {
                    usage(&format!("--only: no target {unknown:?}"));
                }
                o.only = TARGETS.iter().filter(|t| names.contains(&t.1)).map(|t| t.0).collect();
            }
            _ => usage(&format!("unknown option {flag}")),
        }
    }
    if o.smoke {
        (o.duration, o.connections, o.threads, o.rounds) = ("1s".into(), 2, 1, 1);
    }
    o.rounds = o.rounds.max(1);
    o.nginx = find_nginx(nginx);
    if o.nginx.is_none() {
        let skipped = o.only.iter().any(|t| matches!(t, Target::Nginx | Target::NginxLog));
        o.only.retain(|t| !matches!(t, Target::Nginx | Target::NginxLog));
        if skipped {
            eprintln!(
                "gateway: nginx not found (Debian: apt-get install nginx-light, or --nginx PATH): \
                 its targets are skipped"
            );
        }
    }
    o
}

/// One timed run of one target.
#[derive(Clone)]
struct Run {
    rps: f64,
    p50: u64,
    p99: u64,
    /// The gateway's CPU time per request, µs (none for direct), all its processes.
    cpu: Option<f64>,
    /// Each process's share of `cpu` (nginx: its master, then its worker).
    parts: Vec<f64>,
}

/// A gateway under test: its process (nginx: its master) and the address it serves.
struct Gateway {
    child: Child,
    addr: SocketAddr,
    /// nginx: stopped with SIGTERM (its workers with it), not SIGKILL.
    nginx: bool,
}

impl Gateway {
    /// The gateway's processes: the one started and its children (nginx's workers).
    fn pids(&self) -> Vec<u32> {
        let mut pids = vec![self.child.id()];
        if self.nginx {
            pids.extend(children(self.child.id()));
        }
        pids
    }

    fn stop(mut self) {
        if self.nginx {
            let workers = children(self.child.id());
            let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
            for _ in 0..100 {
                if self.child.try_wait().is_ok_and(|s| s.is_some()) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            for pid in workers {
                let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The processes whose parent is `pid` (from `/proc/*/stat`).
fn children(pid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|child| {
            let stat = std::fs::read_to_string(format!("/proc/{child}/stat")).unwrap_or_default();
            stat.rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok())
                == Some(pid)
        })
        .collect()
}

/// `command`, under `taskset -c CPUS` when the gateways are pinned.
fn pinned(o: &Options, command: &mut Command) -> Command {
    let mut run = match &o.pin {
        Some((_, cpus)) => {
            let mut run = Command::new("taskset");
            run.args(["-c", cpus]).arg(command.get_program());
            run
        }
        None => Command::new(command.get_program()),
    };
    run.args(command.get_args());
    run
}

/// The nginx configuration of the bench: one worker (the gateway's core under `--pin`),
/// `proxy_pass` over HTTP/1.1 to the upstream with idle connections kept (`keepalive`),
/// client and upstream connections reused for as many requests as wrk sends, and with
/// `log` a buffered `access_log` in the `combined` format.
fn nginx_config(dir: &Path, port: u16, upstream: SocketAddr, log: bool) -> String {
    let d = dir.display();
    let access_log = if log {
        format!("access_log {d}/access.log combined buffer=64k flush=1s;")
    } else {
        "access_log off;".into()
    };
    format!(
        "daemon off;\nmaster_process on;\nworker_processes 1;\npid {d}/nginx.pid;\n\
         error_log {d}/error.log warn;\n\
         events {{ worker_connections 1024; }}\n\
         http {{\n\
         \x20 {access_log}\n\
         \x20 keepalive_requests 1000000;\n\
         \x20 client_body_temp_path {d}/body;\n\
         \x20 proxy_temp_path {d}/proxy;\n\
         \x20 fastcgi_temp_path {d}/fastcgi;\n\
         \x20 uwsgi_temp_path {d}/uwsgi;\n\
         \x20 scgi_temp_path {d}/scgi;\n\
         \x20 upstream mcp {{ server {upstream}; keepalive 64; keepalive_requests 1000000; }}\n\
         \x20 server {{\n\
         \x20   listen 127.0.0.1:{port};\n\
         \x20   location / {{\n\
         \x20     proxy_pass http://mcp;\n\
         \x20     proxy_http_version 1.1;\n\
         \x20     proxy_set_header Connection \"\";\n\
         \x20   }}\n\
         \x20 }}\n\
         }}\n"
    )
}

/// Starts nginx in the foreground in front of `upstream` (config, logs and temp files in
/// `dir`) and waits until it accepts connections.
fn start_nginx(o: &Options, nginx: &Path, dir: &Path, upstream: SocketAddr, log: bool) -> Gateway {
    // A free port: bound, noted, released for nginx.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| usage(&format!("no free port for nginx: {e}")));
    let config = dir.join("nginx.conf");
    std::fs::write(&config, nginx_config(dir, port, upstream, log)).expect("write nginx.conf");
    let mut command = Command::new(nginx);
    command.arg("-p").arg(dir).arg("-e").arg(dir.join("error.log")).arg("-c").arg(&config);
    let mut child = pinned(o, &mut command)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| usage(&format!("cannot start {}: {e}", nginx.display())));
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    for _ in 0..200 {
        if TcpStream::connect(addr).is_ok() {
            return Gateway { child, addr, nginx: true };
        }
        if child.try_wait().is_ok_and(|s| s.is_some()) {
            break;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    let _ = child.kill();
    let _ = child.wait();
    let errors = std::fs::read_to_string(dir.join("error.log")).unwrap_or_default();
    usage(&format!("nginx did not start: {errors}"))
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
        Some("tick") => {
            // Until the bench that started it is gone.
            let parent = std::os::unix::process::parent_id();
            while std::os::unix::process::parent_id() == parent {
                std::thread::sleep(Duration::from_micros(500));
            }
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

    // The wrk script, nginx's files and the gateway's --log.
    let dir = std::env::temp_dir().join(format!("rpcscan-gateway-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let script = dir.join("post.lua");
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
    if o.awake {
        println!("the gateway's CPUs kept out of idle (a process sleeping 0.5 ms at a time)");
    }
    let mut ticker = o.awake.then(|| {
        let mut tick = Command::new(std::env::current_exe().expect("this program"));
        tick.arg("tick");
        pinned(&o, &mut tick).spawn().unwrap_or_else(|e| usage(&format!("gateway tick: {e}")))
    });
    let targets: Vec<(Target, &str)> =
        TARGETS.iter().filter(|t| o.only.contains(&t.0)).map(|t| (t.0, t.2)).collect();
    let gateway_log = dir.join("gateway.ndjson");
    let mut runs: Vec<Vec<Run>> = vec![Vec::new(); targets.len()];
    for round in 0..o.rounds {
        for (t, &(target, label)) in targets.iter().enumerate() {
            let this = || Command::new(std::env::current_exe().expect("this program"));
            let rpcscan = |log: bool| {
                let mut command = Command::new(&o.rpcscan);
                command.args(["gateway", "--listen", "127.0.0.1:0", "--upstream", &upstream_url]);
                command.args(["--deny-tool", "exec*"]);
                if log {
                    command.arg("--log").arg(&gateway_log);
                }
                command
            };
            let serve = |command: &mut Command| {
                let (child, addr) = spawn(&mut pinned(&o, command));
                Gateway { child, addr, nginx: false }
            };
            let nginx = |log: bool| {
                let nginx = o.nginx.as_deref().expect("nginx was found");
                start_nginx(&o, nginx, &dir, upstream, log)
            };
            let gateway = match target {
                Target::Direct => None,
                Target::Pass => Some(serve(this().args(["serve-plain", &upstream_url]))),
                Target::Rpcscan => Some(serve(&mut rpcscan(false))),
                Target::Serde => Some(serve(this().args(["serve-serde", &upstream_url]))),
                Target::Nginx => Some(nginx(false)),
                Target::RpcscanLog => Some(serve(&mut rpcscan(true))),
                Target::NginxLog => Some(nginx(true)),
            };
            let addr = gateway.as_ref().map_or(upstream, |g| g.addr);
            // Every target answers the message correctly before it is timed.
            let got = post(addr, &body);
            assert!(got.ends_with(&answer), "{label}: {got}");
            let pids = gateway.as_ref().map(Gateway::pids).unwrap_or_default();
            let before: Vec<u64> = pids.iter().map(|&p| cpu_ticks(p)).collect();
            let result = if wrk { Some(run_wrk(&o, &script, addr)) } else { None };
            let after: Vec<u64> = pids.iter().map(|&p| cpu_ticks(p)).collect();
            if let Some(gateway) = gateway {
                gateway.stop();
            }
            let _ = std::fs::remove_file(&gateway_log);
            let _ = std::fs::remove_file(dir.join("access.log"));
            let Some((rps, requests, p50, p99)) = result else {
                println!("{label:<28}{:>12}", "answered (no wrk)");
                continue;
            };
            let parts: Vec<f64> = before
                .iter()
                .zip(&after)
                .map(|(b, a)| a.saturating_sub(*b) as f64 / tck * 1e6 / requests.max(1) as f64)
                .collect();
            let cpu = (!parts.is_empty() && requests > 0).then(|| parts.iter().sum::<f64>());
            if o.rounds > 1 {
                eprintln!(
                    "round {}: {label}: {rps:.0}/s, p50 {}, p99 {}, {} µs CPU/request",
                    round + 1,
                    us(p50),
                    us(p99),
                    cpu.map_or("-".into(), |c| format!("{c:.1}"))
                );
            }
            runs[t].push(Run { rps, p50, p99, cpu, parts });
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    if let Some(ticker) = &mut ticker {
        let _ = ticker.kill();
        let _ = ticker.wait();
    }
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
        "{:<28}{:>12}{:>12}{:>12}{:>16}{:>16}",
        "target", "requests/s", "p50", "p99", "CPU µs/request", "CPU s/10k req"
    );
    let mut rps = vec![0.0; targets.len()];
    let mut cpu = vec![f64::NAN; targets.len()];
    for (t, &(_, label)) in targets.iter().enumerate() {
        rps[t] = median(&runs[t], &|r| r.rps);
        cpu[t] = median(&runs[t], &|r| r.cpu.unwrap_or(f64::NAN));
        let p50 = median(&runs[t], &|r| r.p50 as f64) as u64;
        let p99 = median(&runs[t], &|r| r.p99 as f64) as u64;
        let (shown, per_10k) = if cpu[t].is_nan() {
            ("-".into(), "-".into())
        } else {
            (format!("{:.1}", cpu[t]), format!("{:.3}", cpu[t] / 100.0))
        };
        println!(
            "{label:<28}{:>12.0}{:>12}{:>12}{shown:>16}{per_10k:>16}",
            rps[t],
            us(p50),
            us(p99)
        );
        // A gateway of several processes: each one's CPU seconds per 10,000 requests.
        let processes = runs[t].iter().map(|r| r.parts.len()).min().unwrap_or(0);
        if processes > 1 {
            let each: Vec<String> = (0..processes)
                .map(|p| {
                    let who = if p == 0 { "master".into() } else { format!("worker {p}") };
                    format!("{who} {:.3}", median(&runs[t], &|r| r.parts[p]) / 100.0)
                })
                .collect();
            println!("  CPU s/10k req by process: {}", each.join(", "));
        }
    }
    let find = |wanted: Target| targets.iter().position(|t| t.0 == wanted);
    if let Some(direct) = find(Target::Direct) {
        for t in (0..targets.len()).filter(|&t| t != direct) {
            println!(
                "{}: {:.1}% of direct throughput",
                targets[t].1,
                100.0 * rps[t] / rps[direct].max(1.0)
            );
        }
    }
    if let (Some(pass), Some(rpcscan), Some(serde)) =
        (find(Target::Pass), find(Target::Rpcscan), find(Target::Serde))
    {
        let (rpcscan_layer, serde_layer) = (cpu[rpcscan] - cpu[pass], cpu[serde] - cpu[pass]);
        println!(
            "layer CPU per request (gateway minus pass-through): rpcscan {rpcscan_layer:.1} µs, \
             serde_json Value {serde_layer:.1} µs; serde / rpcscan: {:.2}x for the layer, {:.2}x for the whole gateway",
            serde_layer / rpcscan_layer,
            cpu[serde] / cpu[rpcscan]
        );
    }
    for (ours, theirs, target) in
        [(Target::Rpcscan, Target::Nginx, 1.3), (Target::RpcscanLog, Target::NginxLog, 1.4)]
    {
        if let (Some(a), Some(b)) = (find(ours), find(theirs)) {
            let ratio = cpu[a] / cpu[b];
            println!(
                "CPU per request, {} / {}: {ratio:.2}x (target ≤ {target}x: {})",
                targets[a].1,
                targets[b].1,
                if ratio <= target { "met" } else { "not met" }
            );
        }
    }
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
