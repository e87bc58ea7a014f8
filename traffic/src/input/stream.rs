//! Content-Length, SSE and json-seq streams: read in chunks into a bounded buffer and cut,
//! in order, by the library's framing decoders.

use std::io::{self, Read};

use bytes::BytesMut;
use rpcscan::frame::{AnyDecoder, Decode, FrameError, Framing};

use super::progress::Progress;
use super::{Command, Item, Output, Settings, Source, Stop, Verdict, READ_CHUNK};

pub(super) enum StreamError {
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
pub(super) struct Stream<'r, C: Command> {
    pub(super) cmd: &'r C,
    pub(super) settings: &'r Settings,
    pub(super) source: &'r Source,
    pub(super) tally: &'r mut C::Tally,
    /// Output of the current chunk, written after each read.
    pub(super) pending: Vec<u8>,
    pub(super) buf: BytesMut,
    /// Bytes read so far.
    pub(super) read: u64,
    pub(super) eof: bool,
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
        result.map_err(|error| StreamError::Read { at: self.read, error })
    }

    pub(super) fn frames(
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
                    Some(Ok(frame)) if !frame.is_message() => self.cmd.non_message_event(
                        frame.offset(),
                        frame.event().unwrap_or_default(),
                        self.tally,
                    ),
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
            // Ctrl-C (`interrupt`) ends the input here; a frame half read is dropped.
            if eof || super::interrupt::interrupted() || self.cmd.stopped() {
                return Ok(());
            }
        }
    }

    fn message(&mut self, offset: u64, bytes: &[u8]) {
        let verdict = match self.settings.parser.parse(bytes) {
            Ok(m) => Verdict::Message(m),
            Err(inv) => Verdict::Invalid(inv),
        };
        let item = Item::bare(offset, 0, bytes, verdict);
        self.cmd.item_in_order(self.source, &item, &mut self.pending, self.tally);
    }

    fn bad_frame(&mut self, e: &FrameError) {
        let skipped = Verdict::Skipped { reason: e.reason(), len: e.len() };
        let item = Item::bare(e.offset(), 0, &[], skipped);
        self.cmd.item_in_order(self.source, &item, &mut self.pending, self.tally);
    }
}
