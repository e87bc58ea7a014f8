//! `rpcscan stats` on bare NDJSON against the same traffic inside log lines (issue 21's
//! target: at least 0.5x of bare): JSON records holding the message as an object
//! (`--json-field msg`), as a string (`--json-field payload`), and host prefixes read with
//! a simple anchored `--line-format`. Then the hosts' logs (issue 33's target: a named
//! format no slower than the equivalent `--line-format`): a Claude Desktop log (the message
//! followed by ` { metadata: undefined }`) read with `--log-format claude-desktop` and with
//! the expression that reads it, and a VS Code output channel read with
//! `--log-format vscode` and with its expression. Every run goes through the real binary;
//! each run's message count is checked before its time is printed.
//!
//! ```text
//! cargo build --profile bench -p rpcscan-cli -p rpcscan-benchmarks --bin extract
//! target/release/extract [SIZE_MB [ROUNDS [RPCSCAN]]]   # default 1024 3, rpcscan beside this program
//! target/release/extract --test                         # 4 MB, one round: counts only
//! RPCSCAN_BENCH_KEEP=1 target/release/extract 64 1       # keeps the logs (paths printed)
//! ```

use std::io::Write;

use rpcscan_benchmarks::cli_run::{count, Args};
use rpcscan_benchmarks::logs;

/// The `--line-format` of the prefixed log.
const PREFIX_FORMAT: &str = r"^(?<ts>\S+) \[(?<dir>STDIN|STDOUT)\] (?<msg>.*)$";

/// The `--line-format` that reads a Claude Desktop `mcp-server-NAME.log` (the message, then
/// maybe ` { metadata: undefined }`), as a user would write it.
const CLAUDE_FORMAT: &str = concat!(
    r"^(?<ts>\S+) \[[^\]]*\] \[[^\]]*\] Message from (?<dir>client|server): ",
    r"(?<msg>\{.*?\})(?: \{ metadata: undefined \})?$"
);

/// The `--line-format` that reads VS Code's MCP output channel.
const VSCODE_FORMAT: &str = concat!(
    r"^(?<ts>\S+ \S+) \[\w+\] \[(?<dir>editor -> server|server -> editor)\] ",
    r"(?<msg>.*)$"
);

/// The traffic: about `size` bytes of requests, progress and responses, one per line.
fn traffic(size: usize) -> Vec<Vec<u8>> {
    let mut messages = Vec::new();
    let mut total = 0;
    let tools = ["get_weather", "search", "echo", "read_file"];
    let mut id = 0u64;
    while total < size {
        let tool = tools[(id % 4) as usize];
        let mut batch = vec![format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{"city":"Oslo","units":"metric"}},"_meta":{{"progressToken":{id}}}}}}}"#
        )];
        if id.is_multiple_of(5) {
            batch.push(format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{id},"progress":1,"total":2}}}}"#
            ));
        }
        batch.push(if id % 7 == 3 {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32602,"message":"Invalid params: city"}}}}"#
            )
        } else {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"Oslo: 4°C, light rain"}}],"isError":false}}}}"#
            )
        });
        for m in batch {
            total += m.len() + 1;
            messages.push(m.into_bytes());
        }
        id += 1;
    }
    messages
}

/// How a message is written into its log line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    Bare,
    Record,
    Payload,
    Prefix,
    /// A Claude Desktop log, `--log-format claude-desktop`.
    Claude,
    /// The same log, with [`CLAUDE_FORMAT`].
    ClaudeRegex,
    /// A VS Code output channel, `--log-format vscode`.
    VsCode,
    /// The same log, with [`VSCODE_FORMAT`].
    VsCodeRegex,
}

impl Form {
    const ALL: [Form; 8] = [
        Form::Bare,
        Form::Record,
        Form::Payload,
        Form::Prefix,
        Form::Claude,
        Form::ClaudeRegex,
        Form::VsCode,
        Form::VsCodeRegex,
    ];

