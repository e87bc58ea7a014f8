//! `rpcscan`: classify, count, filter and answer JSON-RPC 2.0 / MCP traffic at disk speed.
//!
//! | file | what it is |
//! |---|---|
//! | `main.rs` | the command line (clap), the exit codes |
//! | `classify.rs`, `stats.rs`, `filter.rs`, `respond.rs`, `pair.rs` | one subcommand each |
//! | `proxy/` | the MCP stdio gateway (`rpcscan proxy`) |
//! | `gateway/` | the MCP Streamable HTTP gateway (`rpcscan gateway`) |
//! | `ctrl_c.rs` | Ctrl-C as the end of the input (`pair`) |
//!
//! Everything between the library's scanner and these subcommands is the engine crate
//! `rpcscan-traffic` (inputs, log-line extraction, the `--log` records, pairing, policy
//! globs, durations), which the Python package shares: the binary adds its arguments and
//! its printers.
#![deny(clippy::undocumented_unsafe_blocks)]

/// mimalloc rather than glibc's malloc: ~1.1k user instructions fewer per request of
/// `rpcscan gateway` (of ~54k, callgrind) and less CPU per request under load
/// (docs/performance.md, "Gateway against nginx").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod classify;
mod ctrl_c;
mod filter;
mod gateway;
mod otlp;
mod pair;
mod proxy;
mod respond;
mod stats;

use std::error::Error;
use std::iter;
use std::path::PathBuf;
use std::process::ExitCode;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Instant;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand};
use rpcscan::{Kind, Validation};

// The engine's modules under the crate's own paths (`crate::input`, `crate::log`, ...).
use rpcscan_traffic::{input, json, log, policy};

use crate::input::formats::{LogFormat, FORMATS};
use crate::input::{warn, Extract, Input, Output, Run, Settings, Stop};
use rpcscan::frame::Framing;

const EXAMPLES: &str = "\
Examples:
  rpcscan stats traffic.ndjson                     kinds, methods, error codes, GB/s
  rpcscan classify --json --check traffic.ndjson   one object per message; 1 if any invalid
  rpcscan filter --kind request --method 'tools/*' traffic.ndjson
  rpcscan filter --invalid -c traffic.ndjson       how many messages are invalid
  rpcscan filter --id 7 traffic.ndjson             the request with id 7 and its response
  rpcscan pair --unanswered traffic.ndjson         requests that never got a response
  mcp-server | rpcscan respond --supported tools/list,tools/call
  rpcscan classify --framing content-length lsp.log
  rpcscan stats --line-format '^(?<ts>\\S+) \\[(?<dir>STDIN|STDOUT)\\] (?<msg>.*)' host.log
  rpcscan pair --json-field msg --ts-field ts --dir-field dir events.jsonl
  rpcscan pair proxy.log                           a `rpcscan proxy --log` file, as is
  rpcscan stats ~/Library/Logs/Claude              a folder of logs, rotated, .gz, .zst
  rpcscan pair --follow --every 10s proxy.log      a live log: a report every 10 s
  rpcscan pair ~/Library/Logs/Claude/mcp-server-github.log   a host's log, as is
  rpcscan formats                                  the named log formats, a line of each

Files are read in order; none, or `-`, means standard input. NDJSON is scanned in
parallel, output in input order: regular files read with positioned reads (a file
truncated while read is read up to its new end: a warning, exit status 2; with --mmap it
is memory-mapped instead, and a truncation kills the process with SIGBUS), pipes streamed
with bounded memory. Content-Length, SSE and json-seq streams are decoded in order.

Folders, rotated and compressed logs: a FOLDER reads its files matching --glob (default
'*.log*', '*.ndjson*', '*.jsonl*'); the files of one rotated log (x.log.2.gz, x.log.1,
x.log; x1.log beside x.log) are one stream, in the order of their first timestamps, else
oldest first by number; different logs are id spaces of their own in pair. .gz and .zst
files are decompressed as they are read. With several
files, --json output names each message's file. --follow FILE reads a live log until
Ctrl-C, across rotation, like tail -F. Details: docs/input.md.

