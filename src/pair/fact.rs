//! What the matcher reads of one message: a [`Fact`] (kind, raw id, method, tool, tokens,
//! position, direction, time), and the [`Directions`] that turn a log's labels into the
//! [`Direction`] a fact travelled.

use std::borrow::Cow;
use std::time::Duration;

use crate::kind::Kind;
use crate::message::{Message, Raw};

/// Where a message is in its log: a 1-based line (0 when the framing has none), a byte
/// offset, and which of the log's files (inputs) holds it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Position {
    /// 1-based line number, 0 when unknown.
    pub line: u64,
    /// Byte offset of the message's first byte.
    pub offset: u64,
    /// Which input of a run holds the message, from 0 (a log in several files, rotated or
    /// in a folder: the reader's numbering, which a report maps back to a file name).
    pub input: u32,
}

/// Which way a message travelled. Which side is called which does not matter (a log may
/// say `c2s`/`s2c`, `in`/`out`, `STDIN`/`STDOUT`); only that a response travels the other
/// way from its request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// One way (say, client to server).
    There,
    /// The other way.
    Back,
}

impl Direction {
    /// The other direction.
    pub const fn reverse(self) -> Direction {
        match self {
            Direction::There => Direction::Back,
            Direction::Back => Direction::There,
        }
    }
}

/// Turns the two direction labels of a log (`c2s`/`s2c`, `in`/`out`, `STDIN`/`STDOUT`,
/// anything) into [`Direction`]s: the first label seen is [`Direction::There`], the second
/// [`Direction::Back`]. A third distinct label has no direction.
///
/// Feed it through [`Directions::direction_of`], with each fact: only the labels of facts
/// whose direction the matcher reads ([`Fact::is_directed`]) take a direction, so an invalid
/// line or a plain notification (fed for its time alone, with a timeout) can never take the
/// place of a real side, and the labels a log reports do not depend on which of those
/// facts a caller feeds.
///
/// ```
/// use rpcscan::pair::{Direction, Directions};
///
/// let mut directions = Directions::new();
/// assert_eq!(directions.direction(b"STDIN"), Some(Direction::There));
/// assert_eq!(directions.direction(b"STDOUT"), Some(Direction::Back));
/// assert_eq!(directions.direction(b"STDIN"), Some(Direction::There));
/// assert_eq!(directions.direction(b"STDERR"), None);
/// assert_eq!(directions.labels(), [Some(&b"STDIN"[..]), Some(&b"STDOUT"[..])]);
///
/// // Fed with its facts, an invalid line's label takes no side.
/// use rpcscan::pair::{Fact, Position};
/// let mut directions = Directions::new();
/// let invalid = Fact::new(rpcscan::Kind::Invalid, Position::default());
/// assert_eq!(directions.direction_of(&invalid, Some(b"STDERR")), None);
/// let response = Fact::new(rpcscan::Kind::Result, Position::default());
/// assert_eq!(directions.direction_of(&response, Some(b"STDOUT")), Some(Direction::There));
/// assert_eq!(directions.labels(), [Some(&b"STDOUT"[..]), None]);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Directions {
    labels: [Option<Box<[u8]>>; 2],
    undirected: u64,
}

impl Directions {
    /// No label seen yet.
    pub fn new() -> Directions {
        Directions::default()
    }

    /// The direction of `label`; the first two distinct labels take the two directions.
    pub fn direction(&mut self, label: &[u8]) -> Option<Direction> {
        for (slot, direction) in self.labels.iter_mut().zip([Direction::There, Direction::Back]) {
            match slot {
                Some(seen) if **seen == *label => return Some(direction),
                Some(_) => {}
                None => {
                    *slot = Some(label.into());
                    return Some(direction);
                }
            }
        }
        None
    }

