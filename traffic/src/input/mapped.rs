//! Memory-mapped NDJSON files, cut in order into newline-aligned blocks for the pipeline.

use std::sync::Arc;

use memmap2::Mmap;

use super::lines::newlines;
use super::pipeline::{Block, Data, Producer, ReadError};
use super::{Buffer, Source};

/// Target size of one block of a mapped file (extended to the next newline).
const RANGE: usize = 1024 * 1024;

/// A memory-mapped NDJSON input, or NDJSON bytes already in memory: cut into blocks and
/// scanned where it lies.
pub(super) struct Mapped {
    pub(super) source: Arc<Source>,
    pub(super) map: Memory,
    /// Where our data starts in the map (stdin may be positioned past 0).
    pub(super) start: usize,
}

/// The bytes of a [`Mapped`] input.
pub(super) enum Memory {
    /// A file's map.
    Map(Mmap),
    /// An [`Input::Bytes`](super::Input::Bytes) buffer.
    Bytes(Buffer),
}

impl Mapped {
    pub(super) fn data(&self) -> &[u8] {
        let all = match &self.map {
            Memory::Map(map) => &map[..],
            Memory::Bytes(bytes) => bytes.as_ref(),
        };
        all.get(self.start..).unwrap_or_default()
    }
}

/// Cuts mapped files, in order, into newline-aligned blocks of about [`RANGE`] bytes.
pub(super) fn produce_ranges<T>(
    p: &Producer<T>,
    files: Vec<Arc<Mapped>>,
    lines: bool,
    at_merge: bool,
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
                data: Data::Mapped { file: Arc::clone(&file), start: pos, end },
                base: pos as u64,
                // Numbered at merge: each block counts its own lines from 1.
                line: if at_merge { 1 } else { line },
                at_merge,
            });
            if lines && !at_merge {
                line += newlines(data.get(pos..end).unwrap_or_default());
            }
            bytes += (end - pos) as u64;
            pos = end;
        }
    }
    (bytes, None)
}
