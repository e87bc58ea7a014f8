//! `rpcscan filter`: prints the messages that match, byte for byte, like grep.

use std::fmt::Write as _;

use rpcscan::{Id, Kind};

use rpcscan_traffic::glob::glob;

use crate::input::{warn, Command, Item, Source, Verdict};

/// The subcommand's settings. Criteria of different sorts must all hold; several values of
/// one sort (`--kind request --kind error`) are alternatives. No criteria: every message.
pub struct Filter {
    /// Bit `1 << kind as u8` set for each accepted kind; 0 accepts any.
    pub kinds: u8,
    /// Method globs (`*`, `?`) matched against the decoded method name.
    pub methods: Vec<String>,
    /// The id to look for (requests, responses, and invalid messages with a recovered id).
    pub id: Option<Id<'static>>,
    /// Print (or count) the messages that do *not* match.
    pub invert: bool,
    /// Print only the number of matching messages.
    pub count: bool,
}

/// Matches found.
#[derive(Default, Debug)]
pub struct Tally {
    /// Messages that matched (after `-v`).
    pub matched: u64,
    /// Decoding space for escaped method names (reused, never per message).
    scratch: String,
}

/// Builds the `Id` that `--id` looks for: an integer literal matches integer ids, `null`
/// matches null ids, a JSON string (`'"7"'`) or any other text (`abc`) matches string ids.
pub fn parse_id(arg: &str) -> Result<Id<'static>, String> {
    let message = if arg == "null" {
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":0,"message":""}}"#.to_owned()
    } else {
        let is_integer = {
            let digits = arg.strip_prefix('-').unwrap_or(arg);
            !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
        };
        let literal = if is_integer || arg.starts_with('"') {
            arg.to_owned()
        } else {
            let mut quoted = Vec::new();
            crate::json::write_str(&mut quoted, arg);
            String::from_utf8_lossy(&quoted).into_owned()
        };
        format!(r#"{{"jsonrpc":"2.0","id":{literal},"method":"m"}}"#)
    };
    // Leaked once per run: the id borrows its bytes for the whole program.
    let bytes: &'static [u8] = Box::leak(message.into_bytes().into_boxed_slice());
    match rpcscan::parse(bytes) {
        Ok(m) => m.id().ok_or_else(|| format!("invalid id {arg:?}")),
        Err(e) => Err(format!("invalid id {arg:?}: {e}")),
    }
}

impl Filter {
    fn matches(&self, item: &Item<'_>, scratch: &mut String) -> bool {
        let kind = item.verdict.kind();
        if self.kinds != 0 && self.kinds & (1 << kind as u8) == 0 {
            return false;
        }
        if !self.methods.is_empty() {
            let Verdict::Message(m) = &item.verdict else {
                return false;
            };
            let Some(method) = m.method() else {
                return false;
            };
            let name = if method.has_escapes() {
                scratch.clear();
                let _ = write!(scratch, "{method}");
                scratch.as_bytes()
            } else {
                method.raw()
            };
            if !self.methods.iter().any(|g| glob(g.as_bytes(), name)) {
                return false;
            }
        }
        if let Some(want) = &self.id {
            let id = match &item.verdict {
                Verdict::Message(m) => m.id(),
                Verdict::Invalid(inv) => inv.id(),
                Verdict::Skipped { .. } => None,
            };
            if id.as_ref() != Some(want) {
                return false;
            }
        }
        true
    }

    /// The kinds bit of `kind`.
    pub fn kind_bit(kind: Kind) -> u8 {
        1 << kind as u8
    }
}

impl Command for Filter {
    type Tally = Tally;

    fn item(&self, source: &Source, item: &Item<'_>, out: &mut Vec<u8>, tally: &mut Tally) {
        if self.matches(item, &mut tally.scratch) == self.invert {
            return;
        }
        tally.matched += 1;
        if self.count {
            return;
        }
        if let Verdict::Skipped { reason, len } = item.verdict {
            warn(format_args!(
                "{}: byte {}: matching frame not printed: {len} bytes skipped ({})",
                source.name,
                item.offset,
                reason.as_str()
            ));
            return;
        }
        // The original line, for a message inside a log line.
        out.extend_from_slice(item.record);
        out.push(b'\n');
    }

    fn merge(&self, into: &mut Tally, from: Tally) {
        into.matched += from.matched;
    }

    fn prints_as_it_goes(&self) -> bool {
        !self.count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids() {
        assert!(parse_id("7").unwrap().is_integer());
        assert_eq!(parse_id("-0").unwrap().as_i64(), Some(0));
        assert!(parse_id("\"7\"").unwrap().is_string());
        assert!(parse_id("abc").unwrap().is_string());
        assert_eq!(parse_id("a\"b").unwrap().raw(), br#""a\"b""#);
        assert!(parse_id("1.5").unwrap().is_string());
        assert!(parse_id("null").unwrap().is_null());
        assert!(parse_id("\"unterminated").is_err());
    }
}
