//! What a run could not read, per input: lines that held no message ([`Skip`]) and
//! messages that were invalid, against every line that should have held one. When most of
//! an input's lines are such, a report says so, with the first of them and the format in
//! use: a wrong `--line-format` (or none, on a host's log) shows as a report of zeros
//! otherwise.

use super::extract::Skip;
use super::formats::{detect, LogFormat};
use super::{Item, Source, Verdict};

/// The longest part of a line shown in a report.
const SHOWN: usize = 200;

/// Counts per input, in input order; [`Readable::item`] and [`Readable::skipped`] add to
/// the input they come from.
#[derive(Default, Debug)]
pub struct Readable {
    inputs: Vec<InputCounts>,
}

/// One input's counts.
#[derive(Debug, Clone)]
pub struct InputCounts {
    /// Which input (its [`Source`]'s address: the same for all of a run's blocks of it).
    key: usize,
    /// Its name.
    pub name: String,
    /// How its lines were read: a format's name, `--line-format`, `--json-field`, or
    /// `ndjson` (bare messages).
    pub format: &'static str,
    /// Messages read (valid or not).
    pub messages: u64,
    /// Of them, invalid.
    pub invalid: u64,
    /// Lines without a message, by [`Skip`] (in [`Skip::ALL`]'s order).
    pub skipped: [u64; 4],
    /// The first line that held no message or an invalid one.
    pub first: Option<Unread>,
    /// Read as a host's log that holds no messages (nothing to warn about then).
    messageless: bool,
}

/// A line that held no message or an invalid one.
#[derive(Debug, Clone)]
pub struct Unread {
    /// Its byte offset in the input (of the message, for an invalid one).
    pub offset: u64,
    /// Its line number, when the subcommand counts lines (else 0).
    pub line: u64,
    /// Its first bytes, as text.
    pub text: String,
    /// Why: a [`Skip`] name, or the invalid message's reason.
    pub why: &'static str,
}

impl InputCounts {
    /// Lines that should have held a message: messages and unreadable lines (a log
    /// writer's own records excluded).
    pub fn lines(&self) -> u64 {
        self.messages + self.unread_skips()
    }

    fn unread_skips(&self) -> u64 {
        Skip::ALL.iter().zip(self.skipped).filter(|(s, _)| s.is_unreadable()).map(|(_, n)| n).sum()
    }

    /// Lines that held no message or an invalid one.
    pub fn unreadable(&self) -> u64 {
        self.invalid + self.unread_skips()
    }

    /// More than half of [`InputCounts::lines`] were unreadable.
    pub fn mostly_unreadable(&self) -> bool {
        !self.messageless && self.unreadable() * 2 > self.lines()
    }

    /// The named format the first unreadable line looks like, when it is another than the
    /// one in use.
    pub fn suggestion(&self) -> Option<&'static LogFormat> {
        let first = self.first.as_ref()?;
        detect(first.text.as_bytes()).filter(|f| f.name != self.format)
    }

    /// The sentence a report prints for a mostly unreadable input, without a line end.
    pub fn warning(&self) -> String {
        let mut s = format!(
            "{}: {} of {} lines held no message or an invalid one (read as {})",
            self.name,
            self.unreadable(),
            self.lines(),
            self.format
        );
        if let Some(first) = &self.first {
            let at = if first.line > 0 {
                format!("line {}", first.line)
            } else {
                format!("byte {}", first.offset)
            };
            s.push_str(&format!("; the first, at {at} ({}): {}", first.why, first.text));
        }
        if let Some(format) = self.suggestion() {
            s.push_str(&format!(
                "; it looks like {}: try --log-format {}",
                format.title, format.name
            ));
        }
        s
    }
}

impl Readable {
    /// The counts of `source`'s input: the last one's when it is the same input. In a
    /// block's tally (one input's lines), the source's address says it; across a run's
    /// inputs (`same_name`), a later input's source may reuse a freed address, and its
    /// name tells them apart.
    fn input(&mut self, source: &Source, same_name: bool) -> &mut InputCounts {
        let key = source as *const Source as usize;
        let same = |last: &InputCounts| last.key == key && (!same_name || last.name == source.name);
        if !self.inputs.last().is_some_and(same) {
            self.inputs.push(InputCounts {
                key,
                name: source.name.clone(),
                format: source.extract.as_deref().map_or("ndjson", |e| e.name()),
                messages: 0,
                invalid: 0,
                skipped: [0; 4],
                first: None,
                messageless: source
                    .extract
                    .as_deref()
                    .and_then(LogFormat::of)
                    .is_some_and(|f| !f.has_messages),
            });
        }
        let last = self.inputs.len() - 1;
        &mut self.inputs[last]
    }

