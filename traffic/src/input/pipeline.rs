//! The ordered parallel pipeline: a producer thread sends blocks of whole NDJSON lines, the
//! rayon pool scans them, and the calling thread writes each block's output in input order,
//! with at most a window of blocks in flight.

use std::collections::BTreeMap;
use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{mpsc, Arc};
use std::thread;

use rpcscan::Reason;

use super::mapped::Mapped;
use super::ndjson::scan_ndjson;
use super::positioned::Positioned;
use super::progress::Progress;
use super::{interrupt, Command, Item, Output, Run, Settings, Source, Stop, Verdict};

/// Blocks in flight per worker thread: enough to keep every worker busy while the writer
/// waits for the oldest.
const WINDOW_PER_THREAD: usize = 4;

/// A unit of parallel work, in input order.
pub(super) enum Block {
    /// Whole NDJSON lines (the last one may be unterminated at end of input).
    Lines {
        source: Arc<Source>,
        data: Data,
        /// Input offset of the first byte.
        base: u64,
        /// Line number of the first byte (0: not counted).
        line: u64,
        /// `line` is 1 at the block's first byte: the writer numbers the block's lines
        /// (`Command::merge_lines`).
        at_merge: bool,
    },
    /// An oversized line a stream dropped as it went by.
    TooLarge { source: Arc<Source>, offset: u64, line: u64, len: u64 },
}

/// The bytes of a block: borrowed from a map, read from a stream, still to be read from
/// a file by the worker (positioned reads; `buf` is the buffer to read them into), or read
/// so (`buf[..len]`: the buffer keeps its length, so that reusing it for the next block
/// does not zero its bytes again before the read overwrites them).
pub(super) enum Data {
    Mapped { file: Arc<Mapped>, start: usize, end: usize },
    Read(Vec<u8>),
    Positioned { file: Arc<Positioned>, start: u64, end: u64, buf: Vec<u8> },
    Loaded { buf: Vec<u8>, len: usize },
}

impl Block {
    /// Input bytes the block stands for (progress).
    fn size(&self) -> u64 {
        match self {
            Block::Lines { data: Data::Mapped { start, end, .. }, .. } => (end - start) as u64,
            Block::Lines { data: Data::Read(bytes), .. } => bytes.len() as u64,
            Block::Lines { data: Data::Positioned { start, end, .. }, .. } => end - start,
            Block::Lines { data: Data::Loaded { len, .. }, .. } => *len as u64,
            Block::TooLarge { len, .. } => *len,
        }
    }

    /// Reads a positioned block's bytes (in the worker, so that reading is parallel too);
    /// a read error leaves it empty, said on stderr.
    pub(super) fn load(&mut self) {
        if let Block::Lines { data, .. } = self {
            if let Data::Positioned { file, start, end, buf } = data {
                let len = file.load(*start, *end, buf).unwrap_or_else(|e| {
                    file.read_error(*start, &e);
                    0
                });
                *data = Data::Loaded { buf: std::mem::take(buf), len };
            }
        }
    }

    /// Scans the block (loaded: see [`Block::load`]); the line number after it (0 when lines are not counted).
    pub(super) fn scan<C: Command>(
        &self,
        cmd: &C,
        settings: &Settings,
        out: &mut Vec<u8>,
        tally: &mut C::Tally,
    ) -> u64 {
        match self {
            Block::Lines { source, data, base, line, .. } => {
                let bytes = match data {
                    Data::Mapped { file, start, end } => {
                        file.data().get(*start..*end).unwrap_or_default()
                    }
                    Data::Read(bytes) => bytes,
                    Data::Loaded { buf, len } => buf.get(..*len).unwrap_or_default(),
                    // Not loaded: nothing read.
                    Data::Positioned { .. } => &[][..],
                };
                scan_ndjson(cmd, settings, source, bytes, *base, *line, out, tally)
            }
            Block::TooLarge { source, offset, line, len } => {
                let skipped = Verdict::Skipped { reason: Reason::TooLarge, len: *len };
                let item = Item::bare(*offset, *line, &[], skipped);
                cmd.item(source, &item, out, tally);
                0
            }
        }
    }

    /// For a block numbered at merge: whether it is its input's first, and `None` for
    /// every other block.
    fn numbered_at_merge(&self) -> Option<bool> {
        match self {
            Block::Lines { at_merge: true, base, .. } => Some(*base == 0),
            _ => None,
        }
    }

