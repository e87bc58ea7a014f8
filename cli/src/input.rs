//! Where messages come from, and in which order they reach a subcommand.
//!
//! NDJSON, mapped or streamed, goes through one ordered parallel pipeline: a producer
//! thread cuts the input into blocks of whole lines (newline-aligned ranges of a
//! memory-mapped file, several files in a row; or chunks read from a pipe, at most a window
//! of them in flight, so memory stays bounded whatever the input size), the rayon pool
//! scans the blocks, and the calling thread writes each block's output in input order.
//! Content-Length, SSE and json-seq streams are read in fixed-size chunks into a bounded
//! `BytesMut` and cut, in order, by the library's framing decoders. Every message reaches
//! [`Command::item`] as an [`Item`]: its offset, NDJSON line, original bytes and verdict.
//! The per-message path allocates nothing: blocks are borrowed, output goes into reused
//! buffers.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Read, Seek, StdoutLock, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::{mpsc, Arc};
use std::thread;

use bytes::BytesMut;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use memmap2::Mmap;
use rpcscan::frame::{ndjson_messages, AnyDecoder, Decode, FrameError, Framing};
use rpcscan::{Invalid, Kind, Message, Parser, Reason};

/// How much a stream read asks for at once.
const READ_CHUNK: usize = 256 * 1024;
/// Target size of one block of a mapped file (extended to the next newline).
const RANGE: usize = 1024 * 1024;
/// Blocks in flight per worker thread: enough to keep every worker busy while the writer
/// waits for the oldest.
const WINDOW_PER_THREAD: usize = 4;
/// Mapped files held open at once before their group is scanned.
const MAX_GROUP: usize = 64;
/// Bytes read before `--framing auto` decides, unless a newline or the end comes first.
const SNIFF: usize = 64;
/// Inputs at least this large get a progress bar (when stderr is a terminal).
const PROGRESS_THRESHOLD: u64 = 256 * 1024 * 1024;

/// Options shared by every subcommand.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// `None`: sniff each input (`--framing auto`).
    pub framing: Option<Framing>,
    /// Validation mode and depth limit.
    pub parser: Parser,
    /// Longest message (NDJSON: line without its `\n` / `\r\n`).
    pub max_message_size: usize,
    /// Memory-map regular files (`--no-mmap` turns it off).
    pub mmap: bool,
}

/// One input operand: a path, or `-` / nothing for stdin.
#[derive(Clone, Debug)]
pub enum Input {
    /// Standard input.
    Stdin,
    /// A file (or a FIFO, a device...).
    Path(PathBuf),
}

impl Input {
    /// Operands as given on the command line; none means stdin.
    pub fn from_args(files: &[PathBuf]) -> Vec<Input> {
        if files.is_empty() {
            return vec![Input::Stdin];
        }
        files
            .iter()
            .map(|f| {
                if f.as_os_str() == "-" {
                    Input::Stdin
                } else {
                    Input::Path(f.clone())
                }
            })
            .collect()
    }