    /// The direction of a fact travelling with `label`: for a fact the matcher reads the
    /// direction of ([`Fact::is_directed`]), as [`Directions::direction`] gives it (counted
    /// in [`Directions::undirected`] when there is none); for any other fact, the direction
    /// of a label already seen ([`Directions::get`]), taking none.
    pub fn direction_of(&mut self, fact: &Fact<'_>, label: Option<&[u8]>) -> Option<Direction> {
        let label = label?;
        if !fact.is_directed() {
            return self.get(label);
        }
        let direction = self.direction(label);
        self.undirected += u64::from(direction.is_none());
        direction
    }

    /// The direction of `label` if it is one of the two seen; never takes a new one.
    pub fn get(&self, label: &[u8]) -> Option<Direction> {
        let mut seen = self.labels.iter().zip([Direction::There, Direction::Back]);
        seen.find(|(slot, _)| slot.as_deref() == Some(label)).map(|(_, direction)| direction)
    }

    /// Directed facts given to [`Directions::direction_of`] with a label beyond the first
    /// two: they travel in no direction (what a report says it could not place).
    pub fn undirected(&self) -> u64 {
        self.undirected
    }

    /// The labels seen, [`Direction::There`]'s first (what a report says it saw).
    pub fn labels(&self) -> [Option<&[u8]>; 2] {
        [self.labels[0].as_deref(), self.labels[1].as_deref()]
    }
}

/// What the matcher needs to know about one message. [`Fact::of`] reads it from a parsed
/// message; a caller with its own storage can fill the fields in directly.
///
/// Ids, tokens and codes are raw JSON literals, exactly as [`crate::Id::raw`] gives them: a
/// string with its quotes and escapes, an integer's digits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fact<'a> {
    /// The message's kind; [`Kind::Invalid`] facts are ignored.
    pub kind: Kind,
    /// Where the message is.
    pub at: Position,
    /// The raw `id` (`null` included), if the message has one.
    pub id: Option<&'a [u8]>,
    /// The decoded `method` of a request or notification.
    pub method: Option<Cow<'a, str>>,
    /// `params.name` of a `tools/call` request.
    pub tool: Option<Cow<'a, str>>,
    /// A request's `params._meta.progressToken`, or a `notifications/progress`'s
    /// `params.progressToken` (raw; only strings and integers count).
    pub progress_token: Option<&'a [u8]>,
    /// A `notifications/cancelled`'s `params.requestId` (raw).
    pub cancels: Option<&'a [u8]>,
    /// An error response's raw `error.code`.
    pub error_code: Option<&'a [u8]>,
    /// Which way the message travelled, when the log says.
    pub direction: Option<Direction>,
    /// When the message was seen, as time since the Unix epoch, when the log says.
    pub time: Option<Duration>,
    /// The id space the message belongs to, when the log says: an `rpcscan gateway` log
    /// carries many MCP sessions (`session`), each numbering its requests on its own. Ids,
    /// cancels and progress tokens match only within their scope; `None` is one scope too.
    pub scope: Option<&'a [u8]>,
}

