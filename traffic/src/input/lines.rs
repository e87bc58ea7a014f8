//! A stream (pipe, `--no-mmap` file) cut into blocks of whole NDJSON lines, sent as soon as
//! there is one; a line longer than the limit is skipped as it goes by, never buffered.

use std::io::Read;
use std::sync::Arc;

use super::open::read_more;
use super::pipeline::{Block, Data, Producer, ReadError};
use super::{Source, READ_CHUNK};

/// Reads a stream into blocks of whole lines, sending each as soon as it has one (a live
/// stream is answered line by line). A line longer than the limit is dropped as it goes
/// by, never buffered whole, and sent as a [`Block::TooLarge`].
pub(super) fn produce_lines<T>(
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
            let cut =
                if eof { buf.len() } else { memchr::memrchr(b'\n', &buf).map_or(0, |i| i + 1) };
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
                    at_merge: false,
                });
                base += cut as u64;
            }
            if eof {
                return (read, None);
            }
            // No newline in more than the limit (plus a possible `\r`): oversized.
            if buf.len() > max.saturating_add(1) {
                let mut s = Skip { offset: base, line, len: 0, last_cr: false };
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

pub(super) fn newlines(bytes: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', bytes).count() as u64
}

#[cfg(test)]
mod tests {
    use std::io;

    use super::super::pipeline::produce_here;
    use super::super::testing::{seen, settings, Record, Seen};
    use super::*;

    /// A pipe that hands out at most `chunk` bytes per read.
    struct Chunked {
        data: Vec<u8>,
        pos: usize,
        chunk: usize,
    }

    impl Read for Chunked {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let rest = self.data.get(self.pos..).unwrap_or_default();
            let n = rest.len().min(self.chunk).min(buf.len());
            buf[..n].copy_from_slice(&rest[..n]);
            self.pos += n;
            Ok(n)
        }
    }

    /// `data` read `chunk` bytes at a time after `sniffed` bytes were already read, cut
    /// into blocks, and every block scanned: the items, and the blocks' read buffers.
    fn stream(data: &[u8], sniffed: usize, chunk: usize, max: usize) -> (Vec<Seen>, Vec<Vec<u8>>) {
        let source = Arc::new(Source::new("test".to_owned(), crate::input::Notes::default()));
        let (first, rest) = data.split_at(sniffed);
        let reader = Chunked { data: rest.to_vec(), pos: 0, chunk };
        let (blocks, read, error) = produce_here(data.len() + 2, |p| {
            produce_lines(p, source, Box::new(reader), first.to_vec(), max, true)
        });
        assert_eq!((read, error.is_none()), (data.len() as u64, true));
        let (mut out, mut tally) = (Vec::new(), Vec::new());
        let settings = settings(max);
        for block in &blocks {
            block.scan(&Record, &settings, &mut out, &mut tally);
        }
        let buffers = blocks.into_iter().filter_map(Block::into_buffer).collect();
        (tally, buffers)
    }

    const OK: &str = r#"{"jsonrpc":"2.0","method":"m"}"#;

    /// Read sizes to try on `len` bytes: every small one, and a few that split the input
    /// in large pieces or not at all (each read costs a zeroed chunk, so not all of them).
    fn chunks(len: usize) -> impl Iterator<Item = usize> {
        (1..=6).chain([13, 30, 31, 32, 33, 64, len / 3, len / 2, len - 1, len, len + 1])
    }

    #[test]
    fn every_chunking_gives_the_same_lines() {
        let data = format!("{OK}\r\n\n  \t\n{OK}\n{{}}\r\n{OK}");
        let n = OK.len() as u64;
        let expected = [
            (0, 1, OK, "notification"),
            (n + 7, 4, OK, "notification"),
            (2 * n + 8, 5, "{}", "bad_version"),
            (2 * n + 12, 6, OK, "notification"),
        ];
        let expected: Vec<Seen> = expected.iter().map(seen).collect();
        for chunk in chunks(data.len()) {
            for sniffed in [0, 1, 5, data.len()] {
                let (got, _) = stream(data.as_bytes(), sniffed, chunk, 1 << 20);
                assert_eq!(got, expected, "chunk {chunk}, sniffed {sniffed}");
            }
        }
    }

    #[test]
    fn an_oversized_line_is_skipped_unbuffered_across_chunks() {
        let max = OK.len();
        let long = format!("{{\"jsonrpc\":\"2.0\",\"method\":\"{}\"}}", "x".repeat(3 * max));
        let data = format!("{OK}\n{long}\r\n{OK}\n{long}\n\n{OK}\n{long}");
        let (n, l) = (OK.len() as u64, long.len() as u64);
        let too_large = format!("too_large {l}");
        let expected = [
            (0, 1, OK, "notification"),
            (n + 1, 2, "", too_large.as_str()),
            (n + l + 3, 3, OK, "notification"),
            (2 * n + l + 4, 4, "", &too_large),
            (2 * n + 2 * l + 6, 6, OK, "notification"),
            (3 * n + 2 * l + 7, 7, "", &too_large),
        ];
        let expected: Vec<Seen> = expected.iter().map(seen).collect();
        let run_of_x = "x".repeat(max + 2);
        for chunk in chunks(data.len()) {
            let (got, buffers) = stream(data.as_bytes(), 0, chunk, max);
            assert_eq!(got, expected, "chunk {chunk}");
            if chunk < max {
                // Read in small pieces, the long line is never held whole.
                for buffer in buffers {
                    let text = String::from_utf8_lossy(&buffer);
                    assert!(!text.contains(&run_of_x), "chunk {chunk}: {text}");
                }
            }
        }
    }

    #[test]
    fn a_line_exactly_at_the_limit_is_kept_with_or_without_cr() {
        let max = OK.len();
        let data = format!("{OK}\r\n{OK}\n{OK}");
        for chunk in chunks(data.len()) {
            let (got, _) = stream(data.as_bytes(), 0, chunk, max);
            let kinds: Vec<_> = got.iter().map(|s| s.3.as_str()).collect();
            assert_eq!(kinds, ["notification"; 3], "chunk {chunk}");
        }
    }
}
