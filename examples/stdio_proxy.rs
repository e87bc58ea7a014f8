//! A working MCP stdio proxy: a client on this process's stdin/stdout, a child MCP server
//! started from the command line, and rpcscan between them. No message is parsed into a
//! tree: each line is framed, scanned once, and forwarded by splicing bytes.
//!
//! ```text
//! cargo run --example stdio_proxy --features tokio -- [--allow m1,m2,...] [--max-line BYTES] -- server-command [args...]
//! ```
//!
//! What it does, per line from the client:
//!
//! * **invalid** (not JSON, not a JSON-RPC message): answered by the proxy with -32700 or
//!   -32600 and the recovered id (docs/spec.md §4); a line over `--max-line` is answered with
//!   -32700 and id `null`; the stream goes on.
//! * **request** whose method is not in the allow-list: answered by the proxy with -32601
//!   and the request's raw id; the server never sees it.
//! * **request**: forwarded with a fresh integer id (so ids of any size or shape reach the
//!   server as small integers, and two requests with one id cannot be confused); the
//!   response gets the client's original id bytes back.
//! * **notification**: forwarded untouched, except `notifications/cancelled`, whose
//!   `requestId` is rewritten to the downstream id (dropped when that request is no longer
//!   in flight: the server would otherwise cancel whatever it numbered that way).
//! * **response** (to a server-initiated request): forwarded untouched.
//!
//! Per line from the server: responses are correlated back (unknown ids are dropped and
//! logged; an error with a `null` or absent id goes to the client as is); requests and
//! notifications go to the client untouched; invalid or oversized lines are logged to
//! stderr and dropped.
//!
//! **Shutdown.** When the client closes stdin, the server's stdin is closed (the MCP stdio
//! way to ask it to exit). When the server exits, every request still in flight is answered
//! with -32603 `Internal error` (`data: {"reason": ...}`) rather than left unanswered, and
//! the proxy exits with the server's exit code (a request racing with the shutdown gets
//! the same answer instead of being forwarded). A server that ignores the end of its stdin
//! keeps the proxy running: a real deployment adds a grace period and a kill.
//!
//! One client per proxy: server-initiated request ids pass through unchanged (with several
//! clients they would need the reverse mapping as well).

use std::io;
use std::process::{ExitCode, Stdio};
use std::sync::{Arc, Mutex, PoisonError};

use bytes::{BufMut, Bytes, BytesMut};
use futures_util::StreamExt;
use rpcscan::frame::{Frame, FrameError, NdjsonDecoder};
use rpcscan::response::{ErrorResponse, INTERNAL_ERROR, METHOD_NOT_FOUND, PARSE_ERROR};
use rpcscan::rewrite::{self, Correlation};
use rpcscan::{Kind, Message, Parser};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::process::{ChildStdin, Command};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use tokio_util::codec::FramedRead;

/// Methods a client may call when `--allow` is not given (MCP client-to-server requests).
const DEFAULT_ALLOW: &[&str] = &[
    "initialize",
    "ping",
    "server/discover",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "subscriptions/listen",
];

const SERVER_GONE: &[u8] = br#"{"reason": "the MCP server exited before responding"}"#;

struct Options {
    allow: Vec<String>,
    max_line: usize,
    command: Vec<String>,
}

fn options() -> Result<Options, String> {
    let mut args = std::env::args().skip(1);
    let mut opts = Options {
        allow: DEFAULT_ALLOW.iter().map(|s| s.to_string()).collect(),
        max_line: rpcscan::frame::DEFAULT_MAX_MESSAGE_SIZE,
        command: Vec::new(),
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--allow" => {
                let list = args.next().ok_or("--allow needs a comma-separated list")?;
                opts.allow = list.split(',').map(str::to_owned).collect();
            }
            "--max-line" => {
                let n = args.next().ok_or("--max-line needs a number")?;
                opts.max_line = n.parse().map_err(|_| format!("bad --max-line {n:?}"))?;
            }
            "--" => {
                opts.command = args.by_ref().collect();
            }
            _ => {
                opts.command = std::iter::once(arg).chain(args.by_ref()).collect();
            }
        }
    }
    if opts.command.is_empty() {
        return Err("usage: stdio_proxy [--allow m1,m2] [--max-line N] -- command [args...]".into());
    }
    Ok(opts)
}

