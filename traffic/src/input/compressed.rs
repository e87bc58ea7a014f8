//! `.gz` and `.zst` files, read transparently: told by their first bytes (the gzip and
//! zstd magic numbers, whatever the file is called), decompressed ahead on threads of their
//! own, several files at once (one per pool thread at most), each into a bounded queue of
//! chunks that the input's reader takes in input order. Memory stays bounded: at most
//! [`QUEUE`] chunks of [`CHUNK`] bytes wait per file being decompressed.
//!
//! Offsets and line numbers of a compressed file's messages count in its decompressed
//! bytes. The decoders are `flate2` (multi-member gzip, as `gzip -dc` reads it) and `zstd`
//! (multi-frame), the ones the SQL side's `compression` feature reads logs with.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;

use super::Input;

/// Bytes per decompressed chunk.
const CHUNK: usize = 256 * 1024;
/// Chunks decompressed ahead of the reader, per file.
const QUEUE: usize = 8;

/// A compression format rpcscan reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codec {
    /// gzip (RFC 1952), possibly several members in a row.
    Gzip,
    /// Zstandard (RFC 8878), possibly several frames in a row.
    Zstd,
}

impl Codec {
    /// The codec whose magic number `first` (a file's first bytes) starts with.
    pub fn of(first: &[u8]) -> Option<Codec> {
        if first.starts_with(&[0x1f, 0x8b]) {
            Some(Codec::Gzip)
        } else if first.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Some(Codec::Zstd)
        } else {
            None
        }
    }

    /// The codec of the file at `path`, by its first bytes; `None` for anything else (and
    /// for a file that cannot be read: opening it later says why).
    pub fn of_file(path: &Path) -> Option<Codec> {
        let mut first = [0u8; 4];
        let mut file = File::open(path).ok()?;
        if !file.metadata().ok()?.is_file() {
            return None;
        }
        let mut got = 0;
        while got < first.len() {
            match file.read(&mut first[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return None,
            }
        }
        Codec::of(&first[..got])
    }

    /// A reader of `file`'s decompressed bytes.
    pub fn decoder(self, file: File) -> io::Result<Box<dyn Read + Send>> {
        let file = io::BufReader::with_capacity(CHUNK, file);
        Ok(match self {
            Codec::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(file)),
            Codec::Zstd => Box::new(zstd::stream::read::Decoder::with_buffer(file)?),
        })
    }
}

/// Counting permits: at most so many decoders run at once, taken in input order.
struct Permits {
    free: Mutex<usize>,
    freed: Condvar,
}

impl Permits {
    fn take(&self) {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        while *free == 0 {
            free = self.freed.wait(free).unwrap_or_else(|e| e.into_inner());
        }
        *free -= 1;
    }

    fn give(&self) {
        *self.free.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        self.freed.notify_one();
    }
}

/// The compressed inputs of a run, decompressing ahead in parallel.
pub(super) struct Ahead {
    /// One per input: its decompressed bytes, for a compressed file.
    readers: Vec<Option<Queued>>,
}

impl Ahead {
    /// Starts decompressing every compressed file among `inputs` (at most `threads` at
    /// once, in input order); other inputs get no reader.
    pub(super) fn start(inputs: &[Input], threads: usize) -> Ahead {
        let mut jobs = Vec::new();
        let readers = inputs
            .iter()
            .map(|input| {
                let Input::Path(path) = input else { return None };
                let codec = Codec::of_file(path)?;
                let (tx, rx) = mpsc::sync_channel(QUEUE);
                jobs.push((path.clone(), codec, tx));
                Some(Queued { rx, chunk: Vec::new(), pos: 0, done: false })
            })
            .collect();
        if !jobs.is_empty() {
            let permits =
                Arc::new(Permits { free: Mutex::new(threads.max(1)), freed: Condvar::new() });
            // Decoders start in input order, each once a permit is free: the file the
            // reader waits on always has one.
            thread::spawn(move || {
                for (path, codec, tx) in jobs {
                    permits.take();
                    let held = Arc::clone(&permits);
                    let spawned = thread::Builder::new()
                        .name("rpcscan-decompress".to_owned())
                        .spawn(move || {
                            decompress(&path, codec, &tx);
                            held.give();
                        });
                    if spawned.is_err() {
                        // No thread: this file reads as an error (its sender is dropped
                        // without a word, which the reader reports).
                        permits.give();
                    }
                }
            });
        }
        Ahead { readers }
    }

