//! Regular NDJSON files read with positioned reads (`pread`, `FileExt::read_at`), in
//! parallel blocks, without a memory map: a file truncated or rewritten while it is read
//! cannot fault the process (a mapped page past the new end raises SIGBUS). The producer
//! only finds each block's end (the first newline after about [`RANGE`] bytes, found by
//! small probing reads); the worker that scans a block reads it first, so the copying is
//! spread over the pool like the scanning. When the subcommand wants line numbers counted
//! in advance, the producer reads the block itself and counts its newlines.
//!
//! A file that ends sooner than its size said when it was opened (truncated under us: a
//! `logrotate` with `copytruncate`) is read up to its new end: the last partial line read
//! is dropped, a warning says where the file shrank, and the run counts as failed (exit
//! status 2 in the command line).

use std::fs::File;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::lines::newlines;
use super::pipeline::{Block, Data, Producer, ReadError};
use super::Source;

/// Target size of one block (extended to the next newline), as for a mapped file.
const RANGE: usize = 1024 * 1024;

/// The first probe for a block's end; doubled while no newline is found.
const PROBE: usize = 16 * 1024;

/// A regular NDJSON file read with positioned reads.
pub(super) struct Positioned {
    pub(super) source: Arc<Source>,
    pub(super) file: File,
    /// Where our data starts in the file (stdin may be positioned past 0).
    pub(super) start: u64,
    /// Where it ends: the file's size when it was opened.
    pub(super) end: u64,
    /// The file turned out shorter than `end` (already said on stderr).
    shrank: AtomicBool,
}

impl Positioned {
    pub(super) fn new(source: Arc<Source>, file: File, start: u64, end: u64) -> Positioned {
        Positioned { source, file, start, end, shrank: AtomicBool::new(false) }
    }

    /// `true` when the file ended early (truncated while read): already reported.
    pub(super) fn shrank(&self) -> bool {
        self.shrank.load(Ordering::Relaxed)
    }

    /// Says once that the file ends at `at` (input offset) instead of where it did.
    fn note_shrank(&self, at: u64) {
        if !self.shrank.swap(true, Ordering::Relaxed) {
            self.source.notes.note(format_args!(
                "{}: the file shrank while it was read (truncated or rewritten?): read up to \
                 byte {at} of {}",
                self.source.name,
                self.end - self.start
            ));
        }
    }

    /// A worker's read error: said on stderr, the block left empty, the run failed.
    pub(super) fn read_error(&self, at: u64, error: &io::Error) {
        self.shrank.store(true, Ordering::Relaxed);
        let name = &self.source.name;
        self.source.notes.note(format_args!("{name}: read error at byte {at}: {error}"));
    }

    /// Reads the block `[from, to)` (input offsets) into the front of `buf`: the bytes read
    /// are `buf[..n]`, `n` returned. `buf` is only grown (its new bytes zeroed), never
    /// shrunk: a buffer reused block after block is written once per block, by the read,
    /// rather than zeroed first each time. A block ends after a newline or at the end of
    /// the input: one that does not (the file ended early, or changed under us) is cut
    /// after its last newline, and the shrinking said.
    pub(super) fn load(&self, from: u64, to: u64, buf: &mut Vec<u8>) -> io::Result<usize> {
        let len = usize::try_from(to.saturating_sub(from)).unwrap_or(usize::MAX);
        if buf.len() < len {
            buf.resize(len, 0);
        }
        let into = buf.get_mut(..len).unwrap_or_default();
        let got = read_into(&self.file, into, self.start + from)?;
        let read = buf.get(..got).unwrap_or_default();
        let at_end = self.start + to == self.end;
        if got < len || !(at_end || read.last() == Some(&b'\n')) {
            let keep = memchr::memrchr(b'\n', read).map_or(0, |i| i + 1);
            self.note_shrank(from + keep as u64);
            return Ok(keep);
        }
        Ok(got)
    }
}

/// Appends up to `len` bytes read at `at` to `buf`; fewer only at the end of the file.
fn read_full(file: &File, buf: &mut Vec<u8>, at: u64, len: usize) -> io::Result<usize> {
    let old = buf.len();
    buf.resize(old + len, 0);
    let got = read_into(file, &mut buf[old..], at);
    buf.truncate(old + *got.as_ref().unwrap_or(&0));
    got
}

/// Fills `buf` with the bytes at `at`: how many were read, fewer than `buf.len()` only at
/// the end of the file.
fn read_into(file: &File, buf: &mut [u8], at: u64) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match read_at(file, &mut buf[got..], at + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], at: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, at)
}