/// The correlation table, and whether the server is gone (then nothing more is forwarded).
struct State {
    table: Correlation<()>,
    server_gone: bool,
}

type Shared = Arc<Mutex<State>>;

fn lock(state: &Shared) -> std::sync::MutexGuard<'_, State> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let opts = match options() {
        Ok(opts) => opts,
        Err(e) => {
            eprintln!("stdio_proxy: {e}");
            return ExitCode::from(2);
        }
    };
    let mut child = match Command::new(&opts.command[0])
        .args(&opts.command[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            eprintln!("stdio_proxy: cannot start {:?}: {e}", opts.command[0]);
            return ExitCode::from(2);
        }
    };
    let (Some(server_in), Some(server_out)) = (child.stdin.take(), child.stdout.take()) else {
        eprintln!("stdio_proxy: no pipes to the server");
        return ExitCode::from(2);
    };

    let state: Shared =
        Arc::new(Mutex::new(State { table: Correlation::new(), server_gone: false }));
    // `None` tells the writer to flush and stop.
    let (to_client, outbox) = unbounded_channel::<Option<Bytes>>();
    let writer = tokio::spawn(write_all(outbox, tokio::io::stdout()));

    tokio::spawn(client_to_server(
        opts.allow,
        opts.max_line,
        server_in,
        state.clone(),
        to_client.clone(),
    ));

    // Server to client, until the server closes its stdout.
    let mut frames =
        FramedRead::new(server_out, NdjsonDecoder::new().max_message_size(opts.max_line));
    let parser = Parser::new();
    let mut out = BytesMut::with_capacity(64 * 1024);
    while let Some(item) = frames.next().await {
        match item {
            Ok(Ok(frame)) => from_server(&parser, &frame, &state, &mut out, &to_client),
            Ok(Err(bad)) => eprintln!("stdio_proxy: dropping bad line from the server: {bad}"),
            Err(e) => {
                eprintln!("stdio_proxy: reading from the server: {e}");
                break;
            }
        }
    }

    let status = child.wait().await;
    {
        let mut state = lock(&state);
        state.server_gone = true;
        for pending in state.table.drain() {
            answer(
                &to_client,
                &mut out,
                ErrorResponse::standard(INTERNAL_ERROR).id(pending.original_id()).data(SERVER_GONE),
            );
        }
    }
    let _ = to_client.send(None);
    if let Ok(Err(e)) = writer.await {
        eprintln!("stdio_proxy: writing to the client: {e}");
    }
    let code = match status {
        Ok(status) => status.code().unwrap_or(1),
        Err(e) => {
            eprintln!("stdio_proxy: waiting for the server: {e}");
            1
        }
    };
    // `exit`, not a return: the runtime would wait for the blocking read on stdin.
    std::process::exit(code)
}

/// Writes the outbox to the client, flushing whenever it runs empty, until `None`.
async fn write_all(
    mut outbox: UnboundedReceiver<Option<Bytes>>,
    mut out: impl AsyncWrite + Unpin,
) -> io::Result<()> {
    while let Some(Some(line)) = outbox.recv().await {
        out.write_all(&line).await?;
        loop {
            match outbox.try_recv() {
                Ok(Some(line)) => out.write_all(&line).await?,
                Ok(None) => return out.flush().await,
                Err(_) => break,
            }
        }
        out.flush().await?;
    }
    out.flush().await
}

type Outbox = UnboundedSender<Option<Bytes>>;

/// Queues one line for the client.
fn send(to_client: &Outbox, out: &mut BytesMut) {
    out.put_u8(b'\n');
    let _ = to_client.send(Some(out.split().freeze()));
}

/// Queues one error response for the client.
fn answer(to_client: &Outbox, out: &mut BytesMut, response: ErrorResponse<'_>) {
    response.write(out);
    send(to_client, out);
}