    /// A message of `source`, in a block's tally (every message of one NDJSON block).
    #[inline]
    pub fn item(&mut self, source: &Source, item: &Item<'_>) {
        let key = source as *const Source as usize;
        // The per-message road: one comparison and one count for a valid message.
        if let Some(last) = self.inputs.last_mut().filter(|last| last.key == key) {
            last.messages += 1;
            if let Verdict::Message(_) = item.verdict {
                return;
            }
            last.messages -= 1;
        }
        self.add(source, item, false);
    }

    /// A message of `source`, in the run's own tally (a framed stream's, in order).
    pub fn item_in_order(&mut self, source: &Source, item: &Item<'_>) {
        self.add(source, item, true);
    }

    #[cold]
    fn add(&mut self, source: &Source, item: &Item<'_>, same_name: bool) {
        let counts = self.input(source, same_name);
        counts.messages += 1;
        if let Verdict::Message(_) = item.verdict {
            return;
        }
        counts.invalid += 1;
        if counts.first.is_none() {
            counts.first = Some(Unread {
                offset: item.offset,
                line: item.line,
                text: shown(item.record),
                why: item.verdict.reason().map_or("invalid", |r| r.as_str()),
            });
        }
    }

    /// A line of `source` without a message.
    pub fn skipped(&mut self, source: &Source, why: Skip, offset: u64, line: &[u8]) {
        // Lines without a message come from NDJSON blocks: one input's each.
        let counts = self.input(source, false);
        if let Some(i) = Skip::ALL.iter().position(|&s| s == why) {
            counts.skipped[i] += 1;
        }
        if why.is_unreadable() && counts.first.is_none() {
            counts.first = Some(Unread { offset, line: 0, text: shown(line), why: why.as_str() });
        }
    }

    /// Adds a later block's counts (in input order).
    pub fn merge(&mut self, from: Readable) {
        for counts in from.inputs {
            match self.inputs.last_mut() {
                Some(last) if last.key == counts.key && last.name == counts.name => {
                    last.messages += counts.messages;
                    last.invalid += counts.invalid;
                    for (a, b) in last.skipped.iter_mut().zip(counts.skipped) {
                        *a += b;
                    }
                    if last.first.is_none() {
                        last.first = counts.first;
                    }
                }
                _ => self.inputs.push(counts),
            }
        }
    }

    /// Moves the first unreadable line of the last input down by `by` lines (a block whose
    /// lines were counted from 1, see `Command::numbers_lines_at_merge`).
    pub fn shift_lines(&mut self, by: u64) {
        for counts in &mut self.inputs {
            if let Some(first) = counts.first.as_mut().filter(|f| f.line > 0) {
                first.line += by;
            }
        }
    }

    /// Every input's counts, in input order (an input seen in several runs of blocks is
    /// listed once per run).
    pub fn inputs(&self) -> &[InputCounts] {
        &self.inputs
    }

    /// Messages, invalid messages, and skipped lines by [`Skip`], over every input.
    pub fn totals(&self) -> (u64, u64, [u64; 4]) {
        let mut skipped = [0; 4];
        let (mut messages, mut invalid) = (0, 0);
        for c in &self.inputs {
            messages += c.messages;
            invalid += c.invalid;
            for (a, b) in skipped.iter_mut().zip(c.skipped) {
                *a += b;
            }
        }
        (messages, invalid, skipped)
    }

    /// The inputs most of whose lines held no message or an invalid one.
    pub fn mostly_unreadable(&self) -> impl Iterator<Item = &InputCounts> {
        self.inputs.iter().filter(|c| c.mostly_unreadable())
    }
}

/// The first [`SHOWN`] bytes of a line, as text (control characters escaped).
fn shown(line: &[u8]) -> String {
    let cut = line.get(..SHOWN).unwrap_or(line);
    let mut text: String = String::from_utf8_lossy(cut)
        .chars()
        .map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() })
        .collect();
    if cut.len() < line.len() {
        text.push_str("...");
    }
    text
}
