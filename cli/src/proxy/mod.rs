//! `rpcscan proxy [OPTIONS] -- SERVER_CMD [ARGS...]`: an MCP stdio gateway. The client is on
//! this process's stdin/stdout, the server is a child process, and every line between them
//! is framed, scanned once and forwarded by splicing bytes (no tree, no re-encoding).
//!
//! | file | what it is |
//! |---|---|
//! | `mod.rs` | the options, the tasks (two readers, two writers) and the shutdown |
//! | `route.rs` | the decisions per message: policy, id rewriting, cancellation, answers |
//! | `child.rs` | the server in its own process group: signals, kill |
//!
//! The policy flags (`crate::policy`) and the `--log` records (`crate::log`) are shared
//! with `rpcscan gateway`.
//!
//! **Shutdown.** When the client closes stdin, the server's stdin is closed; if the server
//! is still running after `--grace` it gets SIGTERM, and after another `--grace` SIGKILL.
//! SIGTERM, SIGINT and SIGHUP to the proxy go to the server's process group, with SIGKILL
//! after `--grace`. When the server has exited and its output is read, the requests still
//! in flight are answered -32603 (cancelled ones never are), and the proxy exits with the
//! server's status (128 + signal when it was killed).

mod child;
mod route;

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::PathBuf;
use std::pin::Pin;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use clap::Args;
use futures_util::StreamExt;
use nix::sys::signal::Signal;
use rpcscan::frame::NdjsonDecoder;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::unix::pipe;
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::{mpsc, oneshot};
use tokio::time::{sleep_until, timeout, Instant};
use tokio_util::codec::FramedRead;

use self::route::{Out, Router};
use crate::log::{self, Event};
use crate::policy;

pub const AFTER_HELP: &str = "\
By default everything is forwarded. Requests get a fresh integer id on the way to the server
and their own id back on the way out (byte for byte); invalid client lines are answered
-32700/-32600 with the recovered id; invalid server lines are logged and dropped.

