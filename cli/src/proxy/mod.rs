//! `rpcscan proxy [OPTIONS] -- SERVER_CMD [ARGS...]`: an MCP stdio gateway. The client is on
//! this process's stdin/stdout, the server is a child process, and every line between them
//! is framed, scanned once and forwarded by splicing bytes (no tree, no re-encoding).
//!
//! | file | what it is |
//! |---|---|
//! | `mod.rs` | the options, the two relaying threads and the shutdown |
//! | `route.rs` | the decisions per message: policy, id rewriting, cancellation, answers |
//! | `child.rs` | the server in its own process group: signals, kill |
//!
//! The policy flags (`crate::policy`) and the `--log` records (`crate::log`) are shared
//! with `rpcscan gateway`.
//!
//! **The data path.** One thread per direction reads its input with plain blocking reads
//! (up to 128 KiB at a time), routes every complete line of the read, then writes what the
//! routing produced: one write per destination and read, however many messages the read
//! held, and at once (nothing waits for more input). The server's stdin and the client's
//! stdout are each shared by the two threads (a denied request is answered by the client
//! thread, an oversized server request by the server thread) under a mutex, a batch of
//! whole lines per write. The tokio runtime only waits for the server, the signals and the
//! deadlines. A write that blocks (a reader that does not read) stops that thread's reading,
//! which is the backpressure a pipe gives.
//!
//! **Shutdown.** When the client closes stdin, the server's stdin is closed; if the server
//! is still running after `--grace` it gets SIGTERM, and after another `--grace` SIGKILL.
//! SIGTERM, SIGINT and SIGHUP to the proxy go to the server's process group, with SIGKILL
//! after `--grace`. When the server has exited and its output is read, the requests still
//! in flight are answered -32603 (cancelled ones never are), and the proxy exits with the
//! server's status (128 + signal when it was killed).

mod child;
mod route;

use std::fs::File;
use std::io::{self, ErrorKind, IoSlice, Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use bytes::BytesMut;
use clap::Args;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::signal::Signal;
use rpcscan::frame::{Decode, NdjsonDecoder};
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::oneshot;
use tokio::time::{sleep_until, timeout, Instant};

use self::route::{InRead, Out, Router};
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
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = rpcscan_traffic::duration::parse_duration)]
    grace: Duration,
    /// Write every message, answer and decision to FILE, one JSON object per line.
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

/// Runs the proxy to the end; never returns normally (the thread reading stdin may still
/// be blocked in its read), so the exit code goes straight to the process.
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