    fn name(&self) -> String {
        match self {
            Input::Stdin => "<stdin>".to_owned(),
            Input::Path(p) => p.display().to_string(),
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
}

impl Source {
    fn new(name: String) -> Source {
        let mut json_name = Vec::with_capacity(name.len() + 2);
        crate::json::write_str(&mut json_name, &name);
        Source { name, json_name }
    }
}

/// One message as a subcommand sees it.
#[derive(Clone, Copy, Debug)]
pub struct Item<'a> {
    /// Byte offset of the message in its input (NDJSON: the line's first byte; other
    /// framings: the frame's, as the decoder reports it).
    pub offset: u64,
    /// 1-based NDJSON line, when the subcommand asked for lines; else 0.
    pub line: u64,
    /// The message's original bytes; empty for a frame the framing had to skip.
    pub bytes: &'a [u8],
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

    /// Adds a later block's tally to an earlier one.
    fn merge(&self, into: &mut Self::Tally, from: Self::Tally);

    /// `true` when [`Item::line`] must be filled in (it costs a newline count).
    fn wants_lines(&self) -> bool {
        false
    }

    /// `true` when output is printed as messages go by (not only at the end): then a
    /// progress bar would be torn up by it on a terminal, and is not drawn.
    fn prints_as_it_goes(&self) -> bool {
        true
    }
}

/// Why a run stopped early.
#[derive(Debug)]
pub enum Stop {
    /// The reader of our stdout went away (`| head`): finish quietly.
    BrokenPipe,
    /// Writing stdout failed otherwise.
    Output(io::Error),
    /// A worker panicked (a bug): reported, exit 2.
    Panic,
}

impl From<io::Error> for Stop {
    fn from(e: io::Error) -> Stop {
        if e.kind() == io::ErrorKind::BrokenPipe {
            Stop::BrokenPipe
        } else {
            Stop::Output(e)
        }
    }
}

/// Buffered, locked stdout.
pub struct Output {
    w: BufWriter<StdoutLock<'static>>,
}

impl Output {
    /// Locks stdout for the whole run.
    pub fn stdout() -> Output {
        Output {
            w: BufWriter::with_capacity(128 * 1024, io::stdout().lock()),
        }
    }

    /// Writes bytes.
    pub fn write(&mut self, bytes: &[u8]) -> Result<(), Stop> {
        self.w.write_all(bytes).map_err(Stop::from)
    }