impl<'a> Fact<'a> {
    /// A fact with only a kind and a position.
    pub fn new(kind: Kind, at: Position) -> Fact<'a> {
        Fact {
            kind,
            at,
            id: None,
            method: None,
            tool: None,
            progress_token: None,
            cancels: None,
            error_code: None,
            direction: None,
            time: None,
            scope: None,
        }
    }

    /// Reads the facts of a valid message: one pass over `params` (two for a request with
    /// `_meta`), nothing decoded but an escaped method or tool name.
    pub fn of(msg: &Message<'a>, at: Position) -> Fact<'a> {
        let kind = msg.kind();
        let id = msg.id().map(|id| id.raw());
        let error_code = msg.error_code().map(|code| code.raw());
        let (mut method, mut tool, mut progress_token, mut cancels) = (None, None, None, None);
        if let Some(name) = msg.method() {
            let params = msg.params();
            match kind {
                Kind::Request => {
                    // `params.name` and `params._meta` as the scan noted them (a parser built
                    // with `note_params_name`), else one walk of `params` each: no full
                    // `Message::mcp`, whose other keys pairing does not read.
                    if name == "tools/call" {
                        tool = msg.params_name().as_str().map(|s| lossy(s.decode(), s.raw()));
                    }
                    progress_token = msg.params_meta().unique().and_then(|meta| {
                        leading_token(meta.as_bytes(), "progressToken").or_else(|| {
                            meta.get("progressToken").unique()?.as_id().map(|id| id.raw())
                        })
                    });
                }
                Kind::Notification if name == "notifications/cancelled" => {
                    cancels = params.and_then(|params| notified(params, "requestId"));
                }
                Kind::Notification if name == "notifications/progress" => {
                    progress_token = params.and_then(|params| notified(params, "progressToken"));
                }
                _ => {}
            }
            method = Some(match known_method(name.raw()) {
                Some(known) => Cow::Borrowed(known),
                None => lossy(name.decode(), name.raw()),
            });
        }
        // Built in one expression, in the caller's place (a fact built and then returned
        // was copied out with a `memcpy` call per message).
        Fact {
            kind,
            at,
            id,
            method,
            tool,
            progress_token,
            cancels,
            error_code,
            direction: None,
            time: None,
            scope: None,
        }
    }

    /// Whether the matcher reads this fact's direction: a request, a response, or a
    /// `notifications/cancelled` or `notifications/progress` naming a request or a token.
    /// Of any other fact (an invalid message, another notification) it reads only the time.
    pub fn is_directed(&self) -> bool {
        match self.kind {
            Kind::Request | Kind::Result | Kind::Error => true,
            Kind::Notification => match self.method.as_deref() {
                Some("notifications/cancelled") => self.cancels.is_some(),
                Some("notifications/progress") => self.progress_token.is_some(),
                _ => false,
            },
            Kind::Invalid => false,
        }
    }

    /// The same fact, in the id space `scope` (see [`Fact::scope`]).
    pub fn with_scope(mut self, scope: Option<&'a [u8]>) -> Fact<'a> {
        self.scope = scope;
        self
    }

    /// The same fact, travelling in `direction`.
    pub fn with_direction(mut self, direction: Option<Direction>) -> Fact<'a> {
        self.direction = direction;
        self
    }

    /// The same fact, seen at `time` (since the Unix epoch).
    pub fn with_time(mut self, time: Option<Duration>) -> Fact<'a> {
        self.time = time;
        self
    }
}

/// A notification's `key` in `params`: read straight off a plain leading member, else by a
/// walk. Always inlined, for the key to be a constant in [`leading_token`].
#[inline(always)]
fn notified<'a>(params: Raw<'a>, key: &str) -> Option<&'a [u8]> {
    leading_token(params.as_bytes(), key)
        .or_else(|| params.get(key).unique().and_then(|v| v.as_id()).map(|id| id.raw()))
}

/// The methods most messages carry, by their raw bytes: a method among them needs no
/// UTF-8 check of its own to be read as text (the check costs more than the match on
/// short messages).
const KNOWN_METHODS: [&str; 12] = [
    "tools/call",
    "tools/list",
    "resources/read",
    "resources/list",
    "prompts/get",
    "prompts/list",
    "initialize",
    "ping",
    "notifications/progress",
    "notifications/cancelled",
    "notifications/initialized",
    "completion/complete",
];

/// `raw` (a method string's bytes between the quotes) as one of [`KNOWN_METHODS`].
#[inline]
fn known_method(raw: &[u8]) -> Option<&'static str> {
    KNOWN_METHODS.iter().copied().find(|m| m.as_bytes() == raw)
}

