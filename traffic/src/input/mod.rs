//! Where messages come from, and in which order they reach a subcommand.
//!
//! NDJSON, read or streamed, goes through one ordered parallel pipeline: a producer
//! thread cuts the input into blocks of whole lines (newline-aligned ranges of a file, read
//! by the workers with positioned reads or memory-mapped, several files in a row; or chunks
//! read from a pipe, a followed file or a decompressor, at most a window
//! of them in flight, so memory stays bounded whatever the input size), the rayon pool
//! scans the blocks, and the calling thread writes each block's output in input order.
//! Content-Length, SSE and json-seq streams are read in fixed-size chunks into a bounded
//! `BytesMut` and cut, in order, by the library's framing decoders. Every message reaches
//! [`Command::item`] as an [`Item`]: its offset, NDJSON line, original bytes and verdict.
//! The per-message path allocates nothing: blocks are borrowed, output goes into reused
//! buffers.
//!
//! | file | its one job |
//! |---|---|
//! | `mod.rs` | the types a subcommand sees, and [`run`]: each input down its road |
//! | `open.rs` | opening an input: positioned or mapped (regular NDJSON file), or streamed |
//! | `files.rs` | operands to inputs: folders expanded, rotated files in order ([`expand`]) |
//! | `compressed.rs` | `.gz` / `.zst` files decompressed ahead, in parallel ([`Codec`]) |
//! | `follow.rs` | a file followed as it grows and across rotation (`--follow`) |
//! | `positioned.rs` | regular files read with positioned reads in newline-aligned blocks |
//! | `sniff.rs` | the first bytes of a stream: `--framing auto`, binary-looking input |
//! | `pipeline.rs` | the ordered parallel pipeline: producer, rayon workers, writer |
//! | `mapped.rs` | mapped files cut into newline-aligned blocks |
//! | `lines.rs` | a stream cut into blocks of whole lines; oversized lines skipped unbuffered |
//! | `ndjson.rs` | the hot loop: one block's lines to the subcommand |
//! | `extract.rs` | messages inside log lines: `--line-format`, `--json-field`, proxy logs |
//! | `formats.rs` | named log formats (`--log-format`), recognised by an input's first lines |
//! | `readable.rs` | per input: lines read, lines that held no message or an invalid one |
//! | `stream.rs` | Content-Length, SSE and json-seq streams through the library's decoders |
//! | `progress.rs` | the progress bar |
//! | `interrupt.rs` | the end of the input on request (Ctrl-C in `pair`) |
//! | `output.rs` | stdout, stderr, and why a run stops |

mod compressed;
pub mod extract;
mod files;
mod follow;
pub mod formats;
pub mod interrupt;
mod lines;
mod mapped;
mod ndjson;
mod open;
mod output;
mod pipeline;
mod positioned;
mod progress;
pub mod readable;
mod sniff;
mod stream;

use std::io::{self, IsTerminal};
use std::path::PathBuf;
use std::sync::Arc;

use bytes::BytesMut;
use rpcscan::frame::Framing;
use rpcscan::{Invalid, Kind, Message, Parser, Reason};

use self::compressed::Ahead;
pub use self::compressed::Codec;
pub use self::extract::{Extract, Skip};
pub use self::files::{expand, DEFAULT_GLOBS};
use self::lines::produce_lines;
use self::mapped::{produce_ranges, Mapped};
use self::open::{open, Opened};
pub use self::output::{warn, Notes, Output, Stop};
use self::pipeline::pipeline;
use self::positioned::{produce_positioned, Positioned};
use self::progress::Progress;
use self::sniff::{sniff, sniff_line};
use self::stream::{Stream, StreamError};

/// How much a stream read asks for at once.
const READ_CHUNK: usize = 256 * 1024;
/// Mapped or positioned files held open at once before their group is scanned.
const MAX_GROUP: usize = 64;