Policy (opt-in; globs with `*` and `?`, repeatable; a deny wins): --allow-method/--deny-method
match the method of client requests and notifications, --allow-tool/--deny-tool the `name`
of `tools/call`. A denied request is answered (-32601, or -32602 for a tool) and never
reaches the server. initialize, ping, server/discover, subscriptions/listen, notifications/*
and tasks/* are never blocked.

A message over --max-message-size is answered at once with its id, recovered while it
streamed past. A cancelled request (notifications/cancelled) is never answered; a late
response to it is dropped.

Examples:
  rpcscan proxy -- npx -y @modelcontextprotocol/server-everything
  rpcscan proxy --deny-tool 'exec*' --log mcp.ndjson -- python server.py
  rpcscan proxy --allow-method 'tools/*' --allow-tool echo --grace 2s -- ./server

Exit status: the server's (128 + signal if it was killed); 2 if it cannot be started.";

/// `rpcscan proxy` options.
#[derive(Args, Debug)]
pub struct ProxyArgs {
    /// Forward only client methods matching one of these globs (protocol methods always pass).
    #[arg(long, value_name = "GLOB")]
    allow_method: Vec<String>,
    /// Answer client requests whose method matches with -32601 (notifications: drop them).
    #[arg(long, value_name = "GLOB")]
    deny_method: Vec<String>,
    /// Allow only these tools in `tools/call` (`params.name`).
    #[arg(long, value_name = "GLOB")]
    allow_tool: Vec<String>,
    /// Refuse these tools in `tools/call` (answered -32602).
    #[arg(long, value_name = "GLOB")]
    deny_tool: Vec<String>,
    /// Longest message either way; a longer one is answered at once with its recovered id.
    /// K, M, G are powers of 1024.
    #[arg(long, value_name = "SIZE", default_value = "16MiB", value_parser = crate::parse_size)]
    max_message_size: usize,
    /// Most requests in flight to the server; beyond it requests are answered -32000.
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    max_in_flight: usize,
    /// How long the server gets to exit after its stdin is closed or a signal (then
    /// SIGTERM, then SIGKILL). `5s`, `500ms`, `1.5` (seconds).
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = parse_duration)]
    grace: Duration,
    /// Write every message and decision to FILE, one JSON object per line.
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    /// The MCP server to start, and its arguments (after `--`).
    #[arg(
        value_name = "SERVER_CMD",
        required = true,
        num_args = 1..,
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    command: Vec<String>,
}

/// `5s`, `250ms`, `1.5`, `2m` → a duration.
pub(crate) fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let bad = || format!("{s:?} is not a duration (examples: 5s, 500ms, 1.5)");
    let n: f64 = number.parse().map_err(|_| bad())?;
    let secs = match unit.trim() {
        "" | "s" => n,
        "ms" => n / 1000.0,
        "m" | "min" => n * 60.0,
        _ => return Err(bad()),
    };
    Duration::try_from_secs_f64(secs).map_err(|_| bad())
}

/// Runs the proxy to the end; never returns normally (the blocking read of stdin would
/// keep the runtime alive), so the exit code goes straight to the process.
pub fn run(args: ProxyArgs) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("rpcscan proxy: cannot start the runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let code = runtime.block_on(proxy(args));
    std::process::exit(code)
}

/// What goes to the server's stdin.
enum ToServer {
    Line(Bytes),
    /// Close the server's stdin (the client closed ours).
    Close,
}

async fn proxy(args: ProxyArgs) -> i32 {
    let (log, log_writer) = match log::open(args.log.as_deref()) {
        Ok(log) => log,
        Err(e) => {
            eprintln!("rpcscan proxy: --log: {e}");
            return 2;
        }
    };
    let (stdin, stdout) =
        match (own_reader(std::io::stdin().as_fd()), own_writer(std::io::stdout().as_fd())) {
            (Ok(stdin), Ok(stdout)) => (stdin, stdout),
            (Err(e), _) | (_, Err(e)) => {
                eprintln!("rpcscan proxy: standard input/output: {e}");
                log_writer.finish();
                return 2;
            }
        };
    let (mut server, server_in, server_out) = match child::spawn(&args.command) {
        Ok(spawned) => spawned,
        Err(e) => {
            let program = args.command.first().map_or("", String::as_str);
            eprintln!("rpcscan proxy: cannot start {program:?}: {e}");
            log_writer.finish();
            return 2;
        }
    };
    let group = server.group();
    let signal_group = |sig: Signal| {
        if let Some(group) = group {
            group.signal(sig);
        }
    };
    let catch = |kind: SignalKind, name: &str| {
        signal(kind).map_err(|e| eprintln!("rpcscan proxy: cannot catch {name}: {e}")).ok()
    };
    let mut sigterm = catch(SignalKind::terminate(), "SIGTERM");
    let mut sigint = catch(SignalKind::interrupt(), "SIGINT");
    let mut sighup = catch(SignalKind::hangup(), "SIGHUP");
    let router = Arc::new(Router::new(
        policy::Policy {
            allow_methods: args.allow_method,
            deny_methods: args.deny_method,
            allow_tools: args.allow_tool,
            deny_tools: args.deny_tool,
        },
        args.max_message_size,
        args.max_in_flight,
        log.clone(),
    ));

    let (client_tx, client_rx) = mpsc::channel::<Option<Bytes>>(256);
    let (server_tx, server_rx) = mpsc::channel::<ToServer>(256);
    let client_writer = tokio::spawn(write_client(client_rx, stdout));
    tokio::spawn(write_server(server_rx, server_in));
    let (eof_tx, mut client_eof) = oneshot::channel::<()>();
    tokio::spawn(read_client(stdin, router.clone(), client_tx.clone(), server_tx.clone(), eof_tx));
    let mut server_reader =
        tokio::spawn(read_server(server_out, router.clone(), client_tx.clone(), server_tx));

    // Closing: stdin closed, waiting for the server; Terminating: SIGTERM (or the client's
    // signal) sent; Killing: SIGKILL sent.
    #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
    enum Stage {
        Running,
        Closing,
        Terminating,
        Killing,
    }
    let grace = args.grace;
    let mut stage = Stage::Running;
    let mut deadline: Option<Instant> = None;
    let mut eof_seen = false;
    let status = loop {
        tokio::select! {
            status = server.wait() => break status,
            _ = &mut client_eof, if !eof_seen => {
                eof_seen = true;
                if stage == Stage::Running {
                    stage = Stage::Closing;
                    deadline = Some(Instant::now() + grace);
                }
            }
            sig = async {
                tokio::select! {
                    _ = caught(&mut sigterm) => Signal::SIGTERM,
                    _ = caught(&mut sigint) => Signal::SIGINT,
                    _ = caught(&mut sighup) => Signal::SIGHUP,
                }
            } => {
                log.event(Event { reason: Some(sig.as_str()), ..Event::new("signal") });
                signal_group(sig);
                if stage < Stage::Terminating {
                    stage = Stage::Terminating;
                    deadline = Some(Instant::now() + grace);
                }
            }
            _ = sleep_until(deadline.unwrap_or_else(Instant::now)), if deadline.is_some() => {
                if stage == Stage::Closing {
                    eprintln!("rpcscan proxy: the server is still running {grace:?} after its stdin closed: SIGTERM");
                    log.event(Event { reason: Some("SIGTERM: still running --grace after its stdin closed"), ..Event::new("kill") });
                    signal_group(Signal::SIGTERM);
                    stage = Stage::Terminating;
                    deadline = Some(Instant::now() + grace);
                } else {
                    eprintln!("rpcscan proxy: the server is still running {grace:?} after SIGTERM (or the proxy's signal): SIGKILL");
                    log.event(Event { reason: Some("SIGKILL: still running --grace after SIGTERM"), ..Event::new("kill") });
                    signal_group(Signal::SIGKILL);
                    stage = Stage::Killing;
                    deadline = None;
                }
            }
        }
    };

    // The group is killed by now: its stdout ends, unless a process that left the group
    // holds it, which gets a moment.
    if timeout(Duration::from_secs(2), &mut server_reader).await.is_err() {
        server_reader.abort();
    }
    let mut out = Out::default();
    router.server_gone(&mut out);
    if !out.to_client.is_empty() {
        let _ = client_tx.send(Some(out.to_client.freeze())).await;
    }
    let _ = client_tx.send(None).await;
    if let Ok(Ok(Err(e))) = timeout(grace.max(Duration::from_secs(1)), client_writer).await {
        eprintln!("rpcscan proxy: writing to the client: {e}");
    }
    let code = match status {
        Ok(status) => {
            use std::os::unix::process::ExitStatusExt;
            status.code().or_else(|| status.signal().map(|s| 128 + s)).unwrap_or(1)
        }
        Err(e) => {
            eprintln!("rpcscan proxy: waiting for the server: {e}");
            1
        }
    };
    log.event(Event { code: Some(i64::from(code)), ..Event::new("server_exit") });
    drop(log);
    log_writer.finish();
    code
}

/// Our own handle on fd 0: `tokio::io::stdin()` goes through std's `Stdin` and a blocking
/// thread per read. A pipe (the MCP case) is read through epoll; anything else (a file, a
/// terminal) through tokio's blocking file reads.
fn own_reader(fd: BorrowedFd<'_>) -> std::io::Result<Pin<Box<dyn AsyncRead + Send>>> {
    let owned = fd.try_clone_to_owned()?;
    if is_fifo(&owned) {
        if let Ok(pipe) = pipe::Receiver::from_owned_fd(owned.try_clone()?) {
            return Ok(Box::pin(pipe));
        }
    }
    Ok(Box::pin(tokio::fs::File::from_std(std::fs::File::from(owned))))
}

/// Our own handle on fd 1, as [`own_reader`]; besides, `tokio::io::stdout()` would wait on
/// std's `Stdout` lock, which the rest of the CLI may hold for the whole run.
fn own_writer(fd: BorrowedFd<'_>) -> std::io::Result<Pin<Box<dyn AsyncWrite + Send>>> {
    let owned = fd.try_clone_to_owned()?;
    if is_fifo(&owned) {
        if let Ok(pipe) = pipe::Sender::from_owned_fd(owned.try_clone()?) {
            return Ok(Box::pin(pipe));
        }
    }
    Ok(Box::pin(tokio::fs::File::from_std(std::fs::File::from(owned))))
}

fn is_fifo(fd: &OwnedFd) -> bool {
    use std::os::unix::fs::FileTypeExt;
    fd.try_clone()
        .map(std::fs::File::from)
        .and_then(|file| file.metadata())
        .is_ok_and(|m| m.file_type().is_fifo())
}

/// The next delivery of a signal (never, when it could not be caught).
async fn caught(stream: &mut Option<tokio::signal::unix::Signal>) {
    if let Some(stream) = stream {
        if stream.recv().await.is_some() {
            return;
        }
    }
    std::future::pending().await
}

/// Client stdin → the router → the server (and answers → the client).
async fn read_client(
    input: impl AsyncRead + Unpin,
    router: Arc<Router>,
    to_client: mpsc::Sender<Option<Bytes>>,
    to_server: mpsc::Sender<ToServer>,
    eof: oneshot::Sender<()>,
) {
    let decoder = NdjsonDecoder::new().max_message_size(router.max_message_size).recover_ids();
    let mut frames = FramedRead::new(input, decoder);
    let mut out = Out::default();
    while let Some(item) = frames.next().await {
        match item {
            Ok(Ok(frame)) => router.client_line(frame.bytes(), &mut out),
            Ok(Err(too_large)) => {
                router.client_oversized(&too_large, frames.decoder().recovery(), &mut out)
            }
            Err(e) => {
                eprintln!("rpcscan proxy: reading from the client: {e}");
                break;
            }
        }
        if !more_ready(frames.read_buffer(), &out) {
            flush(&mut out, &to_client, &to_server).await;
        }
    }
    flush(&mut out, &to_client, &to_server).await;
    let _ = to_server.send(ToServer::Close).await;
    let _ = eof.send(());
}

/// Server stdout → the router → the client.
async fn read_server(
    input: impl AsyncRead + Unpin,
    router: Arc<Router>,
    to_client: mpsc::Sender<Option<Bytes>>,
    to_server: mpsc::Sender<ToServer>,
) {
    let decoder = NdjsonDecoder::new().max_message_size(router.max_message_size).recover_ids();
    let mut frames = FramedRead::new(input, decoder);
    let mut out = Out::default();
    while let Some(item) = frames.next().await {
        match item {
            Ok(Ok(frame)) => router.server_line(frame.bytes(), &mut out),
            Ok(Err(too_large)) => {
                router.server_oversized(&too_large, frames.decoder().recovery(), &mut out)
            }
            Err(e) => {
                eprintln!("rpcscan proxy: reading from the server: {e}");
                break;
            }
        }
        if !more_ready(frames.read_buffer(), &out) {
            flush(&mut out, &to_client, &to_server).await;
        }
    }
    flush(&mut out, &to_client, &to_server).await;
}

/// Whether to route the next frame before handing `out` over: only while a whole line is
/// already buffered (the next frame needs no read, so nothing waits) and `out` is small.
/// Under load this sends one batch per read instead of one message at a time.
fn more_ready(buffered: &[u8], out: &Out) -> bool {
    if out.to_client.len() + out.to_server.len() >= 64 * 1024 {
        return false;
    }
    // A blank line is skipped, not a frame: after it the decoder may need to read.
    memchr::memchr(b'\n', buffered)
        .and_then(|end| buffered.get(..end))
        .is_some_and(|line| !line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')))
}

/// Hands what a routing call wrote to the writers (waiting while they are full: the
/// reader then stops reading, which is the backpressure a pipe gives).
async fn flush(
    out: &mut Out,
    to_client: &mpsc::Sender<Option<Bytes>>,
    to_server: &mpsc::Sender<ToServer>,
) {
    if !out.to_server.is_empty() {
        let _ = to_server.send(ToServer::Line(out.to_server.split().freeze())).await;
    }
    if !out.to_client.is_empty() {
        let _ = to_client.send(Some(out.to_client.split().freeze())).await;
    }
}

/// Most bytes gathered into one write.
const BATCH: usize = 1 << 20;

/// Writes to the client, until `None`: what is queued at once goes out in one write.
async fn write_client(
    mut queue: mpsc::Receiver<Option<Bytes>>,
    mut out: impl AsyncWrite + Unpin,
) -> std::io::Result<()> {
    let mut batch = BytesMut::new();
    while let Some(Some(first)) = queue.recv().await {
        let mut last = false;
        batch.extend_from_slice(&first);
        while batch.len() < BATCH {
            match queue.try_recv() {
                Ok(Some(line)) => batch.extend_from_slice(&line),
                Ok(None) => {
                    last = true;
                    break;
                }
                Err(_) => break,
            }
        }
        out.write_all(&batch).await?;
        batch.clear();
        out.flush().await?;
        if last {
            return Ok(());
        }
    }
    out.flush().await
}

/// Writes to the server until `Close` (or every sender is gone), then closes its stdin.
async fn write_server(mut queue: mpsc::Receiver<ToServer>, mut out: impl AsyncWrite + Unpin) {
    let mut batch = BytesMut::new();
    let mut broken = false;
    while let Some(ToServer::Line(first)) = queue.recv().await {
        let mut last = false;
        batch.extend_from_slice(&first);
        while batch.len() < BATCH {
            match queue.try_recv() {
                Ok(ToServer::Line(line)) => batch.extend_from_slice(&line),
                Ok(ToServer::Close) => {
                    last = true;
                    break;
                }
                Err(_) => break,
            }
        }
        if !broken {
            if let Err(e) = async {
                out.write_all(&batch).await?;
                out.flush().await
            }
            .await
            {
                // The server is going away; what it was sent is answered when it is gone.
                eprintln!("rpcscan proxy: writing to the server: {e}");
                broken = true;
            }
        }
        batch.clear();
        if last {
            break;
        }
    }
    let _ = out.shutdown().await;
}