    /// Pushes everything written so far to the reader.
    pub fn flush(&mut self) -> Result<(), Stop> {
        self.w.flush().map_err(Stop::from)
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

/// Prints `rpcscan: <what>` on stderr, ignoring a closed stderr.
pub fn warn(what: std::fmt::Arguments<'_>) {
    let _ = writeln!(io::stderr().lock(), "rpcscan: {what}");
}

/// Scans every input in order with `cmd`, writing its output to `out`.
pub fn run<C: Command>(
    cmd: &C,
    settings: &Settings,
    inputs: &[Input],
    out: &mut Output,
) -> Result<Run<C::Tally>, Stop> {
    let mut run = Run {
        tally: C::Tally::default(),
        bytes: 0,
        failed: false,
    };
    let progress = Progress::new(
        inputs,
        !(cmd.prints_as_it_goes() && io::stdout().is_terminal()),
    );
    let mut group: Vec<Arc<Mapped>> = Vec::new();
    for input in inputs {
        let opened = match open(input, settings) {
            Ok(opened) => opened,
            Err(e) => {
                warn(format_args!("{}: {e}", input.name()));
                run.failed = true;
                continue;
            }
        };
        let (source, mut reader, framing) = match opened {
            Opened::Mapped(mapped) => {
                group.push(Arc::new(mapped));
                if group.len() == MAX_GROUP {
                    scan_mapped(cmd, settings, out, &mut run, &progress, &mut group)?;
                }
                continue;
            }
            Opened::Stream {
                source,
                reader,
                framing,
            } => (source, reader, framing),
        };
        // Mapped files before this stream come first.
        scan_mapped(cmd, settings, out, &mut run, &progress, &mut group)?;
        let mut first = Vec::new();
        let framing = match framing {
            Some(framing) => framing,
            None => match sniff(&mut reader, &mut first) {
                Ok(()) => Framing::detect(&first),
                Err(e) => {
                    warn(format_args!(
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
                warn(format_args!(
                    "{}: read error at byte {at}: {error}",
                    source.name
                ));
                run.failed = true;
            }
        }
    }
    scan_mapped(cmd, settings, out, &mut run, &progress, &mut group)?;
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
    pipeline(cmd, settings, out, run, progress, move |p| {
        produce_ranges(p, files, lines)
    })
}

/// Reads the first bytes of a stream for `--framing auto`: enough of the first line to
/// recognise a header or an SSE field, without waiting for more than a line.
fn sniff(reader: &mut dyn Read, first: &mut Vec<u8>) -> io::Result<()> {
    while first.len() < SNIFF && memchr::memchr(b'\n', first).is_none() {
        if read_more(reader, first, SNIFF)? == 0 {
            break;
        }
    }
    Ok(())
}

/// Appends one read of at most `max` bytes to `buf`; `Ok(0)` at end of input.
fn read_more(reader: &mut dyn Read, buf: &mut Vec<u8>, max: usize) -> io::Result<usize> {
    let len = buf.len();
    buf.resize(len + max, 0);
    let result = loop {
        match reader.read(&mut buf[len..]) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => break other,
        }
    };
    buf.truncate(len + *result.as_ref().unwrap_or(&0));
    result
}

/// A memory-mapped NDJSON input.
struct Mapped {
    source: Arc<Source>,
    map: Mmap,
    /// Where our data starts in the map (stdin may be positioned past 0).
    start: usize,
}

impl Mapped {
    fn data(&self) -> &[u8] {
        self.map.get(self.start..).unwrap_or_default()
    }
}

enum Opened {
    Mapped(Mapped),
    Stream {
        source: Arc<Source>,
        reader: Box<dyn Read + Send>,
        framing: Option<Framing>,
    },
}

/// Opens an input and decides its road: mapped (regular NDJSON file) or streamed.
fn open(input: &Input, settings: &Settings) -> io::Result<Opened> {
    let source = Arc::new(Source::new(input.name()));
    let file = match input {
        Input::Path(path) => File::open(path)?,
        Input::Stdin => {
            // A regular file on stdin (`rpcscan stats < big.ndjson`) is mapped too.
            match stdin_file() {
                Some(file) if settings.mmap && is_mappable(&file) => file,
                _ => {
                    return Ok(Opened::Stream {
                        source,
                        reader: Box::new(io::stdin()),
                        framing: settings.framing,
                    })
                }
            }
        }
    };
    if !settings.mmap || !is_mappable(&file) {
        return Ok(Opened::Stream {
            source,
            reader: Box::new(file),
            framing: settings.framing,
        });
    }
    let mut file = file;
    let start = match input {
        Input::Stdin => usize::try_from(file.stream_position()?).unwrap_or(usize::MAX),
        Input::Path(_) => 0,
    };
    let map = map(&file)?;
    if let Input::Stdin = input {
        // Consume stdin as a read would: a second `-` sees its end, as with `cat - -`.
        file.seek(io::SeekFrom::End(0))?;
    }
    let data = map.get(start..).unwrap_or_default();
    let framing = settings
        .framing
        .unwrap_or_else(|| Framing::detect(data.get(..SNIFF).unwrap_or(data)));
    if framing == Framing::Ndjson {
        #[cfg(unix)]
        let _ = map.advise(memmap2::Advice::Sequential);
        return Ok(Opened::Mapped(Mapped { source, map, start }));
    }
    // Other framings go through their decoder: stream the file from where we started.
    drop(map);
    file.seek(io::SeekFrom::Start(start as u64))?;
    Ok(Opened::Stream {
        source,
        reader: Box::new(file),
        framing: Some(framing),
    })
}

/// Stdin as a `File`: a duplicate of the descriptor, so stdin itself is left alone.
#[cfg(unix)]
fn stdin_file() -> Option<File> {
    use std::os::fd::AsFd;
    io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .ok()
        .map(File::from)
}

#[cfg(not(unix))]
fn stdin_file() -> Option<File> {
    None
}

/// A non-empty regular file (`/proc` files claim size 0 and are streamed).
fn is_mappable(file: &File) -> bool {
    file.metadata()
        .map(|m| m.is_file() && m.len() > 0)
        .unwrap_or(false)
}

#[allow(unsafe_code)]
fn map(file: &File) -> io::Result<Mmap> {
    // SAFETY: the map is only ever read as `&[u8]`. If another process truncates or
    // rewrites the file while we scan it, reads may see changed bytes or fault (SIGBUS);
    // every mmap-based grep (ripgrep included) accepts this for log files, and
    // `--no-mmap` opts out.
    unsafe { Mmap::map(file) }
}

/// A unit of parallel work, in input order.
enum Block {
    /// Whole NDJSON lines (the last one may be unterminated at end of input).
    Lines {
        source: Arc<Source>,
        data: Data,
        /// Input offset of the first byte.
        base: u64,
        /// Line number of the first byte (0: not counted).
        line: u64,
    },
    /// An oversized line a stream dropped as it went by.
    TooLarge {
        source: Arc<Source>,
        offset: u64,
        line: u64,
        len: u64,
    },
}

/// The bytes of a block: borrowed from a map, or read from a stream.
enum Data {
    Mapped {
        file: Arc<Mapped>,
        start: usize,
        end: usize,
    },
    Read(Vec<u8>),
}

impl Block {
    /// Input bytes the block stands for (progress).
    fn size(&self) -> u64 {
        match self {
            Block::Lines {
                data: Data::Mapped { start, end, .. },
                ..
            } => (end - start) as u64,
            Block::Lines {
                data: Data::Read(bytes),
                ..
            } => bytes.len() as u64,
            Block::TooLarge { len, .. } => *len,
        }
    }

    fn scan<C: Command>(
        &self,
        cmd: &C,
        settings: &Settings,
        out: &mut Vec<u8>,
        tally: &mut C::Tally,
    ) {
        match self {
            Block::Lines {
                source,
                data,
                base,
                line,
            } => {
                let bytes = match data {
                    Data::Mapped { file, start, end } => {
                        file.data().get(*start..*end).unwrap_or_default()
                    }
                    Data::Read(bytes) => bytes,
                };
                scan_ndjson(cmd, settings, source, bytes, *base, *line, out, tally);
            }
            Block::TooLarge {
                source,
                offset,
                line,
                len,
            } => {
                let item = Item {
                    offset: *offset,
                    line: *line,
                    bytes: &[],
                    verdict: Verdict::Skipped {
                        reason: Reason::TooLarge,
                        len: *len,
                    },
                };
                cmd.item(source, &item, out, tally);
            }
        }
    }

    /// The read buffer, for reuse by the producer.
    fn into_buffer(self) -> Option<Vec<u8>> {
        match self {
            Block::Lines {
                data: Data::Read(bytes),
                ..
            } => Some(bytes),
            _ => None,
        }
    }
}

/// A read error a producer hit: where, and what.
struct ReadError {
    source: Arc<Source>,
    at: u64,
    error: io::Error,
}

/// What the pipeline's writer hears, all on one channel: blocks from the producer, results
/// from the workers, and the producer's end.
enum Event<T> {
    Block(Block),
    Done {
        seq: usize,
        out: Vec<u8>,
        buffer: Option<Vec<u8>>,
        size: u64,
        tally: thread::Result<T>,
    },
    End {
        bytes: u64,
        error: Option<ReadError>,
        panicked: bool,
    },
}

/// A scanned block waiting for its turn: output, input size, tally.
type Finished<T> = (Vec<u8>, u64, thread::Result<T>);

/// The producer's side: a permit (with a buffer to reuse) before each block, so that at
/// most a window of blocks is ever in flight.
struct Producer<T> {
    events: mpsc::Sender<Event<T>>,
    permits: mpsc::Receiver<Vec<u8>>,
}

impl<T> Producer<T> {
    /// Waits for room in the window; `None` when the writer has stopped.
    fn permit(&self) -> Option<Vec<u8>> {
        self.permits.recv().ok()
    }

    fn send(&self, block: Block) {
        let _ = self.events.send(Event::Block(block));
    }
}

/// Runs `produce` on its own thread and scans the blocks it sends on the rayon pool,
/// writing their output in order. The producer thread is not joined: one blocked reading a
/// pipe must not keep a finished run (`| head`) waiting.
fn pipeline<C, P>(
    cmd: &C,
    settings: &Settings,
    out: &mut Output,
    run: &mut Run<C::Tally>,
    progress: &Progress,
    produce: P,
) -> Result<(), Stop>
where
    C: Command,
    P: FnOnce(&Producer<C::Tally>) -> (u64, Option<ReadError>) + Send + 'static,
{
    let window = rayon::current_num_threads().max(1) * WINDOW_PER_THREAD;
    let (events, inbox) = mpsc::channel::<Event<C::Tally>>();
    let (permits, permit_inbox) = mpsc::sync_channel::<Vec<u8>>(window);
    for _ in 0..window {
        let _ = permits.send(Vec::new());
    }
    let producer = Producer {
        events: events.clone(),
        permits: permit_inbox,
    };
    thread::spawn(move || {
        let result = catch_unwind(AssertUnwindSafe(|| produce(&producer)));
        let end = match result {
            Ok((bytes, error)) => Event::End {
                bytes,
                error,
                panicked: false,
            },
            Err(_) => Event::End {
                bytes: 0,
                error: None,
                panicked: true,
            },
        };
        let _ = producer.events.send(end);
    });

    let mut stop = None;
    let mut read_error = None;
    rayon::in_place_scope(|scope| {
        let mut spawned = 0usize;
        let mut written = 0usize;
        let mut total = None;
        let mut pending: BTreeMap<usize, Finished<C::Tally>> = BTreeMap::new();
        let mut free: Vec<Vec<u8>> = Vec::new();
        while total != Some(written) && stop.is_none() {
            // We hold a sender, so this only fails if every sender is gone: cannot happen.
            let Ok(event) = inbox.recv() else { break };
            match event {
                Event::Block(block) => {
                    let seq = spawned;
                    spawned += 1;
                    let events = events.clone();
                    let mut out = free.pop().unwrap_or_default();
                    scope.spawn(move |_| {
                        let tally = catch_unwind(AssertUnwindSafe(|| {
                            let mut tally = C::Tally::default();
                            block.scan(cmd, settings, &mut out, &mut tally);
                            tally
                        }));
                        let size = block.size();
                        let _ = events.send(Event::Done {
                            seq,
                            out,
                            buffer: block.into_buffer(),
                            size,
                            tally,
                        });
                    });
                }
                Event::Done {
                    seq,
                    out: buf,
                    buffer,
                    size,
                    tally,
                } => {
                    pending.insert(seq, (buf, size, tally));
                    let mut buffer = buffer;
                    while let Some((mut buf, size, tally)) = pending.remove(&written) {
                        written += 1;
                        match tally {
                            Ok(tally) => {
                                if let Err(e) = out.write(&buf) {
                                    stop = Some(e);
                                    break;
                                }
                                cmd.merge(&mut run.tally, tally);
                                progress.inc(size);
                            }
                            Err(_) => {
                                stop = Some(Stop::Panic);
                                break;
                            }
                        }
                        buf.clear();
                        free.push(buf);
                        let _ = permits.send(buffer.take().unwrap_or_default());
                    }
                    // Nothing ready behind it: let a live reader see what we have.
                    if stop.is_none() && pending.is_empty() {
                        if let Err(e) = out.flush() {
                            stop = Some(e);
                        }
                    }
                }
                Event::End {
                    bytes,
                    error,
                    panicked,
                } => {
                    total = Some(spawned);
                    run.bytes += bytes;
                    read_error = error;
                    if panicked {
                        stop = Some(Stop::Panic);
                    }
                }
            }
        }
        // Leaving the scope waits for the blocks still in flight (at most a window).
    });
    if let Some(stop) = stop {
        return Err(stop);
    }
    if let Some(e) = read_error {
        warn(format_args!(
            "{}: read error at byte {}: {}",
            e.source.name, e.at, e.error
        ));
        run.failed = true;
    }
    Ok(())
}

/// Cuts mapped files, in order, into newline-aligned blocks of about [`RANGE`] bytes.
fn produce_ranges<T>(
    p: &Producer<T>,
    files: Vec<Arc<Mapped>>,
    lines: bool,
) -> (u64, Option<ReadError>) {
    let mut bytes = 0;
    for file in files {
        let data = file.data();
        let mut pos = 0;
        let mut line = u64::from(lines);
        while pos < data.len() {
            let target = pos + RANGE;
            let end = if target >= data.len() {
                data.len()
            } else {
                // From `target - 1`, so that a newline right before the target ends the block.
                let from = target - 1;
                memchr::memchr(b'\n', data.get(from..).unwrap_or_default())
                    .map_or(data.len(), |i| from + i + 1)
            };
            if p.permit().is_none() {
                return (bytes, None);
            }
            p.send(Block::Lines {
                source: Arc::clone(&file.source),
                data: Data::Mapped {
                    file: Arc::clone(&file),
                    start: pos,
                    end,
                },
                base: pos as u64,
                line,
            });
            if lines {
                line += newlines(data.get(pos..end).unwrap_or_default());
            }
            bytes += (end - pos) as u64;
            pos = end;
        }
    }
    (bytes, None)
}

/// Reads a stream into blocks of whole lines, sending each as soon as it has one (a live
/// stream is answered line by line). A line longer than the limit is dropped as it goes
/// by, never buffered whole, and sent as a [`Block::TooLarge`].
fn produce_lines<T>(
    p: &Producer<T>,
    source: Arc<Source>,
    mut reader: Box<dyn Read + Send>,
    first: Vec<u8>,
    max: usize,
    lines: bool,
) -> (u64, Option<ReadError>) {
    let mut buf = first;
    let mut read = buf.len() as u64;
    // Input offset and line number of `buf[0]`.
    let mut base = 0u64;
    let mut line = u64::from(lines);
    let mut skip: Option<Skip> = None;
    let mut eof = false;
    loop {
        if let Some(s) = skip.as_mut() {
            match memchr::memchr(b'\n', &buf) {
                Some(i) => {
                    s.eat(&buf[..i]);
                    base += i as u64 + 1;
                    buf.drain(..=i);
                    let s = skip.take().map(|s| s.block(&source));
                    if let (Some(block), Some(_)) = (s, p.permit()) {
                        p.send(block);
                    } else {
                        return (read, None);
                    }
                    if lines {
                        line += 1;
                    }
                    continue;
                }
                None => {
                    s.eat(&buf);
                    base += buf.len() as u64;
                    buf.clear();
                    if eof {
                        if let (Some(s), Some(_)) = (skip.take(), p.permit()) {
                            p.send(s.block(&source));
                        }
                        return (read, None);
                    }
                }
            }
        } else {
            let cut = if eof {
                buf.len()
            } else {
                memchr::memrchr(b'\n', &buf).map_or(0, |i| i + 1)
            };
            if cut > 0 {
                let Some(mut next) = p.permit() else {
                    return (read, None);
                };
                next.clear();
                next.extend_from_slice(&buf[cut..]);
                buf.truncate(cut);
                let block = std::mem::replace(&mut buf, next);
                let first_line = line;
                if lines {
                    line += newlines(&block);
                }
                p.send(Block::Lines {
                    source: Arc::clone(&source),
                    data: Data::Read(block),
                    base,
                    line: first_line,
                });
                base += cut as u64;
            }
            if eof {
                return (read, None);
            }
            // No newline in more than the limit (plus a possible `\r`): oversized.
            if buf.len() > max.saturating_add(1) {
                let mut s = Skip {
                    offset: base,
                    line,
                    len: 0,
                    last_cr: false,
                };
                s.eat(&buf);
                base += buf.len() as u64;
                buf.clear();
                skip = Some(s);
            }
        }
        match read_more(&mut *reader, &mut buf, READ_CHUNK) {
            Ok(0) => eof = true,
            Ok(n) => read += n as u64,
            Err(error) => {
                let at = base + buf.len() as u64;
                return (read, Some(ReadError { source, at, error }));
            }
        }
    }
}

/// An oversized NDJSON line being dropped from a stream.
struct Skip {
    offset: u64,
    line: u64,
    len: u64,
    last_cr: bool,
}

impl Skip {
    fn eat(&mut self, bytes: &[u8]) {
        self.len += bytes.len() as u64;
        if let Some(&last) = bytes.last() {
            self.last_cr = last == b'\r';
        }
    }

    /// The report: its length without the `\r` of a `\r\n`, as the decoders count it.
    fn block(self, source: &Arc<Source>) -> Block {
        Block::TooLarge {
            source: Arc::clone(source),
            offset: self.offset,
            line: self.line,
            len: self.len - u64::from(self.last_cr),
        }
    }
}

fn newlines(bytes: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', bytes).count() as u64
}

/// The hot loop: every NDJSON message of `data` (whole lines, the last one possibly
/// unterminated at end of input) goes to `cmd`. `base` is the offset of `data[0]` in its
/// input, `line` its line number (0: not counted). Returns the line number of the byte
/// after `data` (0 when not counted).
#[allow(clippy::too_many_arguments)]
fn scan_ndjson<C: Command>(
    cmd: &C,
    settings: &Settings,
    source: &Source,
    data: &[u8],
    base: u64,
    line: u64,
    out: &mut Vec<u8>,
    tally: &mut C::Tally,
) -> u64 {
    let mut scan = NdjsonScan {
        cmd,
        settings,
        source,
        data,
        base,
        line,
        counted: 0,
        out,
        tally,
    };
    let max = settings.max_message_size;
    // End of the previous message's line (after its `\n`): what lies between it and the
    // next message is blank lines.
    let mut end = 0;
    for (at, bytes) in ndjson_messages(data) {
        if at - end > max {
            scan.blank_lines(end, at);
        }
        let verdict = if bytes.len() > max {
            Verdict::Skipped {
                reason: Reason::TooLarge,
                len: bytes.len() as u64,
            }
        } else {
            match settings.parser.parse(bytes) {
                Ok(m) => Verdict::Message(m),
                Err(inv) => Verdict::Invalid(inv),
            }
        };
        scan.emit(at, bytes, verdict);
        end = at + bytes.len();
        if data.get(end) == Some(&b'\r') {
            end += 1;
        }
        if data.get(end) == Some(&b'\n') {
            end += 1;
        }
    }
    if data.len() - end > max {
        scan.blank_lines(end, data.len());
    }
    scan.line_at(data.len())
}

/// State of [`scan_ndjson`] over one range.
struct NdjsonScan<'s, C: Command> {
    cmd: &'s C,
    settings: &'s Settings,
    source: &'s Source,
    data: &'s [u8],
    base: u64,
    /// Line number at `counted` (0: lines are not counted).
    line: u64,
    counted: usize,
    out: &'s mut Vec<u8>,
    tally: &'s mut C::Tally,
}

impl<C: Command> NdjsonScan<'_, C> {
    /// Line number of `data[at]`, counting forward (`at` never goes back).
    fn line_at(&mut self, at: usize) -> u64 {
        if self.line > 0 {
            self.line += newlines(self.data.get(self.counted..at).unwrap_or_default());
            self.counted = at;
        }
        self.line
    }

    fn emit(&mut self, at: usize, bytes: &[u8], verdict: Verdict<'_>) {
        let bytes = match verdict {
            Verdict::Skipped { .. } => &[][..],
            _ => bytes,
        };
        let item = Item {
            offset: self.base + at as u64,
            line: self.line_at(at),
            bytes,
            verdict,
        };
        self.cmd.item(self.source, &item, self.out, self.tally);
    }

    /// Blank lines are no messages, but one over the limit is still reported as
    /// `too_large`, as the library's NDJSON decoder does (it cannot tell a blank line it
    /// never buffered from any other).
    fn blank_lines(&mut self, from: usize, to: usize) {
        let max = self.settings.max_message_size;
        let mut start = from;
        while start < to {
            let rest = self.data.get(start..to).unwrap_or_default();
            let next = memchr::memchr(b'\n', rest).map_or(to, |i| start + i + 1);
            let mut line = self.data.get(start..next).unwrap_or_default();
            line = line.strip_suffix(b"\n").unwrap_or(line);
            line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.len() > max {
                let verdict = Verdict::Skipped {
                    reason: Reason::TooLarge,
                    len: line.len() as u64,
                };
                self.emit(start, &[], verdict);
            }
            start = next;
        }
    }
}

enum StreamError {
    Stop(Stop),
    Read { at: u64, error: io::Error },
}

impl From<Stop> for StreamError {
    fn from(stop: Stop) -> Self {
        StreamError::Stop(stop)
    }
}

/// A Content-Length, SSE or json-seq stream: read in chunks into a bounded buffer, cut in
/// order by the library's decoder (one frame after another, so no parallelism here).
struct Stream<'r, C: Command> {
    cmd: &'r C,
    settings: &'r Settings,
    source: &'r Source,
    tally: &'r mut C::Tally,
    /// Output of the current chunk, written after each read.
    pending: Vec<u8>,
    buf: BytesMut,
    /// Bytes read so far.
    read: u64,
    eof: bool,
}

impl<C: Command> Stream<'_, C> {
    /// Reads more input; `Ok(0)` at end of input, and ever after (a terminal is not asked
    /// twice after Ctrl-D).
    fn fill(&mut self, reader: &mut dyn Read, progress: &Progress) -> Result<usize, StreamError> {
        if self.eof {
            return Ok(0);
        }
        let len = self.buf.len();
        self.buf.resize(len + READ_CHUNK, 0);
        let result = loop {
            match reader.read(&mut self.buf[len..]) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => break other,
            }
        };
        let n = *result.as_ref().unwrap_or(&0);
        self.buf.truncate(len + n);
        self.eof = matches!(result, Ok(0));
        self.read += n as u64;
        progress.inc(n as u64);
        result.map_err(|error| StreamError::Read {
            at: self.read,
            error,
        })
    }