Log lines (every subcommand): --log-format, --line-format or --json-field find the message
inside each line (log records are lines: --framing does not apply, --max-message-size
limits the line); lines without one are counted (stats: skipped lines) and skipped, never
invalid. Without them, the logs of Claude Desktop, VS Code, Cursor, the MCP Inspector,
pino and `rpcscan proxy --log` are recognised by their first lines (said on stderr).
When most lines of an input hold no message or an invalid one, stats and pair say so. Line numbers
and offsets point into the original file (offset: the message's first byte, or the
opening quote of the JSON string that held it); filter prints the original line.

DURATION values (pair --timeout, proxy --grace, gateway --request-timeout): a number and a
unit (us, ms, s, m or min, h, d), terms adding up (1h30m), or a bare number of seconds
(1.5): 500ms, 30s, 5m, 1h30m.

Exit status: 0 ok or something matched; 1 nothing matched (filter) or invalid messages
seen (classify --check); 2 usage or I/O error.";

/// Classify, count, filter and answer JSON-RPC 2.0 / MCP messages.
#[derive(Parser, Debug)]
#[command(name = "rpcscan", version, after_help = EXAMPLES, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Print each message's kind: request, notification, result, error or invalid.
    #[command(after_help = "\
Examples:
  rpcscan classify traffic.ndjson
  rpcscan classify --json traffic.ndjson | jq 'select(.kind == \"invalid\")'
  rpcscan classify --check -q traffic.ndjson && echo all valid

--json prints one object per message: kind, line (NDJSON, else null), offset (byte offset
of the message in its input), id (raw, verbatim), method, error_code, and for invalid
messages reason, code and error_offset (first offending byte within the message); file
when several inputs are given.")]
    Classify(ClassifyArgs),
    /// Count messages per kind, method, error code and invalid reason; bytes and speed.
    #[command(after_help = "\
Examples:
  rpcscan stats traffic.ndjson
  rpcscan stats --json --top 0 *.ndjson
  tail -f server.log | rpcscan stats")]
    Stats(StatsArgs),
    /// Print the matching messages' original bytes, one per line, like grep.
    #[command(after_help = "\
Examples:
  rpcscan filter --kind request --method 'tools/*' traffic.ndjson
  rpcscan filter --kind result --kind error traffic.ndjson
  rpcscan filter --id '\"abc\"' traffic.ndjson      a string id (or just --id abc)
  rpcscan filter -v --kind notification traffic.ndjson
  rpcscan filter --invalid -c traffic.ndjson

Criteria of different sorts must all hold; repeated values of one sort are alternatives.
Messages a framing had to skip (oversized) can match but are not printed: a note goes to
stderr.")]
    Filter(FilterArgs),
    /// Print a gateway's answer to each message, in order.
    #[command(after_help = "\
