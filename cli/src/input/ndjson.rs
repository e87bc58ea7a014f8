//! The hot loop: every NDJSON message of a block of whole lines goes to the subcommand,
//! with its offset and line; blank lines are no messages; oversized lines are `too_large`.

use rpcscan::frame::ndjson_messages;
use rpcscan::Reason;

use super::lines::newlines;
use super::{Command, Item, Settings, Source, Verdict};

/// The hot loop: every NDJSON message of `data` (whole lines, the last one possibly
/// unterminated at end of input) goes to `cmd`. `base` is the offset of `data[0]` in its
/// input, `line` its line number (0: not counted). Returns the line number of the byte
/// after `data` (0 when not counted).
#[allow(clippy::too_many_arguments)]
pub(super) fn scan_ndjson<C: Command>(
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