/// Options shared by every subcommand.
#[derive(Clone, Debug)]
pub struct Settings {
    /// `None`: sniff each input (`--framing auto`).
    pub framing: Option<Framing>,
    /// Validation mode and depth limit.
    pub parser: Parser,
    /// Longest message (NDJSON: line without its `\n` / `\r\n`).
    pub max_message_size: usize,
    /// Memory-map regular files instead of reading them with positioned reads. A mapped
    /// file truncated while it is read faults the process (SIGBUS): only on request.
    pub mmap: bool,
    /// Messages inside log lines (`--line-format`, `--json-field`, `--log-format`); `None`:
    /// bare messages, or a named log format recognised by an input's first lines.
    pub extract: Option<Arc<Extract>>,
    /// Where notes go (binary-looking input, read errors): stderr by default.
    pub notes: Notes,
    /// The subcommand reads log lines' `ts` and `dir` labels (pairing): a recognised
    /// format's extraction then finds them; otherwise it finds the messages only (faster).
    pub labels: bool,
}

/// One input operand: a path, or `-` / nothing for stdin.
#[derive(Clone, Debug)]
pub enum Input {
    /// Standard input.
    Stdin,
    /// A file (or a FIFO, a device...).
    Path(PathBuf),
    /// Bytes already in memory (the Python package's `scan(bytes)`): NDJSON is cut into
    /// blocks and scanned in parallel where it lies, as a mapped file is; other framings
    /// are read like a pipe.
    Bytes(Buffer),
    /// A file followed as it grows and across rotation, like `tail -F`, until Ctrl-C
    /// ([`interrupt::interrupt`]): read from its start, then as it is written.
    Follow(PathBuf),
    /// An operand that stands for no input (a folder that cannot be listed, or with no log
    /// file in it: [`expand`]): reported, and the run fails, when its turn comes.
    Error {
        /// The operand.
        path: PathBuf,
        /// What is wrong with it.
        error: String,
    },
}

/// Bytes in memory, shared and never copied: anything that derefs to `[u8]` (an
/// `Arc<[u8]>`, a `Vec<u8>`, a buffer borrowed from another runtime). The bytes must not
/// change while a run reads them.
#[derive(Clone)]
pub struct Buffer(Arc<dyn AsRef<[u8]> + Send + Sync>);

impl Buffer {
    /// Wraps `bytes`.
    pub fn new(bytes: impl AsRef<[u8]> + Send + Sync + 'static) -> Buffer {
        Buffer(Arc::new(bytes))
    }
}

impl AsRef<[u8]> for Buffer {
    fn as_ref(&self) -> &[u8] {
        (*self.0).as_ref()
    }
}

impl std::fmt::Debug for Buffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Buffer({} bytes)", self.as_ref().len())
    }
}

impl Input {
    /// Operands as given on the command line; none means stdin.
    pub fn from_args(files: &[PathBuf]) -> Vec<Input> {
        if files.is_empty() {
            return vec![Input::Stdin];
        }
        files
            .iter()
            .map(|f| if f.as_os_str() == "-" { Input::Stdin } else { Input::Path(f.clone()) })
            .collect()
    }

    /// The input as named in messages: its path, `<stdin>` or `<bytes>`.
    pub fn name(&self) -> String {
        match self {
            Input::Stdin => "<stdin>".to_owned(),
            Input::Path(p) => p.display().to_string(),
            Input::Bytes(_) => "<bytes>".to_owned(),
            Input::Error { path, .. } | Input::Follow(path) => path.display().to_string(),
        }
    }
}

/// The name of an input, for messages and for `--json` output.
#[derive(Debug)]
pub struct Source {
    /// As shown to a person.
    pub name: String,
    /// As a JSON string, quotes included.
    pub json_name: Vec<u8>,
    /// How its lines hold messages, when they are log records.
    pub extract: Option<Arc<Extract>>,
    /// Its place among the run's inputs, from 0 (`rpcscan::pair::Position::input` of its
    /// messages).
    pub index: u32,
    /// Its log among the run's: the files of one rotated log share one, every other input
    /// has its own, numbered from 1; 0 when the run reads one log (`pair` keeps each log's
    /// ids apart).
    pub stream: u32,
    /// Where its notes go (the run's [`Settings::notes`]).
    pub notes: Notes,
}

impl Source {
    fn new(name: String, notes: Notes) -> Source {
        let mut json_name = Vec::with_capacity(name.len() + 2);
        crate::json::write_str(&mut json_name, &name);
        Source { name, json_name, extract: None, index: 0, stream: 0, notes }
    }