async fn client_to_server(
    allow: Vec<String>,
    max_line: usize,
    mut server_in: ChildStdin,
    state: Shared,
    to_client: Outbox,
) {
    let mut frames =
        FramedRead::new(tokio::io::stdin(), NdjsonDecoder::new().max_message_size(max_line));
    let parser = Parser::new();
    let mut line = BytesMut::with_capacity(64 * 1024);
    let mut out = BytesMut::with_capacity(4096);
    while let Some(item) = frames.next().await {
        let frame = match item {
            Ok(Ok(frame)) => frame,
            Ok(Err(bad)) => {
                oversized(&bad, &to_client, &mut out);
                continue;
            }
            Err(e) => {
                eprintln!("stdio_proxy: reading from the client: {e}");
                break;
            }
        };
        let msg = match parser.parse(frame.bytes()) {
            Ok(msg) => msg,
            Err(invalid) => {
                answer(&to_client, &mut out, invalid.response());
                continue;
            }
        };
        line.clear();
        let forwarded = {
            let mut state = lock(&state);
            route(&msg, &allow, &mut state, &mut line, &mut out, &to_client)
        };
        if forwarded {
            line.put_u8(b'\n');
            if let Err(e) = server_in.write_all(&line).await {
                eprintln!("stdio_proxy: writing to the server: {e}");
                // The server is going away; what was just recorded is answered at exit.
            }
        }
    }
    // Client EOF: close the server's stdin, asking it to exit.
    let _ = server_in.shutdown().await;
    drop(server_in);
}

fn oversized(bad: &FrameError, to_client: &Outbox, out: &mut BytesMut) {
    eprintln!("stdio_proxy: {bad}");
    answer(to_client, out, ErrorResponse::standard(PARSE_ERROR));
}

/// Decides what to do with one valid client message; writes what goes to the server into
/// `line` and returns whether to send it.
fn route(
    msg: &Message<'_>,
    allow: &[String],
    state: &mut State,
    line: &mut BytesMut,
    out: &mut BytesMut,
    to_client: &Outbox,
) -> bool {
    match msg.kind() {
        Kind::Request => {
            let id = msg.id().map(|id| id.raw()).unwrap_or(b"null");
            let allowed = msg.method().is_some_and(|m| allow.iter().any(|a| m == a.as_str()));
            if !allowed {
                answer(to_client, out, ErrorResponse::standard(METHOD_NOT_FOUND).id(id));
                return false;
            }
            if state.server_gone {
                answer(
                    to_client,
                    out,
                    ErrorResponse::standard(INTERNAL_ERROR).id(id).data(SERVER_GONE),
                );
                return false;
            }
            state.table.forward((), msg, line).is_some()
        }
        Kind::Notification if msg.method().is_some_and(|m| m == "notifications/cancelled") => {
            let Some(params) = msg.params() else {
                line.put_slice(msg.as_bytes());
                return true;
            };
            let field = params.get("requestId");
            let Some((at, asked)) = field.unique().and_then(|v| Some((v, v.as_id()?))) else {
                line.put_slice(msg.as_bytes());
                return true;
            };
            match state.table.find(&(), &asked) {
                Some(pending) => {
                    rewrite::write_replacing(
                        msg.as_bytes(),
                        at,
                        pending.downstream_id().raw(),
                        line,
                    );
                    true
                }
                None => {
                    eprintln!("stdio_proxy: dropping cancellation of {asked}: not in flight");
                    false
                }
            }
        }
        _ => {
            line.put_slice(msg.as_bytes());
            true
        }
    }
}

fn from_server(
    parser: &Parser,
    frame: &Frame,
    state: &Shared,
    out: &mut BytesMut,
    to_client: &Outbox,
) {
    let msg = match parser.parse(frame.bytes()) {
        Ok(msg) => msg,
        Err(invalid) => {
            eprintln!("stdio_proxy: dropping invalid line from the server: {invalid}");
            return;
        }
    };
    match msg.kind() {
        Kind::Result | Kind::Error => {
            let restored = lock(state).table.restore(&msg, out);
            if restored.is_none() {
                match msg.id() {
                    Some(id) if !id.is_null() => {
                        eprintln!("stdio_proxy: dropping response with unknown id {id}");
                        return;
                    }
                    _ => out.put_slice(msg.as_bytes()),
                }
            }
        }
        _ => out.put_slice(msg.as_bytes()),
    }
    send(to_client, out);
}