    /// The decompressed bytes of input `i`, if it is a compressed file.
    pub(super) fn take(&mut self, i: usize) -> Option<Box<dyn Read + Send>> {
        let reader = self.readers.get_mut(i)?.take()?;
        Some(Box::new(reader))
    }
}

/// Decompresses `path` into `tx`, chunk after chunk, until its end, an error, or the reader
/// is gone.
fn decompress(path: &Path, codec: Codec, tx: &SyncSender<io::Result<Vec<u8>>>) {
    let mut reader = match File::open(path).and_then(|f| codec.decoder(f)) {
        Ok(reader) => reader,
        Err(e) => {
            let _ = tx.send(Err(e));
            return;
        }
    };
    loop {
        let mut chunk = vec![0; CHUNK];
        let mut got = 0;
        while got < CHUNK {
            match reader.read(&mut chunk[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    chunk.truncate(got);
                    if got > 0 && tx.send(Ok(chunk)).is_err() {
                        return;
                    }
                    let _ = tx.send(Err(e));
                    return;
                }
            }
        }
        chunk.truncate(got);
        // An empty chunk is the end.
        if tx.send(Ok(chunk)).is_err() || got == 0 {
            return;
        }
    }
}

/// The reader's end of a file's queue.
struct Queued {
    rx: Receiver<io::Result<Vec<u8>>>,
    chunk: Vec<u8>,
    pos: usize,
    done: bool,
}

impl Read for Queued {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.chunk.len() {
            if self.done {
                return Ok(0);
            }
            match self.rx.recv() {
                Ok(Ok(chunk)) => {
                    self.done = chunk.is_empty();
                    (self.chunk, self.pos) = (chunk, 0);
                }
                Ok(Err(e)) => {
                    self.done = true;
                    return Err(e);
                }
                Err(_) => {
                    self.done = true;
                    return Err(io::Error::other("the decompressing thread stopped"));
                }
            }
        }
        let rest = &self.chunk[self.pos..];
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        self.pos += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    #[test]
    fn both_codecs_are_told_by_their_first_bytes_and_read_back_whole() {
        let data: Vec<u8> = (0..200_000u32).flat_map(|i| format!("{i}\n").into_bytes()).collect();
        let dir = std::env::temp_dir();
        let gz = dir.join(format!("rpcscan-compressed-{}.gz", std::process::id()));
        let zst = dir.join(format!("rpcscan-compressed-{}.zst", std::process::id()));
        // gzip in two members, as `cat a.gz b.gz` makes.
        let (a, b) = data.split_at(data.len() / 3);
        let mut bytes = Vec::new();
        for part in [a, b] {
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            enc.write_all(part).unwrap();
            bytes.extend(enc.finish().unwrap());
        }
        std::fs::write(&gz, bytes).unwrap();
        std::fs::write(&zst, zstd::encode_all(&data[..], 3).unwrap()).unwrap();
        let plain = dir.join(format!("rpcscan-compressed-{}.txt", std::process::id()));
        std::fs::write(&plain, &data).unwrap();
        assert_eq!(Codec::of_file(&gz), Some(Codec::Gzip));
        assert_eq!(Codec::of_file(&zst), Some(Codec::Zstd));
        assert_eq!(Codec::of_file(&plain), None);
        let inputs =
            [Input::Path(gz.clone()), Input::Path(plain.clone()), Input::Path(zst.clone())];
        let mut ahead = Ahead::start(&inputs, 1);
        assert!(ahead.take(1).is_none());
        for i in [0, 2] {
            let mut got = Vec::new();
            ahead.take(i).unwrap().read_to_end(&mut got).unwrap();
            assert!(got == data, "input {i}");
        }
        for path in [gz, zst, plain] {
            std::fs::remove_file(path).unwrap();
        }
    }
}