async fn proxy(args: ProxyArgs) -> i32 {
    let (log, log_writer) = match log::open(args.log.as_deref()) {
        Ok(log) => log,
        Err(e) => {
            eprintln!("rpcscan proxy: --log: {e}");
            return 2;
        }
    };
    let (stdin, stdout) =
        match (own_file(std::io::stdin().as_fd()), own_file(std::io::stdout().as_fd())) {
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
    for pipe in [&stdin, &stdout, &server_in, &server_out] {
        grow_pipe(pipe.as_fd());
    }
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

    let client = Arc::new(Sink::new("client", stdout));
    let server_sink = Arc::new(Sink::new("server", server_in));
    let (eof_tx, mut client_eof) = oneshot::channel::<()>();
    let (done_tx, server_done) = oneshot::channel::<()>();
    let started = spawn_relay("client", {
        let (router, client, server) = (router.clone(), client.clone(), server_sink.clone());
        move || {
            relay(stdin, Side::Client, &router, &client, &server);
            // The client closed our stdin: close the server's.
            server.close();
            let _ = eof_tx.send(());
        }
    })
    .and_then(|()| {
        spawn_relay("server", {
            let (router, client, server) = (router.clone(), client.clone(), server_sink.clone());
            move || {
                relay(server_out, Side::Server, &router, &client, &server);
                let _ = done_tx.send(());
            }
        })
    });
    if let Err(e) = started {
        eprintln!("rpcscan proxy: cannot start a thread: {e}");
        drop(server);
        log_writer.finish();
        return 2;
    }

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
    // holds it, which gets a moment (then the thread reading it is left behind: the
    // process exits).
    let _ = timeout(Duration::from_secs(2), server_done).await;
    let mut out = Out::default();
    router.server_gone(&mut out);
    out.release();
    let answers = std::mem::take(&mut out.to_client);
    // The client's stdout may be blocked (a client that does not read): don't wait forever.
    let last = tokio::task::spawn_blocking(move || client.write(&answers));
    let _ = timeout(grace.max(Duration::from_secs(1)), last).await;
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

/// Our own blocking file on a duplicate of fd 0 or 1: read and written with plain system
/// calls by the relaying threads (`tokio::io::stdin()` would read through std's `Stdin` and
/// a blocking-pool thread per read; std's `Stdout` has a lock the rest of the CLI may hold).
fn own_file(fd: BorrowedFd<'_>) -> io::Result<File> {
    fd.try_clone_to_owned().map(File::from)
}

/// Room for two reads' worth of lines ([`READ`]) in each pipe the proxy reads or writes:
/// the server's two, and its own standard input and output when they are pipes. With
/// Linux's default of 64 KiB a writer ahead of its reader blocks every 64 KiB and is woken
/// again, a context switch on each side (and in a virtual machine a wake-up across CPUs is
/// an exit to the hypervisor): the bench's streams cost half the context switches and
/// ~5-10% less CPU with 256 KiB (docs/performance.md). Not more: an unprivileged user's
/// pipes share a budget (`/proc/sys/fs/pipe-user-pages-soft`, 64 MiB by default), past
/// which every new pipe of that user gets a minimal buffer; 1 MiB pipes measured no
/// better. A refusal (not a pipe, a lower `pipe-max-size`, the budget spent) leaves the
/// pipe as it was.
fn grow_pipe(fd: BorrowedFd<'_>) {
    #[cfg(target_os = "linux")]
    {
        let _ = nix::fcntl::fcntl(fd, nix::fcntl::FcntlArg::F_SETPIPE_SZ(PIPE));
    }
    #[cfg(not(target_os = "linux"))]
    let _ = fd;
}

/// The pipe size [`grow_pipe`] asks for: 256 KiB.
const PIPE: i32 = 2 * READ as i32;

/// The next delivery of a signal (never, when it could not be caught).
async fn caught(stream: &mut Option<tokio::signal::unix::Signal>) {
    if let Some(stream) = stream {
        if stream.recv().await.is_some() {
            return;
        }
    }
    std::future::pending().await
}

/// Which side a relaying thread reads.
#[derive(Clone, Copy)]
enum Side {
    Client,
    Server,
}

fn spawn_relay(name: &str, f: impl FnOnce() + Send + 'static) -> io::Result<()> {
    std::thread::Builder::new().name(format!("rpcscan-proxy-{name}")).spawn(f).map(drop)
}

/// Most bytes read at once.
const READ: usize = 128 * 1024;

/// Fewest bytes a read asks for: the unfinished line moves to the front of the buffer when
/// less room is left behind it (a pipe holds 64 KiB by default).
const MIN_READ: usize = 64 * 1024;

/// Most bytes routed before they are written (a read holds at most [`READ`] and its
/// outputs are written when its lines are done; this bounds the answers to one read).
const BATCH: usize = 256 * 1024;

/// Reads `input` to its end (or a read error) and routes every line: each read's lines
/// are routed, then their outputs written, one write per destination.
///
/// Lines are routed where the read put them: each read lands after the unfinished line
/// of the one before, and only that unfinished line is moved (to the front, when less
/// than [`MIN_READ`] would fit behind it in the buffer of two reads). What this
/// fast path does not frame itself goes through the [`NdjsonDecoder`], whose rules it
/// follows (split on `\n`, one `\r` stripped, blank lines skipped): a line over
/// `--max-message-size` (the decoder reports it and recovers its id), an unfinished line
/// longer than [`READ`] (the decoder then frames everything until it is left with no more
/// than a read's worth of an unfinished line, or with nothing), and the last line at the
/// end of input.
fn relay(input: File, side: Side, router: &Router, client: &Sink, server: &Sink) {
    Relay { side, router, client, server }.run(input);
}

/// One relaying thread: which side it reads, and where its lines go.
struct Relay<'r> {
    side: Side,
    router: &'r Router,
    client: &'r Sink,
    server: &'r Sink,
}

impl<'r> Relay<'r> {
    fn run(&self, mut input: File) {
        let max = self.router.max_message_size;
        let new_decoder = || NdjsonDecoder::new().max_message_size(max).recover_ids();
        let mut decoder = new_decoder();
        // `scratch[head..head + pending]` is the unfinished line of the fast path; a read goes
        // after it, and it moves to the front only when less than [`MIN_READ`] would fit.
        let mut scratch = vec![0u8; 2 * READ];
        let (mut head, mut pending) = (0, 0);
        // The decoder's buffer, and whether the decoder frames everything for now.
        let mut buf = BytesMut::new();
        let mut decoding = false;
        let mut out = Out::default();
        loop {
            if !decoding && scratch.len().saturating_sub(head + pending) < MIN_READ {
                scratch.copy_within(head..head + pending, 0);
                head = 0;
            }
            let at = if decoding { 0 } else { head + pending };
            let room = scratch.get_mut(at..).unwrap_or_default();
            let room_len = room.len().min(READ);
            let n = match read(&mut input, room.get_mut(..room_len).unwrap_or_default()) {
                Ok(n) => n,
                Err(e) => {
                    eprintln!("rpcscan proxy: reading from the {}: {e}", self.side.name());
                    0
                }
            };
            let eof = n == 0;
            let ends_line = n > 0 && scratch.get(at + n - 1) == Some(&b'\n');
            if decoding || eof {
                if !decoding {
                    buf.extend_from_slice(scratch.get(head..head + pending).unwrap_or_default());
                    (head, pending) = (0, 0);
                }
                buf.extend_from_slice(scratch.get(..n).filter(|_| decoding).unwrap_or_default());
                self.decode(&mut decoder, &mut buf, eof, &mut out, &[]);
                // The fast path takes over again when the decoder is left with an
                // unfinished line no longer than a read (when it drops an oversized line it
                // keeps nothing), or with nothing after a read that ended a line.
                if buf.is_empty() && ends_line {
                    decoding = false;
                } else if let Some(dst) =
                    scratch.get_mut(..buf.len()).filter(|_| !buf.is_empty() && buf.len() <= READ)
                {
                    dst.copy_from_slice(&buf);
                    pending = buf.len();
                    buf.clear();
                    // This decoder remembers how far it searched the bytes it gave up.
                    decoder = new_decoder();
                    decoding = false;
                }
            } else {
                let data = scratch.get(head..head + pending + n).unwrap_or_default();
                // One pass over what was read: the unfinished line before it has no `\n`.
                let fresh = data.get(pending..).unwrap_or_default();
                let mut start = 0;
                for end in memchr::memchr_iter(b'\n', fresh).map(|at| pending + at) {
                    let line = data.get(start..end).unwrap_or_default();
                    let content = line.strip_suffix(b"\r").unwrap_or(line);
                    if content.len() > max {
                        buf.extend_from_slice(data.get(start..=end).unwrap_or_default());
                        self.decode(&mut decoder, &mut buf, false, &mut out, data);
                    } else if !is_blank(content) {
                        let place = InRead { at: start, newline: content.len() == line.len() };
                        self.route(content, Some(place), &mut out);
                        self.send_full(&mut out, data);
                    }
                    start = end + 1;
                }
                let complete = start;
                // Before the read buffer changes: the answers may lie in it.
                send(&mut out, self.client, self.server, data);
                pending = pending + n - complete;
                head = if pending == 0 { 0 } else { head + complete };
                if pending > READ {
                    buf.extend_from_slice(scratch.get(head..head + pending).unwrap_or_default());
                    (head, pending) = (0, 0);
                    decoding = true;
                    self.decode(&mut decoder, &mut buf, false, &mut out, &[]);
                }
            }
            send(&mut out, self.client, self.server, &[]);
            if eof {
                return;
            }
        }
    }

    /// Routes one line (`place`: where it lies in the read buffer, when it does).
    fn route(&self, line: &[u8], place: Option<InRead>, out: &mut Out<'r>) {
        match self.side {
            Side::Client => self.router.client_line(line, out),
            Side::Server => self.router.server_line(line, place, out),
        }
    }

    /// Writes the outputs once they hold [`BATCH`] bytes (`read`: the read buffer).
    fn send_full(&self, out: &mut Out<'r>, read: &[u8]) {
        if out.to_client.len() + out.to_server.len() >= BATCH {
            send(out, self.client, self.server, read);
        }
    }

    /// Routes every line the decoder frames out of `buf` (with `eof`, the last one too);
    /// `read` is the read buffer, for the outputs that lie in it.
    fn decode(
        &self,
        decoder: &mut NdjsonDecoder,
        buf: &mut BytesMut,
        eof: bool,
        out: &mut Out<'r>,
        read: &[u8],
    ) {
        loop {
            // Each line is lent, not cut off as `Bytes`; the last one at the end of input
            // comes as a frame.
            let item = if eof {
                decoder
                    .decode_eof(buf)
                    .map(|item| item.map(|frame| self.route(frame.bytes(), None, out)))
            } else {
                decoder.decode_with(buf, |line| self.route(line, None, out))
            };
            let router = self.router;
            match item {
                None => break,
                Some(Ok(())) => {}
                Some(Err(too_large)) => match self.side {
                    Side::Client => router.client_oversized(&too_large, decoder.recovery(), out),
                    Side::Server => router.server_oversized(&too_large, decoder.recovery(), out),
                },
            }
            self.send_full(out, read);
        }
    }
}

/// Blank lines (spaces, tabs, CRs) are no messages (docs/spec.md §7).
fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|&b| matches!(b, b' ' | b'\t' | b'\r'))
}