/// The value of an object's first member (`params`, or a request's `_meta`) when it is `key`
/// written plainly and the value an integer or a string without escapes, right before a `,`
/// or the closing `}` (what SDKs send: `{"progressToken":7,"progress":1}`,
/// `{"progressToken":"t"}`), and no other member can be `key` (the rest
/// holds neither the key's text after a quote nor any escape): read without
/// walking the members. `None`: any other shape, for the general walk to read.
// Always inlined: the key is then a constant, and its comparisons are a few loads instead
// of `memcmp` calls.
#[inline(always)]
fn leading_token<'a>(object: &'a [u8], key: &str) -> Option<&'a [u8]> {
    let rest = object.strip_prefix(b"{\"")?.strip_prefix(key.as_bytes())?;
    let rest = rest.strip_prefix(b"\":")?;
    let len = match rest {
        [b'"', inner @ ..] => inner.iter().position(|&b| b == b'"' || b == b'\\')? + 2,
        [b'-', digits @ ..] | digits => {
            let n = digits.iter().take_while(|b| b.is_ascii_digit()).count();
            (n > 0).then_some(rest.len() - digits.len() + n)?
        }
    };
    let (value, after) = rest.split_at_checked(len)?;
    if value.len() >= 2 && value.first() == Some(&b'"') && value.last() != Some(&b'"') {
        return None;
    }
    if !matches!(after.first(), Some(b',' | b'}')) {
        return None;
    }
    no_other_key(after, key.as_bytes()).then_some(value)
}

/// Whether `rest`, what follows an object's first member, holds neither an escape nor a
/// quote followed by `key`: another member named `key` would be written one way or the
/// other. Tails up to 64 bytes (the SDKs' `}` and `,"progress":1,"total":2}`) are read
/// byte by byte: there `memchr`'s calls, one for each quote and one for the backslash, cost
/// several times the bytes (~300 instructions a request's `_meta` before, under callgrind).
#[inline(always)]
fn no_other_key(rest: &[u8], key: &[u8]) -> bool {
    let Some(&first) = key.first() else { return false };
    let quote_then_key = |at: usize| {
        rest.get(at + 1) == Some(&first)
            && rest.get(at + 1..).is_some_and(|from| from.starts_with(key))
    };
    if rest.len() <= 64 {
        let mut at = 0;
        while let Some(&b) = rest.get(at) {
            if b == b'\\' || (b == b'"' && quote_then_key(at)) {
                return false;
            }
            at += 1;
        }
        return true;
    }
    memchr::memchr(b'\\', rest).is_none() && !memchr::memchr_iter(b'"', rest).any(quote_then_key)
}

