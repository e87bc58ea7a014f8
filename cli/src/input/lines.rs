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

pub(super) fn newlines(bytes: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', bytes).count() as u64
}