    /// This NDJSON input, with its extraction: the one given, or the named log format its
    /// first lines (`first` begins with them) are written in, said on stderr.
    fn with_extraction(self: Arc<Source>, settings: &Settings, first: &[u8]) -> Arc<Source> {
        let extract = match &settings.extract {
            Some(extract) => Arc::clone(extract),
            None => match formats::detect(first) {
                Some(format) => {
                    self.notes.note(format_args!(
                        "{}: read as {} (detected; --log-format {})",
                        self.name, format.title, format.name
                    ));
                    let extract = format.extract();
                    Arc::new(if settings.labels { extract } else { extract.messages_only() })
                }
                None => return self,
            },
        };
        Arc::new(Source {
            name: self.name.clone(),
            json_name: self.json_name.clone(),
            extract: Some(extract),
            index: self.index,
            stream: self.stream,
            notes: self.notes.clone(),
        })
    }
}

/// One message as a subcommand sees it.
#[derive(Clone, Copy, Debug)]
pub struct Item<'a> {
    /// Byte offset of the message in its input (NDJSON: the message's first byte; other
    /// framings: the frame's, as the decoder reports it). Inside a log line: the message's
    /// first byte in the file, or the opening quote of the JSON string that held it.
    pub offset: u64,
    /// 1-based NDJSON line, when the subcommand asked for lines; else 0.
    pub line: u64,
    /// The message's bytes (decoded, when a log record held it as a JSON string); empty
    /// for a frame the framing had to skip. (Every subcommand prints `record` or the
    /// verdict today; the unit tests read this.)
    #[allow(dead_code)]
    pub bytes: &'a [u8],
    /// The original line (without its line end) of a message inside a log line; else the
    /// same as `bytes`.
    pub record: &'a [u8],
    /// The log line's raw timestamp, when the extraction finds one.
    pub ts: Option<&'a [u8]>,
    /// The log line's raw direction label, when the extraction finds one.
    pub dir: Option<&'a [u8]>,
    /// The raw id of the request a response answers, when the log record names it apart
    /// from the message's own id (a proxy or gateway log's `request_id`).
    pub request_id: Option<&'a [u8]>,
    /// The log line's id space, when the extraction finds one (a gateway log's `session`).
    pub session: Option<&'a [u8]>,
    /// The verdict.
    pub verdict: Verdict<'a>,
}

/// What a message is.
#[derive(Clone, Copy, Debug)]
pub enum Verdict<'a> {
    /// Request, notification, result or error.
    Message(Message<'a>),
    /// A complete message that breaks the rules.
    Invalid(Invalid<'a>),
    /// A frame the framing skipped (oversized, or a framing error): `invalid` with this
    /// reason, and no bytes to show.
    Skipped {
        /// `too_large`, or what the decoder reports for a framing error.
        reason: Reason,
        /// Bytes discarded.
        len: u64,
    },
}

impl<'a> Item<'a> {
    /// A message that is its own record (bare NDJSON, a framed stream, an Arrow element):
    /// no log line around it, so no timestamp, direction or request id.
    pub fn bare(offset: u64, line: u64, bytes: &'a [u8], verdict: Verdict<'a>) -> Item<'a> {
        let (ts, dir, request_id, session) = (None, None, None, None);
        Item { offset, line, bytes, record: bytes, ts, dir, request_id, session, verdict }
    }
}

impl Verdict<'_> {
    /// The kind, `invalid` for skipped frames.
    pub fn kind(&self) -> Kind {
        match self {
            Verdict::Message(m) => m.kind(),
            Verdict::Invalid(_) | Verdict::Skipped { .. } => Kind::Invalid,
        }
    }

    /// Why the message is invalid, if it is.
    pub fn reason(&self) -> Option<Reason> {
        match self {
            Verdict::Message(_) => None,
            Verdict::Invalid(inv) => Some(inv.reason()),
            Verdict::Skipped { reason, .. } => Some(*reason),
        }
    }
}

/// A subcommand: what happens to each message, and how per-range tallies add up.
pub trait Command: Sync {
    /// What a block of input adds up to (counts, a flag...). Blocks are merged in input order.
    type Tally: Default + Send + 'static;