impl Side {
    fn name(self) -> &'static str {
        match self {
            Side::Client => "client",
            Side::Server => "server",
        }
    }
}

/// Writes what the routing produced, and empties the buffers (keeping their memory). The
/// router's state is released first: a write may block, and the other thread may need it
/// to make progress. `read` is the read buffer the parts of [`Out::from_read`] are in.
fn send(out: &mut Out<'_>, client: &Sink, server: &Sink, read: &[u8]) {
    out.release();
    if !out.to_server.is_empty() {
        server.write(&out.to_server);
        out.to_server.clear();
    }
    if out.from_read.is_empty() {
        client.write(&out.to_client);
    } else {
        let mut parts = Vec::with_capacity(2 * out.from_read.len() + 1);
        let mut copied = 0;
        for (before, range) in out.from_read.drain(..) {
            let own = out.to_client.get(copied..before).unwrap_or_default();
            parts.extend([own, read.get(range).unwrap_or_default()].map(IoSlice::new));
            copied = before;
        }
        parts.push(IoSlice::new(out.to_client.get(copied..).unwrap_or_default()));
        client.write_parts(&mut parts);
    }
    out.to_client.clear();
}

/// The client's stdout or the server's stdin, shared by the two relaying threads.
struct Sink {
    name: &'static str,
    /// `None` once closed, or after a write failed.
    file: Mutex<Option<File>>,
}