    /// The read buffer, for reuse by the producer.
    pub(super) fn into_buffer(self) -> Option<Vec<u8>> {
        match self {
            Block::Lines { data: Data::Read(bytes), .. } => Some(bytes),
            Block::Lines { data: Data::Positioned { buf, .. }, .. } => Some(buf),
            Block::Lines { data: Data::Loaded { buf, .. }, .. } => Some(buf),
            _ => None,
        }
    }
}

/// A read error a producer hit: where, and what.
pub(super) struct ReadError {
    pub(super) source: Arc<Source>,
    pub(super) at: u64,
    pub(super) error: io::Error,
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
        lines: Option<BlockLines>,
    },
    End {
        bytes: u64,
        error: Option<ReadError>,
        panicked: bool,
    },
}

/// A scanned block waiting for its turn: output, input size, tally, lines.
type Finished<T> = (Vec<u8>, u64, thread::Result<T>, Option<BlockLines>);

/// The lines of a block numbered at merge: whether it starts its input, and how many
/// newlines it holds.
#[derive(Clone, Copy)]
struct BlockLines {
    first: bool,
    count: u64,
}

/// The producer's side: a permit (with a buffer to reuse) before each block, so that at
/// most a window of blocks is ever in flight.
pub(super) struct Producer<T> {
    events: mpsc::Sender<Event<T>>,
    permits: mpsc::Receiver<Vec<u8>>,
}

impl<T> Producer<T> {
    /// Waits for room in the window; `None` when the writer has stopped.
    pub(super) fn permit(&self) -> Option<Vec<u8>> {
        self.permits.recv().ok()
    }

    pub(super) fn send(&self, block: Block) {
        let _ = self.events.send(Event::Block(block));
    }
}