    /// Handles one message: append output to `out`, count into `tally`.
    fn item(&self, source: &Source, item: &Item<'_>, out: &mut Vec<u8>, tally: &mut Self::Tally);

    /// An SSE event whose type is not `message` (the legacy transport's `endpoint`, custom
    /// server events) at byte `offset`: it carries no JSON-RPC message, so it is neither a
    /// message nor `invalid` (docs/spec.md §7). Skipped unless the subcommand counts it.
    fn non_message_event(&self, offset: u64, event: &str, tally: &mut Self::Tally) {
        let _ = (offset, event, tally);
    }

    /// Handles one message of a framed stream (Content-Length, SSE, json-seq): these are
    /// decoded in input order on the writer's thread, into the run's own tally. By default
    /// the same as [`Command::item`].
    fn item_in_order(
        &self,
        source: &Source,
        item: &Item<'_>,
        out: &mut Vec<u8>,
        tally: &mut Self::Tally,
    ) {
        self.item(source, item, out, tally);
    }

    /// A log line that holds no message, and why (extraction only): by default ignored.
    fn skipped(&self, _source: &Source, _why: Skip, _tally: &mut Self::Tally) {}

    /// [`Command::skipped`], with the line (without its line end) and its offset in the
    /// input, for a subcommand that shows the first such line: by default the same.
    fn skipped_line(
        &self,
        source: &Source,
        why: Skip,
        offset: u64,
        line: &[u8],
        tally: &mut Self::Tally,
    ) {
        let _ = (offset, line);
        self.skipped(source, why, tally);
    }

    /// Adds a later block's tally to an earlier one.
    fn merge(&self, into: &mut Self::Tally, from: Self::Tally);

    /// `true` when [`Item::line`] must be filled in (it costs a newline count).
    fn wants_lines(&self) -> bool {
        false
    }

    /// `true` when the subcommand numbers the lines of memory-mapped blocks itself, in
    /// [`Command::merge_lines`]: each such block's items then come with lines counted from
    /// 1 at the block's first byte, and the producer does not read the whole file once more
    /// to number the blocks in advance (the workers find every newline anyway).
    fn numbers_lines_at_merge(&self) -> bool {
        false
    }

    /// [`Command::merge`] for a block whose lines were counted from 1 (see
    /// [`Command::numbers_lines_at_merge`]): `first_line` is the real number of its line 1.
    fn merge_lines(&self, into: &mut Self::Tally, from: Self::Tally, first_line: u64) {
        let _ = first_line;
        self.merge(into, from);
    }

    /// How often [`Command::tick`] is called while NDJSON input is read (`rpcscan pair
    /// --every`); `None`: never.
    fn every(&self) -> Option<std::time::Duration> {
        None
    }

    /// Called on the writer's thread every [`Command::every`], between blocks, with the
    /// run's tally so far: an interim report of a long or live input.
    fn tick(&self, tally: &mut Self::Tally) {
        let _ = tally;
    }

    /// `true` when output is printed as messages go by (not only at the end): then a
    /// progress bar would be torn up by it on a terminal, and is not drawn.
    fn prints_as_it_goes(&self) -> bool {
        true
    }

    /// `true` once the subcommand needs no more input (a reader whose consumer went away):
    /// the input then ends as on [`interrupt::interrupt`], for this run only. Looked at
    /// between inputs and, in the NDJSON pipeline, at least every `interrupt::POLL`.
    fn stopped(&self) -> bool {
        false
    }
}

/// What a whole run added up to.
#[derive(Debug)]
pub struct Run<T> {
    /// The merged tally of every input.
    pub tally: T,
    /// Input bytes scanned.
    pub bytes: u64,
    /// An input could not be opened or read (already reported on stderr).
    pub failed: bool,
}

/// Scans every input in order with `cmd`, writing its output to `out`.
pub fn run<C: Command>(
    cmd: &C,
    settings: &Settings,
    inputs: &[Input],
    out: &mut Output,
) -> Result<Run<C::Tally>, Stop> {
    let mut run = Run { tally: C::Tally::default(), bytes: 0, failed: false };
    let progress = Progress::new(inputs, !(cmd.prints_as_it_goes() && io::stdout().is_terminal()));
    let mut group: Vec<Arc<Mapped>> = Vec::new();
    let mut read_group: Vec<Arc<Positioned>> = Vec::new();
    let mut ahead = Ahead::start(inputs, rayon::current_num_threads());
    let streams = files::streams(inputs);
    for (index, input) in inputs.iter().enumerate() {
        if interrupt::interrupted() || cmd.stopped() {
            break;
        }
        let index = u32::try_from(index).unwrap_or(u32::MAX);
        let stream = streams.get(index as usize).copied().unwrap_or(0);
        let opened = match open(input, (index, stream), ahead.take(index as usize), settings) {
            Ok(opened) => opened,
            Err(e) => {
                settings.notes.note(format_args!("{}: {e}", input.name()));
                run.failed = true;
                continue;
            }
        };
        let (source, mut reader, framing) = match opened {
            Opened::Mapped(mapped) => {
                scan_positioned(cmd, settings, out, &mut run, &progress, &mut read_group)?;
                group.push(Arc::new(mapped));
                if group.len() == MAX_GROUP {
                    scan_mapped(cmd, settings, out, &mut run, &progress, &mut group)?;
                }
                continue;
            }
            Opened::Positioned(file) => {
                scan_mapped(cmd, settings, out, &mut run, &progress, &mut group)?;
                read_group.push(Arc::new(file));
                if read_group.len() == MAX_GROUP {
                    scan_positioned(cmd, settings, out, &mut run, &progress, &mut read_group)?;
                }
                continue;
            }
            Opened::Stream { source, reader, framing } => (source, reader, framing),
        };
        // Files before this stream come first.
        scan_mapped(cmd, settings, out, &mut run, &progress, &mut group)?;
        scan_positioned(cmd, settings, out, &mut run, &progress, &mut read_group)?;
        let mut first = Vec::new();
        let framing = match framing {
            Some(framing) => framing,
            None => match sniff(&mut reader, &mut first) {
                Ok(()) => Framing::detect(&first),
                Err(e) => {
                    source.notes.note(format_args!(
                        "{}: read error at byte {}: {e}",
                        source.name,
                        first.len()
                    ));
                    run.failed = true;
                    continue;
                }
            },
        };
        if framing == Framing::Ndjson {
            if settings.extract.is_none() {
                // A proxy log is told by its whole first line.
                if let Err(e) = sniff_line(&mut reader, &mut first) {
                    source.notes.note(format_args!(
                        "{}: read error at byte {}: {e}",
                        source.name,
                        first.len()
                    ));
                    run.failed = true;
                    continue;
                }
            }
            let source = source.with_extraction(settings, &first);
            let lines = cmd.wants_lines();
            let max = settings.max_message_size;
            pipeline(cmd, settings, out, &mut run, &progress, move |p| {
                produce_lines(p, source, reader, first, max, lines)
            })?;
            continue;
        }
        let mut stream = Stream {
            cmd,
            settings,
            source: &source,
            tally: &mut run.tally,
            pending: Vec::with_capacity(64 * 1024),
            buf: BytesMut::from(&first[..]),
            read: first.len() as u64,
            eof: false,
        };
        let result = stream.frames(&mut reader, framing, out, &progress);
        run.bytes += stream.read;
        match result {
            Ok(()) => {}
            Err(StreamError::Stop(stop)) => return Err(stop),
            Err(StreamError::Read { at, error }) => {
                source
                    .notes
                    .note(format_args!("{}: read error at byte {at}: {error}", source.name));
                run.failed = true;
            }
        }
    }
    scan_mapped(cmd, settings, out, &mut run, &progress, &mut group)?;
    scan_positioned(cmd, settings, out, &mut run, &progress, &mut read_group)?;
    progress.finish();
    out.flush()?;
    Ok(run)
}

/// Scans (and empties) a group of mapped NDJSON files, in parallel and in order.
fn scan_mapped<C: Command>(
    cmd: &C,
    settings: &Settings,
    out: &mut Output,
    run: &mut Run<C::Tally>,
    progress: &Progress,
    group: &mut Vec<Arc<Mapped>>,
) -> Result<(), Stop> {
    if group.is_empty() {
        return Ok(());
    }
    let files = std::mem::take(group);
    let lines = cmd.wants_lines();
    let at_merge = lines && cmd.numbers_lines_at_merge();
    pipeline(cmd, settings, out, run, progress, move |p| produce_ranges(p, files, lines, at_merge))
}

/// Scans (and empties) a group of NDJSON files read with positioned reads, in parallel and
/// in order. A file that shrank while it was read fails the run (said on stderr already).
fn scan_positioned<C: Command>(
    cmd: &C,
    settings: &Settings,
    out: &mut Output,
    run: &mut Run<C::Tally>,
    progress: &Progress,
    group: &mut Vec<Arc<Positioned>>,
) -> Result<(), Stop> {
    if group.is_empty() {
        return Ok(());
    }
    let files = std::mem::take(group);
    let lines = cmd.wants_lines();
    let at_merge = lines && cmd.numbers_lines_at_merge();
    let kept = files.clone();
    let result = pipeline(cmd, settings, out, run, progress, move |p| {
        produce_positioned(p, files, lines, at_merge)
    });
    if kept.iter().any(|f| f.shrank()) {
        run.failed = true;
    }
    result
}

/// What the unit tests of the input files share: a subcommand that writes down each item.
#[cfg(test)]
mod testing {
    use super::{Command, Item, Settings, Source, Verdict};

