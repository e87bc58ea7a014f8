//! `rpcscan classify`: one verdict per message, as a word or as a JSON object.

use rpcscan::Kind;

use crate::input::{Command, Item, Source, Verdict};
use crate::json::{write_i64, write_u64};

/// The subcommand's settings.
pub struct Classify {
    /// One JSON object per message instead of the kind alone.
    pub json: bool,
    /// Print nothing (with `--check`: only the exit code speaks).
    pub quiet: bool,
    /// Several inputs: `--json` names the file of each message.
    pub with_file: bool,
}

/// Counts for the exit code.
#[derive(Default, Debug)]
pub struct Tally {
    /// Messages seen.
    pub messages: u64,
    /// Invalid ones among them.
    pub invalid: u64,
}

impl Command for Classify {
    type Tally = Tally;

    fn item(&self, source: &Source, item: &Item<'_>, out: &mut Vec<u8>, tally: &mut Tally) {
        let kind = item.verdict.kind();
        tally.messages += 1;
        tally.invalid += u64::from(kind == Kind::Invalid);
        if self.quiet {
            return;
        }
        if !self.json {
            out.extend_from_slice(kind.as_str().as_bytes());
            out.push(b'\n');
            return;
        }
        out.push(b'{');
        if self.with_file {
            out.extend_from_slice(b"\"file\":");
            out.extend_from_slice(&source.json_name);
            out.push(b',');
        }
        out.extend_from_slice(b"\"kind\":\"");
        out.extend_from_slice(kind.as_str().as_bytes());
        out.extend_from_slice(b"\",\"line\":");
        if item.line > 0 {
            write_u64(out, item.line);
        } else {
            out.extend_from_slice(b"null");
        }
        out.extend_from_slice(b",\"offset\":");
        write_u64(out, item.offset);
        // Ids, methods and codes were validated by the scanner: their raw bytes are JSON.
        let (id, method, code) = match &item.verdict {
            Verdict::Message(m) => (
                m.id().map(|id| id.raw()),
                m.method().map(|s| s.raw()),
                m.error_code().map(|c| c.raw()),
            ),
            Verdict::Invalid(inv) => (inv.id().map(|id| id.raw()), None, None),
            Verdict::Skipped { .. } => (None, None, None),
        };
        out.extend_from_slice(b",\"id\":");
        out.extend_from_slice(id.unwrap_or(b"null"));
        out.extend_from_slice(b",\"method\":");
        match method {
            Some(raw) => {
                out.push(b'"');
                out.extend_from_slice(raw);
                out.push(b'"');
            }
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"error_code\":");
        out.extend_from_slice(code.unwrap_or(b"null"));
        if let Some(reason) = item.verdict.reason() {
            out.extend_from_slice(b",\"reason\":\"");
            out.extend_from_slice(reason.as_str().as_bytes());
            out.extend_from_slice(b"\",\"code\":");
            write_i64(out, reason.code());
            if let Verdict::Invalid(inv) = &item.verdict {
                if let Some(at) = inv.offset() {
                    out.extend_from_slice(b",\"error_offset\":");
                    write_u64(out, at as u64);
                }
            }
        }
        out.extend_from_slice(b"}\n");
    }

    fn merge(&self, into: &mut Tally, from: Tally) {
        into.messages += from.messages;
        into.invalid += from.invalid;
    }

    fn wants_lines(&self) -> bool {
        self.json && !self.quiet
    }

    fn prints_as_it_goes(&self) -> bool {
        !self.quiet
    }
}