#[cfg(windows)]
fn read_at(file: &File, buf: &mut [u8], at: u64) -> io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, at)
}

#[cfg(not(any(unix, windows)))]
fn read_at(file: &File, buf: &mut [u8], at: u64) -> io::Result<usize> {
    let _ = (file, buf, at);
    Err(io::Error::new(io::ErrorKind::Unsupported, "positioned reads"))
}

/// Reads the first `len` bytes of the input (fewer if it is shorter).
pub(super) fn head(file: &File, start: u64, len: usize) -> io::Result<Vec<u8>> {
    let mut buf = Vec::with_capacity(len);
    read_full(file, &mut buf, start, len)?;
    Ok(buf)
}

/// The end of the block that starts at `pos` (input offset) and holds about [`RANGE`]
/// bytes: `Ok` just after the first newline from `pos + RANGE - 1` on, or the input's end;
/// `Err` with where the file now ends, when it ended before its size said (truncated).
fn block_end(file: &Positioned, pos: u64, probe: &mut Vec<u8>) -> io::Result<Result<u64, u64>> {
    let size = file.end - file.start;
    let target = pos + RANGE as u64;
    if target >= size {
        return Ok(Ok(size));
    }
    // From `target - 1`, so that a newline right before the target ends the block.
    let mut from = target - 1;
    let mut want = PROBE;
    loop {
        let len = usize::try_from((size - from).min(want as u64)).unwrap_or(want);
        probe.clear();
        let got = read_full(&file.file, probe, file.start + from, len)?;
        if let Some(i) = memchr::memchr(b'\n', probe) {
            return Ok(Ok(from + i as u64 + 1));
        }
        if got < len {
            return Ok(Err(from + got as u64));
        }
        from += got as u64;
        if from >= size {
            return Ok(Ok(size));
        }
        want = want.saturating_mul(2).min(RANGE);
    }
}