For each message: a supported request prints `supported`; an unsupported one prints
  {\"jsonrpc\": \"2.0\", \"id\": ID, \"error\": {\"code\": -32601, \"message\": \"Method not found\"}}
with the request's raw id; an invalid message prints the -32700 or -32600 response with the
recovered id or null; notifications, results and errors print nothing.

Examples:
  rpcscan respond --supported tools/list,tools/call traffic.ndjson
  mcp-client | rpcscan respond --supported initialize,ping")]
    Respond(RespondArgs),
    /// Match each response to its request: pairs, orphans, duplicate ids, unanswered.
    #[command(after_help = "\
Examples:
  rpcscan pair traffic.ndjson                      summary per method and tool
  rpcscan pair --unanswered traffic.ndjson         requests never answered; 1 if none
  rpcscan pair --json traffic.ndjson | jq 'select(.event == \"orphan\")'
  tail -f server.log | rpcscan pair
  rpcscan pair --follow --every 10s --json server.log

Ids match by decoded value (1 is not \"1\"). A request whose id is still in flight is a
duplicate (responses answer them first-in first-out); error responses with a null id
answer no one; notifications/cancelled marks a request cancelled, notifications/progress
counts towards the request with that progressToken. --json prints one object per pair
and anomaly (event, request_line, request_offset, response_line, response_offset, id,
method, tool, outcome, error_code, latency_ms, progress, cancelled), then a summary
object (the counts, and the direction labels seen). --unanswered prints LINE, OFFSET, ID, METHOD, TOOL separated by tabs.
Latencies and --timeout need timestamps, and directions need labels: from log lines
(--line-format groups ts and dir, --ts-field and --dir-field, `rpcscan proxy --log` files);
bare NDJSON has neither, and one id space is shared by both sides. The two direction labels
seen (any two distinct values, on requests, responses, cancels and progress notifications:
an invalid line's label never counts) are reported; a response answers a request that
travelled the other way. Latency percentiles (p50, p90, p99) are at most 1/128 (0.8%) above
the exact value and never below it by a whole microsecond; max is exact. The report comes
at the end of the input, or at Ctrl-C (which ends the input where it is: exit status 130
after the report; a second Ctrl-C exits at once), and with --every DURATION also while the
input is read (--json: an \"interim\" object with in_flight). With several files (a folder,
a rotated log) --json adds request_file and response_file, --unanswered a FILE column.")]
    Pair(pair::PairArgs),
    /// Run an MCP stdio server behind a checking, logging gateway: `proxy -- SERVER_CMD ...`.
    #[command(after_help = proxy::AFTER_HELP)]
    Proxy(proxy::ProxyArgs),
    /// Put a checking, logging gateway in front of an MCP Streamable HTTP server.
    #[command(after_help = gateway::AFTER_HELP)]
    Gateway(Box<gateway::GatewayArgs>),
    /// List the named log formats (--log-format), with a line of each.
    Formats,
}

/// Options every subcommand takes, listed under their own heading in `--help`.
#[derive(Args, Debug)]
#[command(next_help_heading = "Input options")]
struct Common {
    /// How messages are cut from the bytes (auto: sniff the first bytes of each input).
    #[arg(long, value_name = "FRAMING", default_value = "auto", value_parser = framings())]
    framing: FramingChoice,
    /// strict: validate every byte; envelope: only structurally scan values not read.
    #[arg(long, value_name = "MODE", default_value = "strict", value_parser = modes())]
    mode: Validation,
    /// Longest message; longer ones are invalid (too_large) and skipped unbuffered.
    /// K, M, G are powers of 1024.
    #[arg(long, value_name = "SIZE", default_value = "16MiB", value_parser = parse_size)]
    max_message_size: usize,
    /// Worker threads scanning NDJSON (not given, or 0: one per core).
    #[arg(long, short = 'j', value_name = "N")]
    threads: Option<usize>,
    /// Memory-map regular files instead of reading them with positioned reads (5-20% less
    /// CPU time on a cached file). A file truncated while mapped kills the process (SIGBUS).
    #[arg(long, overrides_with = "no_mmap")]
    mmap: bool,
    /// Read regular files with positioned reads, never mapped (the default).
    #[arg(long, overrides_with = "mmap")]
    no_mmap: bool,
    /// Messages inside a named host's or logger's log lines (`rpcscan formats` lists them;
    /// `help` too). Without this, --line-format or --json-field, each input's first lines
    /// are recognised when they are one of these.
    #[arg(
        long,
        value_name = "NAME",
        value_parser = log_format,
        conflicts_with_all = ["line_format", "json_field"],
        help_heading = "Log lines"
    )]
    log_format: Option<&'static LogFormat>,
    /// Messages inside log lines: a regular expression (Rust `regex` syntax, matched on
    /// bytes; `(?-u)` lets `.` and `\S` match bytes that are not UTF-8) with a named group
    /// `msg`, and optionally `ts` (read like --ts-field) and `dir`. Lines that do not match
    /// are counted and skipped. Example: '^(?<ts>\S+) \[(?<dir>STDIN|STDOUT)\] (?<msg>.*)'.
    #[arg(long, value_name = "REGEX", value_parser = line_format, help_heading = "Log lines")]
    line_format: Option<Arc<Extract>>,
    /// Messages inside JSON log records: the dotted path of the member holding the message
    /// (an object, or a string holding its JSON). Records without it are counted and skipped.
    #[arg(long, value_name = "PATH", conflicts_with = "line_format", help_heading = "Log lines")]
    json_field: Option<String>,
    /// With --json-field: the record's timestamp (RFC 3339 / ISO 8601, no zone = UTC; or
    /// Unix seconds, or milliseconds from 10^11 on, integer or fractional).
    #[arg(long, value_name = "PATH", requires = "json_field", help_heading = "Log lines")]
    ts_field: Option<String>,
    /// With --json-field: the record's direction (any two distinct values).
    #[arg(long, value_name = "PATH", requires = "json_field", help_heading = "Log lines")]
    dir_field: Option<String>,
    /// Which files of a FOLDER operand are read (repeatable; `*` and `?`). Default:
    /// '*.log*', '*.ndjson*', '*.jsonl*' (rotated and compressed ones included).
    #[arg(long, value_name = "GLOB", help_heading = "Files and folders")]
    glob: Vec<String>,
    /// Keep reading FILE as it grows and across rotation (like `tail -F`), from its start,
    /// until Ctrl-C; one file only.
    #[arg(long, help_heading = "Files and folders")]
    follow: bool,
    /// Input files or folders; none or `-` reads standard input.
    #[arg(value_name = "FILE", help_heading = None)]
    files: Vec<PathBuf>,
}