    fn frames(
        &mut self,
        reader: &mut dyn Read,
        framing: Framing,
        out: &mut Output,
        progress: &Progress,
    ) -> Result<(), StreamError> {
        let mut decoder = AnyDecoder::new(framing).max_message_size(self.settings.max_message_size);
        loop {
            let eof = self.fill(reader, progress)? == 0;
            loop {
                let next = if eof {
                    decoder.decode_eof(&mut self.buf)
                } else {
                    decoder.decode(&mut self.buf)
                };
                match next {
                    None => break,
                    Some(Ok(frame)) => self.message(frame.offset(), frame.bytes()),
                    Some(Err(e)) => self.bad_frame(&e),
                }
            }
            // A live stream gets its answers promptly.
            if !self.pending.is_empty() {
                out.write(&self.pending)?;
                self.pending.clear();
            }
            out.flush()?;
            if eof {
                return Ok(());
            }
        }
    }

    fn message(&mut self, offset: u64, bytes: &[u8]) {
        let verdict = match self.settings.parser.parse(bytes) {
            Ok(m) => Verdict::Message(m),
            Err(inv) => Verdict::Invalid(inv),
        };
        let item = Item {
            offset,
            line: 0,
            bytes,
            verdict,
        };
        self.cmd
            .item(self.source, &item, &mut self.pending, self.tally);
    }

    fn bad_frame(&mut self, e: &FrameError) {
        let item = Item {
            offset: e.offset(),
            line: 0,
            bytes: &[],
            verdict: Verdict::Skipped {
                reason: e.reason(),
                len: e.len(),
            },
        };
        self.cmd
            .item(self.source, &item, &mut self.pending, self.tally);
    }
}

/// A progress bar on stderr, only for a terminal, a large input of known size, and when
/// the output does not go to the same screen as it is produced.
struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    fn new(inputs: &[Input], allowed: bool) -> Progress {
        if !allowed || !io::stderr().is_terminal() {
            return Progress { bar: None };
        }
        let total: u64 = inputs
            .iter()
            .filter_map(|input| match input {
                Input::Path(path) => std::fs::metadata(path).ok(),
                Input::Stdin => None,
            })
            .filter(|m| m.is_file())
            .map(|m| m.len())
            .sum();
        if total < PROGRESS_THRESHOLD {
            return Progress { bar: None };
        }
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template(
            "{bar:40} {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} eta {eta}",
        ) {
            bar.set_style(style);
        }
        Progress { bar: Some(bar) }
    }

    fn inc(&self, n: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(n);
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
