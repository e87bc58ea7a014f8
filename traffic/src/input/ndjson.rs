//! The hot loop: every NDJSON message of a block of whole lines goes to the subcommand,
//! with its offset and line; blank lines are no messages; oversized lines are `too_large`.
//! Lines that are log records go through their input's extraction first, in the worker.

use rpcscan::frame::ndjson_messages;
use rpcscan::Reason;

use super::extract::{Extract, Found, Place};
use super::lines::newlines;
use super::{Command, Item, Settings, Source, Verdict};

/// Gaps between messages up to this long have their newlines counted byte by byte.
const SHORT_GAP: usize = 16;

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
    let mut scan = NdjsonScan { cmd, settings, source, data, base, line, counted: 0, out, tally };
    if let Some(extract) = source.extract.as_deref() {
        scan.records(extract);
        return scan.line_at(data.len());
    }
    let max = settings.max_message_size;
    // End of the previous message's line (after its `\n`): what lies between it and the
    // next message is blank lines.
    let mut end = 0;
    for (at, bytes) in ndjson_messages(data) {
        if at - end > max {
            scan.blank_lines(end, at);
        }
        let verdict = if bytes.len() > max {
            Verdict::Skipped { reason: Reason::TooLarge, len: bytes.len() as u64 }
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
            let gap = self.data.get(self.counted..at).unwrap_or_default();
            // Between two messages there is mostly a `\n` (or `\r\n`): counted here, rather
            // than by a vector search set up for a byte or two.
            self.line += if gap.len() <= SHORT_GAP {
                gap.iter().filter(|&&b| b == b'\n').count() as u64
            } else {
                newlines(gap)
            };
            self.counted = at;
        }
        self.line
    }

    /// Counted past a line's content (which holds no `\n`): the next count starts at its
    /// end, not at its start, so each message costs a count over the few bytes between
    /// lines instead of over the message.
    fn skip_line(&mut self, end: usize) {
        if self.line > 0 && end >= self.counted {
            self.counted = end;
        }
    }

    fn emit(&mut self, at: usize, bytes: &[u8], verdict: Verdict<'_>) {
        let line = self.line_at(at);
        self.skip_line(at + bytes.len());
        let bytes = match verdict {
            Verdict::Skipped { .. } => &[][..],
            _ => bytes,
        };
        let item = Item::bare(self.base + at as u64, line, bytes, verdict);
        self.cmd.item(self.source, &item, self.out, self.tally);
    }

    /// Every line of the block as a log record: its message (if it holds one) to the
    /// subcommand, with the line's own offset and number; lines without one are counted.
    fn records(&mut self, extract: &Extract) {
        let max = self.settings.max_message_size;
        let mut scratch = extract.scratch();
        let data = self.data;
        let mut pos = 0;
        while pos < data.len() {
            let rest = data.get(pos..).unwrap_or_default();
            let (end, next) = memchr::memchr(b'\n', rest)
                .map_or((data.len(), data.len()), |i| (pos + i, pos + i + 1));
            let mut record = data.get(pos..end).unwrap_or_default();
            record = record.strip_suffix(b"\r").unwrap_or(record);
            let at = pos;
            pos = next;
            if record.len() > max {
                let verdict =
                    Verdict::Skipped { reason: Reason::TooLarge, len: record.len() as u64 };
                self.emit(at, &[], verdict);
                continue;
            }
            if record.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let found = match extract.line(record, &mut scratch) {
                Ok(found) => found,
                Err(why) => {
                    let offset = self.base + at as u64;
                    self.cmd.skipped_line(self.source, why, offset, record, self.tally);
                    continue;
                }
            };
            let Found { place, ts, dir, request_id, session } = found;
            let (offset, bytes) = match place {
                Place::InLine { start, end } => {
                    (at + start, record.get(start..end).unwrap_or_default())
                }
                Place::Decoded { at: quote } => (at + quote, &scratch.decoded[..]),
            };
            let verdict = if bytes.len() > max {
                Verdict::Skipped { reason: Reason::TooLarge, len: bytes.len() as u64 }
            } else {
                match self.settings.parser.parse(bytes) {
                    Ok(m) => Verdict::Message(m),
                    Err(inv) => Verdict::Invalid(inv),
                }
            };
            let line = self.line_at(at);
            self.skip_line(at + record.len());
            let offset = self.base + offset as u64;
            let item = Item { offset, line, bytes, record, ts, dir, request_id, session, verdict };
            self.cmd.item(self.source, &item, self.out, self.tally);
        }
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
                let verdict = Verdict::Skipped { reason: Reason::TooLarge, len: line.len() as u64 };
                self.emit(start, &[], verdict);
            }
            start = next;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{seen, settings, Record, Seen};
    use super::*;
    use crate::input::Extract;

    /// Every message of `data` scanned as one block, with `max` as the size limit.
    fn scan(data: &str, max: usize) -> Vec<Seen> {
        let source = Source::new("test".to_owned(), crate::input::Notes::default());
        let (mut out, mut tally) = (Vec::new(), Vec::new());
        let end = scan_ndjson(
            &Record,
            &settings(max),
            &source,
            data.as_bytes(),
            100,
            1,
            &mut out,
            &mut tally,
        );
        assert_eq!(end, 1 + newlines(data.as_bytes()), "line after {data:?}");
        tally
    }

    const OK: &str = r#"{"jsonrpc":"2.0","method":"m"}"#;

    /// Every record of `data` scanned as one block with `extract`, at offset 100, line 1.
    fn scan_records(data: &[u8], extract: Extract, max: usize) -> Vec<Seen> {
        let mut source = Source::new("test".to_owned(), crate::input::Notes::default());
        source.extract = Some(std::sync::Arc::new(extract));
        let (mut out, mut tally) = (Vec::new(), Vec::new());
        let end = scan_ndjson(&Record, &settings(max), &source, data, 100, 1, &mut out, &mut tally);
        assert_eq!(end, 1 + newlines(data));
        tally
    }

    #[test]
    fn records_keep_their_lines_and_offsets_in_the_original() {
        let re = Extract::regex(r"(?-u)^\S+ (?<msg>.*)").unwrap();
        let long = format!("{OK}{OK}");
        // (line, where its message starts in it): lines without one are blank, do not
        // match (no space after a non-UTF-8 prefix), or are too large.
        let lines: [(Vec<u8>, Option<usize>); 7] = [
            (format!("a {OK}\r").into_bytes(), Some(2)),
            (Vec::new(), None),
            (b"\xff{}".to_vec(), None),
            (format!("bb {OK}").into_bytes(), Some(3)),
            (format!("ccc {long}").into_bytes(), None),
            (b"   ".to_vec(), None),
            ([&b"\xc3 "[..], OK.as_bytes()].concat(), Some(2)),
        ];
        let data = lines.iter().map(|l| l.0.clone()).collect::<Vec<_>>().join(&b'\n');
        let mut expected = Vec::new();
        let mut start = 100u64;
        for (n, (line, msg)) in lines.iter().enumerate() {
            let number = n as u64 + 1;
            if let Some(at) = msg {
                expected.push((start + *at as u64, number, OK, "notification"));
            }
            if line.len() > 2 * OK.len() + 3 {
                expected.push((start, number, "", "too_large 64"));
            }
            start += line.len() as u64 + 1;
        }
        let got = scan_records(&data, re, 2 * OK.len() + 3);
        assert_eq!(got, expected.iter().map(seen).collect::<Vec<_>>());
    }

    #[test]
    fn lines_are_cut_at_newlines_and_blank_lines_are_no_messages() {
        let data = format!("{OK}\r\n\n  \t\n\r\n{OK}\n{{}}\n \t{OK} \r\n{OK}");
        let got = scan(&data, 1 << 20);
        let n = OK.len() as u64;
        let expected = [
            (100, 1, OK, "notification"),
            (100 + n + 9, 5, OK, "notification"),
            (100 + 2 * n + 10, 6, "{}", "bad_version"),
            (100 + 2 * n + 13, 7, &format!(" \t{OK} "), "notification"),
            (100 + 3 * n + 18, 8, OK, "notification"),
        ];
        assert_eq!(got, expected.iter().map(seen).collect::<Vec<_>>());
    }

    #[test]
    fn no_messages_in_blank_input() {
        for data in ["", "\n", "\r\n", " \t \n\n", "  "] {
            assert_eq!(scan(data, 1 << 20), [], "{data:?}");
        }
    }

    #[test]
    fn an_oversized_line_is_too_large_without_its_bytes_and_the_next_is_fine() {
        let max = OK.len();
        let long = format!("{{\"jsonrpc\":\"2.0\",\"method\":\"{}\"}}", "m".repeat(max));
        let data = format!("{long}\r\n{OK}\n{long}\n{OK}\r\n{long}");
        let (n, l) = (OK.len() as u64, long.len() as u64);
        let too_large = format!("too_large {l}");
        let expected = [
            (100, 1, "", too_large.as_str()),
            (100 + l + 2, 2, OK, "notification"),
            (100 + l + n + 3, 3, "", &too_large),
            (100 + 2 * l + n + 4, 4, OK, "notification"),
            (100 + 2 * l + 2 * n + 6, 5, "", &too_large),
        ];
        assert_eq!(scan(&data, max), expected.iter().map(seen).collect::<Vec<_>>());
        // Exactly at the limit is fine, CR or not.
        let at_limit = format!("{OK}\r\n{OK}");
        assert!(scan(&at_limit, max).iter().all(|s| s.3 == "notification"));
    }

    #[test]
    fn a_blank_line_over_the_limit_is_too_large_too() {
        let data = format!("{OK}\n{}\r\n{OK}\n   \n{}", " ".repeat(40), "\t".repeat(41));
        let got = scan(&data, 39);
        let n = OK.len() as u64;
        let expected = [
            (100, 1, OK, "notification"),
            (100 + n + 1, 2, "", "too_large 40"),
            (100 + n + 43, 3, OK, "notification"),
            (100 + 2 * n + 48, 5, "", "too_large 41"),
        ];
        assert_eq!(got, expected.iter().map(seen).collect::<Vec<_>>());
    }
}