/// `--log-format`: a format's name; `help` lists them (and exits).
fn log_format(name: &str) -> Result<&'static LogFormat, String> {
    if name == "help" {
        print!("{}", formats_list());
        std::process::exit(0);
    }
    LogFormat::named(name)
        .ok_or_else(|| format!("no log format {name:?} (known: {}; or help)", LogFormat::names()))
}

/// `rpcscan formats`: each format's name, what writes it, and a line of it.
fn formats_list() -> String {
    let mut s = String::new();
    for f in &FORMATS {
        s.push_str(&format!("{:<16}{}\n{:<16}{}\n\n", f.name, f.title, "", f.sample));
    }
    s.push_str(
        "Each is recognised from an input's first lines when no --log-format, --line-format\n\
         or --json-field is given (said on stderr); lines a format does not know are counted\n\
         and skipped, never read as messages.\n",
    );
    s
}

/// `--line-format`: compiled, with its `msg` group checked (a usage error, exit 2, if not).
fn line_format(pattern: &str) -> Result<Arc<Extract>, String> {
    Extract::regex(pattern).map(Arc::new)
}

/// `--framing`: `auto` (sniff each input: `None`) or one of the library's framings.
#[derive(Clone, Copy, Debug)]
struct FramingChoice(Option<Framing>);

fn framings() -> impl TypedValueParser<Value = FramingChoice> {
    let names = iter::once("auto").chain(Framing::ALL.map(Framing::as_str));
    PossibleValuesParser::new(names).try_map(|name| match name.as_str() {
        "auto" => Ok(FramingChoice(None)),
        name => name.parse().map(|framing| FramingChoice(Some(framing))),
    })
}

fn modes() -> impl TypedValueParser<Value = Validation> {
    by_name(Validation::ALL.map(Validation::as_str))
}

fn kinds() -> impl TypedValueParser<Value = Kind> {
    by_name(Kind::ALL.map(Kind::as_str))
}

/// A library type parsed by its `FromStr`, with `names` listed as the possible values in
/// `--help` and in the error for anything else.
fn by_name<T>(names: impl IntoIterator<Item = &'static str>) -> impl TypedValueParser<Value = T>
where
    T: FromStr + Clone + Send + Sync + 'static,
    T::Err: Into<Box<dyn Error + Send + Sync + 'static>>,
{
    PossibleValuesParser::new(names).try_map(|name| name.parse::<T>())
}

#[derive(Args, Debug)]
struct ClassifyArgs {
    /// One JSON object per message instead of its kind.
    #[arg(long)]
    json: bool,
    /// Exit with status 1 when any message is invalid.
    #[arg(long)]
    check: bool,
    /// Print nothing (use with --check).
    #[arg(long, short = 'q')]
    quiet: bool,
    #[command(flatten)]
    common: Common,
}

#[derive(Args, Debug)]
struct StatsArgs {
    /// One JSON object instead of the table.
    #[arg(long)]
    json: bool,
    /// How many methods to list, most frequent first (0: all).
    #[arg(long, value_name = "N", default_value_t = 10)]
    top: usize,
    #[command(flatten)]
    common: Common,
}

#[derive(Args, Debug)]
struct FilterArgs {
    /// Keep messages of this kind (repeatable, or comma-separated).
    #[arg(long, value_name = "KIND", value_delimiter = ',', value_parser = kinds())]
    kind: Vec<Kind>,
    /// Keep requests and notifications whose method matches this glob (`*`, `?`; repeatable).
    #[arg(long, value_name = "GLOB")]
    method: Vec<String>,
    /// Keep messages with this id: an integer (7), null, a JSON string ('"7"'), or text (abc).
    #[arg(long, value_name = "ID", allow_hyphen_values = true)]
    id: Option<String>,
    /// Keep invalid messages (same as --kind invalid).
    #[arg(long)]
    invalid: bool,
    /// Print only the number of matching messages.
    #[arg(long, short = 'c')]
    count: bool,
    /// Keep the messages that do not match.
    #[arg(long = "invert-match", short = 'v')]
    invert: bool,
    #[command(flatten)]
    common: Common,
}

#[derive(Args, Debug)]
struct RespondArgs {
    /// Methods the gateway serves (comma-separated; empty: none).
    #[arg(
        long,
        value_name = "M1,M2",
        value_delimiter = ',',
        default_value = "tools/list,tools/call"
    )]
    supported: Vec<String>,
    #[command(flatten)]
    common: Common,
}

