//! `rpcscan respond`: what a gateway answers to each message, in order (docs/spec.md §4).
//!
//! A supported request: `supported`. An unsupported one: -32601 with its raw id. An invalid
//! message: -32700 or -32600 with the recovered id or `null`. Notifications, results and
//! errors: nothing. Every response comes from `rpcscan::response`, spaced as docs/spec.md §4
//! prints it.

use rpcscan::response::ErrorResponse;
use rpcscan::Answer;

use crate::input::{Command, Item, Source, Verdict};

/// The subcommand's settings.
pub struct Respond {
    /// Methods the gateway serves.
    pub supported: Vec<String>,
}

/// Nothing to add up.
#[derive(Default, Debug)]
pub struct Tally;

impl Command for Respond {
    type Tally = Tally;

    fn item(&self, _source: &Source, item: &Item<'_>, out: &mut Vec<u8>, _tally: &mut Tally) {
        match &item.verdict {
            Verdict::Message(m) => {
                match m.answer(|method| self.supported.iter().any(|s| *method == s.as_str())) {
                    Answer::Serve => out.extend_from_slice(b"supported"),
                    Answer::Reply(reply) => reply.write(out),
                    Answer::Nothing => return,
                }
            }
            Verdict::Invalid(inv) => inv.response().write(out),
            // A frame the framing could not deliver: its id is unknowable.
            Verdict::Skipped { reason, .. } => ErrorResponse::standard(reason.code()).write(out),
        }
        out.push(b'\n');
    }

    fn merge(&self, _into: &mut Tally, _from: Tally) {}
}