impl Sink {
    fn new(name: &'static str, file: File) -> Self {
        Sink { name, file: Mutex::new(Some(file)) }
    }

    fn lock(&self) -> MutexGuard<'_, Option<File>> {
        self.file.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Writes whole lines; after an error everything is dropped (the reader is going away:
    /// a server's requests in flight are answered when it is gone).
    fn write(&self, bytes: &[u8]) {
        self.write_parts(&mut [IoSlice::new(bytes)]);
    }

    /// [`Sink::write`] of the concatenation of `parts`, with `writev`.
    fn write_parts(&self, parts: &mut [IoSlice<'_>]) {
        if parts.iter().all(|part| part.is_empty()) {
            return;
        }
        let mut file = self.lock();
        if let Some(f) = file.as_mut() {
            if let Err(e) = write_all(f, parts) {
                eprintln!("rpcscan proxy: writing to the {}: {e}", self.name);
                *file = None;
            }
        }
    }

    fn close(&self) {
        self.lock().take();
    }
}

/// `read`, waiting in `poll` if the descriptor was handed over non-blocking.
fn read(file: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match file.read(buf) {
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock => wait(file.as_fd(), PollFlags::POLLIN)?,
            result => return result,
        }
    }
}

/// `write_all` of the concatenation of `slices` with `writev` (leading empty slices dropped
/// first, so that a first `writev` of nothing cannot be taken for a zero-length write),
/// waiting in `poll` if the descriptor was handed over non-blocking.
fn write_all(file: &mut File, mut slices: &mut [IoSlice<'_>]) -> io::Result<()> {
    IoSlice::advance_slices(&mut slices, 0);
    while !slices.is_empty() {
        match file.write_vectored(slices) {
            Ok(0) => return Err(ErrorKind::WriteZero.into()),
            Ok(n) => IoSlice::advance_slices(&mut slices, n),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock => wait(file.as_fd(), PollFlags::POLLOUT)?,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn wait(fd: BorrowedFd<'_>, events: PollFlags) -> io::Result<()> {
    match poll(&mut [PollFd::new(fd, events)], PollTimeout::NONE) {
        Ok(_) | Err(nix::errno::Errno::EINTR) => Ok(()),
        Err(e) => Err(e.into()),
    }
}