/// A string that holds a lone surrogate escape is shown with U+FFFD in its place.
fn lossy<'a, E>(decoded: Result<Cow<'a, str>, E>, raw: &'a [u8]) -> Cow<'a, str> {
    decoded.unwrap_or_else(|_| String::from_utf8_lossy(raw))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain-`_meta` shortcut reads what the general walk reads, or leaves it to it.
    #[test]
    fn progress_token_shortcut_agrees_with_the_walk() {
        #[rustfmt::skip]
        let metas = [
            r#"{"progressToken":7}"#, r#"{"progressToken":-0}"#, r#"{"progressToken":"a}b"}"#,
            r#"{"progressToken":"é"}"#, r#"{"progressToken":"a\"b"}"#, r#"{"progressToken":""}"#,
            r#"{"progressToken":1.5}"#, r#"{"progressToken":null}"#, r#"{"progressToken":{}}"#,
            r#"{"progressToken":1,"x":2}"#, r#"{"progressToken":"a","progressToken":"b"}"#,
            r#"{"x":1,"progressToken":2}"#, r#"{ "progressToken":3}"#, r#"{"progressToken":4 }"#,
            r#"{"progress\u0054oken":5}"#, r#"{"progressToken":"x","y":"z"}"#, "{}",
        ];
        for meta in metas {
            let json = format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"_meta":{meta}}}}}"#
            );
            let msg = crate::parse(json.as_bytes()).unwrap();
            let fact = Fact::of(&msg, Position::default());
            let meta = msg.params_meta().unique().unwrap();
            let walked =
                meta.get("progressToken").unique().and_then(|v| v.as_id()).map(|id| id.raw());
            assert_eq!(fact.progress_token, walked, "{meta:?}");
            if let Some(token) = leading_token(meta.as_bytes(), "progressToken") {
                assert_eq!(Some(token), walked, "{meta:?}");
            }
        }
    }

    /// The leading-member shortcut of notifications reads what the general walk reads, or
    /// leaves it to it.
    #[test]
    fn leading_token_agrees_with_the_walk() {
        #[rustfmt::skip]
        let params = [
            r#"{"progressToken":7,"progress":1}"#, r#"{"progressToken":-0}"#,
            r#"{"progressToken":"a}b","progress":1}"#, r#"{"progressToken":"a\"b"}"#,
            r#"{"progressToken":""}"#, r#"{"progressToken":1.5}"#, r#"{"progressToken":1e3}"#,
            r#"{"progressToken":null}"#, r#"{"progressToken":{}}"#, r#"{"progressToken":-1}"#,
            r#"{"progressToken":1,"progressToken":2}"#, r#"{"progressToken":1,"progress\u0054oken":2}"#,
            r#"{"progressToken":1,"message":"progressToken"}"#, r#"{"progressToken":1 ,"x":2}"#,
            r#"{"x":1,"progressToken":2}"#, r#"{ "progressToken":3}"#, r#"{"progressToken":"é","m":"\n"}"#,
            r#"{"progress\u0054oken":5}"#, r#"{"progressTokens":5}"#, r#"{"progressToken":"x","y":{"progressToken":1}}"#,
            r#"{"requestId":4,"reason":"x"}"#, r#"{"requestId":"4"}"#, "{}",
        ];
        for key in ["progressToken", "requestId"] {
            for p in params {
                let json = format!(r#"{{"jsonrpc":"2.0","method":"m","params":{p}}}"#);
                let msg = crate::parse(json.as_bytes()).unwrap();
                let params = msg.params().unwrap();
                let walked = params.get(key).unique().and_then(|v| v.as_id()).map(|id| id.raw());
                if let Some(token) = leading_token(params.as_bytes(), key) {
                    assert_eq!(Some(token), walked, "{key} {p}");
                }
            }
            let json = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1}}"#;
            let fact = Fact::of(&crate::parse(json.as_bytes()).unwrap(), Position::default());
            assert_eq!(fact.progress_token, Some(&b"7"[..]));
            // Never read past what is there.
            for cut in [r#"{"progressToken":-}"#, r#"{"progressToken":"#, r#"{"progressToken":"a"#]
            {
                assert_eq!(leading_token(cut.as_bytes(), "progressToken"), None, "{cut}");
            }
        }
    }

    /// Both ways of reading a tail (bytes up to 64, `memchr` past them) find a second key
    /// or an escape wherever it is, and nothing else.
    #[test]
    fn no_other_key_at_every_length() {
        let naive = |rest: &[u8], key: &[u8]| {
            !rest.contains(&b'\\')
                && !(0..rest.len()).any(|at| rest[at] == b'"' && rest[at + 1..].starts_with(key))
        };
        let lengths: Vec<usize> =
            if cfg!(miri) { vec![0, 1, 2, 14, 63, 64, 65, 66, 80] } else { (0..140).collect() };
        for len in lengths {
            let plain = vec![b'x'; len];
            assert!(no_other_key(&plain, b"progressToken"), "{len}");
            for at in 0..len {
                for (put, bad) in
                    [(&b"\\"[..], true), (b"\"progressToken", true), (b"\"progress", false)]
                {
                    let mut rest = plain.clone();
                    rest.truncate(at);
                    rest.extend_from_slice(put);
                    let got = no_other_key(&rest, b"progressToken");
                    assert_eq!(got, !bad, "{len} {at} {put:?}");
                    assert_eq!(got, naive(&rest, b"progressToken"), "{len} {at} {put:?}");
                }
            }
        }
    }

    /// Known methods read as text the same way any method does.
    #[test]
    fn known_methods_read_as_text() {
        for method in KNOWN_METHODS.iter().copied().chain(["tools/callx", "é", "a\\u0062"]) {
            let json = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}"}}"#);
            let msg = crate::parse(json.as_bytes()).unwrap();
            let fact = Fact::of(&msg, Position::default());
            let decoded = msg.method().unwrap().decode().unwrap();
            assert_eq!(fact.method.as_deref(), Some(&*decoded), "{method}");
        }
    }
}