    fn args(self) -> &'static [&'static str] {
        match self {
            Form::Bare => &[],
            Form::Record => &["--json-field", "msg"],
            Form::Payload => &["--json-field", "payload"],
            Form::Prefix => &["--line-format", PREFIX_FORMAT],
            Form::Claude => &["--log-format", "claude-desktop"],
            Form::ClaudeRegex => &["--line-format", CLAUDE_FORMAT],
            Form::VsCode => &["--log-format", "vscode"],
            Form::VsCodeRegex => &["--line-format", VSCODE_FORMAT],
        }
    }

    /// The form whose log this one reads (one file for a format and its expression).
    fn log(self) -> Form {
        match self {
            Form::ClaudeRegex => Form::Claude,
            Form::VsCodeRegex => Form::VsCode,
            form => form,
        }
    }

    fn write(self, log: &mut Vec<u8>, n: usize, msg: &[u8]) {
        let ts =
            format!("2026-11-29T10:{:02}:{:02}.{:03}Z", n / 60_000 % 60, n / 1000 % 60, n % 1000);
        let (dir, label) = if n.is_multiple_of(2) { ("c2s", "STDIN") } else { ("s2c", "STDOUT") };
        match self {
            Form::Bare => log.extend_from_slice(msg),
            Form::Record => {
                let _ = write!(log, r#"{{"ts":"{ts}","dir":"{dir}","session":"a1","msg":"#);
                log.extend_from_slice(msg);
                log.push(b'}');
            }
            Form::Payload => {
                let _ = write!(
                    log,
                    r#"{{"time":{}.{:03},"direction":"{dir}","payload":""#,
                    1_764_410_400 + n / 1000,
                    n % 1000
                );
                for &b in msg {
                    if b == b'"' || b == b'\\' {
                        log.push(b'\\');
                    }
                    log.push(b);
                }
                log.extend_from_slice(b"\"}");
            }
            Form::Prefix => {
                let _ = write!(log, "{ts} [{label}] ");
                log.extend_from_slice(msg);
            }
            Form::Claude | Form::ClaudeRegex => {
                let from = if n.is_multiple_of(2) { "client" } else { "server" };
                let _ = write!(log, "{ts} [weather] [info] Message from {from}: ");
                log.extend_from_slice(msg);
                log.extend_from_slice(b" { metadata: undefined }");
            }
            Form::VsCode | Form::VsCodeRegex => {
                let arrow =
                    if n.is_multiple_of(2) { "editor -> server" } else { "server -> editor" };
                let ts = format!(
                    "2026-11-29 10:{:02}:{:02}.{:03}",
                    n / 60_000 % 60,
                    n / 1000 % 60,
                    n % 1000
                );
                let _ = write!(log, "{ts} [debug] [{arrow}] ");
                log.extend_from_slice(msg);
            }
        }
        log.push(b'\n');
    }
}

fn main() {
    let run = Args::from_env();
    let (size_mb, rounds) = (run.size_mb, run.rounds);
    let mcp: Vec<Vec<u8>> = logs::mcp_pairs(size_mb << 20)
        .0
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect();
    let traffics = [
        ("tiny tools/call messages (~130 B)", traffic(size_mb << 20)),
        ("MCP traffic of mixed shapes (~1 KB per message)", mcp),
    ];
    for (n, (name, messages)) in traffics.into_iter().enumerate() {
        measure(&run, name, n, &messages, rounds);
    }
}

/// Times `stats` on `messages` bare and in every form, `rounds` times.
fn measure(run: &Args, name: &str, n: usize, messages: &[Vec<u8>], rounds: usize) {
    let bare_bytes: usize = messages.iter().map(|m| m.len() + 1).sum();
    let mut files: Vec<(Form, std::path::PathBuf, f64)> = Vec::new();
    for form in Form::ALL {
        if let Some((_, path, bytes)) = files.iter().find(|f| f.0 == form.log()) {
            let (path, bytes) = (path.clone(), *bytes);
            files.push((form, path, bytes));
            continue;
        }
        let mut log = Vec::with_capacity(bare_bytes * 3 / 2);
        for (i, msg) in messages.iter().enumerate() {
            form.write(&mut log, i, msg);
        }
        let path = std::env::temp_dir()
            .join(format!("rpcscan-extract-bench-{}-{n}-{form:?}.log", std::process::id()));
        std::fs::write(&path, &log).expect("write the log");
        files.push((form, path, log.len() as f64));
    }
    println!(
        "{name}: {} messages, {:.0} MB of bare NDJSON",
        messages.len(),
        bare_bytes as f64 / 1e6
    );
    for round in 0..rounds {
        let mut bare = None;
        for (form, path, bytes) in &files {
            let file = path.to_str().expect("a UTF-8 temp path");
            let mut args = vec!["stats"];
            args.extend_from_slice(form.args());
            args.push(file);
            let (report, elapsed, cpu) = run.time_cpu(&args);
            assert_eq!(count(&report, "messages"), messages.len() as u64, "{form:?}: {report}");
            assert_eq!(count(&report, "invalid"), 0, "{form:?}: {report}");
            // Throughput in messages, so that the wrappers' extra bytes are no bonus; and
            // CPU time for the same messages, which a busy machine disturbs less.
            let (bare_wall, bare_cpu) = *bare.get_or_insert((elapsed, cpu));
            let cpu = match (cpu, bare_cpu) {
                (Some(c), Some(b)) => {
                    format!(
                        "; CPU {:.2} s, {:.2}x bare",
                        c.as_secs_f64(),
                        b.as_secs_f64() / c.as_secs_f64().max(1e-9)
                    )
                }
                _ => String::new(),
            };
            println!(
                "  round {round}: {form:?}: {:.2} GB/s of log, {:.1} M messages/s, {:.2}x bare{cpu}",
                bytes / elapsed.as_secs_f64() / 1e9,
                messages.len() as f64 / elapsed.as_secs_f64() / 1e6,
                bare_wall.as_secs_f64() / elapsed.as_secs_f64()
            );
        }
    }
    for (form, path, _) in files {
        if form.log() != form {
            continue;
        }
        // RPCSCAN_BENCH_KEEP=1 keeps the logs, to profile one form on its own.
        if std::env::var_os("RPCSCAN_BENCH_KEEP").is_some() {
            println!("  kept {}", path.display());
        } else {
            let _ = std::fs::remove_file(path);
        }
    }
}