/// `16MiB`, `512K`, `1048576` → bytes (K, M, G: powers of 1024).
fn parse_size(s: &str) -> Result<usize, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (digits, unit) = s.split_at(split);
    let bad = || format!("{s:?} is not a size (examples: 1048576, 512K, 16MiB)");
    let n: u64 = digits.parse().map_err(|_| bad())?;
    let unit: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => return Err(bad()),
    };
    let bytes = n.checked_mul(unit).ok_or_else(bad)?;
    if bytes == 0 {
        return Err("the maximum message size must be at least 1 byte".to_owned());
    }
    Ok(usize::try_from(bytes).unwrap_or(usize::MAX))
}

impl Common {
    /// The settings; an error for a bad `--json-field` path (usage, exit 2). `labels`:
    /// the subcommand reads the log lines' `ts` and `dir` labels (`pair`), not only their
    /// messages.
    fn settings(&self, labels: bool) -> Result<Settings, String> {
        let extract = match (&self.line_format, &self.json_field) {
            _ if self.log_format.is_some() => self.log_format.map(|format| {
                let extract = format.extract();
                Arc::new(if labels { extract } else { extract.messages_only() })
            }),
            (Some(re), _) if labels => Some(Arc::clone(re)),
            (Some(re), _) => Some(Arc::new(Extract::clone(re).messages_only())),
            (None, Some(msg)) => Some(Arc::new(Extract::fields(
                msg,
                self.ts_field.as_deref(),
                self.dir_field.as_deref(),
            )?)),
            (None, None) => None,
        };
        Ok(Settings {
            // Log records are lines.
            framing: if extract.is_some() { Some(Framing::Ndjson) } else { self.framing.0 },
            parser: rpcscan::Parser::new().validation(self.mode),
            max_message_size: self.max_message_size,
            mmap: self.mmap,
            extract,
            notes: rpcscan_traffic::input::Notes::stderr(),
            labels,
        })
    }

    /// [`Common::settings`], or the exit code after saying what is wrong.
    fn checked_settings(&self, labels: bool) -> Result<Settings, ExitCode> {
        let follows_one = self.files.len() == 1 && self.files[0].as_os_str() != "-";
        if self.follow && !follows_one {
            warn(format_args!("--follow reads one FILE (not standard input)"));
            return Err(ExitCode::from(2));
        }
        self.settings(labels).map_err(|e| {
            warn(format_args!("{e}"));
            ExitCode::from(2)
        })
    }

    /// The inputs: folders expanded, rotated files in order (the engine's
    /// `input::expand`), or the one file followed (`--follow`, which then ends at Ctrl-C).
    fn inputs(&self) -> Vec<Input> {
        if self.follow {
            if let Err(e) = ctrl_c::end_input_on_ctrl_c() {
                warn(format_args!("cannot catch Ctrl-C: {e}"));
            }
            return self.files.iter().map(|f| Input::Follow(f.clone())).collect();
        }
        // Files are put in time order by their log lines' timestamps.
        match self.settings(true) {
            Ok(settings) => input::expand(&self.files, &self.glob, &settings),
            Err(_) => Input::from_args(&self.files),
        }
    }

    fn setup_threads(&self) {
        if let Some(n) = self.threads.filter(|&n| n > 0) {
            if let Err(e) = rayon::ThreadPoolBuilder::new().num_threads(n).build_global() {
                warn(format_args!("cannot start {n} threads: {e}"));
            }
        }
    }
}