/// Cuts positioned files, in order, into newline-aligned blocks of about [`RANGE`] bytes:
/// read by the workers, or here when lines are counted in advance (`lines && !at_merge`).
pub(super) fn produce_positioned<T>(
    p: &Producer<T>,
    files: Vec<Arc<Positioned>>,
    lines: bool,
    at_merge: bool,
) -> (u64, Option<ReadError>) {
    let mut bytes = 0;
    let mut probe = Vec::new();
    for file in files {
        let size = file.end - file.start;
        let mut pos = 0;
        let mut line = u64::from(lines);
        let fail =
            |at: u64, error: io::Error| ReadError { source: Arc::clone(&file.source), at, error };
        while pos < size {
            let (end, last) = match block_end(&file, pos, &mut probe) {
                Ok(Ok(end)) => (end, false),
                // Truncated: what is left up to the new end is the last block (its cut
                // line dropped by `load`).
                Ok(Err(end)) => (end, true),
                Err(e) => return (bytes, Some(fail(pos, e))),
            };
            let Some(mut buf) = p.permit() else {
                return (bytes, None);
            };
            let first_line = line;
            let data = if lines && !at_merge {
                let len = match file.load(pos, end, &mut buf) {
                    Ok(len) => len,
                    Err(e) => return (bytes, Some(fail(pos, e))),
                };
                line += newlines(buf.get(..len).unwrap_or_default());
                Data::Loaded { buf, len }
            } else {
                Data::Positioned { file: Arc::clone(&file), start: pos, end, buf }
            };
            p.send(Block::Lines {
                source: Arc::clone(&file.source),
                data,
                base: pos,
                // Numbered at merge: each block counts its own lines from 1.
                line: if at_merge { 1 } else { first_line },
                at_merge,
            });
            bytes += end - pos;
            if last || file.shrank() {
                break;
            }
            pos = end;
        }
    }
    (bytes, None)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::super::pipeline::produce_here;
    use super::*;

    fn positioned(data: &[u8]) -> (Arc<Positioned>, std::path::PathBuf) {
        let dir = std::env::temp_dir();
        let path = dir.join(format!("rpcscan-positioned-{}-{}", std::process::id(), data.len()));
        File::create(&path).unwrap().write_all(data).unwrap();
        let file = File::open(&path).unwrap();
        let source = Arc::new(Source::new("test".to_owned(), crate::input::Notes::default()));
        (Arc::new(Positioned::new(source, file, 0, data.len() as u64)), path)
    }

    /// Blocks cover the file exactly, each ends after a newline (but the last), and hold
    /// about `RANGE` bytes, whichever road reads them.
    #[test]
    fn blocks_are_newline_aligned_and_cover_the_file() {
        let line = |n: usize| format!("{{\"jsonrpc\":\"2.0\",\"method\":\"{}\"}}\n", "m".repeat(n));
        let mut data = String::new();
        let mut n = 0;
        while data.len() < 3 * RANGE + 12345 {
            data.push_str(&line(n % 3000));
            n += 7;
        }
        // A very long last-but-one line straddling a boundary, and no final newline.
        data.push_str(&line(RANGE + PROBE * 3));
        data.push_str("{}");
        let (file, path) = positioned(data.as_bytes());
        for (lines, at_merge) in [(false, false), (true, false), (true, true)] {
            let (blocks, bytes, error) = produce_here(100, |p| {
                produce_positioned(p, vec![Arc::clone(&file)], lines, at_merge)
            });
            assert!(error.is_none());
            assert_eq!(bytes, data.len() as u64);
            let mut joined = Vec::new();
            let mut line_no = 1;
            for block in blocks {
                let Block::Lines { data: block_data, base, line, .. } = block else { panic!() };
                assert_eq!(base, joined.len() as u64);
                let bytes = match block_data {
                    Data::Read(bytes) => bytes,
                    Data::Loaded { mut buf, len } => {
                        buf.truncate(len);
                        buf
                    }
                    Data::Positioned { file, start, end, mut buf } => {
                        // A reused buffer, longer than the block: only its front is read.
                        buf.resize(3 * RANGE, b'x');
                        let len = file.load(start, end, &mut buf).unwrap();
                        buf.truncate(len);
                        buf
                    }
                    Data::Mapped { .. } => panic!("no map here"),
                };
                if lines && !at_merge {
                    assert_eq!(line, line_no);
                    line_no += newlines(&bytes);
                }
                joined.extend_from_slice(&bytes);
                if joined.len() < data.len() {
                    assert_eq!(bytes.last(), Some(&b'\n'));
                    assert!(bytes.len() >= RANGE);
                }
            }
            assert!(joined == data.as_bytes(), "lines {lines}, at merge {at_merge}");
        }
        assert!(!file.shrank());
        std::fs::remove_file(path).unwrap();
    }

    /// A file cut short after it was opened: read up to its last whole line, said once.
    #[test]
    fn a_file_that_shrinks_is_read_up_to_its_new_end() {
        let data = "{\"jsonrpc\":\"2.0\",\"method\":\"m\"}\n".repeat(RANGE / 10);
        let (file, path) = positioned(data.as_bytes());
        let cut = RANGE as u64 + 100;
        File::options().write(true).open(&path).unwrap().set_len(cut).unwrap();
        let (blocks, _, error) =
            produce_here(100, |p| produce_positioned(p, vec![Arc::clone(&file)], true, false));
        assert!(error.is_none());
        let read: usize = blocks
            .into_iter()
            .map(|b| match b {
                Block::Lines { data: Data::Loaded { len, .. }, .. } => len,
                _ => panic!("read by the producer"),
            })
            .sum();
        let whole = data.as_bytes()[..cut as usize].iter().rposition(|&b| b == b'\n').unwrap() + 1;
        assert_eq!(read, whole);
        assert!(file.shrank());
        std::fs::remove_file(path).unwrap();
    }

    /// A block whose bytes changed under us (no longer ending at a newline) is cut after
    /// its last newline, and the change said, rather than read as a line cut in two.
    #[test]
    fn a_block_rewritten_under_us_is_cut_at_its_last_newline() {
        let data = "{\"jsonrpc\":\"2.0\",\"method\":\"m\"}\n".repeat(2 * RANGE / 30);
        let (file, path) = positioned(data.as_bytes());
        let mut probe = Vec::new();
        let end = block_end(&file, 0, &mut probe).unwrap().unwrap();
        assert!(end < data.len() as u64);
        let mut rewritten = data.clone().into_bytes();
        rewritten[end as usize - 1] = b' ';
        std::fs::write(&path, &rewritten).unwrap();
        let mut buf = Vec::new();
        let len = file.load(0, end, &mut buf).unwrap();
        buf.truncate(len);
        assert_eq!(buf.last(), Some(&b'\n'));
        assert!(buf.len() < end as usize && buf.len() + 40 > end as usize);
        assert!(file.shrank());
        std::fs::remove_file(path).unwrap();
    }
}