    /// One item as written down: offset, line, bytes (lossy), and its kind, or its reason
    /// (with the length dropped, for a skipped frame: `too_large 40`).
    pub(super) type Seen = (u64, u64, String, String);

    /// Writes down every item, in order, with its line number.
    pub(super) struct Record;

    impl Command for Record {
        type Tally = Vec<Seen>;

        fn item(&self, _: &Source, item: &Item<'_>, _: &mut Vec<u8>, tally: &mut Vec<Seen>) {
            let verdict = match item.verdict {
                Verdict::Skipped { reason, len } => format!("{} {len}", reason.as_str()),
                Verdict::Invalid(invalid) => invalid.reason().as_str().to_owned(),
                Verdict::Message(message) => message.kind().as_str().to_owned(),
            };
            let bytes = String::from_utf8_lossy(item.bytes).into_owned();
            tally.push((item.offset, item.line, bytes, verdict));
        }

        fn merge(&self, into: &mut Vec<Seen>, from: Vec<Seen>) {
            into.extend(from);
        }

        fn wants_lines(&self) -> bool {
            true
        }
    }

    /// Strict, no sniffing, messages of at most `max` bytes.
    pub(super) fn settings(max: usize) -> Settings {
        Settings {
            framing: None,
            parser: rpcscan::Parser::new(),
            max_message_size: max,
            mmap: false,
            extract: None,
            notes: super::Notes::default(),
            labels: false,
        }
    }