/// Runs `produce` on its own thread and scans the blocks it sends on the rayon pool,
/// writing their output in order. The producer thread is not joined: one blocked reading a
/// pipe must not keep a finished run (`| head`) waiting.
pub(super) fn pipeline<C, P>(
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
    let producer = Producer { events: events.clone(), permits: permit_inbox };
    thread::spawn(move || {
        let result = catch_unwind(AssertUnwindSafe(|| produce(&producer)));
        let end = match result {
            Ok((bytes, error)) => Event::End { bytes, error, panicked: false },
            Err(_) => Event::End { bytes: 0, error: None, panicked: true },
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
        // Read buffers of finished blocks, handed back to the producer with its permits: a
        // block finished out of order keeps its buffer here until its turn, rather than
        // dropping it (a fresh buffer's pages are faulted in and zeroed again).
        let mut spare: Vec<Vec<u8>> = Vec::new();
        // The line number of the next block numbered at merge (its input's so far).
        let mut next_line = 1u64;
        let every = cmd.every();
        // Input bytes of the blocks written, and whether the producer said how many it read
        // (it does not when Ctrl-C ended the input first).
        let mut written_bytes = 0u64;
        let mut counted = false;
        let mut last_tick = std::time::Instant::now();
        while total != Some(written) && stop.is_none() {
            if every.is_some_and(|every| last_tick.elapsed() >= every) {
                cmd.tick(&mut run.tally);
                last_tick = std::time::Instant::now();
            }
            // Ctrl-C (`interrupt`) or `Command::stopped`: the input ends here; blocks already
            // sent are finished.
            if total.is_none() && (interrupt::interrupted() || cmd.stopped()) {
                total = Some(spawned);
                continue;
            }
            let event = match inbox.recv_timeout(interrupt::POLL) {
                Ok(event) => event,
                Err(mpsc::RecvTimeoutError::Timeout) => continue,
                // We hold a sender, so this cannot happen.
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            };
            match event {
                // Read before Ctrl-C, arrived after: the input has ended.
                Event::Block(_) if total.is_some() => {}
                Event::Block(mut block) => {
                    let seq = spawned;
                    spawned += 1;
                    let events = events.clone();
                    let mut out = free.pop().unwrap_or_default();
                    scope.spawn(move |_| {
                        let mut end_line = 0;
                        block.load();
                        let tally = catch_unwind(AssertUnwindSafe(|| {
                            let mut tally = C::Tally::default();
                            end_line = block.scan(cmd, settings, &mut out, &mut tally);
                            tally
                        }));
                        let size = block.size();
                        // Counted from 1: the block holds `end_line - 1` newlines.
                        let lines = block
                            .numbered_at_merge()
                            .map(|first| BlockLines { first, count: end_line.saturating_sub(1) });
                        let _ = events.send(Event::Done {
                            seq,
                            out,
                            buffer: block.into_buffer(),
                            size,
                            tally,
                            lines,
                        });
                    });
                }
                Event::Done { seq, out: buf, buffer, size, tally, lines } => {
                    pending.insert(seq, (buf, size, tally, lines));
                    spare.extend(buffer);
                    while let Some((mut buf, size, tally, lines)) = pending.remove(&written) {
                        written += 1;
                        match tally {
                            Ok(tally) => {
                                if let Err(e) = out.write(&buf) {
                                    stop = Some(e);
                                    break;
                                }
                                match lines {
                                    Some(BlockLines { first, count }) => {
                                        if first {
                                            next_line = 1;
                                        }
                                        cmd.merge_lines(&mut run.tally, tally, next_line);
                                        next_line += count;
                                    }
                                    None => cmd.merge(&mut run.tally, tally),
                                }
                                progress.inc(size);
                                written_bytes += size;
                            }
                            Err(_) => {
                                stop = Some(Stop::Panic);
                                break;
                            }
                        }
                        buf.clear();
                        free.push(buf);
                        let _ = permits.send(spare.pop().unwrap_or_default());
                    }
                    // Nothing ready behind it: let a live reader see what we have.
                    if stop.is_none() && pending.is_empty() {
                        if let Err(e) = out.flush() {
                            stop = Some(e);
                        }
                    }
                }
                Event::End { bytes, error, panicked } => {
                    total = Some(spawned);
                    run.bytes += bytes;
                    counted = true;
                    read_error = error;
                    if panicked {
                        stop = Some(Stop::Panic);
                    }
                }
            }
        }
        if !counted {
            run.bytes += written_bytes;
        }
        // Leaving the scope waits for the blocks still in flight (at most a window).
    });
    if let Some(stop) = stop {
        return Err(stop);
    }
    if let Some(e) = read_error {
        e.source
            .notes
            .note(format_args!("{}: read error at byte {}: {}", e.source.name, e.at, e.error));
        run.failed = true;
    }
    Ok(())
}

/// Runs a producer on this thread, with permits for `permits` blocks, and returns the
/// blocks it sent, and what it returned.
#[cfg(test)]
pub(super) fn produce_here(
    permits: usize,
    produce: impl FnOnce(&Producer<()>) -> (u64, Option<ReadError>),
) -> (Vec<Block>, u64, Option<ReadError>) {
    let (events, inbox) = mpsc::channel();
    let (permit, permit_inbox) = mpsc::channel();
    for _ in 0..permits {
        let _ = permit.send(Vec::new());
    }
    drop(permit);
    let (bytes, error) = produce(&Producer { events, permits: permit_inbox });
    let blocks = inbox
        .try_iter()
        .filter_map(|event| match event {
            Event::Block(block) => Some(block),
            _ => None,
        })
        .collect();
    (blocks, bytes, error)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::super::testing::settings;
    use super::super::{run, Buffer, Command, Input, Item, Output, Source};

    /// Counts messages; wants no more input once it has merged a block.
    struct StopAfterOneBlock {
        merges: AtomicUsize,
    }

    impl Command for StopAfterOneBlock {
        type Tally = u64;

        fn item(&self, _: &Source, _: &Item<'_>, _: &mut Vec<u8>, count: &mut u64) {
            *count += 1;
        }

        fn merge(&self, into: &mut u64, from: u64) {
            *into += from;
            self.merges.fetch_add(1, Ordering::Relaxed);
        }

        fn stopped(&self) -> bool {
            self.merges.load(Ordering::Relaxed) > 0
        }
    }

    #[test]
    fn a_stopped_command_ends_the_input() {
        let lines = 1_000_000;
        let data = b"{\"jsonrpc\":\"2.0\",\"method\":\"m\"}\n".repeat(lines);
        let cmd = StopAfterOneBlock { merges: AtomicUsize::new(0) };
        let run = run(
            &cmd,
            &settings(1 << 20),
            &[Input::Bytes(Buffer::new(data))],
            &mut Output::discard(),
        );
        let run = run.expect("no stop");
        // The blocks already in flight are finished; the rest of the input is never read.
        assert!(run.tally > 0 && run.tally < lines as u64 / 2, "{} messages", run.tally);
        assert!(!run.failed);
    }
}