/// Turns a finished (or stopped) run into the exit code; `decide` says 0 or 1 for a clean one.
fn exit<T>(run: Result<Run<T>, Stop>, decide: impl FnOnce(&Run<T>) -> u8) -> ExitCode {
    match run {
        Ok(run) if run.failed => ExitCode::from(2),
        Ok(run) => ExitCode::from(decide(&run)),
        // `| head` closed the pipe: we are done, quietly.
        Err(Stop::BrokenPipe) => ExitCode::SUCCESS,
        Err(Stop::Output(e)) => {
            warn(format_args!("<stdout>: write error: {e}"));
            ExitCode::from(2)
        }
        Err(Stop::Panic) => {
            warn(format_args!("internal error: a worker thread panicked"));
            ExitCode::from(2)
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut out = Output::stdout();
    match cli.command {
        Cmd::Classify(args) => {
            let settings = match args.common.checked_settings(false) {
                Ok(settings) => settings,
                Err(code) => return code,
            };
            args.common.setup_threads();
            let inputs = args.common.inputs();
            let cmd = classify::Classify {
                json: args.json,
                quiet: args.quiet,
                with_file: inputs.len() > 1,
            };
            let run = input::run(&cmd, &settings, &inputs, &mut out);
            exit(run, |run| u8::from(args.check && run.tally.invalid > 0))
        }
        Cmd::Stats(args) => {
            let settings = match args.common.checked_settings(false) {
                Ok(settings) => settings,
                Err(code) => return code,
            };
            args.common.setup_threads();
            let cmd = stats::Stats { top: args.top, json: args.json };
            let start = Instant::now();
            let run =
                input::run(&cmd, &settings, &args.common.inputs(), &mut out).and_then(|run| {
                    // Inputs failed and nothing was read: a report of zeros would only look
                    // like an answer.
                    if !(run.failed && run.bytes == 0) {
                        for warning in cmd.warnings(&run.tally) {
                            warn(format_args!("{warning}"));
                        }
                        let report = cmd.report(&run.tally, run.bytes, start.elapsed());
                        out.write(&report)?;
                        out.flush()?;
                    }
                    Ok(run)
                });
            exit(run, |_| 0)
        }
        Cmd::Filter(args) => {
            let settings = match args.common.checked_settings(false) {
                Ok(settings) => settings,
                Err(code) => return code,
            };
            args.common.setup_threads();
            let id = match args.id.as_deref().map(filter::parse_id).transpose() {
                Ok(id) => id,
                Err(e) => {
                    warn(format_args!("--id: {e}"));
                    return ExitCode::from(2);
                }
            };
            let mut kinds = args.kind.iter().fold(0, |bits, &k| bits | filter::Filter::kind_bit(k));
            if args.invalid {
                kinds |= filter::Filter::kind_bit(Kind::Invalid);
            }
            let cmd = filter::Filter {
                kinds,
                methods: args.method,
                id,
                invert: args.invert,
                count: args.count,
            };
            let run =
                input::run(&cmd, &settings, &args.common.inputs(), &mut out).and_then(|run| {
                    if cmd.count {
                        let mut line = Vec::with_capacity(24);
                        json::write_u64(&mut line, run.tally.matched);
                        line.push(b'\n');
                        out.write(&line)?;
                        out.flush()?;
                    }
                    Ok(run)
                });
            exit(run, |run| u8::from(run.tally.matched == 0))
        }
        Cmd::Respond(args) => {
            let settings = match args.common.checked_settings(false) {
                Ok(settings) => settings,
                Err(code) => return code,
            };
            args.common.setup_threads();
            let cmd = respond::Respond {
                supported: args.supported.into_iter().filter(|m| !m.is_empty()).collect(),
            };
            let run = input::run(&cmd, &settings, &args.common.inputs(), &mut out);
            exit(run, |_| 0)
        }
        Cmd::Pair(args) => pair::main(args, &mut out),
        Cmd::Proxy(args) => proxy::run(args),
        Cmd::Gateway(args) => gateway::run(*args),
        Cmd::Formats => {
            let run = out.write(formats_list().as_bytes()).and_then(|()| out.flush());
            exit(run.map(|()| Run { tally: (), bytes: 0, failed: false }), |_| 0)
        }
    }
}