    /// `Seen` from a table row.
    pub(super) fn seen(row: &(u64, u64, &str, &str)) -> Seen {
        (row.0, row.1, row.2.to_owned(), row.3.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{settings, Record};
    use super::{run, Buffer, Input, Notes, Output, Settings};

    fn items(settings: &Settings, input: Input) -> Vec<super::testing::Seen> {
        run(&Record, settings, &[input], &mut Output::discard()).expect("no output").tally
    }

    /// NDJSON bytes in memory go down the mapped road (several blocks, in parallel) and
    /// give the items a file streamed through the pipe road gives.
    #[test]
    fn bytes_in_place_equal_a_streamed_file() {
        let mut data = Vec::new();
        let mut i = 0u64;
        while data.len() < 3 << 20 {
            data.extend_from_slice(
                format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"m\"}}\n[]\n\n").as_bytes(),
            );
            i += 1;
        }
        let path =
            std::env::temp_dir().join(format!("rpcscan-bytes-{}.ndjson", std::process::id()));
        std::fs::write(&path, &data).expect("temp file");
        let streamed = items(&settings(1 << 20), Input::Path(path.clone()));
        let _ = std::fs::remove_file(&path);
        let in_place = items(&settings(1 << 20), Input::Bytes(Buffer::new(data)));
        assert_eq!(in_place.len(), streamed.len());
        assert!(in_place == streamed);
    }

    /// Kept notes are the caller's: a binary-looking input's note is collected.
    #[test]
    fn notes_are_collected() {
        let notes = Notes::collect();
        let settings = Settings { notes: notes.clone(), ..settings(1 << 20) };
        let data = b"\x00\x01\n{\"jsonrpc\":\"2.0\",\"method\":\"m\"}\n".to_vec();
        let seen = items(&settings, Input::Bytes(Buffer::new(data)));
        assert_eq!(seen.len(), 2);
        let kept = notes.take();
        assert_eq!(kept, ["<bytes>: looks binary (a NUL byte at byte 0); scanning it anyway"]);
        assert!(notes.take().is_empty());
    }
}
